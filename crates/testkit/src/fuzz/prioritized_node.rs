//! Fuzz body: one node of the prioritized h-out-of-k algorithm, arbitrary configuration, fed
//! arbitrary events directly — TOKENs carrying any `t` (beyond `k`, duplicates while holding),
//! RELEASEs of any size, REQUESTs and UPDATEs at any priority, heights naming other nodes or at
//! the extremes of `i64`, messages from strangers, events in the wrong state or unsupported.
//! The rules checked on every event are `node_input::drive`'s; the local consistency is:
//! `t ≤ k`, the resources held in the critical section within `1..=k`, the node's own request
//! queued exactly while it waits, `next` the node itself exactly while it holds the token, the
//! queue holding only itself and members of `N`, messages sent only to linked peers and the
//! token only to members of `N`.
//!
//! Compiled into the `prioritized_node` fuzz target (`fuzz/`) and run over seeded inputs by
//! `tests/faults/fuzz_prioritized.rs`.

use arbitrary::Arbitrary;
use manet_mutex::prioritized::{Config, Message, Node, Policy, Resources, Settings};
use manet_mutex::queue::Priority;
use manet_mutex::{Action, Event, Fence, Protocol, Status};

use super::node_input::{Local, Peer};
use super::token_input::{drive_token_node, height, neighbor_heights, Coord};

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Kind {
    Token { available: (u32, u32) },
    Request,
    Update,
    Release { resources: (u32, u32) },
    Link,
    Probe,
    TokenAck,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum In {
    Local(Local),
    Receive {
        from: Peer,
        kind: Kind,
        priority: (u64, u32),
        h1: Coord,
        h2: Coord,
        owner: Peer,
    },
}

impl In {
    fn event(self) -> Event<Message> {
        match self {
            In::Local(local) => local.event(),
            In::Receive {
                from,
                kind,
                priority: (level, tie),
                h1,
                h2,
                owner,
            } => {
                let at = height(h1, h2, owner);
                let height = at.into();
                // New fields from existing input (the input layout is frozen for the
                // corpora): the tie-break gives a loss report, the level an acknowledged count.
                let lost = Resources::new(tie % 4);
                let priority = Priority::new(level, tie);
                let msg = match kind {
                    Kind::Token {
                        available: (count, copy),
                    } => Message::Token {
                        available: Resources([count, copy, count]),
                        lost,
                        priority,
                        height,
                        // From the level: the input layout is frozen for the corpora.
                        fence: Fence::new(0, level).into(),
                    },
                    Kind::Request => Message::Request { priority, height },
                    Kind::Update => Message::Update { priority },
                    Kind::Release {
                        resources: (count, copy),
                    } => Message::Release {
                        resources: Resources([count, copy, count]),
                        lost,
                        height,
                        // The generation of a node without recovery: the layout is frozen.
                        generation: [0; 3],
                    },
                    Kind::Link => Message::Link { height },
                    Kind::Probe => Message::Probe { height },
                    Kind::TokenAck => Message::token_ack(at, level as u16),
                };
                from.sends(msg)
            }
        }
    }
}

/// One prioritized node: its configuration (possibly invalid) and its events.
#[derive(Debug, Arbitrary)]
pub struct Input {
    id: Peer,
    k: u8,
    policy: u8,
    aging: u8,
    token_holder: bool,
    h1: Coord,
    h2: Coord,
    #[arbitrary(with = crate::fuzz::sized_vec)]
    neighbors: Vec<(Peer, Coord, Coord)>,
    #[arbitrary(with = crate::fuzz::sized_vec)]
    events: Vec<In>,
}

fn consistent(node: &Node, actions: &[Action<Message>]) -> Result<(), String> {
    let (id, k) = (node.id(), node.settings().k);
    if node.available().is_some_and(|t| t > k) {
        return Err(format!("t = {:?} > k = {k}", node.available()));
    }
    if node.status() == Status::Critical && !(1..=k).contains(&node.held()) {
        return Err(format!(
            "in the critical section with {} resources",
            node.held()
        ));
    }
    let own_queued = node.queue().any(|(q, _)| q == id);
    if (node.status() == Status::Waiting) != own_queued {
        return Err(format!(
            "own request queued = {own_queued} while {:?}",
            node.status()
        ));
    }
    if node.holds_token() != (node.next() == Some(id)) {
        return Err(format!(
            "holds the token: {}, next = {:?}",
            node.holds_token(),
            node.next()
        ));
    }
    if let Some((q, _)) = node
        .queue()
        .find(|&(q, _)| q != id && !node.neighbors().is_member(q))
    {
        return Err(format!("queues {q:?}, which is not in N"));
    }
    crate::fuzz::check_leave(
        node.leaving(),
        node.has_left(),
        node.holds_token(),
        !node.neighbors().is_empty(),
        actions,
    )?;
    for action in actions {
        match action {
            Action::Send { to, msg } => {
                let is_token = matches!(msg, Message::Token { .. });
                if node.neighbors().get(*to).is_none()
                    || (is_token && !node.neighbors().is_member(*to))
                {
                    return Err(format!("sent {msg:?} to {to:?}, which it has no link to"));
                }
            }
            Action::EnterCritical { resources, .. } if *resources != node.held() => {
                return Err(format!("entered with {resources}, holds {}", node.held()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Build the node (an invalid configuration must be refused) and feed it the events.
pub fn run(input: &Input) {
    let id = input.id.id();
    let k = 1 + u32::from(input.k % 4);
    let policy =
        [Policy::Explicit, Policy::Equal, Policy::MaxConcurrency][usize::from(input.policy) % 3];
    // The aging step is sometimes 0, which the configuration check must refuse.
    let settings = Settings::new(k, policy).with_aging_step(u64::from(input.aging % 4));
    let neighbors = neighbor_heights(&input.neighbors);
    let own = height(input.h1, input.h2, input.id);
    let config = Config::new(id, settings, input.token_holder, own, neighbors);
    let Ok(node) = Node::new(config) else {
        return;
    };
    drive_token_node(
        node,
        input.events.iter().map(|e| e.event()),
        k,
        Node::leaving,
        consistent,
    );
}
