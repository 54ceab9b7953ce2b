//! Fixtures for driving look-ahead hosts by hand, and adversarial schedules for the test kit's
//! hand-driven [`PermNet`].

use manet_mutex::look_ahead;
use manet_mutex::{Action, Anomaly, CsRequest, Event, Fence, NodeId, Protocol, Severity};
use manet_mutex_testkit::{PermNet, PermissionHarness};
use proptest::prelude::*;

// Fixtures for driving one look-ahead host by hand.

/// A look-ahead host with an explicit `Info_set` and retransmission timeout 50.
pub fn node(id: u32, n: u32, info: &[u32]) -> look_ahead::Node {
    let info = info.iter().map(|&i| NodeId(i)).collect();
    let config = look_ahead::Config::new(NodeId(id), look_ahead::Settings::new(n, 50));
    look_ahead::Node::new(config.with_info_set(info)).unwrap()
}

/// Feed an event that must be accepted; collect the actions.
pub fn run(
    node: &mut look_ahead::Node,
    event: Event<look_ahead::Message>,
) -> Vec<Action<look_ahead::Message>> {
    node.handle(event).expect("event accepted").collect()
}

/// Deliver `msg` from `from`.
pub fn recv(
    node: &mut look_ahead::Node,
    from: u32,
    msg: look_ahead::Message,
) -> Vec<Action<look_ahead::Message>> {
    run(
        node,
        Event::Receive {
            from: NodeId(from),
            msg,
        },
    )
}

/// Deliver `msg` from `from` and check that it is ignored: one `kind` anomaly, nothing else,
/// and the node unchanged.
pub fn assert_ignored(
    node: &mut look_ahead::Node,
    from: u32,
    msg: look_ahead::Message,
    kind: Anomaly,
) {
    let before = node.clone();
    let acts = recv(node, from, msg);
    assert_eq!(
        acts,
        vec![Action::Anomaly {
            from: NodeId(from),
            kind
        }]
    );
    assert_eq!(*node, before, "an ignored message changes nothing");
}

/// A Lamport timestamp.
pub fn ts(clock: u64, id: u32) -> manet_mutex::permission::Timestamp {
    manet_mutex::permission::Timestamp {
        clock,
        id: NodeId(id),
    }
}

/// An announcement stamped `ts` from a sender that had seen no announcement of ours and counts
/// us as present.
pub fn ann(ts: manet_mutex::permission::Timestamp) -> manet_mutex::look_ahead::Announcement {
    manet_mutex::look_ahead::Announcement::new(ts, 0, false, 0)
}

/// An entry into the critical section with fence `value`.
pub fn enter<M>(value: u64) -> Action<M> {
    Action::EnterCritical {
        resources: 1,
        fence: Fence::new(0, value),
    }
}

/// One step of an adversarial schedule; hosts and messages are taken modulo what exists.
#[derive(Debug, Clone)]
pub enum Op {
    Request(u32),
    Release(u32),
    Deliver(usize),
    Duplicate(usize),
    Replay(usize),
    Lose(usize),
    Fire(usize),
    Doze(u32),
    Wake(u32),
    Disconnect(u32),
    Reconnect(u32),
}

/// Schedule steps, deliveries the most likely.
pub fn schedule_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u32>().prop_map(Op::Request),
        2 => any::<u32>().prop_map(Op::Release),
        10 => any::<usize>().prop_map(Op::Deliver),
        1 => any::<usize>().prop_map(Op::Duplicate),
        1 => any::<usize>().prop_map(Op::Replay),
        1 => any::<usize>().prop_map(Op::Lose),
        2 => any::<usize>().prop_map(Op::Fire),
        1 => any::<u32>().prop_map(Op::Doze),
        1 => any::<u32>().prop_map(Op::Wake),
        1 => any::<u32>().prop_map(Op::Disconnect),
        1 => any::<u32>().prop_map(Op::Reconnect),
    ]
}

/// Play `ops` on `n` hosts; mode changes only if `modes`. Errors are expected for steps that
/// do not fit a host's state; the hand-driven `PermNet` checks that an `Err` changed nothing,
/// and the invariants after every step.
pub fn play<N: PermissionHarness>(net: &mut PermNet<N>, n: u32, ops: &[Op], modes: bool) {
    for op in ops {
        let (h, event) = match *op {
            Op::Request(h) => (h, Event::Request(CsRequest::ONE)),
            Op::Release(h) => (h, Event::Release),
            Op::Doze(h) if modes => (h, Event::Doze),
            Op::Wake(h) if modes => (h, Event::Wake),
            Op::Disconnect(h) if modes => (h, Event::Disconnect),
            Op::Reconnect(h) if modes => (h, Event::Reconnect),
            Op::Deliver(k) => {
                net.deliver(k);
                continue;
            }
            // A duplicate delivered at once; the original stays in flight.
            Op::Duplicate(k) => {
                net.duplicate(k);
                net.deliver(net.in_flight.len().saturating_sub(1));
                continue;
            }
            Op::Replay(k) => {
                net.replay(k);
                continue;
            }
            Op::Lose(k) => {
                net.lose(k);
                continue;
            }
            Op::Fire(k) => {
                let armed = net.armed();
                if !armed.is_empty() {
                    let (host, timer) = armed[k % armed.len()];
                    net.fire(host, timer);
                }
                continue;
            }
            _ => continue,
        };
        let _ = net.apply(NodeId(h % n), event);
    }
}

/// Every anomaly `net` saw is noise: its schedules keep the permission algorithms' contract
/// (loss, duplicates, late replays, timers firing at any time, modes), and no field is
/// corrupted.
pub fn only_noise<N: PermissionHarness>(net: &PermNet<N>) {
    for &(at, from, kind) in &net.anomalies {
        assert_eq!(
            N::anomaly_severity(kind),
            Severity::Noise,
            "{at:?} reported {kind:?} from {from:?}\n{}",
            net.trace_text()
        );
    }
}

/// A protected resource behind `net`: it accepts every entry's fence (each above the last:
/// the sections never overlap, so above every section that ended before it), and, since every
/// fence comes from an entry and each entry is one above the highest its host has seen, the
/// fences count the entries exactly (`docs/ALGORITHMS.md`, F1). After a crash, an entry that
/// may follow grants nobody heard of starts a new fence generation (C6), so the fences jump
/// and no longer count the entries; every entry is still accepted after at most one crash.
pub fn resource_accepts_every_entry<N: PermissionHarness>(
    net: &PermNet<N>,
) -> Result<(), TestCaseError> {
    let mut resource = manet_mutex::fence::Fences::new();
    let strict = !net.refusal_allowed();
    for &(at, fence) in &net.entries {
        let accepted = resource.admit(fence);
        prop_assert!(
            accepted.is_ok() || !strict,
            "{:?} entered with {:?}: {:?}",
            at,
            fence,
            accepted
        );
        prop_assert_eq!(fence.lane, 0);
    }
    if net.crashes == 0 {
        prop_assert_eq!(resource.highest(0).unwrap_or(0), net.entries.len() as u64);
    }
    Ok(())
}
