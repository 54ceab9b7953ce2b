//! The link session under arbitrary frames: a session `A` linked to an honest peer `B`, and an
//! adversary injecting any frame from any id (its own included), naming epochs near the real
//! ones and at the extremes, any sequence number, while the honest traffic is lost,
//! duplicated and reordered, the cores send, the application connects and closes, and time
//! jumps. `A` must never panic, and after every step:
//! - its state stays bounded: at most `max_peers` links, in flight and buffered within the
//!   window, at most two frames answered per frame received;
//! - what it tells its core is consistent: `LinkUp` and `LinkDown` alternate per peer, and
//!   the honest peer's messages arrive at most once and in the order they were sent;
//! - every message its core sent is held, delivered or reported lost, never reported twice
//!   nor both held and reported; `B` delivers each at most once.
//!
//! A forged frame naming the current incarnation exactly (both epochs right) is a consistent
//! forgery: it can acknowledge a message never delivered, or take an honest message's number,
//! and only authentication could stop that. After one, the checks of honest delivery (order,
//! nothing vanished) are no longer made; the others still are.
//! - a timeout handled moves every deadline past the present (no busy loop).

use std::collections::{BTreeMap, BTreeSet};

use manet_mutex::session::{Datagram, Epochs, Frame, Session, SessionEvent, Settings};
use manet_mutex::testkit::strategy::cases;
use manet_mutex::{Event, NodeId};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

const A: NodeId = NodeId(0);
const B: NodeId = NodeId(1);
const WINDOW: u32 = 3;
const MAX_PEERS: u32 = 3;
/// Messages the adversary forges carry this much or more; honest ones less.
const FORGED: u32 = 1 << 20;

fn settings() -> Settings {
    Settings::new(4, 40, WINDOW)
        .with_keepalive(10)
        .with_max_peers(MAX_PEERS)
}

/// An epoch as the adversary names it: relative to the real ones, or absolute.
#[derive(Debug, Clone, Copy)]
enum E {
    /// `A`'s current epoch for `B`, plus the offset.
    Mine(i8),
    /// `B`'s current epoch for `A`, plus the offset.
    Theirs(i8),
    Abs(u64),
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Hello,
    Data(u64, u32),
    Ack(u64),
    Close(u64),
    CloseAck,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    /// A forged frame from `from`: its sender's epoch, its receiver's, and what it is.
    Forge(u8, E, E, Kind),
    /// Deliver the `i`-th honest frame in the air to its destination (and keep a copy in the
    /// air if `dup`).
    Deliver(u8, bool),
    /// Lose the `i`-th honest frame in the air.
    Lose(u8),
    /// `A`'s core (or `B`'s) sends its next message, if its link is up.
    Send(bool),
    /// `A`'s application connects to (or closes) peer `i`.
    Connect(u8),
    Close(u8),
    /// Time passes.
    Wait(u8),
}

fn epoch() -> impl Strategy<Value = E> {
    prop_oneof![
        (-2i8..=2).prop_map(E::Mine),
        (-2i8..=2).prop_map(E::Theirs),
        select(vec![0, 1, 2, 3, 1000, u64::MAX - 1, u64::MAX]).prop_map(E::Abs),
    ]
}

fn seq() -> impl Strategy<Value = u64> {
    select(vec![0, 1, 2, 3, 4, 5, 6, 7, u64::MAX - 1, u64::MAX])
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Hello),
        (seq(), FORGED..FORGED + 8).prop_map(|(s, m)| Kind::Data(s, m)),
        seq().prop_map(Kind::Ack),
        seq().prop_map(Kind::Close),
        Just(Kind::CloseAck),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0u8..5, epoch(), epoch(), kind()).prop_map(|(f, s, r, k)| Op::Forge(f, s, r, k)),
        10 => (any::<u8>(), any::<bool>()).prop_map(|(i, d)| Op::Deliver(i, d)),
        1 => any::<u8>().prop_map(Op::Lose),
        3 => any::<bool>().prop_map(Op::Send),
        1 => (1u8..5).prop_map(Op::Connect),
        1 => (1u8..5).prop_map(Op::Close),
        2 => (0u8..60).prop_map(Op::Wait),
    ]
}

struct World {
    a: Session<u32>,
    b: Session<u32>,
    now: u64,
    /// Honest frames in the air: (from, to, frame).
    air: Vec<(NodeId, NodeId, Frame<u32>)>,
    next: [u32; 2],
    /// `A`'s view of each peer's link as told to its core.
    told: BTreeMap<NodeId, bool>,
    /// Honest messages from `B` delivered at `A`, and the last one.
    from_b: BTreeSet<u32>,
    last_from_b: Option<u32>,
    /// `A`'s messages: sent, delivered at `B`, reported lost (a message both delivered and
    /// reported is a false alarm: its acknowledgement was lost).
    sent_a: BTreeSet<u32>,
    delivered_a: BTreeSet<u32>,
    lost_a: BTreeSet<u32>,
    /// A forged frame named `A`'s current incarnation with `B` exactly: a consistent forgery,
    /// which can acknowledge what was never delivered or take an honest message's number.
    /// From then on only the checks that hold under forgery are made.
    forgery: bool,
}

impl World {
    fn resolve(&self, e: E) -> u64 {
        let base = |s: &Session<u32>, p| s.link(p).map_or(0, |l| l.epochs.sender);
        match e {
            E::Mine(d) => base(&self.a, B).wrapping_add_signed(i64::from(d)),
            E::Theirs(d) => base(&self.b, A).wrapping_add_signed(i64::from(d)),
            E::Abs(x) => x,
        }
    }

    /// Drain both sessions: `A`'s events checked, `B`'s deliveries of `A`'s messages noted.
    fn pump(&mut self, datagram: bool) {
        while let Some(event) = self.a.poll_event() {
            match event {
                SessionEvent::Core(Event::LinkUp(p)) => {
                    let was = self.told.insert(p, true).unwrap_or(false);
                    assert!(!was, "LinkUp({p:?}) twice without LinkDown");
                }
                SessionEvent::Core(Event::LinkDown(p)) => {
                    let was = self.told.insert(p, false).unwrap_or(false);
                    assert!(was, "LinkDown({p:?}) without LinkUp");
                }
                SessionEvent::Core(Event::Receive { from, msg }) => {
                    if from == B && msg < FORGED && !self.forgery {
                        assert!(self.from_b.insert(msg), "{msg} from B delivered twice");
                        assert!(self.last_from_b < Some(msg), "{msg} from B out of order");
                        self.last_from_b = Some(msg);
                    }
                }
                SessionEvent::Lost { peer, msgs, .. } => {
                    for m in msgs {
                        assert!(
                            self.sent_a.contains(&m) && peer == B,
                            "lost {m}, never sent"
                        );
                        assert!(self.lost_a.insert(m), "{m} reported lost twice");
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        while let Some(event) = self.b.poll_event() {
            if let SessionEvent::Core(Event::Receive { from: A, msg }) = event {
                assert!(
                    self.delivered_a.insert(msg),
                    "{msg} from A delivered twice at B"
                );
            }
        }
        let mut out = 0;
        while let Some(t) = self.a.poll_transmit() {
            out += 1;
            if t.to == B {
                self.air.push((A, B, t.frame));
            }
        }
        // A datagram is answered by at most two frames (a Hello that starts a new
        // incarnation and the answer to it), plus a Close completing a close.
        assert!(!datagram || out <= 3, "{out} frames for one datagram");
        while let Some(t) = self.b.poll_transmit() {
            if t.to == A {
                self.air.push((B, A, t.frame));
            }
        }
    }

    fn check(&self) {
        let links = (0..6)
            .filter_map(|i| self.a.link(NodeId(i)))
            .inspect(|l| {
                assert!(
                    l.in_flight <= WINDOW as usize && l.buffered < WINDOW as usize,
                    "{l:?}"
                );
            })
            .count();
        assert!(links <= MAX_PEERS as usize);
        let held: BTreeSet<u32> = self.a.unconfirmed().map(|(_, m)| *m).collect();
        for m in &self.sent_a {
            let (held, delivered, lost) = (
                held.contains(m),
                self.delivered_a.contains(m),
                self.lost_a.contains(m),
            );
            assert!(held || delivered || lost || self.forgery, "{m} vanished");
            assert!(!(held && lost), "{m} reported lost but still held");
        }
    }
}

fn run(ops: &[Op]) {
    let mut w = World {
        a: Session::new(A, settings()).unwrap(),
        b: Session::new(B, settings()).unwrap(),
        now: 0,
        air: Vec::new(),
        next: [0, 0],
        told: BTreeMap::new(),
        from_b: BTreeSet::new(),
        last_from_b: None,
        sent_a: BTreeSet::new(),
        delivered_a: BTreeSet::new(),
        lost_a: BTreeSet::new(),
        forgery: false,
    };
    w.a.connect(B, 0).unwrap();
    w.b.connect(A, 0).unwrap();
    w.pump(false);
    for &op in ops {
        match op {
            Op::Forge(from, s, r, kind) => {
                let epochs = Epochs {
                    sender: w.resolve(s),
                    receiver: w.resolve(r),
                };
                let frame = match kind {
                    Kind::Hello => Frame::Hello { epochs },
                    Kind::Data(seq, msg) => Frame::Data { epochs, seq, msg },
                    Kind::Ack(seq) => Frame::Ack { epochs, seq },
                    Kind::Close(last) => Frame::Close { epochs, last },
                    Kind::CloseAck => Frame::CloseAck { epochs },
                };
                let from = NodeId(u32::from(from));
                let current = w.a.link(B).map(|l| (l.epochs.receiver, l.epochs.sender));
                w.forgery |= from == B && current == Some((epochs.sender, epochs.receiver));
                w.a.handle_datagram(Datagram { from, frame }, w.now);
            }
            Op::Deliver(i, dup) if !w.air.is_empty() => {
                let i = usize::from(i) % w.air.len();
                let (from, to, frame) = if dup {
                    w.air[i].clone()
                } else {
                    w.air.remove(i)
                };
                let s = if to == A { &mut w.a } else { &mut w.b };
                s.handle_datagram(Datagram { from, frame }, w.now);
            }
            Op::Lose(i) if !w.air.is_empty() => {
                let i = usize::from(i) % w.air.len();
                w.air.remove(i);
            }
            Op::Send(true) if w.a.is_linked(B) => {
                let m = w.next[0];
                w.next[0] += 1;
                w.sent_a.insert(m);
                w.a.send(B, m, w.now).unwrap();
            }
            Op::Send(false) if w.b.is_linked(A) => {
                let m = w.next[1];
                w.next[1] += 1;
                w.b.send(A, m, w.now).unwrap();
            }
            Op::Connect(i) => {
                let _ = w.a.connect(NodeId(u32::from(i)), w.now);
            }
            Op::Close(i) => w.a.close(NodeId(u32::from(i)), w.now),
            Op::Wait(t) => {
                w.now += u64::from(t);
                for s in [&mut w.a, &mut w.b] {
                    if s.poll_timeout().is_some_and(|d| d <= w.now) {
                        s.handle_timeout(w.now);
                        assert!(s.poll_timeout().is_none_or(|d| d > w.now), "busy timer");
                    }
                }
            }
            _ => {}
        }
        w.pump(matches!(op, Op::Forge(..) | Op::Deliver(..)));
        w.check();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1024)))]

    #[test]
    fn arbitrary_frames_never_break_a_session(ops in vec(op(), 0..300)) {
        run(&ops);
    }
}
