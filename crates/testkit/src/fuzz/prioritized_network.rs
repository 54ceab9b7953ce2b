//! Fuzz body: a small network running the prioritized h-out-of-k algorithm, driven by an
//! arbitrary schedule of steps (requests for any valid number of resources at any priority,
//! releases, deliveries, link failures and formations) and faults (corruption of a field, the
//! kind or the frame bits of a message in flight, and link events noticed at one end at a
//! time; [`crate::schedule`]), with `prioritized::invariants::check_safety` (at the capacity
//! corruption left, `TokenHarness::lost`) checked after each one and, at the end, a fair drain
//! that must serve every waiting node whose request fits in what is left and go quiet with
//! `check_quiescent` holding.
//!
//! An input may select recovery of lost tokens ([`Recovering`]), as in
//! [`super::reverse_link_network`]: [`harness_recovery`] and the failure faults.
//!
//! Compiled into the `prioritized_network` fuzz target (`fuzz/`) and run over seeded inputs by
//! `tests/faults/fuzz_prioritized.rs`. Any panic is a finding. The input layout is frozen: the
//! reproducers in `fuzz/regressions/prioritized_network/` decode through it;
//! [`run_as_recorded`] replays them as they were recorded (before kind changes and flips).

use arbitrary::Arbitrary;
use manet_mutex::prioritized::{Node, Policy, Settings};
use manet_mutex::{CsRequest, NodeId};
use manet_mutex_sim::Params;

use super::token_network::{token_network_entry_points, NetworkInput, Recovering};
use super::Topology;
use crate::schedule::{TimedFault, TokenOp};
use crate::{harness_majority, harness_recovery, TokenNet};

/// The frozen layout of the input's fields before its faults.
#[derive(Arbitrary)]
struct Layout {
    topology: Topology,
    resources: u8,
    policy: u8,
    aging: u8,
    holder: u8,
    #[arbitrary(with = crate::fuzz::sized_vec)]
    ops: Vec<TokenOp<(u8, u32)>>,
}

impl Layout {
    fn with(
        self,
        faults: Vec<TimedFault>,
        selectors: Vec<u8>,
        recovering: Recovering,
        majority: bool,
    ) -> Input {
        let Layout {
            topology,
            resources,
            policy,
            aging,
            holder,
            ops,
        } = self;
        Input {
            topology,
            resources,
            policy,
            aging,
            holder,
            ops,
            faults,
            selectors,
            recovering,
            majority,
        }
    }
}

/// A network of 2 to 6 nodes and what happens to it. It decodes from fuzzer bytes through
/// the frozen layout (`arbitrary`), then its faults and the byte that selects recovery.
#[derive(Debug, Clone)]
pub struct Input {
    /// The initial topology.
    pub topology: Topology,
    /// `k = 1 + resources % 4`.
    pub resources: u8,
    /// The priority policy, modulo the three.
    pub policy: u8,
    /// `1 + aging % 3`.
    pub aging: u8,
    /// The initial token holder, modulo `n`.
    pub holder: u8,
    /// Requests ask for `1 + resources % k` at the given priority.
    pub ops: Vec<TokenOp<(u8, u32)>>,
    /// Corruption (a field, the kind, or bits of the frame, which the link session
    /// retransmits), link events noticed at one end at a time, and (from a strategy) the
    /// failure faults.
    pub faults: Vec<TimedFault>,
    /// Per fault decoded from fuzzer bytes, the free bits of its variant choice that say,
    /// with recovery, which failure a link fault stands for (none for an input built
    /// otherwise).
    pub selectors: Vec<u8>,
    /// Whether the network runs recovery, and how its timers fire.
    pub recovering: Recovering,
    /// With recovery, in majority mode ([`harness_majority`]: claims need a majority's
    /// promises, F9): bit 0 of the byte after the one that selects recovery.
    pub majority: bool,
}

impl Input {
    /// `k`.
    fn k(&self) -> u32 {
        1 + u32::from(self.resources % 4)
    }
}

impl NetworkInput for Input {
    type Node = Node;
    type Request = (u8, u32);

    fn build(&self) -> (TokenNet<Node>, Params<Settings>) {
        let graph = self.topology.graph();
        let policy =
            [Policy::Explicit, Policy::Equal, Policy::MaxConcurrency][usize::from(self.policy) % 3];
        let mut settings =
            Settings::new(self.k(), policy).with_aging_step(1 + u64::from(self.aging % 3));
        if self.recovering.on() {
            let recovery = if self.majority {
                harness_majority(graph.n())
            } else {
                harness_recovery(graph.n())
            };
            settings = settings.with_recovery(recovery);
        }
        let holder = NodeId(u32::from(self.holder) % graph.n() as u32);
        let params = Params::new(settings, vec![holder]);
        let net = TokenNet::new(graph, &params)
            .unwrap_or_else(|e| panic!("a connected network must build: {e}"));
        (net, params)
    }

    fn request(&self, (resources, priority): (u8, u32)) -> CsRequest {
        CsRequest {
            resources: 1 + u32::from(resources) % self.k(),
            priority,
        }
    }

    fn schedule(&self) -> (&[TokenOp<(u8, u32)>], &[TimedFault]) {
        (&self.ops, &self.faults)
    }

    fn faults_mut(&mut self) -> &mut Vec<TimedFault> {
        &mut self.faults
    }

    fn recovering_mut(&mut self) -> &mut Recovering {
        &mut self.recovering
    }

    fn effective_faults(&self) -> Vec<TimedFault> {
        super::token_network::effective_faults(&self.faults, &self.selectors, self.recovering)
    }
}

token_network_entry_points!(Node, "prioritized_network");
