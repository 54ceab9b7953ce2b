//! Exhaustive model checking of Ricart–Agrawala (stateright) with 2 and 3 hosts: every order
//! of delivery, a bounded number of lost and duplicated messages and early retransmission
//! timeouts, requests and releases (`tests/harness/perm_model.rs`). Checks
//! `sim::routed::check` and that a fair drain, retransmitting only after a loss, serves every
//! waiting host, in every state.
//!
//! `MANET_MUTEX_DEEP=1` raises every bound (see `docs/verification.md`). Run with
//! `cargo test --release --test model_ricart_agrawala -- --nocapture` to see the state counts.

#[path = "harness/explore.rs"]
mod explore;
#[path = "harness/perm_model.rs"]
mod perm_model;
#[path = "harness/perm_net.rs"]
mod perm_net;

use manet_mutex::ricart_agrawala::Node;
use perm_model::{Bounds, PermModel};

fn check_hosts(hosts: u32) {
    let bounds = Bounds::from_env(500_000, 4_000_000);
    let model = PermModel::<Node> {
        hosts,
        seed: 0,
        bounds,
        _algorithm: std::marker::PhantomData,
    };
    perm_model::check("ricart_agrawala", [(format!("{hosts} hosts"), model)]);
}

#[test]
fn two_hosts() {
    check_hosts(2);
}

#[test]
fn three_hosts() {
    check_hosts(3);
}
