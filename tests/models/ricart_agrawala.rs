//! Exhaustive model checking of Ricart–Agrawala (stateright) with 2 and 3 hosts: every order
//! of delivery, requests and releases, and per fault profile (`tests/models/perm_model.rs`)
//! lost or duplicated messages or early retransmission timeouts. Checks `invariants::check_safety`
//! and that a fair drain, retransmitting only after a loss, serves every waiting host, in
//! every state.
//!
//! `MANET_MUTEX_DEEP=1` raises every bound (see `docs/verification.md`). Run with
//! `cargo test --release --test model_ricart_agrawala -- --nocapture` to see the state counts.

use manet_mutex::ricart_agrawala::Node;

use crate::perm_model::Scope::{Large, Small};

#[test]
fn two_hosts() {
    crate::perm_model::check_profiles::<Node>("ricart_agrawala", 2, &[0], Small);
}

#[test]
fn three_hosts() {
    crate::perm_model::check_profiles::<Node>("ricart_agrawala", 3, &[0], Small);
}

/// The bounded profile (one corruption on three hosts).
#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn three_hosts_long() {
    crate::perm_model::check_profiles::<Node>("ricart_agrawala", 3, &[0], Large);
}
