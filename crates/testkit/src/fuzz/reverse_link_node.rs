//! Fuzz body: one KRL/KRLF node, arbitrary configuration, fed arbitrary events directly —
//! messages from strangers and from itself, heights naming other nodes or at the extremes of
//! `i64`, tokens beyond `k`, events in the wrong state, events the algorithm does not support.
//! The rules checked on every event are `node_input::drive`'s; the local consistency is:
//! tokens within `k`, a token in the critical section, the node's own request queued exactly
//! while it waits, the queue holding only itself and linked peers, messages sent only to
//! linked peers and tokens only to members of `N`.
//!
//! Compiled into the `reverse_link_node` fuzz target (`fuzz/`) and run over seeded inputs by
//! `tests/faults/fuzz_reverse_link.rs`.

use arbitrary::Arbitrary;
use manet_mutex::reverse_link::{Config, Message, Node, Settings};
use manet_mutex::{Action, Event, Fence, NodeId, Protocol, Status};

use super::node_input::{Local, Peer};
use super::token_input::{drive_token_node, height, neighbor_heights, Coord};

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Kind {
    Request,
    Token,
    LinkInfo,
    TokenAck,
    Probe,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum In {
    Local(Local),
    Receive {
        from: Peer,
        kind: Kind,
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
                h1,
                h2,
                owner,
            } => {
                let h = height(h1, h2, owner);
                let msg = match kind {
                    Kind::Request => Message::Request(h.into()),
                    // The token's id is the height's owner: the input layout is frozen for
                    // the corpora, and an owner's id covers held, new and impossible ids.
                    Kind::Token => Message::Token(h.into(), Fence::new(owner.id().0, 0).into()),
                    Kind::LinkInfo => Message::LinkInfo(h.into()),
                    // The count from the owner's id, like the token's id above.
                    Kind::TokenAck => Message::token_ack(h, owner.id().0 as u16),
                    Kind::Probe => Message::Probe(h.into()),
                };
                from.sends(msg)
            }
        }
    }
}

/// One KRL/KRLF node: its configuration (possibly invalid) and its events.
#[derive(Debug, Arbitrary)]
pub struct Input {
    id: Peer,
    k: u8,
    tokens: u8,
    h1: Coord,
    h2: Coord,
    #[arbitrary(with = crate::fuzz::sized_vec)]
    neighbors: Vec<(Peer, Coord, Coord)>,
    forwarding: bool,
    #[arbitrary(with = crate::fuzz::sized_vec)]
    events: Vec<In>,
}

fn consistent(node: &Node, actions: &[Action<Message>]) -> Result<(), String> {
    if node.tokens() > node.settings().k {
        return Err(format!(
            "{} tokens, k = {}",
            node.tokens(),
            node.settings().k
        ));
    }
    if node.status() == Status::Critical && node.tokens() == 0 {
        return Err("in the critical section without a token".into());
    }
    if (node.status() == Status::Waiting) != node.queue().any(|q| q == node.id()) {
        return Err(format!("own request queued while {:?}", node.status()));
    }
    let linked = |id: NodeId| node.neighbors().get(id).is_some();
    if let Some(q) = node.queue().find(|&q| q != node.id() && !linked(q)) {
        return Err(format!("queues {q:?}, which is not a neighbour"));
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

/// Build the node (an invalid configuration must be refused) and feed it the events.
pub fn run(input: &Input) {
    let id = input.id.id();
    let k = 1 + u32::from(input.k % 4);
    // Sometimes more than k tokens, which the configuration check must refuse.
    let tokens = u32::from(input.tokens) % (k + 2);
    let neighbors = neighbor_heights(&input.neighbors);
    let settings = Settings::new(k).with_forwarding(input.forwarding);
    let own = height(input.h1, input.h2, input.id);
    // Hand-built holders name their token ids (R14); the fuzzed ones start at 0.
    let config = Config::new(id, settings, tokens, own, neighbors).with_first_token(0);
    let Ok(node) = Node::new(config) else {
        return;
    };
    drive_token_node(
        node,
        input.events.iter().map(|e| e.event()),
        1,
        Node::leaving,
        consistent,
    );
}
