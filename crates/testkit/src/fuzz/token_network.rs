//! What the token-network fuzz bodies ([`super::reverse_link_network`],
//! [`super::prioritized_network`]) share: an input builds its network and holds a schedule
//! ([`crate::schedule`]), which runs with every safety invariant checked after each step and a
//! fair drain at the end. Each body's module gets the same entry points
//! ([`token_network_entry_points`]).

use core::fmt::Debug;

use manet_mutex::CsRequest;
use manet_mutex_sim::{Params, TokenAlgorithm};

use super::frozen::Frozen;
use crate::schedule::{apply_token_steps, drain_token_steps, TimedFault, TokenOp};
use crate::{TokenHarness, TokenNet};

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
}

/// Build the network `input` describes and play its schedule, with (`drain`) or without the
/// drain.
pub(crate) fn play<I: NetworkInput>(input: &I, drain: bool) -> TokenNet<I::Node> {
    let (net, params) = input.build();
    let (ops, faults) = input.schedule();
    let net = apply_token_steps(net, ops, faults, |r| input.request(r), &params);
    if drain {
        drain_token_steps(&net, ops.len(), faults.len(), &params);
    }
    net
}

/// `input` with every corruption a field corruption ([`Frozen::recorded`]).
pub(crate) fn as_recorded<I: NetworkInput>(input: &I) -> I {
    let mut input = input.clone();
    for timed in input.faults_mut() {
        timed.fault = timed.fault.recorded();
    }
    input
}

/// `input` without its faults.
pub(crate) fn without_faults<I: NetworkInput>(input: &I) -> I {
    let mut input = input.clone();
    input.faults_mut().clear();
    input
}

/// The entry points of a token-network fuzz body for its `Input` (an [`NetworkInput`]) and its
/// fuzz target's name.
macro_rules! token_network_entry_points {
    ($node:ty, $target:literal) => {
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

        /// [`run`] with every corruption a field corruption: how the reproducers recorded
        /// before kind changes and flips existed replay as they did then.
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
