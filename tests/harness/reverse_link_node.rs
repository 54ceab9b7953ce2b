//! Fuzz body: one KRL/KRLF node, arbitrary configuration, fed arbitrary events directly —
//! messages from strangers and from itself, heights naming other nodes or at the extremes of
//! `i64`, tokens beyond `k`, events in the wrong state, events the algorithm does not support.
//!
//! It asserts the core's rules (`DESIGN.md`): no panic; only local misuse returns `Err`, and an
//! `Err` leaves the node unchanged; peer input never returns `Err`; `handle` is deterministic;
//! and after every event the node is locally consistent (tokens within `k`, its own request
//! queued exactly while waiting, the queue bounded by its neighbours, sends only to peers it
//! has a link to).
//!
//! Compiled into the `reverse_link_node` fuzz target (`fuzz/`) and run over seeded inputs by
//! `tests/fuzz_reverse_link.rs`.

use arbitrary::Arbitrary;
use manet_mutex::height::Height;
use manet_mutex::reverse_link::{Config, Message, Node};
use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol, Status, TimerId};

/// Events beyond this are ignored, so one input is one bounded run.
const MAX_EVENTS: usize = 256;

/// A height component: mostly small, sometimes at or near the ends of the range.
#[derive(Debug, Clone, Copy, Arbitrary)]
enum Coord {
    Small(i8),
    Min,
    Max,
    Any(i64),
}

impl Coord {
    fn value(self) -> i64 {
        match self {
            Coord::Small(v) => i64::from(v),
            Coord::Min => i64::MIN,
            Coord::Max => i64::MAX,
            Coord::Any(v) => v,
        }
    }
}

/// A node id: mostly one of the first six (so that it is often a neighbour), sometimes any.
#[derive(Debug, Clone, Copy, Arbitrary)]
enum Peer {
    Near(u8),
    Any(u32),
}

impl Peer {
    fn id(self) -> NodeId {
        match self {
            Peer::Near(v) => NodeId(u32::from(v % 6)),
            Peer::Any(v) => NodeId(v),
        }
    }
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Kind {
    Request,
    Token,
    LinkInfo,
    TokenAck,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum In {
    Request {
        resources: u32,
        priority: u32,
    },
    Release,
    Receive {
        from: Peer,
        kind: Kind,
        h1: Coord,
        h2: Coord,
        owner: Peer,
    },
    LinkUp(Peer),
    LinkDown(Peer),
    Timeout(u64),
    Doze,
    Wake,
    Disconnect,
    Reconnect,
}

impl In {
    fn event(self) -> Event<Message> {
        match self {
            In::Request {
                resources,
                priority,
            } => Event::Request(CsRequest {
                resources,
                priority,
            }),
            In::Release => Event::Release,
            In::Receive {
                from,
                kind,
                h1,
                h2,
                owner,
            } => {
                let h = Height::new(h1.value(), h2.value(), owner.id());
                let msg = match kind {
                    Kind::Request => Message::Request(h),
                    Kind::Token => Message::Token(h),
                    Kind::LinkInfo => Message::LinkInfo(h),
                    Kind::TokenAck => Message::TokenAck(h),
                };
                Event::Receive {
                    from: from.id(),
                    msg,
                }
            }
            In::LinkUp(p) => Event::LinkUp(p.id()),
            In::LinkDown(p) => Event::LinkDown(p.id()),
            In::Timeout(t) => Event::Timeout(TimerId(t)),
            In::Doze => Event::Doze,
            In::Wake => Event::Wake,
            In::Disconnect => Event::Disconnect,
            In::Reconnect => Event::Reconnect,
        }
    }
}

#[derive(Debug, Arbitrary)]
pub struct Input {
    id: Peer,
    k: u8,
    tokens: u8,
    h1: Coord,
    h2: Coord,
    #[arbitrary(with = crate::input::sized_vec)]
    neighbors: Vec<(Peer, Coord, Coord)>,
    forwarding: bool,
    #[arbitrary(with = crate::input::sized_vec)]
    events: Vec<In>,
}

/// Which `Err` results are allowed: only local misuse, judged from the state before the event.
fn misuse(before: &Node, event: &In) -> bool {
    match *event {
        In::Request { resources, .. } => before.status() != Status::Remainder || resources != 1,
        In::Release => before.status() != Status::Critical,
        In::Receive { .. } | In::LinkUp(_) | In::LinkDown(_) => false,
        // KRL has no timers and no host modes.
        In::Timeout(_) | In::Doze | In::Wake | In::Disconnect | In::Reconnect => true,
    }
}

fn check_consistent(node: &Node, actions: &[Action<Message>]) -> Result<(), String> {
    if node.tokens() > node.k() {
        return Err(format!("{} tokens, k = {}", node.tokens(), node.k()));
    }
    if node.status() == Status::Critical && node.tokens() == 0 {
        return Err("in the critical section without a token".into());
    }
    if (node.status() == Status::Waiting) != node.queue().contains(node.id()) {
        return Err(format!(
            "own request queued = {} while {:?}",
            node.queue().contains(node.id()),
            node.status()
        ));
    }
    let linked = |id: NodeId| node.neighbors().get(id).is_some();
    if let Some(q) = node.queue().iter().find(|&q| q != node.id() && !linked(q)) {
        return Err(format!("queues {q:?}, which is not a neighbour"));
    }
    for action in actions {
        match action {
            Action::Send { to, msg }
                if !linked(*to) || (msg.is_token() && !node.neighbors().is_member(*to)) =>
            {
                return Err(format!("sent {msg:?} to {to:?}, which it has no link to"));
            }
            Action::EnterCritical { .. } if node.status() != Status::Critical => {
                return Err("entered the critical section without being in it".into());
            }
            _ => {}
        }
    }
    Ok(())
}

pub fn run(input: &Input) {
    let id = input.id.id();
    let k = 1 + u32::from(input.k % 4);
    let config = Config {
        id,
        k,
        // Sometimes more than k, which the configuration check must refuse.
        tokens: u32::from(input.tokens) % (k + 2),
        height: Height::new(input.h1.value(), input.h2.value(), id),
        neighbors: input
            .neighbors
            .iter()
            .take(8)
            .map(|&(p, h1, h2)| Height::new(h1.value(), h2.value(), p.id()))
            .collect(),
        forwarding: input.forwarding,
    };
    let Ok(mut node) = Node::new(config) else {
        return;
    };
    for (i, &event) in input.events.iter().take(MAX_EVENTS).enumerate() {
        let before = node.clone();
        let mut twin = node.clone();
        let outcome = node
            .handle(event.event())
            .map(|actions| actions.collect::<Vec<_>>());
        let twin_outcome = twin
            .handle(event.event())
            .map(|actions| actions.collect::<Vec<_>>());
        assert_eq!(
            outcome, twin_outcome,
            "event {i} ({event:?}): handle is not deterministic"
        );
        assert!(
            node == twin,
            "event {i} ({event:?}): handle is not deterministic"
        );
        match outcome {
            Err(e) => {
                assert!(
                    misuse(&before, &event),
                    "event {i} ({event:?}) rejected: {e}"
                );
                assert!(
                    node == before,
                    "event {i} ({event:?}) returned {e} but changed the node"
                );
            }
            Ok(actions) => {
                assert!(
                    !misuse(&before, &event),
                    "event {i} ({event:?}) accepted while misuse"
                );
                if let Err(e) = check_consistent(&node, &actions) {
                    panic!("after event {i} ({event:?}): {e}\n{node:?}");
                }
            }
        }
    }
}
