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
//! | `outstanding-replies` | [`check_node`] | REPLYs are awaited exactly while waiting |

use super::Node;
use crate::permission::{one_inside, waits_match_status};
use crate::{Protocol, Violation};

/// At most one host is in the critical section, and every host's own invariants
/// ([`check_node`]).
pub fn check_safety(nodes: &[Node]) -> Result<(), Violation> {
    one_inside(nodes)?;
    nodes.iter().try_for_each(check_node)
}

/// One host's own invariant: it awaits REPLYs exactly while it waits.
pub fn check_node(node: &Node) -> Result<(), Violation> {
    waits_match_status(node.id(), node.status(), node.outstanding().count())
}
