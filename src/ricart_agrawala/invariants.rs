//! The Ricart–Agrawala safety invariants over all hosts.

use alloc::string::String;

use super::Node;
use crate::permission::{one_inside, waits_match_status};
use crate::Protocol;

/// At most one host is in the critical section, and every host awaits REPLYs exactly while
/// it waits.
pub fn check_safety(nodes: &[Node]) -> Result<(), String> {
    one_inside(nodes)?;
    for n in nodes {
        waits_match_status(n.id(), n.status(), n.outstanding().count())?;
    }
    Ok(())
}
