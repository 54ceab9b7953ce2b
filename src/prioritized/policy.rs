//! Priority policies and node configuration.

use alloc::vec::Vec;

use crate::height::Height;
use crate::neighbors::initial_next;
use crate::queue::Priority;
use crate::{CsRequest, Error, NodeId};

/// How a request's priority is derived. Every policy ages waiting requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Policy {
    /// Real-time / HPFS: the application's [`CsRequest::priority`], larger first; equal
    /// priorities are served in arrival order.
    Explicit,
    /// Every request has the same priority: plain FCFS h-out-of-k (arrival order, aging keeps
    /// it).
    Equal,
    /// Maximum degree of concurrency (Theorem 4 of the 2nd paper): fewer requested resources
    /// first, ties by the requester's id (smaller first); the application priority is ignored.
    MaxConcurrency,
}

impl Policy {
    /// The initial priority of `id`'s request `req` in a system of `k` resources.
    /// `req.resources` must be in `1..=k` (checked by the node before it calls this).
    pub fn priority(self, id: NodeId, req: CsRequest, k: u32) -> Priority {
        match self {
            Policy::Explicit => Priority::new(u64::from(req.priority), 0),
            Policy::Equal => Priority::new(0, 0),
            Policy::MaxConcurrency => {
                Priority::new(u64::from(k.saturating_sub(req.resources)), id.0)
            }
        }
    }
}

/// Settings every node of a system shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Settings {
    /// Number of identical resources, `k ≥ 1`.
    pub k: u32,
    /// How priorities are derived.
    pub policy: Policy,
    /// How much `aging(Q)` raises every queued priority, `≥ 1` (0 would allow starvation).
    pub aging_step: u64,
}

impl Settings {
    /// `k` resources under `policy`, aging step 1.
    pub const fn new(k: u32, policy: Policy) -> Self {
        Settings {
            k,
            policy,
            aging_step: 1,
        }
    }
}

/// One node's initial configuration (build consistent ones with [`super::build_network`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The node's id.
    pub id: NodeId,
    /// Shared settings.
    pub settings: Settings,
    /// The node's initial height; its `id` must be the node's.
    pub height: Height,
    /// The initial neighbours' heights (the node's view equals the truth initially).
    pub neighbors: Vec<Height>,
    /// Whether this node holds the token (with `t = k`) initially.
    pub token_holder: bool,
}

impl Config {
    /// Check the paper's preconditions; on success return the initial `next` (the node itself
    /// for the token holder, else its lowest neighbour; `None` for an isolated node).
    pub(crate) fn validate(&self) -> Result<Option<NodeId>, Error> {
        let bad = |reason| Error::InvalidConfig {
            node: self.id,
            reason,
        };
        if self.settings.k == 0 {
            return Err(bad("k must be at least 1"));
        }
        if self.settings.aging_step == 0 {
            return Err(bad("aging step must be at least 1, or requests can starve"));
        }
        initial_next(self.id, self.height, &self.neighbors, self.token_holder).map_err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_order_requests_as_documented() {
        let k = 5;
        let req = |resources, priority| CsRequest {
            resources,
            priority,
        };
        let e = Policy::Explicit;
        assert!(e.priority(NodeId(1), req(1, 9), k) > e.priority(NodeId(0), req(1, 3), k));
        let q = Policy::Equal;
        assert_eq!(
            q.priority(NodeId(1), req(5, 9), k),
            q.priority(NodeId(0), req(1, 0), k)
        );
        let m = Policy::MaxConcurrency;
        assert!(m.priority(NodeId(9), req(1, 0), k) > m.priority(NodeId(0), req(2, 99), k));
        assert!(m.priority(NodeId(2), req(2, 0), k) > m.priority(NodeId(3), req(2, 0), k));
    }
}
