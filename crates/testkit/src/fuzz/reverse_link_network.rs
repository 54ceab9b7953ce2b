//! Fuzz body: a small KRL/KRLF network driven by an arbitrary schedule of steps and faults
//! (corruption of a field, the kind or the frame bits of a message in flight, and link events
//! noticed at one end at a time; [`crate::schedule`]), with every safety invariant checked
//! after each one and, at the end, a fair drain that must serve every waiting node (and, for
//! KRL, go quiet with a token-oriented DAG).
//!
//! An input may select recovery of lost tokens ([`Recovering`]): the network then runs
//! [`harness_recovery`] and its faults include the failure model's (crashes, restarts,
//! partitions and merges, tokens lost on breaking links, and, [`Recovering::AtWill`], timers
//! fired at will), with the checks of [`TokenNet::crash`] and the drain on the network's clock.
//!
//! Compiled into the `reverse_link_network` fuzz target (`fuzz/`) and run over seeded inputs
//! by `tests/faults/fuzz_reverse_link.rs`. Any panic is a finding. The input layout is frozen: the
//! reproducers in `fuzz/regressions/reverse_link_network/` decode through it; [`run_as_recorded`]
//! replays them as they were recorded (before kind changes and flips).

use arbitrary::Arbitrary;
use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex::CsRequest;
use manet_mutex_sim::Params;

use super::token_network::{token_network_entry_points, NetworkInput, Recovering};
use super::Topology;
use crate::schedule::{TimedFault, TokenOp};
use crate::{harness_majority, harness_recovery, TokenNet};

/// The frozen layout of the input's fields before its faults.
#[derive(Arbitrary)]
struct Layout {
    topology: Topology,
    tokens: u8,
    forwarding: bool,
    #[arbitrary(with = crate::fuzz::sized_vec)]
    ops: Vec<TokenOp<()>>,
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
            tokens,
            forwarding,
            ops,
        } = self;
        Input {
            topology,
            tokens,
            forwarding,
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
    /// `k = 1 + tokens % (n - 1)`: `build` refuses a token at every node.
    pub tokens: u8,
    /// KRLF rather than KRL.
    pub forwarding: bool,
    /// Requests are always for one resource.
    pub ops: Vec<TokenOp<()>>,
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

impl NetworkInput for Input {
    type Node = Node;
    type Request = ();

    fn build(&self) -> (TokenNet<Node>, Params<Settings>) {
        let graph = self.topology.graph();
        let k = 1 + self.tokens as u32 % (graph.n() as u32 - 1);
        let mut settings = Settings::new(k).with_forwarding(self.forwarding);
        if self.recovering.on() {
            let recovery = if self.majority {
                harness_majority(graph.n())
            } else {
                harness_recovery(graph.n())
            };
            settings = settings.with_recovery(recovery);
        }
        let params = Params::first_nodes(settings, k);
        let net = TokenNet::new(graph, &params)
            .unwrap_or_else(|e| panic!("a connected network with k < n must build: {e}"));
        (net, params)
    }

    fn request(&self, (): ()) -> CsRequest {
        CsRequest::ONE
    }

    fn schedule(&self) -> (&[TokenOp<()>], &[TimedFault]) {
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

token_network_entry_points!(Node, "reverse_link_network");
