//! The look-ahead algorithm's safety invariants over all hosts (checked after every step of
//! every simulation, property test, model and fuzz run).
//!
//! Both permission algorithms' modules have the same checks, with the same parameter order as
//! the token algorithms' (the nodes first), each returning the first [`Violation`] found:
//! [`check_safety`] over all hosts, and [`check_node`], the part about one host alone. The
//! rules, as [`Violation::rule`] names them:
//!
//! | rule | check | what must hold |
//! | --- | --- | --- |
//! | `mutual-exclusion` | [`check_safety`] | at most one host in the critical section |
//! | `pairwise-info` | [`check_safety`] | of any two hosts, at least one has the other in its `Info_set` |
//! | `set-partition` | [`check_node`] | `Info_set` and `Status_set` partition the other hosts |
//! | `deferred-in-info` | [`check_node`] | every deferred requester is in `Info_set` |
//! | `absent-not-asked` | [`check_node`] | a peer counted as absent or excluded is neither asked nor waited for |
//! | `outstanding-replies` | [`check_node`] | REPLYs are awaited exactly while waiting (in majority mode, a waiting host may await none while it lacks a majority of grants) |
//!
//! With hosts crashed, check the live ones: a crashed host's state is no longer anyone's.

use alloc::format;
use alloc::vec::Vec;

use super::{Node, Relation};
use crate::permission::{one_inside, waits_match_status};
use crate::{NodeId, Protocol, Violation};

/// The safety invariants:
/// - at most one host is in the critical section;
/// - every host's own invariants ([`check_node`]);
/// - pairwise consistency in the form that holds in every state, transient ones included: of
///   any two hosts, at least one has the other in its `Info_set`
///   (`S_j ∈ Status_i ⇒ S_i ∈ Info_j`). The paper's stronger form (exactly one of the two)
///   fails transiently, e.g. while a host defers a competitor's request, after concurrent
///   announcements, or when a REPLY was lost; see `docs/ALGORITHMS.md`.
pub fn check_safety(nodes: &[Node]) -> Result<(), Violation> {
    one_inside(nodes)?;
    for n in nodes {
        check_node(n)?;
    }
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            if !asks(a, b.id()) && !asks(b, a.id()) {
                let detail = format!(
                    "{:?} and {:?} each have the other in Status_set: neither would ask",
                    a.id(),
                    b.id()
                );
                return Err(Violation::new("pairwise-info", None, detail));
            }
        }
    }
    Ok(())
}

/// Whether `node` asks `peer` before entering (it is in `Info_set`).
fn asks(node: &Node, peer: NodeId) -> bool {
    node.relation(peer) == Some(Relation::Info)
}

/// One host's own invariants: `Info_set` and `Status_set` partition the other hosts; every
/// deferred requester is in `Info_set` (the REPLY it is owed moves us into its `Status_set`);
/// a peer counted as absent is in `Status_set` and owes no REPLY; REPLYs are awaited exactly
/// while waiting.
pub fn check_node(node: &Node) -> Result<(), Violation> {
    let me = node.id();
    let broken = |rule, detail| Err(Violation::new(rule, Some(me), detail));
    let info: Vec<NodeId> = node.info_set().collect();
    let status: Vec<NodeId> = node.status_set().collect();
    let mut all: Vec<NodeId> = info.iter().chain(&status).copied().collect();
    all.sort();
    let expected: Vec<NodeId> = (0..node.settings().hosts)
        .map(NodeId)
        .filter(|&p| p != me)
        .collect();
    if all != expected {
        let detail =
            format!("Info_set {info:?} and Status_set {status:?} do not partition the others");
        return broken("set-partition", detail);
    }
    if let Some(p) = node.deferred().find(|&p| !asks(node, p)) {
        let detail = format!("owes {p:?} a REPLY but has it in Status_set");
        return broken("deferred-in-info", detail);
    }
    let needed = expected.iter().copied().filter(|&p| asks(node, p));
    if let Some(p) = needed
        .chain(node.outstanding())
        .find(|&p| node.is_absent(p) || node.is_excluded(p))
    {
        let detail =
            format!("counts {p:?} as absent or excludes it but asks it or waits for its REPLY");
        return broken("absent-not-asked", detail);
    }
    let outstanding = node.outstanding().count();
    waits_match_status(me, node.status(), outstanding, node.has_quorum())
}
