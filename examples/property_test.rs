//! Property-test an algorithm on your own topology and fault profile with the test kit
//! (`manet-mutex-testkit`): prioritized 2-out-of-3 on a star around the holder, its messages
//! corrupted and its links failing and forming one end at a time. Every schedule must keep
//! safety, and the drain at the end must serve every waiting node; a failure panics with the
//! shrunk schedule.
//!
//! ```text
//! cargo run --release --example property_test -- 200
//! ```

use manet_mutex::prioritized::{Node, Policy, Settings};
use manet_mutex::{CsRequest, NodeId};
use manet_mutex_testkit::{run_token_schedule, token_schedule, TokenFaults, TokenNet};
use proptest::test_runner::{Config, TestRunner};

fn main() {
    let cases = std::env::args()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(64);
    let star = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2)].map(|(a, b)| (NodeId(a), NodeId(b)));
    let settings = Settings::new(3, Policy::Explicit);
    // Requests for 1 or 2 resources at priorities 0..4; a few symmetric link changes; every
    // fault kind, corruption the most likely.
    let schedules = token_schedule((1u32..3, 0u32..4), 1, 0..200, TokenFaults::ALL);
    // No regression file: a failure prints its shrunk schedule instead.
    let config = Config {
        failure_persistence: None,
        ..Config::with_cases(cases)
    };
    let mut runner = TestRunner::new(config);
    let outcome = runner.run(&schedules, |schedule| {
        let net = TokenNet::<Node>::with_edges(5, &star, &[NodeId(0)], settings).unwrap();
        let request = |(resources, priority)| CsRequest {
            resources,
            priority,
        };
        run_token_schedule(net, &schedule, request, &"star of five, k = 3");
        Ok(())
    });
    match outcome {
        Ok(()) => println!("{cases} schedules: safety held and every request was served"),
        Err(e) => panic!("{e}"),
    }
}
