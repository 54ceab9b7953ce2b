//! What an invariant check reports when a state breaks a rule.

use alloc::string::String;
use core::fmt;

use crate::NodeId;

/// A broken invariant, as every algorithm's `invariants` module reports it: which rule, the
/// node at fault when there is one, and what was found.
///
/// ```
/// use manet_mutex::{NodeId, Violation};
///
/// let v = Violation::new("own-request", Some(NodeId(3)), "waiting, but its request left its queue");
/// assert_eq!(v.to_string(), "own-request at node 3: waiting, but its request left its queue");
/// let v = Violation::new("token-count", None, "2 tokens held + 0 in flight != k = 1");
/// assert_eq!(v.to_string(), "token-count: 2 tokens held + 0 in flight != k = 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Violation {
    /// A short, stable name of the rule broken (`"mutual-exclusion"`, `"token-count"`, …);
    /// each module's docs list its rules.
    pub rule: &'static str,
    /// The node whose own state breaks the rule; `None` for a rule about several nodes or the
    /// whole network.
    pub node: Option<NodeId>,
    /// What was found, in words.
    pub detail: String,
}

impl Violation {
    /// Rule `rule` broken (at `node`, if one node is at fault): `detail` says how.
    pub fn new(rule: &'static str, node: Option<NodeId>, detail: impl Into<String>) -> Self {
        Violation {
            rule,
            node,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.node {
            Some(node) => write!(f, "{} at node {node}: {}", self.rule, self.detail),
            None => write!(f, "{}: {}", self.rule, self.detail),
        }
    }
}

impl core::error::Error for Violation {}
