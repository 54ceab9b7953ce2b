//! Exhaustive model checking of Ricart–Agrawala (stateright) with 2 and 3 hosts: every order
//! of delivery, requests and releases, and per fault profile (`tests/harness/perm_model.rs`)
//! lost or duplicated messages or early retransmission timeouts. Checks `invariants::check_safety`
//! and that a fair drain, retransmitting only after a loss, serves every waiting host, in
//! every state.
//!
//! `MANET_MUTEX_DEEP=1` raises every bound (see `docs/verification.md`). Run with
//! `cargo test --release --test model_ricart_agrawala -- --nocapture` to see the state counts.

#[path = "harness/corrupt.rs"]
mod corrupt;
#[path = "harness/explore.rs"]
mod explore;
#[path = "harness/perm_model.rs"]
mod perm_model;
#[path = "harness/perm_net.rs"]
mod perm_net;

use manet_mutex::ricart_agrawala::Node;

use perm_model::Scope::{Large, Small};

#[test]
fn two_hosts() {
    perm_model::check_profiles::<Node>("ricart_agrawala", 2, &[0], Small);
}

#[test]
fn three_hosts() {
    perm_model::check_profiles::<Node>("ricart_agrawala", 3, &[0], Small);
}

/// The bounded profile (one corruption on three hosts).
#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn three_hosts_long() {
    perm_model::check_profiles::<Node>("ricart_agrawala", 3, &[0], Large);
}
