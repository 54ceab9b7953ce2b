//! Local misuse returns `Err` and leaves the node exactly as it was; bad configurations are
//! rejected.

use manet_mutex::look_ahead::{Config, Initial, Message, Node};
use manet_mutex::{CsRequest, Error, Event, NodeId, Protocol, Status};

fn node(info: &[u32]) -> Node {
    Node::new(Config {
        id: NodeId(0),
        hosts: 3,
        initial: Initial::InfoSet(info.iter().map(|&i| NodeId(i)).collect()),
        retransmit_after: 5,
    })
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
        Error::InvalidResources { requested: 2, k: 1 }
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
    let cfg = |id, hosts, initial, retransmit_after| Config {
        id: NodeId(id),
        hosts,
        initial,
        retransmit_after,
    };
    for c in [
        cfg(3, 3, Initial::Seed(1), 5),
        cfg(0, 3, Initial::Seed(1), 0),
        cfg(0, 3, Initial::InfoSet(vec![NodeId(0)]), 5),
        cfg(0, 3, Initial::InfoSet(vec![NodeId(3)]), 5),
        cfg(0, 3, Initial::InfoSet(vec![NodeId(1), NodeId(1)]), 5),
    ] {
        assert!(matches!(Node::new(c), Err(Error::InvalidConfig { .. })));
    }
    assert!(Node::new(cfg(0, 1, Initial::Seed(1), 5)).is_ok());
}
