//! The hosts routed mode can run, and the invariants checked after every step.

use std::fmt;

use crate::look_ahead::{self, Relation};
use crate::{ricart_agrawala, Error, NodeId, Protocol, Status};

/// A permission-based node the routed simulator can drive and check.
pub trait Host: Protocol + Clone + fmt::Debug {
    /// Whether the node understands doze/disconnect/reconnect events.
    const MODES: bool;

    /// Node `id` of `hosts`; `seed` draws any initial randomness, `retransmit_ms` is the
    /// REQUEST timeout in milliseconds.
    fn create(id: NodeId, hosts: u32, seed: u64, retransmit_ms: u64) -> Result<Self, Error>;

    /// Whether this node asks `peer` before entering (it is in `Info_set`).
    fn asks(&self, peer: NodeId) -> bool;

    /// The node's own structural invariants.
    fn check_local(&self) -> Result<(), String>;
}

impl Host for look_ahead::Node {
    const MODES: bool = true;

    fn create(id: NodeId, hosts: u32, seed: u64, retransmit_ms: u64) -> Result<Self, Error> {
        look_ahead::Node::new(look_ahead::Config::seeded(id, hosts, seed, retransmit_ms))
    }

    fn asks(&self, peer: NodeId) -> bool {
        self.relation(peer) == Some(Relation::Info)
    }

    /// `Info_set` and `Status_set` partition the other hosts; every deferred requester is in
    /// `Info_set` (the REPLY it is owed moves us into its `Status_set`); a peer counted as
    /// absent is in `Status_set` and owes no REPLY; REPLYs are awaited exactly while waiting.
    fn check_local(&self) -> Result<(), String> {
        let me = self.id();
        let info: Vec<NodeId> = self.info_set().collect();
        let status: Vec<NodeId> = self.status_set().collect();
        let mut all: Vec<NodeId> = info.iter().chain(&status).copied().collect();
        all.sort();
        let expected: Vec<NodeId> = (0..self.hosts()).map(NodeId).filter(|&p| p != me).collect();
        if all != expected {
            return Err(format!(
                "{me:?}: Info_set {info:?} and Status_set {status:?} do not partition the others"
            ));
        }
        if let Some(p) = self.q_req().find(|&p| !self.asks(p)) {
            return Err(format!(
                "{me:?}: owes {p:?} a REPLY but has it in Status_set"
            ));
        }
        let needed = expected.iter().copied().filter(|&p| self.asks(p));
        if let Some(p) = needed
            .chain(self.outstanding())
            .find(|&p| self.is_absent(p))
        {
            return Err(format!(
                "{me:?}: counts {p:?} as absent but asks it or waits for its REPLY"
            ));
        }
        waits_match_status(me, self.status(), self.outstanding().count())
    }
}

impl Host for ricart_agrawala::Node {
    const MODES: bool = false;

    fn create(id: NodeId, hosts: u32, _seed: u64, retransmit_ms: u64) -> Result<Self, Error> {
        ricart_agrawala::Node::new(ricart_agrawala::Config {
            id,
            hosts,
            retransmit_after: retransmit_ms,
        })
    }

    fn asks(&self, _peer: NodeId) -> bool {
        true
    }

    fn check_local(&self) -> Result<(), String> {
        waits_match_status(self.id(), self.status(), self.outstanding().count())
    }
}

/// A waiting host always has a REPLY outstanding (with its retransmission timer), otherwise it
/// would have entered; other hosts wait for nothing. This is what makes a waiting host's
/// request impossible to lose.
fn waits_match_status(me: NodeId, status: Status, outstanding: usize) -> Result<(), String> {
    match (status, outstanding) {
        (Status::Waiting, 0) => Err(format!("{me:?}: waiting with no REPLY outstanding")),
        (Status::Waiting, _) | (_, 0) => Ok(()),
        (s, k) => Err(format!("{me:?}: {k} REPLYs outstanding while {s:?}")),
    }
}

/// The safety invariants over all hosts:
/// - at most one host is in the critical section;
/// - every host's own invariants ([`Host::check_local`]; for look-ahead, the partition);
/// - pairwise consistency in the form that holds in every state, transient ones included:
///   of any two hosts, at least one has the other in its `Info_set`
///   (`S_j ∈ Status_i ⇒ S_i ∈ Info_j`). The paper's stronger form (exactly one of the two)
///   fails transiently, e.g. while a host defers a competitor's request, after concurrent
///   announcements, or when a REPLY was lost; see `docs/ALGORITHMS.md`.
pub fn check<H: Host>(nodes: &[H]) -> Result<(), String> {
    let inside: Vec<NodeId> = nodes
        .iter()
        .filter(|n| n.status() == Status::Critical)
        .map(|n| n.id())
        .collect();
    if inside.len() > 1 {
        return Err(format!(
            "hosts {inside:?} are in the critical section together"
        ));
    }
    for n in nodes {
        n.check_local()?;
    }
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            if !a.asks(b.id()) && !b.asks(a.id()) {
                return Err(format!(
                    "{:?} and {:?} each have the other in Status_set: neither would ask",
                    a.id(),
                    b.id()
                ));
            }
        }
    }
    Ok(())
}
