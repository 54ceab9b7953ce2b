//! Property tests: KRL and KRLF keep every safety invariant after every step on random
//! networks, static and mobile — with the paper's connectivity-preserving link changes and with
//! arbitrary ones that cut nodes off — and bring every waiting node into the critical section
//! once link changes and new requests stop (and the network is connected again). Without
//! corruption, every anomaly a node reports is noise, even when each end of a link learns of
//! its changes at its own time. Under corruption too, a protected resource sees every token's
//! fences go up, one per entry.

use manet_mutex::fence::Fences;
use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex::{Protocol, Severity};
use manet_mutex_sim::token::{self, Config};
use manet_mutex_sim::{Graph, Params, Workload};
use manet_mutex_testkit::fuzz::reverse_link_network;
use manet_mutex_testkit::strategy::{cases, reverse_link_input_with, TokenFaults};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn scenario() -> impl Strategy<Value = Config<Params<Settings>>> {
    (2usize..=30)
        .prop_flat_map(|n| {
            let max_edges = n * (n - 1) / 2;
            (
                Just(n),
                (n - 1)..=max_edges,
                1u32..n as u32,
                any::<bool>(),
                prop_oneof![Just(0.0), Just(0.002), Just(0.02), Just(0.2)],
                prop_oneof![Just(0.001), Just(0.01), Just(0.1), Just(1.0)],
                any::<bool>(),
                any::<u64>(),
            )
        })
        .prop_map(
            |(n, m, k, forwarding, lambda_mob, lambda_req, keep_connected, seed)| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let graph = Graph::random_connected(n, m, &mut rng);
                let mut config = Config::new(
                    graph,
                    Params::first_nodes(Settings::new(k).with_forwarding(forwarding), k),
                    seed,
                );
                config.workload = Workload {
                    lambda_req,
                    ..Workload::default()
                };
                config.lambda_mob = lambda_mob;
                config.keep_connected = keep_connected;
                config.duration = 300.0;
                config.drain_limit = 20_000.0;
                config
            },
        )
}

/// Small networks under fast, arbitrary link changes: nodes are cut off and links re-form
/// often, the interleavings that break request re-forwarding.
fn small_and_wild() -> impl Strategy<Value = Config<Params<Settings>>> {
    (2usize..=6)
        .prop_flat_map(|n| {
            (
                Just(n),
                (n - 1)..=n * (n - 1) / 2,
                1u32..n as u32,
                any::<bool>(),
                prop_oneof![Just(0.05), Just(0.2), Just(1.0)],
                prop_oneof![Just(0.05), Just(0.5), Just(2.0)],
                any::<u64>(),
            )
        })
        .prop_map(|(n, m, k, forwarding, lambda_mob, lambda_req, seed)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let graph = Graph::random_connected(n, m, &mut rng);
            let mut config = Config::new(
                graph,
                Params::first_nodes(Settings::new(k).with_forwarding(forwarding), k),
                seed,
            );
            config.workload = Workload {
                lambda_req,
                ..Workload::default()
            };
            config.lambda_mob = lambda_mob;
            config.keep_connected = false;
            config.duration = 200.0;
            config.drain_limit = 5_000.0;
            config
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn invariants_hold_and_every_request_is_served(config in scenario()) {
        if let Err(v) = token::run::<Node>(config.clone()) {
            panic!("{config:?}\n{v}");
        }
    }

    #[test]
    fn small_networks_survive_arbitrary_link_changes(config in small_and_wild()) {
        if let Err(v) = token::run::<Node>(config.clone()) {
            panic!("{config:?}\n{v}");
        }
    }

    /// Messages that cross one-sided `LinkUp`s and `LinkDown`s are reported (`UnknownPeer`),
    /// requests that cross tokens too (`Stale`): noise, all of it.
    #[test]
    fn without_corruption_every_anomaly_is_noise(
        input in reverse_link_input_with(TokenFaults { corrupt: 0, kind: 0, ..TokenFaults::ALL }),
    ) {
        let net = reverse_link_network::play(&input);
        for (at, from, kind) in &net.anomalies {
            prop_assert_eq!(
                Node::anomaly_severity(*kind),
                Severity::Noise,
                "{:?} reported {:?} from {:?}", at, kind, from
            );
        }
    }

    /// A protected resource behind the network, with any field of any message corrupted and
    /// one-sided link events: it accepts every entry's fence (each above the last of its
    /// lane, the token's id), and each token's counter counts exactly the entries made with
    /// it (`docs/ALGORITHMS.md`, F1).
    #[test]
    fn a_protected_resource_sees_each_tokens_fences_go_up(
        input in reverse_link_input_with(TokenFaults::ALL),
    ) {
        let net = reverse_link_network::play(&input);
        let mut resource = Fences::new();
        for (at, _, fence) in &net.entries {
            let accepted = resource.admit(*fence);
            prop_assert!(accepted.is_ok(), "{:?} entered with {:?}: {:?}", at, fence, accepted);
        }
        let k = net.nodes[0].settings().k;
        prop_assert!(net.entries.iter().all(|(.., f)| f.lane < k));
        let counted: u64 = (0..k).filter_map(|lane| resource.highest(lane)).sum();
        prop_assert_eq!(counted, net.entries.len() as u64, "a counter skipped a value");
    }
}
