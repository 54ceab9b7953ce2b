//! The prioritized algorithm in the shared token simulator: random connected networks, static
//! and mobile, `k`, `h` and priority distributions, every policy; the invariants after every
//! step, every request served once link changes and new requests stop, and a quiescent,
//! token-oriented network at the end.

use manet_mutex::prioritized::{Node, Policy, Settings};
use manet_mutex::NodeId;
use manet_mutex_sim::token::{self, Config};
use manet_mutex_sim::{Dist, Graph, Params, Workload};
use manet_mutex_testkit::strategy::cases;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn scenario() -> impl Strategy<Value = Config<Params<Settings>>> {
    (2usize..=20)
        .prop_flat_map(|n| {
            (
                Just(n),
                (n - 1)..=(n * (n - 1) / 2),
                1u32..=6,
                0usize..3,
                1u64..=3,
                prop_oneof![Just(0.0), Just(0.02), Just(0.2)],
                prop_oneof![Just(0.01), Just(0.1), Just(1.0)],
                any::<bool>(),
                any::<u64>(),
            )
        })
        .prop_map(
            |(n, m, k, policy, aging_step, lambda_mob, lambda_req, keep_connected, seed)| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let graph = Graph::random_connected(n, m, &mut rng);
                let policy = [Policy::Explicit, Policy::Equal, Policy::MaxConcurrency][policy];
                let settings = Settings::new(k, policy).with_aging_step(aging_step);
                let holder = NodeId((seed % n as u64) as u32);
                let mut config = Config::new(graph, Params::new(settings, vec![holder]), seed);
                config.workload = Workload {
                    lambda_req,
                    resources: Dist::Uniform { lo: 1, hi: k },
                    priority: Dist::Uniform { lo: 0, hi: 10 },
                    ..Workload::default()
                };
                config.lambda_mob = lambda_mob;
                // Arbitrary link changes too: nodes cut off (even isolated) while the token or
                // RELEASEs are on their way; the simulator reconnects before the drain.
                config.keep_connected = keep_connected;
                config.duration = 200.0;
                config.drain_limit = 20_000.0;
                config
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(96)))]

    #[test]
    fn invariants_hold_and_every_request_is_served_in_the_simulator(config in scenario()) {
        match token::run::<Node>(config.clone()) {
            Ok(outcome) => prop_assert!(outcome.metrics.cs_entries > 0 || config.workload.lambda_req < 0.1),
            Err(v) => panic!("{config:?}\n{v}"),
        }
    }
}
