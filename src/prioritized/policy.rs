//! Priority policies.

use crate::queue::Priority;
use crate::{CsRequest, NodeId};

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
    pub(crate) fn priority(self, id: NodeId, req: CsRequest, k: u32) -> Priority {
        match self {
            Policy::Explicit => Priority::new(u64::from(req.priority), 0),
            Policy::Equal => Priority::new(0, 0),
            Policy::MaxConcurrency => {
                Priority::new(u64::from(k.saturating_sub(req.resources)), id.0)
            }
        }
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
