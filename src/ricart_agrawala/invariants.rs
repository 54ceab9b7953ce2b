//! The Ricart–Agrawala safety invariants over all hosts.
//!
//! Both permission algorithms' modules have the same checks, with the same parameter order as
//! the token algorithms' (the nodes first), each returning the first [`Violation`] found:
//! [`check_safety`] over all hosts, and [`check_node`], the part about one host alone. The
//! rules, as [`Violation::rule`] names them:
//!
//! | rule | check | what must hold |
//! | --- | --- | --- |
//! | `mutual-exclusion` | [`check_safety`] | at most one host in the critical section |
//! | `outstanding-replies` | [`check_node`] | REPLYs are awaited exactly while waiting (in majority mode, a waiting host may await none while it lacks a majority of grants) |
//! | `excluded-not-awaited` | [`check_node`] | no excluded peer's REPLY is awaited |
//!
//! With hosts crashed, check the live ones: a crashed host's state is no longer anyone's.

use super::Node;
use crate::permission::{excluded_not_awaited, one_inside, waits_match_status};
use crate::{Protocol, Violation};

/// At most one host is in the critical section, and every host's own invariants
/// ([`check_node`]).
pub fn check_safety(nodes: &[Node]) -> Result<(), Violation> {
    one_inside(nodes)?;
    nodes.iter().try_for_each(check_node)
}

/// One host's own invariants: it awaits REPLYs exactly while it waits (unless majority mode
/// keeps it out), and none of a peer it excludes.
pub fn check_node(node: &Node) -> Result<(), Violation> {
    excluded_not_awaited(node.id(), node.outstanding(), |p| node.is_excluded(p))?;
    let outstanding = node.outstanding().count();
    waits_match_status(node.id(), node.status(), outstanding, node.has_quorum())
}
