//! A token-network simulation's settings.

use crate::link::{FixedDelay, LinkModel};
use crate::ns2::LinkChange;
use crate::topology::{Graph, LinkPick};
use crate::workload::Workload;
use crate::Time;

use super::Faults;
use manet_mutex::NodeId;

/// A token-network simulation: `P` is the network to build ([`super::Params`]), `L` how
/// messages travel.
#[derive(Debug, Clone)]
pub struct Config<P, L = FixedDelay> {
    /// The initial topology (must be connected for the drain guarantee).
    pub graph: Graph,
    /// Algorithm parameters.
    pub params: P,
    /// Requests and critical sections.
    pub workload: Workload,
    /// Link changes per time unit (`λ_mob`); 0 for a static network.
    pub lambda_mob: f64,
    /// Keep the graph connected during the load phase (the paper's model). When false, any
    /// idle link may fail — nodes can be cut off, even isolated — and when the load phase
    /// ends the simulator forms random links until the graph is connected again, so the drain
    /// still requires every request to be served.
    pub keep_connected: bool,
    /// How a link change picks the link that fails: [`LinkPick::Shuffled`] (the default, the
    /// paper's draws; linear in the links) or [`LinkPick::Sampled`] (expected constant time,
    /// for large networks; other draws, so other runs).
    pub link_pick: LinkPick,
    /// How a message gets to its neighbour ([`crate::link`]; [`Config::new`] sets a
    /// [`FixedDelay`] of 1, [`Config::with_link`] plugs in another model). The simulator keeps
    /// every link FIFO whatever the model, and needs every message delivered.
    pub link: L,
    /// Networks of at least this many nodes look ahead for the cache: as each message is
    /// sent and one event before it is delivered, the simulator asks the CPU for the memory
    /// the receiver will read (`Sim::prefetch_upcoming`). It changes no result, only the time
    /// a large network takes: at 100,000 nodes the state (about 1 KiB a node) is far larger
    /// than the last-level cache and every event otherwise waits on a chain of misses, while
    /// up to 10,000 nodes it fits and the hints cost more than they save (measured on the
    /// 32 MiB cache of `docs/PERFORMANCE.md`'s machine). [`Config::new`] sets
    /// [`Config::PREFETCH_FROM`]; 0 always, `usize::MAX` never.
    pub prefetch_from: usize,
    /// Length of the load phase (requests and link changes happen only in it).
    pub duration: f64,
    /// Requests at fixed times, besides the Poisson ones of `workload` (set its `lambda_req`
    /// to 0 for these alone): a scripted scenario. A node asked while it is not in its
    /// remainder section ignores the request, as for a Poisson one.
    pub script: Vec<(Time, NodeId)>,
    /// Link changes to replay in the load phase, in time order (e.g. derived from an ns-2
    /// mobility file by [`crate::ns2::Trace::link_changes`]), in addition to the random ones
    /// of `lambda_mob`. A link the schedule takes down while messages are in flight on it
    /// fails as soon as it is idle (a token algorithm's link layer reports a failure only
    /// when nothing is in flight; re-checked every message delay, [`LinkModel::fixed_delay`],
    /// or every time unit for a model without one), unless the schedule
    /// brings it back first. `keep_connected` does not apply to them; after the load phase
    /// the simulator joins what they cut apart, as for random changes.
    pub replay: Vec<LinkChange>,
    /// Crashes and partitions ([`Faults::NONE`] by default). Only for an algorithm that
    /// recovers lost tokens ([`super::TokenAlgorithm::recovery`] is `Some`); a run with faults
    /// checks what recovery promises instead of a constant token count (see
    /// [`Config::check_every_step`]).
    pub faults: Faults,
    /// After the load phase, how long waiting nodes may take to enter before it is starvation.
    pub drain_limit: f64,
    /// A run with more messages in flight at once fails as a message storm, rather than
    /// growing until memory runs out (a storm is a protocol bug, or faults its recovery cannot
    /// absorb). [`Config::new`] sets `1,000 n`, which no run of the papers' algorithms comes
    /// near.
    pub max_in_flight: usize,
    /// After the drain, at most how many events the protocol may take to settle (deliver
    /// what is in flight) before the final checks. Not measured: the measurement window
    /// ends when the last request issued has been served and released (see [`crate::Metrics`]).
    /// [`Config::new`] sets `50 n²`; KRLF never settles (its tokens circulate), so the bound
    /// is what ends its run.
    pub settle_steps: usize,
    /// Check the safety invariants after every event.
    ///
    /// Incrementally: a step changes only the nodes it delivers events to and the links it
    /// pushes messages on or pops them from, so after a step the simulator runs
    /// [`super::TokenAlgorithm::check_node`] on the nodes it touched and
    /// [`super::TokenAlgorithm::check_tally`] on a running sum of tallies that it updates as each
    /// node is handled and each message is sent or delivered. Every other node passed its
    /// check when it was last touched and has not changed since, so this is exactly the full
    /// [`crate::Plugin::check_safety`] over the network (see `docs/PERFORMANCE.md`). The
    /// full check still runs after the first step, every [`Config::full_check_every`] steps
    /// and at the end, and there it also compares the running sum with a recount; a failure
    /// is always reported with the full check's message.
    ///
    /// In *fault mode* (a run with [`Config::faults`], or with recovery on a topology that
    /// may come apart: `keep_connected` off or a replay) the number of tokens is no longer
    /// constant, so recovery's promises replace [`super::TokenAlgorithm::check_tally`]: each
    /// touched node's own invariants (not while it is in the critical section on a token
    /// recovery destroyed under it), after every step at most `k` hosts acting (in the
    /// critical section, lease not expired) while the network has been one unchanged part
    /// for a silence, and at the full checks, once quiet, at most one token of each id
    /// per connected part. The fence rule is checked at every entry of every run: a fence is
    /// refused only if a newer generation of its token was admitted before.
    pub check_every_step: bool,
    /// With [`Config::check_every_step`], how many incremental checks run between two full
    /// ones (every node, every message, and a recount of the running tally): 0 runs the full
    /// check after every step, `u64::MAX` only after the first step and at the end.
    /// [`Config::new`] sets `max(4096, 64 n)`, which keeps its cost a small constant per
    /// event.
    pub full_check_every: u64,
    /// How many recent events a failure report keeps (0: none, cheapest).
    pub trace_len: usize,
    /// Record the whole run for the viewer ([`crate::trace`]): [`super::Outcome::recording`], or the
    /// failure's. Costs a view of the node and the text of the event and of every message,
    /// per event.
    pub record: bool,
    /// With [`Config::record`]: go on recording after the measured window closes (every
    /// request served), through the unmeasured settling of what is still in flight. Off by
    /// default: a recording ends with its [`crate::trace::Record::Window`].
    pub record_all: bool,
    /// The RNG seed: a run is a pure function of this configuration.
    pub seed: u64,
}

impl<P> Config<P> {
    /// The default [`Config::prefetch_from`]: 16,384 nodes, about 16 MiB of state, half the
    /// last-level cache of the machine it was measured on.
    pub const PREFETCH_FROM: usize = 16_384;

    /// The paper's defaults (delay 1, CS 1) on `graph`, with checks on and a 64-event trace.
    pub fn new(graph: Graph, params: P, seed: u64) -> Self {
        let full_check_every = (64 * graph.n() as u64).max(4096);
        let n = graph.n().max(1);
        Config {
            graph,
            params,
            workload: Workload::default(),
            lambda_mob: 0.0,
            keep_connected: true,
            link_pick: LinkPick::Shuffled,
            link: FixedDelay { delay: 1.0 },
            prefetch_from: Self::PREFETCH_FROM,
            duration: 1_000.0,
            replay: Vec::new(),
            faults: Faults::NONE,
            script: Vec::new(),
            drain_limit: 100_000.0,
            max_in_flight: 1_000 * n,
            settle_steps: 50 * n * n,
            check_every_step: true,
            full_check_every,
            trace_len: 64,
            record: false,
            record_all: false,
            seed,
        }
    }
}

impl<P, L: LinkModel> Config<P, L> {
    /// This configuration with messages travelling as `link` says instead.
    pub fn with_link<M: LinkModel>(self, link: M) -> Config<P, M> {
        Config {
            graph: self.graph,
            params: self.params,
            workload: self.workload,
            lambda_mob: self.lambda_mob,
            keep_connected: self.keep_connected,
            link_pick: self.link_pick,
            link,
            prefetch_from: self.prefetch_from,
            duration: self.duration,
            script: self.script,
            replay: self.replay,
            faults: self.faults,
            drain_limit: self.drain_limit,
            max_in_flight: self.max_in_flight,
            settle_steps: self.settle_steps,
            check_every_step: self.check_every_step,
            full_check_every: self.full_check_every,
            trace_len: self.trace_len,
            record: self.record,
            record_all: self.record_all,
            seed: self.seed,
        }
    }
}
