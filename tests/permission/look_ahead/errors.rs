//! Local misuse returns `Err` and leaves the node exactly as it was; bad configurations are
//! rejected.

use manet_mutex::look_ahead::{Config, Message, Node, Settings};
use manet_mutex::{CsRequest, Error, Event, NodeId, Protocol, Status};

fn node(info: &[u32]) -> Node {
    Node::new(
        Config::new(NodeId(0), Settings::new(3, 5))
            .with_info_set(info.iter().map(|&i| NodeId(i)).collect()),
    )
    .unwrap()
}

fn ok(node: &mut Node, event: Event<Message>) {
    node.handle(event).expect("accepted").for_each(drop);
}

fn rejected(node: &mut Node, event: Event<Message>) -> Error {
    let before = node.clone();
    let err = node
        .handle(event)
        .map(|_| ())
        .expect_err("must be rejected");
    assert_eq!(*node, before, "an Err changed the node");
    // The failed call left nothing in the output buffer either.
    let next: Vec<_> = node
        .handle(Event::Timeout(manet_mutex::TimerId(0)))
        .unwrap()
        .collect();
    assert!(next.is_empty());
    err
}

#[test]
fn release_outside_the_cs_is_an_error_and_changes_nothing() {
    let mut a = node(&[1]);
    assert_eq!(
        rejected(&mut a, Event::Release),
        Error::NotInCritical(Status::Remainder)
    );
    ok(&mut a, Event::Request(CsRequest::ONE));
    assert_eq!(
        rejected(&mut a, Event::Release),
        Error::NotInCritical(Status::Waiting)
    );
}

#[test]
fn request_while_waiting_or_inside_is_an_error_and_changes_nothing() {
    let mut a = node(&[1]);
    ok(&mut a, Event::Request(CsRequest::ONE));
    assert_eq!(
        rejected(&mut a, Event::Request(CsRequest::ONE)),
        Error::AlreadyRequested(Status::Waiting)
    );
    let mut b = node(&[]);
    ok(&mut b, Event::Request(CsRequest::ONE));
    assert_eq!(
        rejected(&mut b, Event::Request(CsRequest::ONE)),
        Error::AlreadyRequested(Status::Critical)
    );
}

#[test]
fn mode_misuse_is_an_error_and_changes_nothing() {
    let mut a = node(&[1]);
    assert!(matches!(
        rejected(&mut a, Event::Request(CsRequest::resources(2))),
        Error::OneResourceOnly { requested: 2 }
    ));
    assert!(matches!(
        rejected(&mut a, Event::Wake),
        Error::WrongMode { .. }
    ));
    assert!(matches!(
        rejected(&mut a, Event::LinkUp(NodeId(1))),
        Error::Unsupported("LinkUp")
    ));
    ok(&mut a, Event::Doze);
    // The section, then the resources, then the mode (`docs/ALGORITHMS.md`, D1).
    assert!(matches!(
        rejected(&mut a, Event::Request(CsRequest::resources(2))),
        Error::OneResourceOnly { requested: 2 }
    ));
    for e in [
        Event::Request(CsRequest::ONE),
        Event::Doze,
        Event::Disconnect,
        Event::Reconnect,
    ] {
        assert!(matches!(rejected(&mut a, e), Error::WrongMode { .. }));
    }
    ok(&mut a, Event::Wake);
    ok(&mut a, Event::Request(CsRequest::ONE));
    for e in [Event::Doze, Event::Disconnect] {
        assert!(matches!(rejected(&mut a, e), Error::WrongMode { .. }));
    }
}

#[test]
fn invalid_configurations_are_rejected() {
    let cfg = |id, hosts, retransmit_after| {
        Config::new(
            NodeId(id),
            Settings::new(hosts, retransmit_after).with_seed(1),
        )
    };
    let with = |info: &[u32]| cfg(0, 3, 5).with_info_set(info.iter().map(|&i| NodeId(i)).collect());
    for c in [
        cfg(3, 3, 5),
        cfg(0, 3, 0),
        with(&[0]),
        with(&[3]),
        with(&[1, 1]),
    ] {
        assert!(matches!(Node::new(c), Err(Error::InvalidConfig { .. })));
    }
    assert!(Node::new(cfg(0, 1, 5)).is_ok());
}
