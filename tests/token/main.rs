//! The token algorithms (RL/KRL/KRLF, prioritized h-out-of-k): handlers, the papers' scenarios,
//! deviations, bad input, interleavings, properties and simulation; and the link session that
//! carries them over unreliable datagrams.

mod cancel;
mod initial_restart;
mod leave;
mod long_minority;
mod majority_partitions;
mod prioritized;
mod reverse_link;
mod session;
mod timed;

/// `cases` schedules of `strategy` from a fixed seed, each given to `play`; what it returns,
/// summed (the coverage tests of the fault profiles).
fn exercise<T: std::fmt::Debug, S: std::ops::AddAssign + Default>(
    cases: u32,
    strategy: impl proptest::strategy::Strategy<Value = T>,
    play: impl Fn(&T) -> S,
) -> S {
    use proptest::test_runner::{Config, TestRng, TestRunner};
    let config = Config {
        failure_persistence: None,
        ..Config::with_cases(cases)
    };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let total = std::cell::RefCell::new(S::default());
    runner
        .run(&strategy, |input| {
            *total.borrow_mut() += play(&input);
            Ok(())
        })
        .unwrap();
    total.into_inner()
}
