//! Leaving for good (`Event::Leave`; `docs/ALGORITHMS.md`, L1–L3) in both permission
//! algorithms: nobody waits for a host that left, nothing it sent before leaving counts it
//! again, only a later incarnation does, and leaving is refused where it would strand a peer.

use manet_mutex::permission::Timestamp;
use manet_mutex::{
    look_ahead, ricart_agrawala, Action, Anomaly, CsRequest, Error, Event, NodeId, Protocol,
    Report, Status,
};
use manet_mutex_testkit::PermNet;

use crate::recovery::common::{Algo, Knobs};

/// `$name::<A>` for both algorithms, as two tests.
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod ricart_agrawala_leave {
            $(#[test] fn $name() { super::$name::<manet_mutex::ricart_agrawala::Node>() })*
        }
        mod look_ahead_leave {
            $(#[test] fn $name() { super::$name::<manet_mutex::look_ahead::Node>() })*
        }
    };
}

both!(
    a_host_that_left_is_asked_by_nobody,
    leave_is_refused_outside_the_remainder_section,
    a_host_that_left_refuses_every_local_event_and_stays_unchanged,
    in_majority_mode_a_host_that_left_does_not_count,
);

fn net<A: Algo>(n: u32, knobs: Knobs) -> PermNet<A> {
    PermNet::with_nodes(A::hosts(n, 1, knobs)).checked()
}

fn left_reported<A: Algo>(net: &PermNet<A>, host: u32) -> usize {
    net.reports
        .iter()
        .filter(|&&(h, r)| h == NodeId(host) && r == Report::Left)
        .count()
}

fn a_host_that_left_is_asked_by_nobody<A: Algo>() {
    let mut net = net::<A>(3, Knobs::default());
    net.apply_valid(NodeId(2), Event::Leave);
    assert_eq!(left_reported(&net, 2), 1, "{}: Left once, at once", A::NAME);
    net.deliver_all(100).unwrap();
    net.request(NodeId(0));
    assert!(
        net.to(NodeId(2)).is_empty(),
        "{}: a host that left is not asked",
        A::NAME
    );
    net.deliver_all(100).unwrap();
    assert_eq!(net.status(NodeId(0)), Status::Critical, "{}", A::NAME);
    net.release(NodeId(0));
    net.request(NodeId(1));
    net.deliver_all(100).unwrap();
    assert_eq!(net.status(NodeId(1)), Status::Critical, "{}", A::NAME);
    net.check_safety().unwrap();
}

fn leave_is_refused_outside_the_remainder_section<A: Algo>() {
    let mut node = A::host(0, 3, 5, Knobs::default(), 0);
    node.handle(Event::Request(CsRequest::ONE))
        .unwrap()
        .for_each(drop);
    let before = node.clone();
    let err = node.handle(Event::Leave).map(|a| a.count()).unwrap_err();
    assert!(
        matches!(err, Error::WrongMode { event: "Leave", .. }),
        "{}: {err}",
        A::NAME
    );
    assert_eq!(node, before, "{}: a refused Leave changes nothing", A::NAME);
}

fn a_host_that_left_refuses_every_local_event_and_stays_unchanged<A: Algo>() {
    let mut node = A::host(0, 3, 5, Knobs::default(), 0);
    let actions: Vec<_> = node.handle(Event::Leave).unwrap().collect();
    assert!(
        actions.contains(&Action::Report(Report::Left)),
        "{}",
        A::NAME
    );
    let sent = actions
        .iter()
        .filter(|a| matches!(a, Action::Send { .. }))
        .count();
    assert_eq!(sent, 2, "{}: every other host is told", A::NAME);
    let before = node.clone();
    for event in [
        Event::Request(CsRequest::ONE),
        Event::Leave,
        Event::Reconnect,
    ] {
        let name = event.name();
        let err = node.handle(event).map(|a| a.count()).unwrap_err();
        assert_eq!(
            err,
            Error::WrongMode {
                event: name,
                mode: "left"
            },
            "{}",
            A::NAME
        );
        assert_eq!(node, before, "{}: {name} changed a host that left", A::NAME);
    }
}

fn in_majority_mode_a_host_that_left_does_not_count<A: Algo>() {
    let mut net = net::<A>(3, Knobs::default().majority());
    net.apply_valid(NodeId(2), Event::Leave);
    net.deliver_all(100).unwrap();
    net.request(NodeId(0));
    net.deliver_all(100).unwrap();
    assert_eq!(
        net.status(NodeId(0)),
        Status::Critical,
        "{}: 2 of 3 is a majority",
        A::NAME
    );
}

/// With both others gone, host 0 alone is no majority. (Look-ahead differs while the hosts
/// that left are still driven: C10 probes them, and a grant one gives after leaving is a real
/// one, so it counts and readmits it; L3.)
#[test]
fn ricart_agrawala_in_majority_mode_alone_is_no_majority() {
    let mut net = net::<ricart_agrawala::Node>(3, Knobs::default().majority());
    for leaver in [1, 2] {
        net.apply_valid(NodeId(leaver), Event::Leave);
    }
    net.deliver_all(100).unwrap();
    net.request(NodeId(0));
    net.deliver_all(100).unwrap();
    assert_eq!(
        net.status(NodeId(0)),
        Status::Waiting,
        "1 of 3 is no majority"
    );
}

// Ricart–Agrawala's own LEAVE (L2), node by node.

fn ra(id: u32, n: u32) -> ricart_agrawala::Node {
    let s = ricart_agrawala::Settings::new(n, 5);
    ricart_agrawala::Node::new(ricart_agrawala::Config::new(NodeId(id), s)).unwrap()
}

fn feed(
    node: &mut ricart_agrawala::Node,
    event: Event<ricart_agrawala::Message>,
) -> Vec<Action<ricart_agrawala::Message>> {
    node.handle(event).unwrap().collect()
}

fn from(peer: u32, msg: ricart_agrawala::Message) -> Event<ricart_agrawala::Message> {
    Event::Receive {
        from: NodeId(peer),
        msg,
    }
}

fn sends_to(actions: &[Action<ricart_agrawala::Message>], to: u32) -> usize {
    actions
        .iter()
        .filter(|a| matches!(a, Action::Send { to: t, .. } if *t == NodeId(to)))
        .count()
}

#[test]
fn ricart_agrawala_a_late_copy_of_the_leavers_request_does_not_count_it_again() {
    let mut n0 = ra(0, 3);
    feed(&mut n0, from(1, ricart_agrawala::Message::leave(0, 0)));
    feed(&mut n0, from(2, ricart_agrawala::Message::leave(1, 0)));
    assert!(n0.has_departed(NodeId(1)) && n0.has_departed(NodeId(2)));
    // A copy of host 2's first request, sent before it left, arrives late: it is answered
    // (answering is always safe) but host 2 stays gone.
    let ts = Timestamp {
        clock: 1,
        id: NodeId(2),
    };
    let late = feed(
        &mut n0,
        from(2, ricart_agrawala::Message::request(ts, 1, 0)),
    );
    assert_eq!(sends_to(&late, 2), 1, "the late request is answered");
    assert!(n0.has_departed(NodeId(2)) && n0.is_excluded(NodeId(2)));
    // Alone in the system now: it enters without asking anyone.
    let actions = feed(&mut n0, Event::Request(CsRequest::ONE));
    assert_eq!(sends_to(&actions, 1) + sends_to(&actions, 2), 0);
    assert_eq!(n0.status(), Status::Critical);
}

#[test]
fn ricart_agrawala_a_restarted_host_is_counted_again_and_asked() {
    let mut n0 = ra(0, 3);
    feed(&mut n0, from(2, ricart_agrawala::Message::leave(0, 0)));
    feed(&mut n0, Event::Request(CsRequest::ONE));
    assert_eq!(n0.status(), Status::Waiting, "host 1 is still asked");
    // Host 2 comes back as incarnation 1 and asks: it counts again, and host 0 asks it (under
    // a new number) before entering.
    let ts = Timestamp {
        clock: 1,
        id: NodeId(2),
    };
    let back = feed(
        &mut n0,
        from(2, ricart_agrawala::Message::request(ts, (1 << 32) | 1, 0)),
    );
    assert!(!n0.has_departed(NodeId(2)) && !n0.is_excluded(NodeId(2)));
    assert!(back.contains(&Action::Report(Report::PeerReadmitted(NodeId(2)))));
    assert!(n0.outstanding().any(|p| p == NodeId(2)), "waits for it");
    assert!(sends_to(&back, 2) >= 1, "asks it");
}

#[test]
fn ricart_agrawala_a_leave_of_an_older_incarnation_is_stale() {
    let mut n0 = ra(0, 3);
    let ts = Timestamp {
        clock: 1,
        id: NodeId(2),
    };
    feed(
        &mut n0,
        from(2, ricart_agrawala::Message::request(ts, (1 << 32) | 1, 0)),
    );
    let actions = feed(&mut n0, from(2, ricart_agrawala::Message::leave(7, 0)));
    assert!(actions.contains(&Action::Anomaly {
        from: NodeId(2),
        kind: Anomaly::Stale
    }));
    assert!(!n0.has_departed(NodeId(2)) && !n0.is_excluded(NodeId(2)));
}

#[test]
fn ricart_agrawala_a_corrupted_leave_is_dropped() {
    let mut n0 = ra(0, 3);
    let mut msg = ricart_agrawala::Message::leave(3, 0);
    if let ricart_agrawala::Message::Leave { seq, .. } = &mut msg {
        *seq ^= 1 << 40;
    }
    let actions = feed(&mut n0, from(2, msg));
    assert!(actions.contains(&Action::Anomaly {
        from: NodeId(2),
        kind: Anomaly::OutOfRange
    }));
    assert!(!n0.has_departed(NodeId(2)));
}

#[test]
fn ricart_agrawala_a_lost_leave_is_told_again_to_whoever_asks() {
    let mut net = net::<ricart_agrawala::Node>(3, Knobs::default());
    net.apply_valid(NodeId(2), Event::Leave);
    // Host 0's copy is lost.
    let to0 = net.in_flight.iter().position(|f| f.to == NodeId(0));
    net.lose(to0.expect("a LEAVE to host 0"));
    net.deliver_all(100).unwrap();
    assert!(!net.node(NodeId(0)).has_departed(NodeId(2)));
    net.request(NodeId(0));
    net.deliver_all(100).unwrap();
    assert_eq!(net.status(NodeId(0)), Status::Critical, "host 2 answered");
    assert!(
        net.node(NodeId(0)).has_departed(NodeId(2)),
        "and told it again"
    );
    net.release(NodeId(0));
    net.request(NodeId(0));
    assert!(net.to(NodeId(2)).is_empty(), "not asked any more");
}

/// A small deterministic generator (xorshift64*), so every run is reproducible by its seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n
    }
}

/// Leaves under load, loss and crashes, in random schedules: at most one host inside at
/// every step, and afterwards every host still waiting enters (crashed hosts suspected by a
/// perfect detector), for both algorithms.
fn leaves_under_load_loss_and_crashes<A: Algo>() {
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let n = 3 + rng.below(3) as u32;
        let mut net = net::<A>(n, Knobs::default()).with_detector();
        let leaver = NodeId(rng.below(u64::from(n)) as u32);
        let crasher = (rng.below(2) == 0)
            .then(|| NodeId((leaver.0 + 1 + rng.below(u64::from(n) - 1) as u32) % n))
            .filter(|&c| c != leaver);
        let (mut left, mut crashed) = (false, false);
        for _ in 0..200 {
            match rng.below(10) {
                0..=2 => {
                    let h = NodeId(rng.below(u64::from(n)) as u32);
                    if net.live(h) && net.status(h) == Status::Remainder && !(left && h == leaver) {
                        net.request(h);
                    }
                }
                3 => {
                    let h = NodeId(rng.below(u64::from(n)) as u32);
                    if net.live(h) && net.status(h) == Status::Critical {
                        net.release(h);
                    }
                }
                4 if !left && net.status(leaver) == Status::Remainder => {
                    net.apply_valid(leaver, Event::Leave);
                    left = true;
                }
                5 if !net.deliverable().is_empty() => {
                    let d = net.deliverable();
                    net.lose(d[rng.below(d.len() as u64) as usize]);
                }
                6 => {
                    if let Some(c) = crasher.filter(|_| !crashed && rng.below(8) == 0) {
                        net.crash(c);
                        crashed = true;
                    }
                }
                _ => {
                    let d = net.deliverable();
                    if !d.is_empty() {
                        net.deliver(d[rng.below(d.len() as u64) as usize]);
                    } else {
                        for (node, timer) in net.armed() {
                            net.fire(node, timer);
                        }
                    }
                }
            }
            if let Err(v) = net.check_safety() {
                panic!("{} seed {seed}: {v}", A::NAME);
            }
        }
        if crashed {
            net.detect_all();
        }
        if let Err(v) = net.settle(400) {
            panic!("{} seed {seed}: {v}", A::NAME);
        }
    }
}

#[test]
fn ricart_agrawala_leaves_under_load_loss_and_crashes() {
    leaves_under_load_loss_and_crashes::<ricart_agrawala::Node>();
}

#[test]
fn look_ahead_leave_reports_left_and_disconnects() {
    let mut node = look_ahead::Node::new(look_ahead::Config::new(
        NodeId(0),
        look_ahead::Settings::new(3, 5),
    ))
    .unwrap();
    let actions: Vec<_> = node.handle(Event::Leave).unwrap().collect();
    assert!(actions.contains(&Action::Report(Report::Left)));
    assert_eq!(node.mode(), look_ahead::Mode::Disconnected);
    assert!(actions.iter().any(|a| matches!(
        a,
        Action::Send {
            msg: look_ahead::Message::Disconnect(_),
            ..
        }
    )));
}
