//! The safety and quiescence invariants of the prioritized algorithm, as pure checks over a
//! whole system. The simulator, the property tests, the model checker and the fuzz targets all
//! use these.
//!
//! Both token algorithms' modules have the same checks, with the same parameter order (the
//! nodes, then what the network agrees on: `k` and the `capacity` left, then the rest), each
//! returning the first [`Violation`] found: [`check_safety`] over a whole system, made of
//! [`check_node`] per node and [`check_tally`] over the network-wide counts ([`Tally`]), and
//! for quiescent systems [`check_settled`] and [`check_quiescent`]. The rules, as
//! [`Violation::rule`] names them:
//!
//! | rule | check | what must hold |
//! | --- | --- | --- |
//! | `capacity` | [`check_safety`] | the `capacity` asked for is at most `k` |
//! | `token-resources` | [`check_node`] | a holder's `t` is at most `k` |
//! | `next-pointer` | [`check_node`] | `next` is the node itself exactly while it holds the token |
//! | `holder-serves` | [`check_node`] | a holder never sits on the token while it could serve the front of its queue |
//! | `own-request` | [`check_node`] | a node in the critical section holds what it asked for, a waiting one's request is in its queue, one in the remainder has none |
//! | `queue-members` | [`check_node`] | a queue holds only the node itself and members of `N` |
//! | `token-count` | [`check_tally`] | exactly one token, held or in flight |
//! | `resource-count` | [`check_tally`] | the resources add up to `capacity` |
//! | `settled-idle` | [`check_settled`] | every node is in the remainder section with an empty queue |
//! | `settled-handshake` | [`check_settled`] | no token awaits its acknowledgement, every member of `N` finished its handshake |
//! | `handshake-complete` | [`check_quiescent`] | no link is still forming |
//! | `height-view` | [`check_quiescent`] | every view of a neighbour's height is the truth |
//! | `token-oriented` | [`check_quiescent`] | every node but the holder has a lower neighbour |

use alloc::format;

use crate::{NodeId, Protocol, Status, Violation};

use crate::token::height::Height;

use super::{Message, Node};

/// Check a snapshot of a whole system: every node, and every message in flight (TOKEN and
/// RELEASE count; the rest carry no resources). Returns the first violation found.
///
/// `capacity` is `k`, less the resources known to have been lost to corruption (a TOKEN or
/// RELEASE counts what its receiver will read: its copies by majority, else the smallest
/// possible one; a RELEASE whose check word fails counts nothing, P15).
///
/// - exactly one token, held or in flight, with `0 ≤ t ≤ k`;
/// - Σ resources held in the CS + `t` + Σ in-flight RELEASEs + Σ release backlogs =
///   `capacity` (never more than `k`);
/// - a node in the CS holds what it asked for (`1..=k`); a waiting node's own request is in
///   its queue (never lost); a node in the remainder has none;
/// - queues hold only the node itself and current neighbours (at most once each: by
///   construction of the queue);
/// - `next` is the node itself exactly when it holds the token, and a holder never sits on
///   the token while it could serve the front of its queue.
///
/// It is [`check_node`] on every node, in order, then [`check_tally`] on the sum of every
/// message's and every node's [`Tally`]: a caller that knows which nodes and messages a step
/// changed can check only those nodes and keep the sum up to date (the token simulator does).
pub fn check_safety<'a>(
    nodes: &[Node],
    capacity: u32,
    in_flight: impl IntoIterator<Item = (NodeId, NodeId, &'a Message)>,
) -> Result<(), Violation> {
    let Some(k) = nodes.first().map(|n| n.settings().k) else {
        return Ok(());
    };
    if capacity > k {
        let detail = format!("capacity {capacity} above k = {k}");
        return Err(Violation::new("capacity", None, detail));
    }
    let mut total = Tally::default();
    for (_, _, msg) in in_flight {
        total += Tally::of_message(msg, k);
    }
    for node in nodes {
        check_node(node, k)?;
        total += Tally::of_node(node);
    }
    check_tally(k, capacity, total)
}

/// What a node or a message in flight contributes to the network-wide counts that
/// [`check_safety`] bounds. Sums of tallies are tallies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Tokens, held or in flight.
    pub tokens: u64,
    /// Resources: held in the critical section, carried by the token (`t`), in in-flight
    /// RELEASEs, and in release backlogs.
    pub total: u64,
}

impl Tally {
    /// A node's contribution.
    pub fn of_node(node: &Node) -> Self {
        let t = node.available();
        Tally {
            tokens: u64::from(t.is_some()),
            total: u64::from(t.unwrap_or(0))
                + u64::from(node.held())
                + u64::from(node.release_backlog()),
        }
    }

    /// A message's contribution while it is in flight, in a network with `k` resources. A
    /// RELEASE whose check word fails contributes nothing: its receiver will not add it (W2).
    pub fn of_message(msg: &Message, k: u32) -> Self {
        match *msg {
            Message::Token { available, .. } => Tally {
                tokens: 1,
                total: u64::from(available.read(k).0),
            },
            Message::Release {
                resources, height, ..
            } => Tally {
                tokens: 0,
                total: if height.is_intact() {
                    u64::from(resources.read(k).0)
                } else {
                    0
                },
            },
            _ => Tally::default(),
        }
    }
}

impl core::ops::AddAssign for Tally {
    fn add_assign(&mut self, other: Self) {
        self.tokens += other.tokens;
        self.total += other.total;
    }
}

impl core::ops::SubAssign for Tally {
    fn sub_assign(&mut self, other: Self) {
        self.tokens -= other.tokens;
        self.total -= other.total;
    }
}

/// The part of [`check_safety`] about one node alone, in a network with `k` resources: what
/// it holds, its `next`, its request and its queue.
pub fn check_node(node: &Node, k: u32) -> Result<(), Violation> {
    let id = node.id();
    let broken = |rule, detail| Err(Violation::new(rule, Some(id), detail));
    if let Some(t) = node.available() {
        if t > k {
            return broken("token-resources", format!("holds t = {t} > k = {k}"));
        }
        if node.next() != Some(id) {
            let detail = format!("holds the token but next = {:?}", node.next());
            return broken("next-pointer", detail);
        }
        if let Some((front, _)) = node.queue.front() {
            if front != id || node.requested().is_some_and(|h| h <= t) {
                let detail = format!("sits on the token with {front:?} servable");
                return broken("holder-serves", detail);
            }
        }
    } else if node.next() == Some(id) {
        return broken("next-pointer", "has next = itself without the token".into());
    }
    let own = node.queue.contains(id);
    let wanted_ok = (1..=k).contains(&node.wanted);
    match node.status() {
        Status::Critical if !wanted_ok || own => {
            let detail = format!("in the CS with {} resources", node.wanted);
            return broken("own-request", detail);
        }
        Status::Waiting if !wanted_ok || !own => {
            return broken("own-request", "waits but its request is lost".into());
        }
        Status::Remainder if own || node.wanted != 0 => {
            let detail = "in the remainder with an open request".into();
            return broken("own-request", detail);
        }
        _ => {}
    }
    if let Some((v, _)) = node
        .queue()
        .find(|&(v, _)| v != id && !node.neighbors().is_member(v))
    {
        let detail = format!("queues {v:?}, which is not a neighbour");
        return broken("queue-members", detail);
    }
    Ok(())
}

/// The part of [`check_safety`] about the whole network, given the sum of every node's and
/// every in-flight message's [`Tally`]: exactly one token, and the resources add up to
/// `capacity`.
pub fn check_tally(k: u32, capacity: u32, total: Tally) -> Result<(), Violation> {
    let Tally { tokens, total } = total;
    if tokens != 1 {
        let detail = format!("{tokens} tokens (held or in flight), expected 1");
        return Err(Violation::new("token-count", None, detail));
    }
    if total != u64::from(capacity) {
        let detail = format!(
            "held + t + releases in flight + backlogs = {total}, expected {capacity} (k = {k})"
        );
        return Err(Violation::new("resource-count", None, detail));
    }
    Ok(())
}

/// Check a quiescent system (nothing in flight, nobody waiting or in the CS): every node is
/// idle, no token awaits its acknowledgement, and every member of `N` has finished its
/// handshake. This much holds whatever the link layer and corruption did; a link whose peer's
/// first LINK crossed the node's own `LinkUp` may stay half formed until an end needs it (T1).
pub fn check_settled(nodes: &[Node]) -> Result<(), Violation> {
    for node in nodes {
        let at = Some(node.id());
        if node.status() != Status::Remainder || node.queue().len() != 0 {
            return Err(Violation::new("settled-idle", at, "not idle"));
        }
        if let Some(nb) = node
            .neighbors()
            .entries()
            .find(|nb| nb.in_n == nb.forming || !nb.received_li())
        {
            let detail = format!("its handshake with {:?} is inconsistent: {nb:?}", nb.id);
            return Err(Violation::new("settled-handshake", at, detail));
        }
    }
    Ok(())
}

/// Check a quiescent system: [`check_settled`], every handshake is complete, every view of a
/// neighbour's height is the truth, and every node but the token holder has a lower neighbour,
/// so the heights form a token-oriented DAG. These hold when link events reach both ends at
/// once and nothing is corrupted; a corrupted height can leave a wrong view of its sender until
/// it next speaks, and a half-formed link is outside the DAG.
pub fn check_quiescent(nodes: &[Node]) -> Result<(), Violation> {
    check_settled(nodes)?;
    let truth = |id: crate::NodeId| -> Option<Height> {
        nodes.iter().find(|n| n.id() == id).map(Node::height)
    };
    for node in nodes {
        let at = Some(node.id());
        for nb in node.neighbors().entries() {
            if nb.forming {
                let detail = format!("its handshake with {:?} is incomplete: {nb:?}", nb.id);
                return Err(Violation::new("handshake-complete", at, detail));
            }
            if Some(nb.height) != truth(nb.id) {
                let detail = format!("its view of {:?} is stale: {nb:?}", nb.id);
                return Err(Violation::new("height-view", at, detail));
            }
        }
        let has_lower = node
            .neighbors()
            .members()
            .any(|nb| nb.height < node.height());
        let has_neighbors = node.neighbors().members().next().is_some();
        if !node.holds_token() && has_neighbors && !has_lower {
            let detail = "has no way down to the token";
            return Err(Violation::new("token-oriented", at, detail));
        }
    }
    Ok(())
}
