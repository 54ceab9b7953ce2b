//! The safety and quiescence invariants of KRL, as pure checks over a whole system. The
//! simulator, the property tests, the model checker and the fuzz targets all use these.
//!
//! Both token algorithms' modules have the same checks, with the same parameter order (the
//! nodes, then what the network agrees on, then the rest), each returning the first
//! [`Violation`] found: [`check_safety`] over a whole system, made of [`check_node`] per node
//! and [`check_tally`] over the network-wide counts ([`Tally`]), and for quiescent systems
//! [`check_settled`] and [`check_quiescent`]. The rules, as [`Violation::rule`] names them:
//!
//! | rule | check | what must hold |
//! | --- | --- | --- |
//! | `cs-holds-token` | [`check_node`] | a node is in the critical section only with a token |
//! | `own-request` | [`check_node`] | a waiting node's own id is in its queue, and only a waiting node's |
//! | `k-exclusion` | [`check_tally`] | at most `k` nodes in the critical section |
//! | `token-count` | [`check_tally`] | `k` tokens held or in flight |
//! | `token-ids` | [`check_tally`] | every token id of `0..k` held or in flight, once |
//! | `settled-idle` | [`check_settled`] | no queue holds a request |
//! | `settled-handshake` | [`check_settled`] | no token awaits its acknowledgement, every member of `N` finished its handshake |
//! | `handshake-complete` | [`check_quiescent`] | no link is still forming |
//! | `known-neighbour` | [`check_quiescent`] | every neighbour is a node of the system |
//! | `height-view` | [`check_quiescent`] | no node sees a neighbour below it that is above it |
//! | `token-oriented` | [`check_quiescent`] | every sink holds a token |

use alloc::format;

use super::{Message, Node};
use crate::{NodeId, Protocol, Status, Violation};

/// Safety, checked after every step:
/// - at most `k` nodes are in the critical section, and each holds a token;
/// - tokens held plus tokens in flight equal `k` (none created or lost), and every token id
///   of `0..k` is among them (so each exactly once: none duplicated);
/// - a waiting node's own request is in its queue (it is never dropped), and only a waiting
///   node's queue holds its own id.
///
/// It is [`check_node`] on every node, in order, then [`check_tally`] on the sum of every
/// node's and every message's [`Tally`]: a caller that knows which nodes and messages a step
/// changed can check only those nodes and keep the sum up to date (the token simulator does).
pub fn check_safety<'a>(
    nodes: &[Node],
    in_flight: impl IntoIterator<Item = (NodeId, NodeId, &'a Message)>,
) -> Result<(), Violation> {
    let Some(k) = nodes.first().map(|n| n.settings().k) else {
        return Ok(());
    };
    let mut total = Tally::default();
    for node in nodes {
        check_node(node)?;
        total += Tally::of_node(node);
    }
    for (_, _, m) in in_flight {
        total += Tally::of_message(m);
    }
    check_tally(k, total)
}

/// What a node or a message in flight contributes to the network-wide counts that
/// [`check_safety`] bounds. Sums of tallies are tallies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Nodes in the critical section.
    pub in_cs: u64,
    /// Tokens held by nodes.
    pub held: u64,
    /// Tokens in flight.
    pub flying: u64,
    /// The token ids held or in flight, as a parity mask: bit `id % 64` flips for each. With
    /// `held + flying = k ≤ 64`, the mask of `0..k` means each id exactly once.
    pub ids: u64,
}

/// The bit of token `id` in [`Tally::ids`].
fn id_bit(id: u32) -> u64 {
    1 << (id % 64)
}

/// [`Tally::ids`] of every token id in `0..k`, once.
fn all_ids(k: u32) -> u64 {
    (0..k).fold(0, |mask, id| mask ^ id_bit(id))
}

impl Tally {
    /// A node's contribution.
    pub fn of_node(node: &Node) -> Self {
        Tally {
            in_cs: u64::from(node.status() == Status::Critical),
            held: u64::from(node.tokens()),
            flying: 0,
            ids: node.held_tokens().fold(0, |mask, t| mask ^ id_bit(t.lane)),
        }
    }

    /// A message's contribution while it is in flight.
    pub fn of_message(msg: &Message) -> Self {
        // A token whose identity does not read counts without an id: it will be refused.
        let id = msg.token_fence().and_then(|f| f.read());
        Tally {
            flying: u64::from(msg.is_token()),
            ids: id.map_or(0, |t| id_bit(t.lane)),
            ..Tally::default()
        }
    }
}

impl core::ops::AddAssign for Tally {
    fn add_assign(&mut self, other: Self) {
        self.in_cs += other.in_cs;
        self.held += other.held;
        self.flying += other.flying;
        self.ids ^= other.ids;
    }
}

impl core::ops::SubAssign for Tally {
    fn sub_assign(&mut self, other: Self) {
        self.in_cs -= other.in_cs;
        self.held -= other.held;
        self.flying -= other.flying;
        self.ids ^= other.ids;
    }
}

/// The part of [`check_safety`] about one node alone: in the critical section only with a
/// token, and its own id in its queue exactly while it waits.
pub fn check_node(node: &Node) -> Result<(), Violation> {
    let at = Some(node.id());
    let own_queued = node.queue().any(|q| q == node.id());
    match node.status() {
        Status::Critical if node.tokens() == 0 => {
            return Err(Violation::new(
                "cs-holds-token",
                at,
                "in the critical section without a token",
            ));
        }
        Status::Waiting if !own_queued => {
            return Err(Violation::new(
                "own-request",
                at,
                "waiting but its own request left its queue",
            ));
        }
        _ => {}
    }
    if own_queued && node.status() != Status::Waiting {
        let detail = format!("queues itself while {:?}", node.status());
        return Err(Violation::new("own-request", at, detail));
    }
    Ok(())
}

/// The part of [`check_safety`] about the whole network, given the sum of every node's and
/// every in-flight message's [`Tally`]: at most `k` nodes in the critical section, and exactly
/// `k` tokens held or in flight, with ids `0..k` (exactly so for `k ≤ 64`; beyond, ids are
/// told apart modulo 64).
pub fn check_tally(k: u32, total: Tally) -> Result<(), Violation> {
    let Tally {
        in_cs,
        held,
        flying,
        ids,
    } = total;
    if in_cs > u64::from(k) {
        let detail = format!("{in_cs} nodes in the critical section, k = {k}");
        return Err(Violation::new("k-exclusion", None, detail));
    }
    if held + flying != u64::from(k) {
        let detail = format!("{held} tokens held + {flying} in flight != k = {k}");
        return Err(Violation::new("token-count", None, detail));
    }
    if ids != all_ids(k) {
        let detail = format!(
            "token ids held or in flight {ids:#x} are not 0..{k} once each ({:#x})",
            all_ids(k)
        );
        return Err(Violation::new("token-ids", None, detail));
    }
    Ok(())
}

/// Once nothing is in flight and no node wants the critical section, every queue is empty, no
/// token awaits its acknowledgement, and every member of `N` has finished its handshake. This
/// much holds whatever the link layer and corruption did (see [`check_quiescent`] for what
/// does not): a link whose peer's LinkInfo crossed the node's own `LinkUp` may stay half formed
/// until one of its ends needs it and asks (`docs/ALGORITHMS.md`, T1).
pub fn check_settled(nodes: &[Node]) -> Result<(), Violation> {
    for node in nodes {
        let at = Some(node.id());
        if let Some(q) = node.queue().next() {
            let detail = format!("still queues {q:?} at quiescence");
            return Err(Violation::new("settled-idle", at, detail));
        }
        for n in node.neighbors().entries() {
            if !n.received_li() || n.in_n == n.forming {
                let detail = format!(
                    "its handshake with {:?} is inconsistent at quiescence: {n:?}",
                    n.id
                );
                return Err(Violation::new("settled-handshake", at, detail));
            }
        }
    }
    Ok(())
}

/// Once nothing is in flight and no node wants the critical section, [`check_settled`], and:
/// - every link handshake is complete;
/// - no node believes a neighbour is below it when it is really above: that is the one wrong
///   view that would send a request uphill, where it is refused (the requester then learns
///   the truth and reroutes, but in a run without corruption it never has to). The opposite
///   error is allowed: a node that lowers itself tells only the neighbours whose link flips,
///   so those that stay above keep a too-high value of it, which still gives the right
///   direction for them — but a later change of their own height can leave them seeing the
///   link upward.
/// - the true heights form a token-oriented DAG: every node without a lower neighbour (a sink)
///   holds a token, so every node has a downhill path to a token holder.
///
/// These hold when every link event reaches both ends at once and nothing is corrupted. A
/// height corrupted in flight can leave a wrong view of its sender until the sender next
/// speaks, and a half-formed link is outside the DAG; then only [`check_settled`] holds at
/// quiescence, and what the protocol guarantees instead is that no wrong view or half-formed
/// link keeps a request from being served.
pub fn check_quiescent(nodes: &[Node]) -> Result<(), Violation> {
    check_settled(nodes)?;
    let height_of = |id: NodeId| nodes.get(id.index()).map(Node::height);
    for node in nodes {
        let at = Some(node.id());
        let mut has_lower = false;
        for n in node.neighbors().entries() {
            if n.forming {
                let detail = format!(
                    "its handshake with {:?} is incomplete at quiescence: {n:?}",
                    n.id
                );
                return Err(Violation::new("handshake-complete", at, detail));
            }
            let Some(actual) = height_of(n.id) else {
                let detail = format!("has unknown neighbour {:?}", n.id);
                return Err(Violation::new("known-neighbour", at, detail));
            };
            let seen_lower = n.height < node.height();
            let is_lower = actual < node.height();
            if seen_lower && !is_lower {
                let detail = format!(
                    "sees {:?} at {:?} but it is at {actual:?} (own {:?}): a request would go uphill",
                    n.id,
                    n.height,
                    node.height()
                );
                return Err(Violation::new("height-view", at, detail));
            }
            has_lower |= is_lower;
        }
        if !has_lower && !node.holds_token() && !node.neighbors().is_empty() {
            return Err(Violation::new(
                "token-oriented",
                at,
                "a sink without a token: the DAG is not token oriented",
            ));
        }
    }
    Ok(())
}
