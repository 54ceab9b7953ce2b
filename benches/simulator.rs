//! Simulator throughput on the paper's 30-node network (events per second are printed by
//! `manet-mutex-sim`'s `simulate` example; this measures whole runs).
//!
//! It lives in the protocol crate's benches, not the simulator's, so that divan is not a
//! dev-dependency of `manet-mutex-sim`: every dev-dependency of a package is built for its
//! examples, and `cargo run --release --example simulate` should build only what it needs.

use divan::Bencher;
use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex_sim::token::{self, Config};
use manet_mutex_sim::Params;
use manet_mutex_sim::{Graph, Workload};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn main() {
    divan::main();
}

fn config(forwarding: bool, checks: bool) -> Config<Params<Settings>> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let graph = Graph::random_connected(30, 87, &mut rng);
    let mut c = Config::new(
        graph,
        Params::first_nodes(Settings::new(3).with_forwarding(forwarding), 3),
        1,
    );
    c.workload = Workload {
        lambda_req: 0.1,
        ..Workload::default()
    };
    c.lambda_mob = 0.02;
    c.duration = 500.0;
    c.check_every_step = checks;
    c.trace_len = 0;
    c
}

/// One 500-time-unit run at load 0.1 with high mobility (about 1,500 CS entries).
#[divan::bench(args = [false, true])]
fn run_30_nodes(bencher: Bencher, forwarding: bool) {
    bencher.bench(|| {
        token::run::<Node>(config(forwarding, false))
            .unwrap()
            .metrics
            .events
    });
}

/// The same run with every invariant checked after every event.
#[divan::bench]
fn run_30_nodes_checked(bencher: Bencher) {
    bencher.bench(|| {
        token::run::<Node>(config(false, true))
            .unwrap()
            .metrics
            .events
    });
}
