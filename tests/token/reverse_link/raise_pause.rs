//! Pacing of height raises (`Settings::with_raise_pause`, `docs/ALGORITHMS.md` R15), one node
//! driven by hand: the first raise at once, a raise due during the pause made at its end (a
//! pause twice as long then), stale expiries ignored, and a paced node takes every `Timeout`.

use manet_mutex::reverse_link::{Config, Message, Node, Settings};
use manet_mutex::token::RaisePause;
use manet_mutex::{prioritized, Action, Error, Event, NodeId, Protocol, TimerId};

use super::unit::h;

const PAUSE: RaisePause = RaisePause::new(10, 35);

/// Node 1 between node 0 (below, the way to the token) and node 2 (above).
fn middle(settings: Settings) -> Node {
    let config = Config::new(
        NodeId(1),
        settings,
        0,
        h(1, 0, 1),
        vec![h(0, 0, 0), h(2, 0, 2)],
    );
    Node::new(config).unwrap()
}

/// The heights node 1 announced, and the pauses it started.
fn what(actions: &[Action<Message>]) -> (usize, Vec<(TimerId, u64)>) {
    let infos = actions
        .iter()
        .filter(|a| {
            matches!(
                a,
                Action::Send {
                    msg: Message::LinkInfo(_),
                    ..
                }
            )
        })
        .count();
    let timers = actions
        .iter()
        .filter_map(|a| match a {
            Action::SetTimer { timer, after } => Some((*timer, *after)),
            _ => None,
        })
        .collect();
    (infos, timers)
}

/// What node `node` does on `event` (which it must take).
fn act(node: &mut Node, event: Event<Message>) -> Vec<Action<Message>> {
    node.handle(event).unwrap().collect()
}

/// Node 2 climbs above node 1 (as it does where no token is left).
fn climb(node: &mut Node) -> Vec<Action<Message>> {
    let above = node.height().h1 + 1;
    let msg = Message::LinkInfo(h(above, 0, 2).into());
    act(
        node,
        Event::Receive {
            from: NodeId(2),
            msg,
        },
    )
}

#[test]
fn a_raise_due_during_the_pause_is_made_at_its_end() {
    let mut node = middle(Settings::new(1).with_raise_pause(PAUSE));
    // Its way down fails: it raises at once and a pause of 10 starts.
    let (infos, timers) = what(&act(&mut node, Event::LinkDown(NodeId(0))));
    assert_eq!(infos, 1, "announced to node 2");
    assert_eq!(timers.len(), 1);
    let (first, after) = timers[0];
    assert_eq!(after, 10);
    // Node 2 climbs above it: the raise waits.
    let before = node.height();
    assert_eq!(what(&climb(&mut node)), (0, vec![]));
    assert_eq!(node.height(), before, "not raised inside the pause");
    assert_eq!(
        node.next(),
        None,
        "the way it asked along is void while the raise waits"
    );
    // The pause ends: the node, still without a way down, raises; the next pause is 20.
    let (infos, timers) = what(&act(&mut node, Event::Timeout(first)));
    assert_eq!(infos, 1);
    assert!(node.height() > before);
    let (second, after) = timers[0];
    assert_eq!(after, 20);
    assert_ne!(first, second);
    // A duplicate of the first expiry changes nothing.
    let unchanged = node.clone();
    assert!(act(&mut node, Event::Timeout(first)).is_empty());
    assert_eq!(node.height(), unchanged.height());
    // The second pause ends with nothing waiting: no raise, and the next run starts at 10.
    assert_eq!(what(&act(&mut node, Event::Timeout(second))), (0, vec![]));
    let (infos, timers) = what(&climb(&mut node));
    assert_eq!(infos, 1, "raised at once: no pause ran");
    assert_eq!(timers[0].1, 10);
}

#[test]
fn unpaced_the_node_raises_every_time() {
    let mut node = middle(Settings::new(1));
    assert_eq!(
        what(&act(&mut node, Event::LinkDown(NodeId(0)))),
        (1, vec![])
    );
    for _ in 0..5 {
        assert_eq!(what(&climb(&mut node)), (1, vec![]));
    }
    assert_eq!(node.raises(), 6);
}

#[test]
fn a_raise_pause_is_checked_and_a_paced_node_takes_every_timeout() {
    for bad in [RaisePause::new(0, 5), RaisePause::new(6, 5)] {
        let config = Config::new(
            NodeId(1),
            Settings::new(1).with_raise_pause(bad),
            0,
            h(1, 0, 1),
            vec![],
        );
        assert!(matches!(
            Node::new(config),
            Err(Error::InvalidConfig { .. })
        ));
        let settings =
            prioritized::Settings::new(1, prioritized::Policy::Equal).with_raise_pause(bad);
        let config = prioritized::Config::new(NodeId(1), settings, false, h(1, 0, 1), vec![]);
        assert!(matches!(
            prioritized::Node::new(config),
            Err(Error::InvalidConfig { .. })
        ));
    }
    // A foreign timer id: ignored by a node that sets timers, refused by one that does not.
    let foreign = Event::Timeout(TimerId(12_345));
    let mut paced = middle(Settings::new(1).with_raise_pause(PAUSE));
    let before = paced.clone();
    assert!(act(&mut paced, foreign.clone()).is_empty());
    assert_eq!(paced.height(), before.height());
    let mut plain = middle(Settings::new(1));
    assert!(matches!(plain.handle(foreign), Err(Error::Unsupported(_))));
}

/// The prioritized node forgets `next` too when its raise waits: the REQUEST that went along it
/// was dropped by `next` when it rose above, so whatever settles the node next must send the
/// queue's request again (without it, `examples/cluster` starved a node in 5 of 45 flap runs).
#[test]
fn a_raise_that_waits_forgets_next() {
    use manet_mutex::{prioritized, CsRequest};
    let settings =
        prioritized::Settings::new(1, prioritized::Policy::Equal).with_raise_pause(PAUSE);
    let config = prioritized::Config::new(
        NodeId(1),
        settings,
        false,
        h(1, 0, 1),
        vec![h(0, 0, 0), h(2, 0, 2)],
    );
    let mut node = prioritized::Node::new(config).unwrap();
    let act = |node: &mut prioritized::Node, event| -> Vec<Action<prioritized::Message>> {
        node.handle(event).unwrap().collect()
    };
    // It asks: the REQUEST goes down to node 0.
    act(&mut node, Event::Request(CsRequest::ONE));
    assert_eq!(node.next(), Some(NodeId(0)));
    let link = |id: u32, a| Event::Receive {
        from: NodeId(id),
        msg: prioritized::Message::Link {
            height: h(a, 0, id).into(),
        },
    };
    // Node 0 rises above it (dropping its request): the first raise, at once, asks again.
    let above = node.height().h1 + 1;
    act(&mut node, link(0, above));
    let down = node.next().expect("asked again at once").0;
    // Both neighbours rise above it, inside the pause: the raise waits, and `next` is
    // forgotten.
    for id in [2 - down, down] {
        let above = node.height().h1 + 1;
        act(&mut node, link(id, above));
    }
    assert_eq!(node.next(), None);
}
