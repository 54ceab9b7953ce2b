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
//! - a forged frame that does not name `A`'s current incarnation with `B` exactly leaves
//!   that incarnation as it was if it is up (issue 21, finding 5: a newer epoch of `B` ends
//!   nothing): no change to its state, epochs or numbers, no event about `B`, and at most one
//!   frame to `B`, a probe (or the answer to an earlier incarnation's `Close`).
//!
//! A second property keeps `B` live (every frame in the air arrives before time passes, none
//! is lost) and injects frames from outside the current incarnation at both ends, newer
//! epochs of the peer above all (the shapes a restarted peer sends, and every kind with any
//! other field), and frames of it with impossible numbers: no incarnation ever ends, nothing
//! is reported lost, and every message arrives once, in order.

use std::collections::{BTreeMap, BTreeSet};

use manet_mutex::session::{
    Datagram, Epochs, Frame, LinkState, LinkStatus, Session, SessionEvent, Settings,
};
use manet_mutex::{Event, NodeId};
use manet_mutex_testkit::strategy::cases;
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
    /// Events `A` handed out about `B`, and the frames it sent `B` in the last `pump`.
    about_b: u64,
    to_b: Vec<Frame<u32>>,
    /// `B` is live and only frames from outside the current incarnations are forged: no
    /// incarnation may end, and `A`'s messages must reach `B` in order (the last one here).
    live: bool,
    last_from_a: Option<u32>,
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
            let about = match &event {
                SessionEvent::Core(Event::LinkUp(p) | Event::LinkDown(p)) => *p,
                SessionEvent::Core(Event::Receive { from, .. }) => *from,
                SessionEvent::Lost { peer, .. } => *peer,
                other => panic!("unexpected {other:?}"),
            };
            self.about_b += u64::from(about == B);
            if self.live {
                assert!(
                    matches!(&event, SessionEvent::Core(Event::Receive { from: B, msg }) if *msg < FORGED),
                    "{event:?} at A with a live peer"
                );
            }
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
            if self.live {
                assert!(
                    matches!(&event, SessionEvent::Core(Event::Receive { from: A, msg }) if *msg < FORGED),
                    "{event:?} at B with a live peer"
                );
            }
            if let SessionEvent::Core(Event::Receive { from: A, msg }) = event {
                assert!(
                    self.delivered_a.insert(msg),
                    "{msg} from A delivered twice at B"
                );
                if self.live {
                    assert!(self.last_from_a < Some(msg), "{msg} from A out of order");
                    self.last_from_a = Some(msg);
                }
            }
        }
        let mut out = 0;
        self.to_b.clear();
        while let Some(t) = self.a.poll_transmit() {
            out += 1;
            if t.to == B {
                self.to_b.push(t.frame.clone());
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

impl World {
    /// `A` and `B`, both wanting the link, their first `Hello`s sent.
    fn new() -> Self {
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
            about_b: 0,
            to_b: Vec::new(),
            live: false,
            last_from_a: None,
        };
        w.a.connect(B, 0).unwrap();
        w.b.connect(A, 0).unwrap();
        w.pump(false);
        w
    }

    /// The `i`-th honest frame in the air arrives (a copy stays in the air if `dup`).
    fn deliver(&mut self, i: usize, dup: bool) {
        let (from, to, frame) = if dup {
            self.air[i].clone()
        } else {
            self.air.remove(i)
        };
        let s = if to == A { &mut self.a } else { &mut self.b };
        s.handle_datagram(Datagram { from, frame }, self.now);
    }

    /// The core of `A` (or `B`) sends its next message, if its link is up.
    fn send(&mut self, a: bool) {
        if a && self.a.is_linked(B) {
            let m = self.next[0];
            self.next[0] += 1;
            self.sent_a.insert(m);
            self.a.send(B, m, self.now).unwrap();
        } else if !a && self.b.is_linked(A) {
            let m = self.next[1];
            self.next[1] += 1;
            self.b.send(A, m, self.now).unwrap();
        }
    }

    /// Time passes: `t` units, then the timers due.
    fn wait(&mut self, t: u64) {
        self.now += t;
        for s in [&mut self.a, &mut self.b] {
            if s.poll_timeout().is_some_and(|d| d <= self.now) {
                s.handle_timeout(self.now);
                assert!(s.poll_timeout().is_none_or(|d| d > self.now), "busy timer");
            }
        }
    }
}

fn run(ops: &[Op]) {
    let mut w = World::new();
    for &op in ops {
        let mut outside = None;
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
                let exact = from == B && current == Some((epochs.sender, epochs.receiver));
                w.forgery |= exact;
                let before = w.a.link(B);
                w.a.handle_datagram(Datagram { from, frame }, w.now);
                if !exact && before.is_some_and(|l| l.state != LinkState::Connecting) {
                    assert_eq!(w.a.link(B), before, "an incarnation that is up changed");
                    outside = before.map(|l| (l, w.about_b));
                }
            }
            Op::Deliver(i, dup) if !w.air.is_empty() => {
                w.deliver(usize::from(i) % w.air.len(), dup);
            }
            Op::Lose(i) if !w.air.is_empty() => {
                let i = usize::from(i) % w.air.len();
                w.air.remove(i);
            }
            Op::Send(a) => w.send(a),
            Op::Connect(i) => {
                let _ = w.a.connect(NodeId(u32::from(i)), w.now);
            }
            Op::Close(i) => w.a.close(NodeId(u32::from(i)), w.now),
            Op::Wait(t) => w.wait(u64::from(t)),
            _ => {}
        }
        w.pump(matches!(op, Op::Forge(..) | Op::Deliver(..)));
        if let Some((link, about_b)) = outside {
            check_outside(&w, link, about_b);
        }
        w.check();
    }
}

/// After a frame from outside `A`'s up incarnation with `B` (`link` before it): no event about
/// `B`, and at most one frame to `B`, a probe of the incarnation or the answer to a `Close` of
/// an earlier one.
fn check_outside(w: &World, link: LinkStatus, about_b: u64) {
    assert_eq!(w.about_b, about_b, "an event about B");
    assert!(w.to_b.len() <= 1, "{:?}", w.to_b);
    for f in &w.to_b {
        match f {
            Frame::Hello { epochs } => assert_eq!(*epochs, link.epochs, "not a probe"),
            Frame::CloseAck { epochs } => assert_ne!(*epochs, link.epochs),
            other => panic!("{other:?} answered a frame from outside"),
        }
    }
}

/// The sender epoch of a frame from outside the current incarnation, relative to the peer's
/// epoch `theirs` as the receiving end knows it.
#[derive(Debug, Clone, Copy)]
enum Sender {
    /// Newer: `theirs + 1 + n`.
    Next(u8),
    /// Newer: any value above `theirs`.
    Above(u64),
    Max,
    /// `theirs` itself (then the receiver's epoch or the numbers are wrong).
    Same,
    /// Older: `theirs - 1 - n`.
    Older(u8),
}

/// Its receiver epoch, relative to the receiving end's own epoch `mine`.
#[derive(Debug, Clone, Copy)]
enum Receiver {
    Zero,
    Mine,
    /// `mine - 1 - n`.
    Older(u8),
    /// `mine + 1 + n`: never given out.
    Newer(u8),
    Any(u64),
}

#[derive(Debug, Clone, Copy)]
enum LiveOp {
    /// A frame from outside the current incarnation for `A` (or `B`), from its peer.
    Outside(bool, Sender, Receiver, Kind),
    Deliver(u8, bool),
    Send(bool),
    /// Every frame in the air arrives, then time passes.
    Wait(u8),
}

fn live_op() -> impl Strategy<Value = LiveOp> {
    let sender = prop_oneof![
        3 => (0u8..3).prop_map(Sender::Next),
        3 => any::<u64>().prop_map(Sender::Above),
        1 => Just(Sender::Max),
        1 => Just(Sender::Same),
        1 => (0u8..3).prop_map(Sender::Older),
    ];
    let receiver = prop_oneof![
        1 => Just(Receiver::Zero),
        2 => Just(Receiver::Mine),
        1 => (0u8..3).prop_map(Receiver::Older),
        1 => (0u8..3).prop_map(Receiver::Newer),
        1 => any::<u64>().prop_map(Receiver::Any),
    ];
    prop_oneof![
        4 => (any::<bool>(), sender, receiver, kind())
            .prop_map(|(a, s, r, k)| LiveOp::Outside(a, s, r, k)),
        8 => (any::<u8>(), any::<bool>()).prop_map(|(i, d)| LiveOp::Deliver(i, d)),
        3 => any::<bool>().prop_map(LiveOp::Send),
        3 => (1u8..4).prop_map(LiveOp::Wait),
    ]
}

/// The frame `Outside` describes, for an end whose incarnation is `e` (its epoch, the
/// peer's). One that would name the incarnation exactly gets impossible numbers instead.
fn outside_frame(e: Epochs, sender: Sender, receiver: Receiver, kind: Kind) -> Frame<u32> {
    let (mine, theirs) = (e.sender, e.receiver);
    let sender = match sender {
        Sender::Next(n) => theirs + 1 + u64::from(n),
        Sender::Above(x) => theirs + 1 + x % (u64::MAX - theirs),
        Sender::Max => u64::MAX,
        Sender::Same => theirs,
        Sender::Older(n) => theirs.saturating_sub(1 + u64::from(n)),
    };
    let receiver = match receiver {
        Receiver::Zero => 0,
        Receiver::Mine => mine,
        Receiver::Older(n) => mine.saturating_sub(1 + u64::from(n)),
        Receiver::Newer(n) => mine + 1 + u64::from(n),
        Receiver::Any(x) => x,
    };
    let epochs = Epochs { sender, receiver };
    if (sender, receiver) == (theirs, mine) {
        return match kind {
            Kind::Data(seq, msg) => Frame::Data {
                epochs,
                seq: if seq % 2 == 0 { 0 } else { u64::MAX },
                msg,
            },
            Kind::Close(_) => Frame::Close {
                epochs,
                last: u64::MAX,
            },
            Kind::CloseAck => Frame::CloseAck { epochs },
            Kind::Hello | Kind::Ack(_) => Frame::Ack {
                epochs,
                seq: u64::MAX,
            },
        };
    }
    match kind {
        Kind::Hello => Frame::Hello { epochs },
        Kind::Data(seq, msg) => Frame::Data { epochs, seq, msg },
        Kind::Ack(seq) => Frame::Ack { epochs, seq },
        Kind::Close(last) => Frame::Close { epochs, last },
        Kind::CloseAck => Frame::CloseAck { epochs },
    }
}

fn run_live(ops: &[LiveOp]) {
    let flush = |w: &mut World| {
        while !w.air.is_empty() {
            w.deliver(0, false);
            w.pump(true);
        }
    };
    let mut w = World::new();
    flush(&mut w);
    w.live = true;
    let start = [w.a.link(B).unwrap().epochs, w.b.link(A).unwrap().epochs];
    for &op in ops {
        match op {
            LiveOp::Outside(to_a, sender, receiver, kind) => {
                let (s, peer) = if to_a { (&mut w.a, B) } else { (&mut w.b, A) };
                let frame = outside_frame(s.link(peer).unwrap().epochs, sender, receiver, kind);
                s.handle_datagram(Datagram { from: peer, frame }, w.now);
            }
            LiveOp::Deliver(i, dup) if !w.air.is_empty() => {
                w.deliver(usize::from(i) % w.air.len(), dup);
            }
            LiveOp::Send(a) => w.send(a),
            LiveOp::Wait(t) => {
                flush(&mut w);
                w.wait(u64::from(t));
            }
            LiveOp::Deliver(..) => {}
        }
        w.pump(!matches!(op, LiveOp::Send(_) | LiveOp::Wait(_)));
        w.check();
        let now = [w.a.link(B).map(|l| l.epochs), w.b.link(A).map(|l| l.epochs)];
        assert_eq!(now, start.map(Some), "a new incarnation");
        assert!(w.a.is_linked(B) && w.b.is_linked(A));
    }
    // Let everything in flight arrive and be acknowledged.
    for _ in 0..4 {
        flush(&mut w);
        w.wait(4);
        w.pump(false);
    }
    flush(&mut w);
    assert_eq!(w.delivered_a, w.sent_a, "A's messages not all delivered");
    assert_eq!(
        w.from_b,
        (0..w.next[1]).collect(),
        "B's messages not all delivered"
    );
    assert_eq!(w.a.unconfirmed().count() + w.b.unconfirmed().count(), 0);
    for s in [&w.a, &w.b] {
        let st = s.stats();
        assert_eq!(
            (
                st.links_up,
                st.links_abandoned,
                st.handshakes_expired,
                st.lost
            ),
            (1, 0, 0, 0),
            "{st:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1024)))]

    #[test]
    fn arbitrary_frames_never_break_a_session(ops in vec(op(), 0..300)) {
        run(&ops);
    }

    /// Issue 21, finding 5: with a live peer, no frame from outside the current incarnation
    /// (newer epochs of the peer above all) ends it or loses anything.
    #[test]
    fn frames_from_outside_never_end_a_live_incarnation(ops in vec(live_op(), 0..300)) {
        run_live(&ops);
    }
}
