//! The look-ahead algorithm's safety invariants over all hosts (checked after every step of
//! every simulation, property test, model and fuzz run).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Node, Relation};
use crate::permission::{one_inside, waits_match_status};
use crate::{NodeId, Protocol};

/// The safety invariants:
/// - at most one host is in the critical section;
/// - every host's own invariants ([`check_host`]);
/// - pairwise consistency in the form that holds in every state, transient ones included: of
///   any two hosts, at least one has the other in its `Info_set`
///   (`S_j ∈ Status_i ⇒ S_i ∈ Info_j`). The paper's stronger form (exactly one of the two)
///   fails transiently, e.g. while a host defers a competitor's request, after concurrent
///   announcements, or when a REPLY was lost; see `docs/ALGORITHMS.md`.
pub fn check_safety(nodes: &[Node]) -> Result<(), String> {
    one_inside(nodes)?;
    for n in nodes {
        check_host(n)?;
    }
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            if !asks(a, b.id()) && !asks(b, a.id()) {
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

/// Whether `node` asks `peer` before entering (it is in `Info_set`).
pub fn asks(node: &Node, peer: NodeId) -> bool {
    node.relation(peer) == Some(Relation::Info)
}

/// One host's own invariants: `Info_set` and `Status_set` partition the other hosts; every
/// deferred requester is in `Info_set` (the REPLY it is owed moves us into its `Status_set`);
/// a peer counted as absent is in `Status_set` and owes no REPLY; REPLYs are awaited exactly
/// while waiting.
pub fn check_host(node: &Node) -> Result<(), String> {
    let me = node.id();
    let info: Vec<NodeId> = node.info_set().collect();
    let status: Vec<NodeId> = node.status_set().collect();
    let mut all: Vec<NodeId> = info.iter().chain(&status).copied().collect();
    all.sort();
    let expected: Vec<NodeId> = (0..node.settings().hosts)
        .map(NodeId)
        .filter(|&p| p != me)
        .collect();
    if all != expected {
        return Err(format!(
            "{me:?}: Info_set {info:?} and Status_set {status:?} do not partition the others"
        ));
    }
    if let Some(p) = node.deferred().find(|&p| !asks(node, p)) {
        return Err(format!(
            "{me:?}: owes {p:?} a REPLY but has it in Status_set"
        ));
    }
    let needed = expected.iter().copied().filter(|&p| asks(node, p));
    if let Some(p) = needed
        .chain(node.outstanding())
        .find(|&p| node.is_absent(p))
    {
        return Err(format!(
            "{me:?}: counts {p:?} as absent but asks it or waits for its REPLY"
        ));
    }
    waits_match_status(me, node.status(), node.outstanding().count())
}
