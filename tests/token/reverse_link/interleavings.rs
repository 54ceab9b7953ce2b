//! Adversarial schedules: the same hand-driven network as the scenario tests, but every step
//! (request, release, delivery on any busy link, link failure, link formation) is chosen by
//! proptest. Per-link FIFO is the only ordering guarantee, so interleavings the fixed-delay
//! simulator never produces are covered. After every event: the safety invariants, and no
//! anomaly but `Stale` (a request crossing a token, only with KRLF or link changes). After the schedule: every waiting node is
//! served, KRL goes quiet with a token-oriented DAG, and a static network never raised a height.

use std::collections::BTreeSet;

use super::net::{cases, Net};
use manet_mutex::reverse_link::{self, Node};
use manet_mutex::{NodeId, Protocol, Status};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    n: u32,
    edges: Vec<(u32, u32)>,
    k: u32,
    forwarding: bool,
    dynamic: bool,
    ops: Vec<(u8, u16, u16)>,
}

fn case(max_n: u32, max_ops: usize) -> impl Strategy<Value = Case> {
    (2u32..=max_n)
        .prop_flat_map(move |n| {
            (
                Just(n),
                proptest::collection::vec(any::<u16>(), (n - 1) as usize),
                proptest::collection::vec((0..n, 0..n), 0..(n as usize * 2)),
                1..n,
                any::<bool>(),
                any::<bool>(),
                proptest::collection::vec((0u8..10, any::<u16>(), any::<u16>()), 0..max_ops),
            )
        })
        .prop_map(|(n, parents, extra, k, forwarding, dynamic, ops)| {
            let mut edges = BTreeSet::new();
            for (i, p) in parents.iter().enumerate() {
                let child = i as u32 + 1;
                edges.insert((u32::from(*p) % child, child));
            }
            for (a, b) in extra {
                if a != b {
                    edges.insert((a.min(b), a.max(b)));
                }
            }
            Case {
                n,
                edges: edges.into_iter().collect(),
                k,
                forwarding,
                dynamic,
                ops,
            }
        })
}

fn connected(n: u32, edges: &BTreeSet<(u32, u32)>) -> bool {
    let mut seen = vec![false; n as usize];
    let mut stack = vec![0u32];
    seen[0] = true;
    while let Some(u) = stack.pop() {
        for &(a, b) in edges {
            let v = match (a == u, b == u) {
                (true, _) => b,
                (_, true) => a,
                _ => continue,
            };
            if !seen[v as usize] {
                seen[v as usize] = true;
                stack.push(v);
            }
        }
    }
    seen.iter().all(|&s| s)
}

fn in_status(net: &Net, status: Status) -> Vec<u32> {
    (0..net.nodes.len() as u32)
        .filter(|&i| net.n(i).status() == status)
        .collect()
}

fn busy_links(net: &Net) -> Vec<(u32, u32)> {
    net.busy_links()
        .into_iter()
        .map(|(f, t)| (f.0, t.0))
        .collect()
}

fn run(case: &Case) {
    let holders: Vec<NodeId> = (0..case.k).map(NodeId).collect();
    let edges: Vec<(NodeId, NodeId)> = case
        .edges
        .iter()
        .map(|&(a, b)| (NodeId(a), NodeId(b)))
        .collect();
    let configs = reverse_link::network(
        case.n,
        &edges,
        &holders,
        reverse_link::Settings::new(holders.len() as u32).with_forwarding(case.forwarding),
    )
    .expect("valid network");
    let mut net = Net::new(configs);
    // A Request can cross a token only when KRLF forwards idle tokens or links change; in a
    // static KRL network every Request is answered before its sender hears from us again.
    net.allow_stale = case.forwarding || case.dynamic;
    let mut graph: BTreeSet<(u32, u32)> = case.edges.iter().copied().collect();
    let n = case.n;

    for &(kind, a, b) in &case.ops {
        let (a, b) = (u32::from(a), u32::from(b));
        match kind {
            0 | 1 => {
                let idle = in_status(&net, Status::Remainder);
                if !idle.is_empty() {
                    net.request(idle[a as usize % idle.len()]);
                }
            }
            2 => {
                let critical = in_status(&net, Status::Critical);
                if !critical.is_empty() {
                    net.release(critical[a as usize % critical.len()]);
                }
            }
            3..=7 => {
                let busy = busy_links(&net);
                if !busy.is_empty() {
                    let (f, t) = busy[a as usize % busy.len()];
                    net.deliver(f, t);
                }
            }
            8 if case.dynamic => {
                let all: Vec<(u32, u32)> = graph.iter().copied().collect();
                let (x, y) = all[a as usize % all.len()];
                let idle = net.pending(x, y).is_empty() && net.pending(y, x).is_empty();
                let mut without = graph.clone();
                without.remove(&(x, y));
                if idle && connected(n, &without) {
                    net.note(|| format!("link n{x}-n{y} fails"));
                    net.link_down(x, y);
                    graph = without;
                }
            }
            9 if case.dynamic => {
                let (x, y) = (a % n, b % n);
                let e = (x.min(y), x.max(y));
                if x != y && !graph.contains(&e) {
                    net.note(|| format!("link n{x}-n{y} forms"));
                    graph.insert(e);
                    net.link_up(e.0, e.1);
                }
            }
            _ => {}
        }
    }

    // Drain: no new requests or link changes; release whoever enters; deliver everything,
    // oldest message first (a scheduler that always picks the same busy link can starve the
    // others while KRLF's idle tokens circulate).
    let mut budget = 200_000;
    loop {
        budget -= 1;
        if budget == 0 {
            let waiting = in_status(&net, Status::Waiting);
            net.fail(format!("starvation: {waiting:?} still waiting"));
        }
        if let Some(&i) = in_status(&net, Status::Critical).first() {
            net.release(i);
            continue;
        }
        if case.forwarding && in_status(&net, Status::Waiting).is_empty() {
            break; // KRLF keeps idle tokens moving forever
        }
        if !net.deliver_oldest() {
            break;
        }
    }
    let waiting = in_status(&net, Status::Waiting);
    if !waiting.is_empty() {
        net.fail(format!(
            "deadlock: {waiting:?} waiting with nothing in flight"
        ));
    }
    if !case.forwarding {
        net.quiescent();
    }
    if !case.dynamic {
        let raises: u64 = net.nodes.iter().map(Node::raises).sum();
        if raises != 0 {
            net.fail(format!("{raises} height raises in a static network"));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2048), ..ProptestConfig::default() })]

    #[test]
    fn any_fifo_interleaving_keeps_safety_and_serves_every_request(case in case(8, 400)) {
        run(&case);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn long_interleavings_on_larger_networks_keep_safety_and_serve_every_request(
        case in case(14, 3000),
    ) {
        run(&case);
    }
}
