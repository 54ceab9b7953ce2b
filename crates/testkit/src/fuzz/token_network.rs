//! What the token-network fuzz bodies ([`super::reverse_link_network`],
//! [`super::prioritized_network`]) share: an input builds its network and holds a schedule
//! ([`crate::schedule`]), which runs with every safety invariant checked after each step and a
//! fair drain at the end. Each body's module gets the same entry points
//! ([`token_network_entry_points`]).

use core::fmt::Debug;

use arbitrary::{Arbitrary, Unstructured};
use manet_mutex::CsRequest;
use manet_mutex_sim::{Params, TokenAlgorithm};

use super::frozen::{select, Frozen, Selectable};
use super::sized_vec;
use crate::schedule::{apply_token_steps, drain_token_steps, TimedFault, TokenOp};
use crate::{TokenHarness, TokenNet};

/// Whether a token-network fuzz input runs with recovery of lost tokens, and how its timers
/// fire (`docs/ALGORITHMS.md`, F8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Recovering {
    /// The papers' network, without recovery: no failure faults (every input recorded before
    /// issue 23 decodes so).
    #[default]
    Off,
    /// With recovery ([`crate::harness_recovery`]) and the failure faults (crashes,
    /// restarts, partitions, merges, tokens lost on breaking links); every timer fires on
    /// time, in the drain.
    Timely,
    /// The same, and armed timers also fire at will between steps: clocks that break the
    /// bounds.
    AtWill,
}

impl Recovering {
    /// The mode a fuzz input selects by the byte after its schedule, which no earlier layout
    /// reads (0 past the end of the input): bit 0 turns recovery on, bit 1 lets timers fire
    /// at will.
    pub fn from_byte(byte: u8) -> Self {
        match byte & 3 {
            0 | 2 => Recovering::Off,
            1 => Recovering::Timely,
            _ => Recovering::AtWill,
        }
    }

    /// Whether recovery is on.
    pub fn on(self) -> bool {
        self != Recovering::Off
    }
}

/// The faults of a token-network fuzz input, their selector bits and its recovery mode,
/// decoded after its steps: the faults through their frozen layouts ([`Selectable`]), then the
/// mode's byte.
pub(crate) fn faults_and_mode(
    u: &mut Unstructured<'_>,
) -> arbitrary::Result<(Vec<TimedFault>, Vec<u8>, Recovering, bool)> {
    let faults: Vec<Selectable> = sized_vec(u)?;
    let mode = Recovering::from_byte(u8::arbitrary(u)?);
    // Majority mode (issue 34): bit 0 of the byte after the mode's (0 past the end, so every
    // input recorded before decodes without it unless it had bytes to spare).
    let majority = u8::arbitrary(u)? & 1 == 1;
    let selectors = faults.iter().map(|f| f.selector).collect();
    Ok((
        faults.into_iter().map(|f| f.timed).collect(),
        selectors,
        mode,
        majority,
    ))
}

/// `faults` as an input run `recovering` reads them, each with its selector bits if it has
/// them ([`select`]).
pub(crate) fn effective_faults(
    faults: &[TimedFault],
    selectors: &[u8],
    recovering: Recovering,
) -> Vec<TimedFault> {
    faults
        .iter()
        .enumerate()
        .map(|(i, &t)| match selectors.get(i) {
            Some(&selector) => select(t, selector, recovering),
            None => t,
        })
        .collect()
}

/// A token-network fuzz input.
pub(crate) trait NetworkInput: Clone {
    /// The algorithm.
    type Node: TokenHarness;
    /// What a request step carries.
    type Request: Copy + Debug;

    /// The network the input describes, and the parameters it was built with (the failure
    /// messages' context).
    fn build(
        &self,
    ) -> (
        TokenNet<Self::Node>,
        Params<<Self::Node as TokenAlgorithm>::Settings>,
    );

    /// What a request step asks for.
    fn request(&self, r: Self::Request) -> CsRequest;

    /// The steps and the faults.
    fn schedule(&self) -> (&[TokenOp<Self::Request>], &[TimedFault]);

    /// The faults, to rewrite.
    fn faults_mut(&mut self) -> &mut Vec<TimedFault>;

    /// The recovery mode, to rewrite.
    fn recovering_mut(&mut self) -> &mut Recovering;

    /// The faults as the run reads them: with recovery, each link fault read with its
    /// selector bits (an input built by hand or by a strategy has none, and holds the failure
    /// faults themselves).
    fn effective_faults(&self) -> Vec<TimedFault>;
}

/// Build the network `input` describes and play its schedule, with (`drain`) or without the
/// drain.
pub(crate) fn play<I: NetworkInput>(input: &I, drain: bool) -> TokenNet<I::Node> {
    let (net, params) = input.build();
    let (ops, _) = input.schedule();
    let faults = input.effective_faults();
    let net = apply_token_steps(net, ops, &faults, |r| input.request(r), &params);
    if drain {
        drain_token_steps(&net, ops.len(), faults.len(), &params);
    }
    net
}

/// `input` without recovery: its faults as decoded, without their failure reading (how every
/// input recorded before issue 23 was read).
pub(crate) fn without_recovery<I: NetworkInput>(input: &I) -> I {
    let mut input = input.clone();
    *input.recovering_mut() = Recovering::Off;
    input.faults_mut().retain(|t| !t.fault.is_failure());
    input
}

/// `input` with every corruption a field corruption ([`Frozen::recorded`]), without recovery
/// and its failure faults.
pub(crate) fn as_recorded<I: NetworkInput>(input: &I) -> I {
    let mut input = input.clone();
    *input.recovering_mut() = Recovering::Off;
    input.faults_mut().retain(|t| !t.fault.is_failure());
    for timed in input.faults_mut() {
        timed.fault = timed.fault.recorded();
    }
    input
}

/// `input` without its faults (and without recovery).
pub(crate) fn without_faults<I: NetworkInput>(input: &I) -> I {
    let mut input = input.clone();
    *input.recovering_mut() = Recovering::Off;
    input.faults_mut().clear();
    input
}

/// The entry points of a token-network fuzz body for its `Input` (an [`NetworkInput`]) and its
/// fuzz target's name.
macro_rules! token_network_entry_points {
    ($node:ty, $target:literal) => {
        impl<'a> arbitrary::Arbitrary<'a> for Input {
            fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
                let layout = Layout::arbitrary(u)?;
                let (faults, selectors, recovering, majority) =
                    super::token_network::faults_and_mode(u)?;
                Ok(layout.with(faults, selectors, recovering, majority))
            }

            fn size_hint(depth: usize) -> (usize, Option<usize>) {
                Layout::size_hint(depth)
            }
        }

        /// Build the network `input` describes and play its schedule
        /// ([`run_token_schedule`](crate::run_token_schedule)).
        pub fn run(input: &Input) {
            play(input);
        }

        /// [`run`], returning the network as the schedule left it (before the drain, which
        /// runs on a copy), for tests that check more, such as the anomalies reported.
        pub fn play(input: &Input) -> $crate::TokenNet<$node> {
            super::token_network::play(input, true)
        }

        /// The schedule of `input` alone, safety checked after every step, without the drain
        /// ([`apply_token_schedule`](crate::apply_token_schedule)): what the coverage tests
        /// count.
        pub fn play_schedule(input: &Input) -> $crate::TokenNet<$node> {
            super::token_network::play(input, false)
        }

        /// [`run`] without recovery: how the reproducers recorded before issue 23 (whose
        /// byte after the schedule may select recovery today) replay as they did then.
        pub fn run_without_recovery(input: &Input) {
            run(&super::token_network::without_recovery(input));
        }

        /// [`run`] with every corruption a field corruption, without recovery: how the
        /// reproducers recorded before kind changes and flips existed replay as they did then.
        pub fn run_as_recorded(input: &Input) {
            run(&super::token_network::as_recorded(input));
        }

        #[doc = concat!(
            "The run of `input` without its faults: how the reproducers recorded before faults ",
            "existed (`fuzz/regressions/", $target, "/before-faults/`) decode as they did then."
        )]
        pub fn run_without_faults(input: &Input) {
            run(&super::token_network::without_faults(input));
        }
    };
}

pub(crate) use token_network_entry_points;
