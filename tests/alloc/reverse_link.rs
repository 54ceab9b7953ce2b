//! Steady-state `handle` does not allocate: once a static network has warmed up (output
//! buffers and request queues at their working capacity), further request/release cycles make
//! no heap allocation inside `Protocol::handle` or while the returned actions are consumed.
//!
//! A counting global allocator counts allocations on this thread only while a flag is set; the
//! flag is set around each `handle` call and the draining of its actions into a buffer whose
//! capacity was reserved up front. The test's own bookkeeping runs with the flag clear.

use std::collections::VecDeque;

use manet_mutex::reverse_link::{self, Message, Node};
use manet_mutex::{Action, Anomaly, CsRequest, Event, NodeId, Protocol, Status};

use crate::counting::{allocations, COUNTING};

/// What the driver does next.
#[derive(Debug, Clone, Copy)]
enum Step {
    Deliver {
        from: NodeId,
        to: NodeId,
        msg: Message,
    },
    Release(NodeId),
}

/// An offending call: where the allocation happened.
#[derive(Debug, Clone)]
struct Offence {
    round: usize,
    node: NodeId,
    event: Event<Message>,
    allocations: u64,
}

struct Driver {
    nodes: Vec<Node>,
    steps: VecDeque<Step>,
    actions: Vec<Action<Message>>,
    offences: Vec<Offence>,
    counted: u64,
    calls: u64,
    entries: u64,
    stale: u64,
    round: usize,
    /// KRL only: a link that fails and re-forms at the start of every round.
    flapping: Option<(u32, u32)>,
    /// Call `handle_in` (the run's buffer lent to the node) instead of `handle`.
    lend: bool,
}

fn forwarding_run(nodes: &[Node]) -> bool {
    nodes.first().is_some_and(|n| n.settings().forwarding)
}

impl Offence {
    fn describe(&self) -> String {
        format!(
            "round {}: {:?} <- {:?} made {} allocation(s)",
            self.round, self.node, self.event, self.allocations
        )
    }
}

impl Driver {
    fn new(n: usize, edges: &[(u32, u32)], holders: &[u32], forwarding: bool) -> Self {
        let edges: Vec<(NodeId, NodeId)> =
            edges.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect();
        let holders: Vec<NodeId> = holders.iter().copied().map(NodeId).collect();
        let settings =
            reverse_link::Settings::new(holders.len() as u32).with_forwarding(forwarding);
        let nodes = reverse_link::network(n as u32, &edges, &holders, settings)
            .unwrap()
            .into_iter()
            .map(|c| Node::new(c).unwrap())
            .collect();
        Driver {
            nodes,
            steps: VecDeque::with_capacity(1 << 14),
            actions: Vec::with_capacity(1 << 10),
            offences: Vec::with_capacity(64),
            counted: 0,
            calls: 0,
            entries: 0,
            stale: 0,
            round: 0,
            flapping: None,
            lend: false,
        }
    }

    /// Feed one event; only the `handle` call and the draining of its actions are counted.
    fn feed(&mut self, at: NodeId, event: Event<Message>) {
        self.actions.clear();
        let node = &mut self.nodes[at.index()];
        let before = allocations();
        COUNTING.with(|c| c.set(true));
        let result = if self.lend {
            node.handle_in(event.clone(), &mut self.actions)
        } else {
            node.handle(event.clone())
                .map(|out| self.actions.extend(out))
        };
        COUNTING.with(|c| c.set(false));
        let made = allocations() - before;
        result.expect("the driver only issues valid events");
        self.calls += 1;
        if made > 0 {
            self.counted += made;
            if self.offences.len() < self.offences.capacity() {
                self.offences.push(Offence {
                    round: self.round,
                    node: at,
                    event,
                    allocations: made,
                });
            }
        }
        for action in self.actions.drain(..) {
            match action {
                Action::Send { to, msg } => {
                    self.steps.push_back(Step::Deliver { from: at, to, msg })
                }
                Action::EnterCritical { .. } => {
                    self.entries += 1;
                    self.steps.push_back(Step::Release(at));
                }
                // KRLF: an idle token forwarded to a node whose Request is on its way the other
                // way makes that Request stale; the token already answered it.
                Action::Anomaly {
                    kind: Anomaly::Stale,
                    ..
                } if forwarding_run(&self.nodes) => self.stale += 1,
                Action::Anomaly { .. } => panic!("{at:?} reported {action:?}"),
                _ => {}
            }
        }
    }

    /// One round: every idle node requests (starting from a rotating node), then events are
    /// processed until every node is back in its remainder section (and, for KRL, nothing is
    /// in flight).
    fn round(&mut self, forwarding: bool) {
        if let Some((a, b)) = self.flapping {
            // KRL is quiet between rounds, so the link is idle: fail it or re-form it.
            assert!(self.steps.is_empty());
            let (a, b) = (NodeId(a), NodeId(b));
            if self.nodes[a.index()].neighbors().get(b).is_some() {
                self.feed(a, Event::LinkDown(b));
                self.feed(b, Event::LinkDown(a));
            } else {
                self.feed(a, Event::LinkUp(b));
                self.feed(b, Event::LinkUp(a));
            }
        }
        let n = self.nodes.len();
        for i in 0..n {
            let at = NodeId(((i + self.round) % n) as u32);
            if self.nodes[at.index()].status() == Status::Remainder {
                self.feed(at, Event::Request(CsRequest::ONE));
            }
        }
        let mut budget = 100_000;
        while let Some(step) = self.steps.pop_front() {
            match step {
                Step::Deliver { from, to, msg } => self.feed(to, Event::Receive { from, msg }),
                Step::Release(at) => self.feed(at, Event::Release),
            }
            budget -= 1;
            assert!(budget > 0, "round {} does not finish", self.round);
            let idle = self.nodes.iter().all(|n| n.status() == Status::Remainder);
            if forwarding && idle {
                break;
            }
        }
        assert!(
            self.nodes.iter().all(|n| n.status() == Status::Remainder),
            "round {} left nodes waiting",
            self.round
        );
        self.round += 1;
    }
}

/// Six nodes: a ring with two chords, tokens at 0 and 3.
const EDGES: [(u32, u32); 8] = [
    (0, 1),
    (1, 2),
    (2, 3),
    (3, 4),
    (4, 5),
    (5, 0),
    (0, 3),
    (1, 4),
];

fn steady_state_allocates_nothing(forwarding: bool, flapping: Option<(u32, u32)>) {
    let mut d = Driver::new(6, &EDGES, &[0, 3], forwarding);
    d.flapping = flapping;
    for _ in 0..30 {
        d.round(forwarding);
    }
    let warm_entries = d.entries;
    assert_eq!(warm_entries, 30 * 6);
    d.counted = 0;
    d.calls = 0;
    d.offences.clear();
    for _ in 0..300 {
        d.round(forwarding);
    }
    assert_eq!(
        d.entries - warm_entries,
        300 * 6,
        "every request was served"
    );
    assert!(d.calls > 300 * 6 * 3, "only {} calls measured", d.calls);
    let offences: Vec<String> = d.offences.iter().map(Offence::describe).collect();
    assert!(
        d.counted == 0,
        "{} allocations in {} steady-state handle calls; first offences:\n{}",
        d.counted,
        d.calls,
        offences.join("\n")
    );
}

#[test]
fn krl_steady_state_handle_allocates_nothing() {
    steady_state_allocates_nothing(false, None);
}

#[test]
fn krl_with_a_link_failing_and_re_forming_every_round_allocates_nothing() {
    // LinkDown/LinkUp, the LinkInfo handshake, raises and lowers: the neighbour table keeps
    // its capacity when an entry is removed and re-inserted.
    steady_state_allocates_nothing(false, Some((1, 4)));
}

#[test]
fn krlf_steady_state_handle_allocates_nothing() {
    steady_state_allocates_nothing(true, None);
}

#[test]
fn the_counting_allocator_sees_allocations_made_while_counting() {
    let before = allocations();
    COUNTING.with(|c| c.set(true));
    let v: Vec<u64> = Vec::with_capacity(8);
    COUNTING.with(|c| c.set(false));
    assert_eq!(allocations() - before, 1);
    drop(v);
}

/// `handle_in` puts a fresh node's first burst in the lent buffer, not in its own: the same
/// first call allocates one block less than through `handle` (below) when the caller's buffer
/// has room, and the steady state stays free of allocations.
#[test]
fn a_node_lent_a_buffer_never_grows_its_own() {
    let first_call = |lend: bool| {
        let mut d = Driver::new(6, &EDGES, &[0, 3], false);
        d.lend = lend;
        d.feed(NodeId(2), Event::Request(CsRequest::ONE));
        assert_eq!(d.steps.len(), 1, "a request to `next`");
        d.counted
    };
    let (own, lent) = (first_call(false), first_call(true));
    println!("first call: {own} allocations through handle, {lent} through handle_in");
    // The request queue's first slot is allocated either way; the output buffer only by
    // `handle`.
    assert_eq!(
        own,
        lent + 1,
        "the node's own buffer stays untouched when lent one"
    );
    let mut d = Driver::new(6, &EDGES, &[0, 3], true);
    d.lend = true;
    for _ in 0..30 {
        d.round(true);
    }
    let before = (d.counted, d.entries);
    for _ in 0..100 {
        d.round(true);
    }
    assert_eq!(d.counted, before.0, "{:?}", d.offences.first());
    assert!(d.entries > before.1);
}

#[test]
fn a_cold_node_does_allocate_so_the_count_is_meaningful() {
    // The first burst of a fresh node grows its output buffer: the counter must see it.
    let mut d = Driver::new(6, &EDGES, &[0, 3], false);
    d.feed(NodeId(2), Event::Request(CsRequest::ONE));
    assert!(
        d.counted > 0,
        "the first handle call of a fresh node must allocate"
    );
}

/// A node in a part without a token, raises paced (R15): its neighbour climbs above it again
/// and again, each raise waits for the pause and is made at the pause's end. None of it
/// allocates once warm: the deferred raise, the pause's timer, the expiry, the raise.
#[test]
fn a_paced_node_raising_in_a_token_less_part_allocates_nothing() {
    use manet_mutex::token::{Height, RaisePause};
    let settings = reverse_link::Settings::new(1).with_raise_pause(RaisePause::new(2, 16));
    let height = |a, id| Height::new(a, 0, NodeId(id));
    let config = reverse_link::Config::new(
        NodeId(1),
        settings,
        0,
        height(1, 1),
        vec![height(0, 0), height(2, 2)],
    );
    let mut node = Node::new(config).unwrap();
    let mut actions: Vec<Action<Message>> = Vec::with_capacity(64);
    let mut timer = None;
    let mut feed = |node: &mut Node, event: Event<Message>, timer: &mut Option<_>| {
        actions.clear();
        let before = allocations();
        COUNTING.with(|c| c.set(true));
        node.handle_in(event, &mut actions).unwrap();
        COUNTING.with(|c| c.set(false));
        for a in &actions {
            if let Action::SetTimer { timer: t, .. } = a {
                *timer = Some(*t);
            }
        }
        allocations() - before
    };
    // Its way down fails: the first raise, at once.
    feed(&mut node, Event::LinkDown(NodeId(0)), &mut timer);
    let (mut made, mut calls, mut raises) = (0, 0, 0);
    for cycle in 0..2_000 {
        // Node 2 climbs above it (the raise waits), then the pause ends (the raise is made).
        let above = height(node.height().h1 + 1, 2);
        let climb = Event::Receive {
            from: NodeId(2),
            msg: Message::LinkInfo(above.into()),
        };
        let n = feed(&mut node, climb, &mut timer);
        let expiry = Event::Timeout(timer.take().expect("a pause runs"));
        let before = node.raises();
        let m = feed(&mut node, expiry, &mut timer);
        if cycle >= 100 {
            made += n + m;
            calls += 2;
            raises += node.raises() - before;
        }
    }
    assert_eq!(raises, 1_900, "one raise at each pause's end");
    assert_eq!(made, 0, "{made} allocations in {calls} calls");
}
