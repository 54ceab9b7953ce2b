//! Model checking of the look-ahead algorithm (stateright) with 2 and 3 hosts and two seeds
//! for the initial `Info_set`s: every order of delivery, requests and releases, and per fault
//! profile (`tests/models/perm_model.rs`) lost or duplicated messages, early retransmission
//! timeouts or mode changes (doze, wake, disconnect, reconnect, an accidental outage reported
//! by a reconnect). Checks `invariants::check_safety` (one host in the critical section, the sets'
//! partition and pairwise consistency) and that a fair drain, retransmitting only after a
//! loss, serves every waiting host, in every state, first with the hosts that disconnected
//! still away (unless no protocol could, V4) and then after they return.
//!
//! `MANET_MUTEX_DEEP=1` raises every bound (see `docs/verification.md`). Run with
//! `cargo test --release --test model_look_ahead -- --nocapture` to see the state counts.

use crate::perm_model::{Bounds, PermModel};
use manet_mutex::look_ahead::Node;
use manet_mutex_testkit::corrupt::Value;

use crate::perm_model::Scope::{Large, Small};

// The default run keeps the profiles that are exhaustive within their budget; the bounded ones
// are ignored here and run by the long job.

#[test]
fn two_hosts() {
    crate::perm_model::check_profiles::<Node>("look_ahead", 2, &[0, 1], Small);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn two_hosts_long() {
    crate::perm_model::check_profiles::<Node>("look_ahead", 2, &[0, 1], Large);
}

// One test per seed, so that the two run in parallel.
#[test]
fn three_hosts_seed_0() {
    crate::perm_model::check_profiles::<Node>("look_ahead", 3, &[0], Small);
}

#[test]
fn three_hosts_seed_1() {
    crate::perm_model::check_profiles::<Node>("look_ahead", 3, &[1], Small);
}

#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn three_hosts_long() {
    crate::perm_model::check_profiles::<Node>("look_ahead", 3, &[0, 1], Large);
}

/// Two hosts that change mode often: every sequence of up to five dozes, wakes, disconnects
/// and reconnects (one request per host, no other fault), which is what it takes to reach two
/// absences one after the other, a return concurrent with the other host's departure, and
/// announcements from a host that counts the receiver as away.
#[test]
#[ignore = "long: a bounded model, run by the long job (docs/verification.md)"]
fn two_hosts_many_mode_changes() {
    let deep = crate::perm_model::deep();
    let bounds = Bounds {
        requests_per_node: 1,
        losses: 0,
        duplicates: 0,
        timeouts: 0,
        mode_changes: if deep { 6 } else { 5 },
        corruptions: 0,
        cancels: 0,
        majority: false,
        crashes: 0,
        partitions: 0,
        states: if deep { 4_000_000 } else { 1_000_000 },
    };
    let models = [0, 1].map(|seed| {
        let model = PermModel::<Node> {
            hosts: 2,
            seed,
            bounds,
            _algorithm: std::marker::PhantomData,
        };
        (format!("2 hosts seed {seed}, mode changes"), model)
    });
    crate::perm_model::check("look_ahead", models);
}

/// Counterexample found by this model (2 hosts, either seed; V4 in `docs/ALGORITHMS.md`) once
/// its drain left disconnected hosts away: host 0 requests, then reports an accidental outage
/// (RECONNECT, which re-asks everyone); host 1, in its remainder section, disconnects
/// voluntarily. Host 0 used to discard the DISCONNECT because its own RECONNECT was newer, and
/// waited for the REPLY of a host that, disconnected, receives nothing. The two announcements
/// are concurrent, and a concurrent DISCONNECT is now applied (host 1, back, does not apply the
/// concurrent RECONNECT, so it asks host 0 before entering).
#[test]
fn regression_a_disconnect_older_than_our_reconnect_still_ends_the_wait() {
    use manet_mutex::{Event, NodeId, Status};
    let mut net = manet_mutex_testkit::PermNet::<Node>::new(2, 0).unwrap();
    net.request(NodeId(0));
    net.apply_valid(NodeId(0), Event::Reconnect);
    net.apply_valid(NodeId(1), Event::Disconnect);
    for _ in 0..64 {
        for i in net.deliverable().into_iter().rev() {
            net.deliver(i);
        }
        for (node, timer) in net.armed() {
            net.fire(node, timer);
        }
        net.check_safety().unwrap();
    }
    assert_eq!(
        net.status(NodeId(0)),
        Status::Critical,
        "host 0 still waits for host 1"
    );
}

/// Found by `three_hosts` in the `mode changes, one corruption` profile (`docs/ALGORITHMS.md`,
/// A5): host 0 asks host 1, which answers; the REPLY's epoch is corrupted to 2; host 0
/// reconnects (after an accidental outage) and asks again under its new epoch, which is 2;
/// the corrupted REPLY then matched the new round, host 0 moved host 1 into its `Status_set`,
/// and host 1, applying the RECONNECT, moved host 0 into its own: neither would ask the other.
/// A restarted request now gets a new number, so a REPLY to the earlier round differs from one
/// to the new round in two fields.
#[test]
fn regression_a_reply_to_the_round_before_a_reconnect_cannot_be_corrupted_into_the_new_one() {
    use crate::perm_model::Step::*;
    use manet_mutex::NodeId;
    let model = PermModel::<Node> {
        hosts: 3,
        seed: 1,
        bounds: Bounds {
            requests_per_node: 1,
            losses: 0,
            duplicates: 0,
            timeouts: 1,
            mode_changes: 1,
            corruptions: 1,
            cancels: 0,
            majority: false,
            crashes: 0,
            partitions: 0,
            states: 1,
        },
        _algorithm: std::marker::PhantomData,
    };
    let (n0, n1) = (NodeId(0), NodeId(1));
    let steps = [
        Request(n0),
        Deliver(0, n0, n1),
        Corrupt(0, n1, n0, 3, Value::Node(2)),
        Mode(n0, crate::perm_model::Mode::Reconnect),
        Deliver(0, n1, n0),
        Deliver(0, n0, n1),
    ];
    crate::perm_model::replay(&model, &steps).unwrap();
}

/// Found by `look_ahead_network` (seed 136081 of `tests/faults/fuzz_look_ahead.rs`, `docs/ALGORITHMS.md`
/// A3), two corruptions: host 1 is inside and defers host 0's REQUEST; a copy of it whose
/// epoch was corrupted upwards raised host 1's record of host 0, so the next genuine copy
/// looked stale and was answered with a REPLY that only tells host 0 what host 1 has seen.
/// That answer used to name the request, so corrupting its `seen` back down made it a grant
/// and both hosts were inside. It now names no request (number 0): it differs from a grant in
/// two fields. Since REQUESTs carry a check word (A6) a corrupted copy is dropped, so the copy
/// here is forged (its word recomputed); the answer must still not become a grant.
#[test]
fn regression_the_answer_to_a_stale_looking_request_cannot_be_corrupted_into_a_grant() {
    use manet_mutex::look_ahead::Message;
    use manet_mutex::{NodeId, Status};
    let (n0, n1) = (NodeId(0), NodeId(1));
    let mut net = manet_mutex_testkit::PermNet::<Node>::new(2, 1).unwrap();
    let find = |net: &manet_mutex_testkit::PermNet<Node>, want: fn(&Message) -> bool| {
        net.in_flight.iter().position(|f| want(&f.msg)).unwrap()
    };
    net.request(n1);
    while net.status(n1) != Status::Critical {
        net.deliver(0);
    }
    net.request(n0);
    let timer = net.armed()[0].1;
    net.fire(n0, timer);
    let timer = net.armed()[0].1;
    net.fire(n0, timer);
    assert_eq!(net.in_flight.len(), 3, "three copies of host 0's REQUEST");
    net.deliver(0);
    let copy = &mut net.in_flight[0].msg;
    if let Message::Request { ts, seq, epoch, .. } = *copy {
        *copy = Message::request(ts, seq, epoch + 1, 0);
    }
    net.deliver(0);
    net.deliver(0);
    let answer = find(&net, |m| matches!(m, Message::Reply { .. }));
    assert!(matches!(
        net.in_flight[answer].msg,
        Message::Reply {
            seq: 0,
            seen: 1,
            ..
        }
    ));
    assert!(net.corrupt(answer, 4, Value::Down), "the answer's seen");
    net.deliver(answer);
    net.check_safety().unwrap();
    assert_eq!(net.status(n0), Status::Waiting);
    net.drain(64).unwrap();
}

/// The corruption steps include kind changes (issue 21): host 0's REQUEST in flight can become
/// a REPLY, and (its epoch, read as an announcement's `absent` flag, is 0 or 1) each of the
/// three announcements; the driver makes and counts the change.
#[test]
fn the_corruption_steps_change_kinds() {
    use crate::perm_model::Step;
    use manet_mutex::NodeId;
    use stateright::Model;
    let model = PermModel::<Node> {
        hosts: 2,
        seed: 0,
        bounds: Bounds {
            requests_per_node: 1,
            losses: 0,
            duplicates: 0,
            timeouts: 0,
            mode_changes: 0,
            corruptions: 1,
            cancels: 0,
            majority: false,
            crashes: 0,
            partitions: 0,
            states: 1,
        },
        _algorithm: std::marker::PhantomData,
    };
    let state = model.init_states().remove(0);
    let state = model.next_state(&state, Step::Request(NodeId(0))).unwrap();
    let mut actions = Vec::new();
    model.actions(&state, &mut actions);
    let kinds: Vec<_> = actions
        .iter()
        .filter(|a| matches!(a, Step::ChangeKind(..)))
        .collect();
    assert!(!kinds.is_empty(), "{actions:?}");
    let next = model.next_state(&state, *kinds[0]).unwrap();
    assert_eq!(next.net.corruptions.kinds, 1);
}
