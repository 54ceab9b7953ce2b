//! The findings, kept as regressions: a crashed host stopped everyone. `kill -9` of the
//! holder while inside, and of a host the others wait for outside the critical section (a
//! look-ahead DISCONNECT was only ever announced by the host itself): with the papers'
//! settings the others make no entry afterwards; with exclusion, by a failure detector or by
//! their own timeouts, they keep entering (C1, C3).

use manet_mutex::{CsRequest, Event, NodeId, Status};
use manet_mutex_testkit::PermNet;

use super::common::{run_rounds, Algo, Knobs};

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod ricart_agrawala {
            $(#[test] fn $name() { super::$name::<manet_mutex::ricart_agrawala::Node>() })*
        }
        mod look_ahead {
            $(#[test] fn $name() { super::$name::<manet_mutex::look_ahead::Node>() })*
        }
    };
}

both!(
    a_crashed_holder_stops_everyone_without_exclusion,
    with_a_detector_the_others_keep_entering_after_the_holder_crashed,
    with_their_own_timeouts_the_others_keep_entering_after_the_holder_crashed,
    a_crashed_host_waited_for_outside_the_section_stops_everyone_without_exclusion,
    with_exclusion_a_crashed_host_waited_for_outside_the_section_stops_nobody,
);

/// How a test excludes: not at all (the papers), a perfect detector, or the hosts' own
/// timeouts (three silent retransmissions).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum By {
    Nothing,
    Detector,
    Timeouts,
}

fn net<A: Algo>(by: By) -> PermNet<A> {
    let knobs = match by {
        By::Timeouts => Knobs::default().exclusion(3),
        _ => Knobs::default(),
    };
    let net = PermNet::with_nodes(A::hosts(4, 10, knobs)).checked();
    if by == By::Detector {
        net.with_detector()
    } else {
        net
    }
}

/// Host 0 enters and is killed inside; hosts 1 to 3 then want in, three times each. Returns
/// the entries they made.
fn holder_killed<A: Algo>(by: By) -> usize {
    let mut net = net::<A>(by);
    net.request(NodeId(0));
    net.deliver_all(100).unwrap();
    assert_eq!(net.status(NodeId(0)), Status::Critical);
    net.crash(NodeId(0));
    if by == By::Detector {
        net.detect_all();
    }
    run_rounds(&mut net, &[1, 2, 3], 3, 200)
}

fn a_crashed_holder_stops_everyone_without_exclusion<A: Algo>() {
    assert_eq!(holder_killed::<A>(By::Nothing), 0, "{}", A::NAME);
}

fn with_a_detector_the_others_keep_entering_after_the_holder_crashed<A: Algo>() {
    assert_eq!(holder_killed::<A>(By::Detector), 9, "{}", A::NAME);
}

fn with_their_own_timeouts_the_others_keep_entering_after_the_holder_crashed<A: Algo>() {
    assert_eq!(holder_killed::<A>(By::Timeouts), 9, "{}", A::NAME);
}

/// Host 0 asks first; the others ask after it, so each waits for host 0's REPLY, which host 0
/// defers. Host 0 is killed before it enters (one REPLY it needs is held back), outside the
/// critical section. Returns the entries the others made.
fn waited_for_killed<A: Algo>(by: By) -> usize {
    let mut net = net::<A>(by);
    net.apply(NodeId(0), Event::Request(CsRequest::ONE))
        .unwrap();
    // Host 0's REQUESTs reach hosts 1 and 2 (which answer), not host 3 yet.
    net.deliver_where(|f| f.from == NodeId(0) && f.to == NodeId(1));
    net.deliver_where(|f| f.from == NodeId(0) && f.to == NodeId(2));
    for h in 1..4 {
        net.request(NodeId(h));
    }
    // Everything but what reaches host 0 from host 3, and host 0's REQUEST to host 3.
    while let Some(i) = net
        .in_flight
        .iter()
        .position(|f| f.to != NodeId(3) && f.from != NodeId(3))
    {
        net.deliver(i);
    }
    assert_eq!(net.status(NodeId(0)), Status::Waiting);
    net.crash(NodeId(0));
    if by == By::Detector {
        net.detect_all();
    }
    run_rounds(&mut net, &[1, 2, 3], 2, 200)
}

fn a_crashed_host_waited_for_outside_the_section_stops_everyone_without_exclusion<A: Algo>() {
    let made = waited_for_killed::<A>(By::Nothing);
    assert_eq!(made, 0, "{}", A::NAME);
}

fn with_exclusion_a_crashed_host_waited_for_outside_the_section_stops_nobody<A: Algo>() {
    for by in [By::Detector, By::Timeouts] {
        let made = waited_for_killed::<A>(by);
        assert_eq!(made, 6, "{} {by:?}", A::NAME);
    }
}
