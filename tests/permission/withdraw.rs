//! `Event::Cancel` in the permission algorithms: a waiting host withdraws its request,
//! answering everyone it deferred. Safety after every event (the kit's hand-driven mode),
//! every request served or withdrawn and never both, under loss, duplication, reordering and
//! early timeouts; a REPLY to a withdrawn request never grants a later one.

use manet_mutex::{look_ahead, ricart_agrawala, CsRequest, Error, Event, Fence, NodeId, Status};
use manet_mutex_testkit::strategy::cases;
use manet_mutex_testkit::{PermNet, PermissionHarness};
use proptest::prelude::*;

fn ra(n: u32) -> PermNet<ricart_agrawala::Node> {
    PermNet::new(n, 0).unwrap().checked()
}

fn la(n: u32, seed: u64) -> PermNet<look_ahead::Node> {
    PermNet::new(n, seed).unwrap().checked()
}

fn is_reply<M: std::fmt::Debug>(from: u32) -> impl Fn(&manet_mutex_testkit::Flight<M>) -> bool {
    move |f| f.from == NodeId(from) && format!("{:?}", f.msg).starts_with("Reply")
}

#[test]
fn only_a_waiting_host_can_cancel() {
    let mut net = ra(2);
    assert_eq!(
        net.apply(NodeId(0), Event::Cancel),
        Err(Error::NotWaiting(Status::Remainder))
    );
    let mut net = la(2, 0);
    assert_eq!(
        net.apply(NodeId(0), Event::Cancel),
        Err(Error::NotWaiting(Status::Remainder))
    );
}

/// A host that must ask the other (look-ahead: the one whose `Info_set` holds it) asks, the
/// other grants, the asker withdraws and asks again; the first REPLY arrives late and must not
/// let it in while the second is still owed. Cancelling stops the timers.
fn late_reply_to_a_withdrawn_request<H: PermissionHarness>(mut net: PermNet<H>) {
    net.request(NodeId(0));
    let (a, b) = if net.status(NodeId(0)) == Status::Waiting {
        (NodeId(0), NodeId(1))
    } else {
        net.release(NodeId(0));
        net.deliver_all(100).unwrap();
        net.request(NodeId(1));
        (NodeId(1), NodeId(0))
    };
    assert_eq!(net.status(a), Status::Waiting);
    while let Some(i) = net.in_flight.iter().position(|f| f.to == b) {
        net.deliver(i);
    }
    let entered = net.entries.len();
    net.apply(a, Event::Cancel).unwrap();
    // The driver drops a timer only on the host's CancelTimer.
    assert!(
        net.timers[a.index()].is_empty(),
        "every retransmission timer is cancelled"
    );
    net.request(a);
    net.deliver_where(is_reply(b.0));
    assert_eq!(
        net.status(a),
        Status::Waiting,
        "the old REPLY grants nothing"
    );
    net.settle(100).unwrap();
    assert_eq!(net.entries.len(), entered + 1);
    assert_eq!(net.entries.last().map(|e| e.0), Some(a));
}

#[test]
fn a_late_reply_to_a_withdrawn_request_grants_nothing() {
    late_reply_to_a_withdrawn_request(ra(2));
    late_reply_to_a_withdrawn_request(la(2, 3));
}

/// Host 0 (older request) defers host 1; when 0 withdraws, 1 gets its REPLY and enters.
/// (With two look-ahead hosts only one asks the other, so this is Ricart–Agrawala's case;
/// look-ahead's is covered by the property test.)
fn withdrawal_answers_the_deferred<H: PermissionHarness>(mut net: PermNet<H>) {
    net.request(NodeId(0));
    net.request(NodeId(1));
    // 1's REQUEST reaches 0 (deferred: 0's is older); 0's REQUEST reaches 1 is held back.
    let i = net
        .in_flight
        .iter()
        .position(|f| f.to == NodeId(0))
        .unwrap();
    net.deliver(i);
    assert_eq!(net.node(NodeId(0)).status(), Status::Waiting);
    net.apply(NodeId(0), Event::Cancel).unwrap();
    net.settle(100).unwrap();
    assert_eq!(net.entries, vec![(NodeId(1), Fence::new(0, 1))]);
}

#[test]
fn a_withdrawal_answers_every_deferred_request() {
    withdrawal_answers_the_deferred(ra(2));
}

#[derive(Debug, Clone)]
enum Op {
    Request(u32),
    Release(u32),
    Cancel(u32),
    Deliver(usize),
    Lose(usize),
    Duplicate(usize),
    Fire(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u32>().prop_map(Op::Request),
        2 => any::<u32>().prop_map(Op::Release),
        2 => any::<u32>().prop_map(Op::Cancel),
        8 => any::<usize>().prop_map(Op::Deliver),
        1 => any::<usize>().prop_map(Op::Lose),
        1 => any::<usize>().prop_map(Op::Duplicate),
        2 => any::<usize>().prop_map(Op::Fire),
    ]
}

fn play<H: PermissionHarness>(mut net: PermNet<H>, ops: &[Op]) -> Result<(), String> {
    let n = net.nodes.len() as u32;
    let (mut requests, mut cancels) = (0, 0);
    for op in ops {
        match *op {
            Op::Request(i) if net.status(NodeId(i % n)) == Status::Remainder => {
                net.apply(NodeId(i % n), Event::Request(CsRequest::ONE))
                    .unwrap();
                requests += 1;
            }
            Op::Release(i) if net.status(NodeId(i % n)) == Status::Critical => {
                net.release(NodeId(i % n))
            }
            Op::Cancel(i) => {
                let waiting = net.status(NodeId(i % n)) == Status::Waiting;
                match net.apply(NodeId(i % n), Event::Cancel) {
                    Ok(()) if waiting => cancels += 1,
                    Err(Error::NotWaiting(_)) if !waiting => {}
                    other => return Err(format!("cancel: {other:?}")),
                }
            }
            Op::Deliver(i) => {
                net.deliver(i);
            }
            Op::Lose(i) => net.lose(i),
            Op::Duplicate(i) => net.duplicate(i),
            Op::Fire(i) => {
                let armed = net.armed();
                if !armed.is_empty() {
                    let (host, timer) = armed[i % armed.len()];
                    net.fire(host, timer);
                }
            }
            _ => {}
        }
    }
    net.settle(500).map_err(|v| v.to_string())?;
    if net.entries.len() != requests - cancels {
        return Err(format!(
            "{requests} requests, {cancels} withdrawn, {} entries",
            net.entries.len()
        ));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn ricart_agrawala_serves_or_withdraws_every_request(
        n in 2u32..6,
        ops in proptest::collection::vec(op(), 0..200),
    ) {
        if let Err(e) = play(ra(n), &ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn look_ahead_serves_or_withdraws_every_request(
        n in 2u32..6,
        seed: u64,
        ops in proptest::collection::vec(op(), 0..200),
    ) {
        if let Err(e) = play(la(n, seed), &ops) {
            return Err(TestCaseError::fail(e));
        }
    }
}
