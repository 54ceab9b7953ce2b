//! Scenario tests of the prioritized algorithm on small networks, driven message by message.

use super::fixtures::{ask, drain, entry_order, in_cs, last_sent, n, net, LIMIT};
use manet_mutex::prioritized::{Message, Node, Policy, Resources, Settings};
use manet_mutex::Status;
use manet_mutex_testkit::TokenNet;

fn complete(count: u32) -> Vec<(u32, u32)> {
    (0..count)
        .flat_map(|a| (a + 1..count).map(move |b| (a, b)))
        .collect()
}

/// The introduction of the 2nd paper: 5 resources, 2 of them occupied (by d), a holds the
/// token and a, b, c request 4, 2 and 1. a cannot enter, b and c could.
fn intro_example(policy: Policy) -> TokenNet<Node> {
    let (a, b, c, d) = (0, 1, 2, 3);
    let mut net = net(4, &complete(4), a, Settings::new(5, policy));
    ask(&mut net, d, 2, 0);
    net.run(LIMIT).unwrap();
    assert!(in_cs(&net, d));
    ask(&mut net, a, 4, 0);
    net.run(LIMIT).unwrap();
    assert!(net.node(n(a)).holds_token() && net.status(n(a)) == Status::Waiting);
    assert_eq!(net.node(n(a)).available(), Some(3));
    ask(&mut net, b, 2, 0);
    ask(&mut net, c, 1, 0);
    net.run(LIMIT).unwrap();
    net
}

#[test]
fn max_concurrency_lets_small_requests_enter_while_a_large_one_waits() {
    let mut net = intro_example(Policy::MaxConcurrency);
    assert!(
        in_cs(&net, 1) && in_cs(&net, 2),
        "b and c enter concurrently"
    );
    assert_eq!(net.status(n(0)), Status::Waiting, "a still waits for 4");
    for i in [3, 1, 2] {
        net.release(n(i));
    }
    net.run(LIMIT).unwrap();
    assert!(in_cs(&net, 0));
    let order = entry_order(&net);
    assert_eq!(
        (order[0], order[3]),
        (3, 0),
        "b and c went first: {order:?}"
    );
}

#[test]
fn fcfs_mode_makes_small_requests_wait_behind_the_large_one() {
    let mut net = intro_example(Policy::Equal);
    assert!(!in_cs(&net, 1) && !in_cs(&net, 2), "b and c wait behind a");
    net.release(n(3));
    net.run(LIMIT).unwrap();
    assert!(in_cs(&net, 0), "a enters once d's resources are back");
    drain(&mut net);
    assert_eq!(entry_order(&net), vec![3, 0, 1, 2]);
}

#[test]
fn hpfs_serves_the_highest_priority_waiting_request_first() {
    // A line 0-1-2-3-4; node 0 holds every resource while 4, 2 and 3 queue up with
    // priorities 1, 5 and 9. UPDATEs carry the higher priorities to the holder.
    let mut net = net(
        5,
        &[(0, 1), (1, 2), (2, 3), (3, 4)],
        0,
        Settings::new(2, Policy::Explicit),
    );
    ask(&mut net, 0, 2, 0);
    net.run(LIMIT).unwrap();
    for (node, priority) in [(4, 1), (2, 5), (3, 9)] {
        ask(&mut net, node, 2, priority);
        net.run(LIMIT).unwrap();
    }
    drain(&mut net);
    assert_eq!(entry_order(&net), vec![0, 3, 2, 4]);
}

#[test]
fn a_waiting_holder_is_preempted_by_a_higher_priority_update() {
    // Line 0-1-2-3, k = 3. Node 2 holds 2 resources; node 0 waits for 3 holding the token.
    let mut net = net(
        4,
        &[(0, 1), (1, 2), (2, 3)],
        0,
        Settings::new(3, Policy::Explicit),
    );
    ask(&mut net, 2, 2, 0);
    net.run(LIMIT).unwrap();
    ask(&mut net, 0, 3, 5);
    net.run(LIMIT).unwrap();
    assert!(net.node(n(0)).holds_token() && net.status(n(0)) == Status::Waiting);
    // A lower-priority request from 3 queues behind node 0's own.
    ask(&mut net, 3, 1, 0);
    net.run(LIMIT).unwrap();
    assert!(
        net.node(n(0)).holds_token(),
        "lower priority does not preempt"
    );
    // Node 1 already forwarded 3's request; its own, more urgent one travels as an UPDATE.
    ask(&mut net, 1, 1, 9);
    assert_eq!(
        last_sent(&net, 1, 0),
        Some(&Message::Update {
            priority: manet_mutex::queue::Priority::new(9, 0)
        })
    );
    net.run(LIMIT).unwrap();
    assert!(in_cs(&net, 1), "the token went to the more urgent request");
    assert_eq!(net.status(n(0)), Status::Waiting);
    drain(&mut net);
    assert_eq!(entry_order(&net), vec![2, 1, 0, 3]);
}

#[test]
fn a_large_request_is_not_starved_by_a_stream_of_small_ones() {
    // Star around the holder 0; node 1 wants all 4 resources (lowest priority in
    // maximum-concurrency mode) while nodes 2, 3, 4 keep asking for 1 each.
    let mut net = net(
        5,
        &[(0, 1), (0, 2), (0, 3), (0, 4)],
        0,
        Settings::new(4, Policy::MaxConcurrency),
    );
    for i in 2..5 {
        ask(&mut net, i, 1, 0);
    }
    net.run(LIMIT).unwrap();
    ask(&mut net, 1, 4, 0);
    let mut rounds = 0;
    while !in_cs(&net, 1) {
        rounds += 1;
        assert!(rounds <= 40, "node 1 starved");
        // Each small node leaves the CS and asks again at once: there is always a more
        // urgent request around.
        for i in 2..5 {
            if in_cs(&net, i) {
                net.release(n(i));
                ask(&mut net, i, 1, 0);
            }
        }
        net.run(LIMIT).unwrap();
    }
    assert!(rounds > 1, "the small requests did go first at the start");
}

#[test]
fn a_release_chases_the_token_that_moved_away() {
    // Line 0-1-2, k = 2: 2 and 0 in the CS with one resource each, 0 holding the token.
    let mut net = net(3, &[(0, 1), (1, 2)], 0, Settings::new(2, Policy::Equal));
    ask(&mut net, 2, 1, 0);
    net.run(LIMIT).unwrap();
    ask(&mut net, 0, 1, 0);
    net.run(LIMIT).unwrap();
    assert!(in_cs(&net, 0) && in_cs(&net, 2) && net.node(n(0)).holds_token());
    ask(&mut net, 1, 1, 0); // REQUEST 1→0 in flight
    net.release(n(2)); // RELEASE 2→1 in flight
    assert!(net.deliver(n(2), n(1))); // 1 forwards it towards 0, behind its REQUEST
    assert!(net.deliver(n(1), n(0))); // REQUEST: 0 (in the CS, t = 0) passes the token to 1
    assert!(!net.node(n(0)).holds_token());
    assert!(net.deliver(n(1), n(0))); // RELEASE reaches 0 after the token left: forwarded to 1
    assert!(matches!(
        last_sent(&net, 0, 1),
        Some(&Message::Release { resources, .. }) if resources == Resources::new(1)
    ));
    net.run(LIMIT).unwrap();
    assert!(in_cs(&net, 1), "the chasing release reached the token");
    drain(&mut net);
}

#[test]
fn a_request_made_while_isolated_is_sent_once_a_link_re_forms_to_the_old_next() {
    // Found by the proptest: node 0's links to both neighbours fail and re-form (LINKs still
    // in flight), then it requests. It has nobody to ask; when the link to its old `next`
    // comes back, that must not pass for the path its (never sent) request took.
    let mut net = net(
        3,
        &[(0, 1), (0, 2), (1, 2)],
        1,
        Settings::new(1, Policy::Explicit),
    );
    net.fail(n(0), n(2));
    net.form(n(0), n(2));
    ask(&mut net, 1, 1, 0);
    net.fail(n(0), n(1));
    net.form(n(0), n(1));
    ask(&mut net, 0, 1, 0);
    assert_eq!(net.node(n(0)).next(), None);
    drain(&mut net);
    assert_eq!(entry_order(&net), vec![1, 0]);
}

#[test]
fn two_waiting_nodes_do_not_bounce_the_token_between_them() {
    // Line 1-0-2, k = 3, aging step 5. Node 2 holds 2 resources; node 0 waits for 3 with the
    // token (priority 1); node 1 asks for 3 with priority 2 and preempts it. The REQUEST that
    // follows the token carries node 0's priority from before the aging step (1, not 6), so
    // node 1 keeps the token. Carrying the aged 6 (the paper's order: dequeue, age, send)
    // makes node 1 hand the token back, node 0 hand it over again, and so on forever.
    let settings = Settings::new(3, Policy::Explicit).with_aging_step(5);
    let mut net = net(3, &[(0, 1), (0, 2)], 0, settings);
    ask(&mut net, 2, 2, 0);
    net.run(LIMIT).unwrap();
    ask(&mut net, 0, 3, 1);
    net.run(LIMIT).unwrap();
    assert!(net.node(n(0)).holds_token());
    ask(&mut net, 1, 3, 2);
    net.run(LIMIT).unwrap(); // panics on a livelock
    assert!(net.node(n(1)).holds_token() && net.status(n(1)) == Status::Waiting);
    drain(&mut net);
    assert_eq!(entry_order(&net), vec![2, 1, 0]);
}

#[test]
fn a_distant_large_request_is_not_starved_by_small_ones_near_the_token() {
    // Line 0-1-2-3-4, token at 0; node 4 wants all 3 resources while nodes 0..=3 keep asking
    // for one each, so in maximum-concurrency mode there is always a more urgent request
    // closer to the token.
    let mut net = net(
        5,
        &[(0, 1), (1, 2), (2, 3), (3, 4)],
        0,
        Settings::new(3, Policy::MaxConcurrency),
    );
    for i in 0..4 {
        ask(&mut net, i, 1, 0);
    }
    net.run(LIMIT).unwrap();
    ask(&mut net, 4, 3, 0);
    let mut rounds = 0;
    while !in_cs(&net, 4) {
        rounds += 1;
        assert!(rounds <= 60, "node 4 starved");
        for i in 0..4 {
            if in_cs(&net, i) {
                net.release(n(i));
                ask(&mut net, i, 1, 0);
            }
        }
        net.run(LIMIT).unwrap();
    }
    assert!(rounds > 1, "the small requests did go first at the start");
}
