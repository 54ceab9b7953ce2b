//! Every handler of the link session, driven by hand between two sessions `A` and `B` whose
//! frames the test moves (or loses, duplicates, reorders, replays) itself.

use manet_mutex::session::{
    Datagram, Epochs, Frame, LinkState, Session, SessionError, SessionEvent, Settings, Transmit,
};
use manet_mutex::{Event, NodeId};

const A: NodeId = NodeId(0);
const B: NodeId = NodeId(1);
const C: NodeId = NodeId(2);
const RTO: u64 = 10;
const LIVE: u64 = 100;
const KEEP: u64 = 25;

fn settings() -> Settings {
    Settings::new(RTO, LIVE, 4).with_keepalive(KEEP)
}

type Ev = SessionEvent<u32>;

fn up(peer: NodeId) -> Ev {
    SessionEvent::Core(Event::LinkUp(peer))
}

fn down(peer: NodeId) -> Ev {
    SessionEvent::Core(Event::LinkDown(peer))
}

fn got(from: NodeId, msg: u32) -> Ev {
    SessionEvent::Core(Event::Receive { from, msg })
}

/// Two sessions and the clock; frames are moved by the test.
struct Pair {
    s: [Session<u32>; 2],
    now: u64,
    /// Every frame `exchange` moved: when, from whom, what.
    moved: Vec<(u64, NodeId, Frame<u32>)>,
}

impl Pair {
    fn new() -> Self {
        Pair {
            s: [
                Session::new(A, settings()).unwrap(),
                Session::new(B, settings()).unwrap(),
            ],
            now: 0,
            moved: Vec::new(),
        }
    }

    /// `A` connected to `B`, the handshake done, every event and frame consumed.
    fn linked() -> Self {
        let mut p = Pair::new();
        p.s[0].connect(B, 0).unwrap();
        let (a, b) = p.exchange();
        assert_eq!((a, b), (vec![up(B)], vec![up(A)]));
        p
    }

    fn frames(&mut self, i: usize) -> Vec<Frame<u32>> {
        let mut out = Vec::new();
        while let Some(Transmit { to, frame }) = self.s[i].poll_transmit() {
            assert_eq!(to, [B, A][i], "frames go to the peer");
            out.push(frame);
        }
        out
    }

    fn events(&mut self, i: usize) -> Vec<Ev> {
        let mut out = Vec::new();
        while let Some(e) = self.s[i].poll_event() {
            out.push(e);
        }
        out
    }

    /// Frame `frame` arrives at `i` from its peer.
    fn give(&mut self, i: usize, frame: Frame<u32>) {
        let from = [B, A][i];
        self.s[i].handle_datagram(Datagram { from, frame }, self.now);
    }

    /// Move frames both ways, losing none, until nothing moves; the events each side got.
    fn exchange(&mut self) -> (Vec<Ev>, Vec<Ev>) {
        let mut seen = (Vec::new(), Vec::new());
        loop {
            seen.0.extend(self.events(0));
            seen.1.extend(self.events(1));
            let (fa, fb) = (self.frames(0), self.frames(1));
            if fa.is_empty() && fb.is_empty() {
                return seen;
            }
            for f in fa {
                self.moved.push((self.now, A, f.clone()));
                self.give(1, f);
            }
            for f in fb {
                self.moved.push((self.now, B, f.clone()));
                self.give(0, f);
            }
        }
    }

    fn tick(&mut self, to: u64) {
        self.now = to;
        self.s[0].handle_timeout(to);
        self.s[1].handle_timeout(to);
    }

    fn epochs(&self, i: usize) -> Epochs {
        self.s[i].link([B, A][i]).expect("a link").epochs
    }
}

fn data(epochs: Epochs, seq: u64, msg: u32) -> Frame<u32> {
    Frame::Data { epochs, seq, msg }
}

#[test]
fn settings_are_checked() {
    let bad = [
        Settings::new(0, 100, 4),
        Settings::new(10, 10, 4),
        Settings::new(10, 100, 0),
        Settings::new(10, 100, Settings::MAX_WINDOW + 1),
        Settings::new(10, 100, 4).with_keepalive(0),
        Settings::new(10, 100, 4).with_keepalive(100),
        Settings::new(10, 100, 4).with_max_peers(0),
        Settings::new(10, 100, 4).with_max_backoff(9),
        Settings::new(10, 100, 4).with_max_backoff(0),
    ];
    for s in bad {
        let e = Session::<u32>::new(A, s).unwrap_err();
        assert!(matches!(e, SessionError::InvalidSettings(_)), "{s:?}: {e}");
        assert_eq!(s.validate(), Err(e));
    }
    let s = Settings::new(10, 100, 4);
    assert_eq!(
        (s.keepalive_after, s.max_backoff, s.max_peers),
        (25, 250, Settings::DEFAULT_MAX_PEERS)
    );
    let tiny = Settings::new(1, 2, 1);
    assert_eq!((tiny.keepalive_after, tiny.max_backoff), (1, 5));
    assert_eq!(Settings::new(10, 11, 1).max_backoff, 27);
    assert_eq!(
        Settings::new(10, 100, 4).with_max_backoff(10).validate(),
        Ok(())
    );
    assert_eq!(Settings::new(10, u64::MAX, 4).max_backoff, u64::MAX / 2);
    assert!(Session::<u32>::new(A, s).is_ok());
    // The documented defaults, in milliseconds.
    let d = Settings::DEFAULT;
    assert_eq!(
        (
            d.retransmit_after,
            d.liveness_after,
            d.keepalive_after,
            d.max_backoff,
            d.window,
            d.max_peers
        ),
        (20, 400, 100, 1000, 32, 64)
    );
    assert_eq!((Settings::default(), Settings::new(20, 400, 32)), (d, d));
    assert_eq!(d.validate(), Ok(()));
}

#[test]
fn the_handshake_brings_each_end_up_at_its_own_time() {
    let mut p = Pair::new();
    p.s[0].connect(B, 0).unwrap();
    let hello = p.frames(0);
    let a = p.epochs(0).sender;
    assert_eq!(
        hello,
        [Frame::Hello {
            epochs: Epochs {
                sender: a,
                receiver: 0
            }
        }]
    );
    assert_eq!(p.s[0].link(B).unwrap().state, LinkState::Connecting);
    p.give(1, hello[0].clone());
    // B answers with its own epoch; it is not up yet: A has not shown it knows B's epoch.
    let answer = p.frames(1);
    let b = p.epochs(1).sender;
    assert_eq!(
        answer,
        [Frame::Hello {
            epochs: Epochs {
                sender: b,
                receiver: a
            }
        }]
    );
    assert!(p.events(1).is_empty() && !p.s[1].is_linked(A));
    p.give(0, answer[0].clone());
    assert_eq!(p.events(0), [up(B)]);
    assert!(p.s[0].is_linked(B));
    let confirm = p.frames(0);
    assert_eq!(
        confirm,
        [Frame::Ack {
            epochs: Epochs {
                sender: a,
                receiver: b
            },
            seq: 0
        }]
    );
    p.give(1, confirm[0].clone());
    assert_eq!(p.events(1), [up(A)]);
    assert_eq!(p.s[1].link(A).unwrap().state, LinkState::Up);
    assert_eq!((p.s[0].stats().links_up, p.s[1].stats().links_up), (1, 1));
}

#[test]
fn crossing_hellos_form_one_link() {
    let mut p = Pair::new();
    p.s[0].connect(B, 0).unwrap();
    p.s[1].connect(A, 0).unwrap();
    let (a, b) = p.exchange();
    assert_eq!((a, b), (vec![up(B)], vec![up(A)]));
    assert_eq!(p.epochs(0).receiver, p.epochs(1).sender);
    assert_eq!(p.epochs(1).receiver, p.epochs(0).sender);
}

/// An unanswered `Hello` is repeated after `RTO`, then backing off (issue 23); the handshake
/// starts over with a fresh epoch after `LIVE`, keeping the back-off: no `Hello` at the
/// expiry, the next one when it was due, naming the fresh epoch.
#[test]
fn an_unanswered_hello_is_repeated_and_the_handshake_starts_over_with_a_fresh_epoch() {
    let mut p = Pair::new();
    p.s[0].connect(B, 0).unwrap();
    let first = p.epochs(0).sender;
    let hello = |sender| Frame::Hello {
        epochs: Epochs {
            sender,
            receiver: 0,
        },
    };
    assert_eq!(p.frames(0), [hello(first)]); // lost, like every frame below
    for (at, next) in [(RTO, 3 * RTO), (3 * RTO, 7 * RTO), (7 * RTO, LIVE)] {
        assert_eq!(p.s[0].poll_timeout(), Some(at));
        p.tick(at);
        assert_eq!(p.frames(0), [hello(first)], "at {at}");
        assert_eq!(p.s[0].poll_timeout(), Some(next), "after {at}");
    }
    p.tick(LIVE);
    assert_eq!(p.s[0].stats().handshakes_expired, 1);
    let fresh = p.epochs(0).sender;
    assert!(fresh > first);
    assert!(p.frames(0).is_empty(), "the back-off goes on");
    assert_eq!(p.s[0].poll_timeout(), Some(15 * RTO));
    p.tick(15 * RTO);
    assert_eq!(p.frames(0), [hello(fresh)]);
    assert!(p.events(0).is_empty(), "the core heard of nothing");
    assert_eq!(p.s[0].stats().hellos, 5);
}

#[test]
fn data_before_the_confirmation_brings_the_link_up_first() {
    let mut p = Pair::new();
    p.s[0].connect(B, 0).unwrap();
    let hello = p.frames(0).remove(0);
    p.give(1, hello);
    let answer = p.frames(1).remove(0);
    p.give(0, answer);
    assert_eq!(p.events(0), [up(B)]);
    p.frames(0); // the confirming Ack is lost
    p.s[0].send(B, 7, 0).unwrap();
    let d = p.frames(0).remove(0);
    p.give(1, d);
    assert_eq!(
        p.events(1),
        [up(A), got(A, 7)],
        "LinkUp before the first message"
    );
}

#[test]
fn messages_arrive_once_in_order_and_are_acknowledged_cumulatively() {
    let mut p = Pair::linked();
    for m in [1, 2, 3] {
        p.s[0].send(B, m, 1).unwrap();
    }
    let frames = p.frames(0);
    let e = p.epochs(0);
    assert_eq!(frames, [data(e, 1, 1), data(e, 2, 2), data(e, 3, 3)]);
    assert_eq!(p.s[0].link(B).unwrap().in_flight, 3);
    for f in frames {
        p.give(1, f);
    }
    assert_eq!(p.events(1), [got(A, 1), got(A, 2), got(A, 3)]);
    let acks = p.frames(1);
    let eb = p.epochs(1);
    assert_eq!(acks.last(), Some(&Frame::Ack { epochs: eb, seq: 3 }));
    p.give(0, acks[2].clone());
    assert_eq!(p.s[0].link(B).unwrap().in_flight, 0);
    assert_eq!(p.s[0].unconfirmed().count(), 0);
    p.give(0, acks[0].clone()); // an older ack, overtaken: ignored
    assert_eq!(p.s[0].stats().malformed, 0);
}

#[test]
fn duplicates_are_dropped_and_acknowledged_again() {
    let mut p = Pair::linked();
    p.s[0].send(B, 9, 1).unwrap();
    let d = p.frames(0).remove(0);
    p.give(1, d.clone());
    p.frames(1);
    p.give(1, d);
    assert_eq!(p.events(1), [got(A, 9)]);
    assert_eq!(p.s[1].stats().duplicates, 1);
    assert_eq!(
        p.frames(1),
        [Frame::Ack {
            epochs: p.epochs(1),
            seq: 1
        }]
    );
}

#[test]
fn frames_ahead_of_a_gap_wait_in_the_reorder_buffer() {
    let mut p = Pair::linked();
    for m in [10, 20, 30] {
        p.s[0].send(B, m, 1).unwrap();
    }
    let f = p.frames(0);
    p.give(1, f[2].clone());
    p.give(1, f[1].clone());
    p.give(1, f[1].clone());
    assert!(p.events(1).is_empty());
    assert_eq!(p.s[1].link(A).unwrap().buffered, 2);
    assert_eq!(p.s[1].stats().duplicates, 1);
    let e = p.epochs(1);
    assert!(p
        .frames(1)
        .iter()
        .all(|a| *a == Frame::Ack { epochs: e, seq: 0 }));
    p.give(1, f[0].clone());
    assert_eq!(p.events(1), [got(A, 10), got(A, 20), got(A, 30)]);
    assert_eq!(p.s[1].link(A).unwrap().buffered, 0);
}

#[test]
fn frames_beyond_the_window_are_dropped_unanswered() {
    let mut p = Pair::linked();
    let e = p.epochs(0);
    p.give(1, data(e, 5, 1)); // window 4, nothing delivered
    assert_eq!(p.s[1].stats().out_of_window, 1);
    assert!(p.frames(1).is_empty() && p.events(1).is_empty());
    p.give(1, data(e, u64::MAX, 1));
    assert_eq!(p.s[1].stats().out_of_window, 2);
    p.give(1, data(e, 0, 1));
    assert_eq!(p.s[1].stats().malformed, 1);
}

#[test]
fn the_window_bounds_frames_in_flight_and_the_rest_waits_in_order() {
    let mut p = Pair::linked();
    for m in 1..=6 {
        p.s[0].send(B, m, 1).unwrap();
    }
    let st = p.s[0].link(B).unwrap();
    assert_eq!((st.in_flight, st.queued), (4, 2));
    let f = p.frames(0);
    assert_eq!(f.len(), 4);
    p.give(1, f[0].clone());
    p.give(1, f[1].clone());
    let ack = p.frames(1).pop().unwrap();
    p.give(0, ack);
    let e = p.epochs(0);
    assert_eq!(p.frames(0), [data(e, 5, 5), data(e, 6, 6)]);
    // 3 and 4 were never given to B, 5 and 6 not yet: unacknowledged, they stay.
    let (_, b) = p.exchange();
    assert_eq!(b, [got(A, 1), got(A, 2)]);
    let left: Vec<_> = p.s[0].unconfirmed().map(|(_, m)| *m).collect();
    assert_eq!(left, [3, 4, 5, 6]);
}

#[test]
fn unacknowledged_data_is_sent_again_after_the_timeout() {
    let mut p = Pair::linked();
    p.now = 5;
    p.s[0].send(B, 1, 5).unwrap();
    p.s[0].send(B, 2, 5).unwrap();
    let first = p.frames(0);
    assert_eq!(p.s[0].poll_timeout(), Some(5 + RTO));
    p.tick(5 + RTO);
    assert_eq!(p.frames(0), first, "both frames again, same numbers");
    assert_eq!(p.s[0].stats().retransmitted, 2);
    p.tick(5 + 2 * RTO);
    assert_eq!(p.frames(0).len(), 2);
    let (_, b) = p.exchange(); // the peer ignores nothing new: nothing was given to it yet
    assert!(b.is_empty());
}

#[test]
fn an_acknowledgement_of_data_never_sent_is_malformed() {
    let mut p = Pair::linked();
    p.s[0].send(B, 1, 1).unwrap();
    p.frames(0);
    let e = p.epochs(1);
    p.give(0, Frame::Ack { epochs: e, seq: 2 });
    assert_eq!(p.s[0].stats().malformed, 1);
    assert_eq!(p.s[0].link(B).unwrap().in_flight, 1);
}

#[test]
fn an_idle_link_gets_keepalives_and_an_overdue_peer_is_probed() {
    let mut p = Pair::linked();
    let (ea, eb) = (p.epochs(0), p.epochs(1));
    p.tick(KEEP);
    assert_eq!(p.frames(0), [Frame::Ack { epochs: ea, seq: 0 }]);
    assert_eq!(p.frames(1), [Frame::Ack { epochs: eb, seq: 0 }]);
    // Nothing heard from B since 0: at KEEP + RTO A probes, every RTO.
    p.tick(KEEP + RTO);
    assert_eq!(p.frames(0), [Frame::Hello { epochs: ea }]);
    p.frames(1);
    p.tick(KEEP + 2 * RTO);
    assert_eq!(p.frames(0), [Frame::Hello { epochs: ea }]);
    p.frames(1);
    p.give(1, Frame::Hello { epochs: ea });
    assert_eq!(
        p.frames(1),
        [Frame::Ack { epochs: eb, seq: 0 }],
        "a probe is answered"
    );
    assert!(p.events(1).is_empty());
}

#[test]
fn a_silent_peer_fails_the_link_and_what_it_did_not_acknowledge_is_reported_lost() {
    let mut p = Pair::linked();
    p.s[0] = p.s[0].clone().with_precious(|m| *m >= 100);
    p.s[0].send(B, 5, 0).unwrap();
    p.s[0].send(B, 500, 0).unwrap();
    p.frames(0);
    p.tick(LIVE - 1);
    assert!(p.events(0).is_empty());
    p.frames(0);
    p.tick(LIVE);
    let lost = SessionEvent::Lost {
        peer: B,
        msgs: vec![5, 500],
        precious: 1,
    };
    assert_eq!(p.events(0), [down(B), lost]);
    let st = p.s[0].stats();
    assert_eq!((st.links_abandoned, st.lost, st.lost_precious), (1, 2, 1));
    // A wants B: a new incarnation starts at once, never carrying the lost messages.
    assert_eq!(p.s[0].link(B).unwrap().state, LinkState::Connecting);
    let fresh = p.epochs(0).sender;
    assert_eq!(
        p.frames(0),
        [Frame::Hello {
            epochs: Epochs {
                sender: fresh,
                receiver: 0
            }
        }]
    );
    assert_eq!(p.s[0].unconfirmed().count(), 0);
}

#[test]
fn data_without_progress_fails_the_link_even_if_the_peer_keeps_talking() {
    let mut p = Pair::linked();
    p.s[0].send(B, 1, 0).unwrap();
    p.frames(0);
    let eb = p.epochs(1);
    for t in (10..LIVE).step_by(10) {
        p.tick(t);
        p.frames(0);
        p.give(0, Frame::Ack { epochs: eb, seq: 0 });
    }
    assert!(p.events(0).is_empty());
    p.tick(LIVE);
    assert_eq!(
        p.events(0),
        [
            down(B),
            SessionEvent::Lost {
                peer: B,
                msgs: vec![1],
                precious: 1
            }
        ]
    );
}

/// Issue 21, finding 5: a frame naming a newer epoch of the peer is not trusted: the session
/// probes the peer at once (a `Hello` of the current incarnation), again every retransmission
/// timeout however many such frames come, and stops once a frame of the incarnation answers.
/// The link stays up throughout.
#[test]
fn a_newer_epoch_of_the_peer_is_verified_by_probing() {
    let mut p = Pair::linked();
    let (ea, eb) = (p.epochs(0), p.epochs(1));
    let newer = Epochs {
        sender: eb.sender + 1,
        receiver: 0,
    };
    p.now = 1;
    p.give(0, Frame::Hello { epochs: newer });
    assert_eq!(
        p.frames(0),
        [Frame::Hello { epochs: ea }],
        "a probe at once"
    );
    let newer = Epochs {
        receiver: ea.sender,
        ..newer
    };
    for frame in [
        Frame::Hello { epochs: newer },
        data(newer, 1, 7),
        Frame::Ack {
            epochs: newer,
            seq: 0,
        },
        Frame::Close {
            epochs: newer,
            last: 0,
        },
        Frame::CloseAck { epochs: newer },
    ] {
        p.give(0, frame);
    }
    assert!(
        p.frames(0).is_empty(),
        "at most one probe a retransmission timeout"
    );
    assert_eq!(p.s[0].poll_timeout(), Some(1 + RTO));
    p.tick(1 + RTO);
    assert_eq!(p.frames(0), [Frame::Hello { epochs: ea }]);
    assert!(p.frames(1).is_empty());
    // The peer answers in the current incarnation: verified, no more probes until its
    // keepalive is overdue (at 1 + RTO + KEEP + RTO), only our own keepalive before that.
    p.give(1, Frame::Hello { epochs: ea });
    let answer = p.frames(1);
    assert_eq!(answer, [Frame::Ack { epochs: eb, seq: 0 }]);
    p.give(0, answer[0].clone());
    assert_eq!(p.s[0].poll_timeout(), Some(1 + RTO + KEEP));
    assert!(p.events(0).is_empty() && p.events(1).is_empty());
    assert_eq!(p.s[0].link(B).unwrap().state, LinkState::Up);
    let st = p.s[0].stats();
    assert_eq!((st.newer_epoch, st.links_abandoned, st.lost), (6, 0, 0));
}

/// A small deterministic generator for the garbage below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick(&mut self, values: &[u64]) -> u64 {
        values[self.below(values.len() as u64) as usize]
    }
}

/// Forged messages carry this much or more; honest ones less.
const FORGED: u32 = 1 << 20;

/// A frame for `to` from its peer's address naming a newer epoch of the peer than `to`'s
/// current incarnation (`e`, as `to` names it): the exact shapes a restarted peer sends (its
/// `Hello`, and its answer to our probe), and every kind with any other field.
fn newer_epoch_frame(rng: &mut Rng, e: Epochs) -> Frame<u32> {
    let sender = match rng.below(4) {
        0 => e.receiver + 1 + rng.below(3),
        1 => u64::MAX - rng.below(2),
        _ => e.receiver + 1 + rng.below(u64::MAX - e.receiver),
    };
    if rng.below(4) == 0 {
        let receiver = rng.pick(&[0, e.sender]);
        return Frame::Hello {
            epochs: Epochs { sender, receiver },
        };
    }
    let any = rng.next();
    let receiver = rng.pick(&[0, e.sender, e.sender - 1, e.sender + 1, any]);
    let epochs = Epochs { sender, receiver };
    let number = rng.pick(&[0, 1, 2, 3, 7, u64::MAX, any]);
    match rng.below(5) {
        0 => Frame::Hello { epochs },
        1 => data(epochs, number, FORGED + rng.below(100) as u32),
        2 => Frame::Ack {
            epochs,
            seq: number,
        },
        3 => Frame::Close {
            epochs,
            last: number,
        },
        _ => Frame::CloseAck { epochs },
    }
}

/// Issue 21, finding 5 (regression): a live link with data in flight both ways, delivered in
/// random order with duplicates, and thousands of frames from the peer's address naming newer
/// epochs injected at both ends between them, for 20 liveness timeouts, then a close. The
/// incarnation is never ended but by its close handshake, nothing is reported lost, and every
/// message arrives once, in order. Each injected frame is counted (`newer_epoch`, or
/// `malformed` if it names an epoch of ours never given out) and nothing else is.
#[test]
fn frames_naming_a_newer_epoch_never_end_a_live_incarnation() {
    let mut p = Pair::linked();
    let start = [p.epochs(0), p.epochs(1)];
    let mut rng = Rng(0x5eed_0021_0005);
    let mut next = [0u32, 1000];
    let mut got: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    let mut injected = [0u64; 2];
    let mut closed = [false; 2];
    let mut air: Vec<(usize, Frame<u32>)> = Vec::new();
    for round in 0..800 {
        if round < 700 {
            for i in 0..2 {
                if rng.below(2) == 0 {
                    p.s[i].send([B, A][i], next[i], p.now).unwrap();
                    next[i] += 1;
                }
            }
        } else if round == 700 {
            p.s[0].close(B, p.now);
        }
        loop {
            for i in 0..2 {
                for e in p.events(i) {
                    match e {
                        SessionEvent::Core(Event::Receive { msg, .. }) => got[i].push(msg),
                        e if e == down([B, A][i]) && round >= 700 => closed[i] = true,
                        e => panic!("round {round}: side {i} got {e:?}"),
                    }
                }
                air.extend(p.frames(i).into_iter().map(|f| (1 - i, f)));
            }
            if air.is_empty() {
                break;
            }
            let (to, frame) = air.swap_remove(rng.below(air.len() as u64) as usize);
            if rng.below(8) == 0 {
                air.push((to, frame.clone()));
            }
            for _ in 0..rng.below(4) {
                let i = rng.below(2) as usize;
                if let Some(link) = p.s[i].link([B, A][i]) {
                    p.give(i, newer_epoch_frame(&mut rng, link.epochs));
                    injected[i] += 1;
                }
            }
            p.give(to, frame);
        }
        for i in 0..2 {
            if let Some(link) = p.s[i].link([B, A][i]) {
                assert_eq!(link.epochs, start[i], "round {round}: a new incarnation");
            }
        }
        let step = 1 + rng.below(RTO);
        p.tick(p.now + step);
    }
    assert_eq!(closed, [true, true], "closed by the handshake");
    assert!(p.s[0].link(B).is_none() && p.s[1].link(A).is_none());
    assert_eq!(got[1], (0..next[0]).collect::<Vec<_>>());
    assert_eq!(got[0], (1000..next[1]).collect::<Vec<_>>());
    for (i, s) in p.s.iter().enumerate() {
        let st = s.stats();
        assert_eq!((st.links_closed, st.links_abandoned, st.lost), (1, 0, 0));
        assert_eq!(st.newer_epoch + st.malformed, injected[i]);
        assert!(st.newer_epoch > 500, "{st:?}");
    }
    assert!(p.now > 20 * LIVE);
}

/// Frames of the current incarnation with impossible numbers (data numbered 0 or beyond the
/// window, acknowledgements of data never sent, a `Close` with the wrong last number, a
/// `CloseAck` for no `Close`) are counted and dropped: the incarnation goes on, and what is in
/// flight is delivered.
#[test]
fn impossible_numbers_in_the_current_incarnation_end_nothing() {
    let mut p = Pair::linked();
    p.s[0].send(B, 1, 0).unwrap();
    p.s[0].send(B, 2, 0).unwrap();
    let sent = p.frames(0);
    p.give(1, sent[0].clone());
    p.frames(1); // B's acknowledgement is lost
    let (ea, eb) = (p.epochs(0), p.epochs(1));
    for (i, e) in [(0, eb), (1, ea)] {
        for frame in [
            data(e, 0, FORGED),
            data(e, 6, FORGED),
            data(e, u64::MAX, FORGED),
            Frame::Ack { epochs: e, seq: 3 },
            Frame::Ack {
                epochs: e,
                seq: u64::MAX,
            },
            Frame::Close { epochs: e, last: 5 },
            Frame::Close {
                epochs: e,
                last: u64::MAX,
            },
            Frame::CloseAck { epochs: e },
        ] {
            p.give(i, frame);
        }
    }
    for (i, s) in p.s.iter().enumerate() {
        let st = s.stats();
        assert_eq!((st.malformed, st.out_of_window), (6, 2), "side {i}");
        assert_eq!(s.link([B, A][i]).unwrap().state, LinkState::Up);
    }
    assert_eq!(p.s[0].link(B).unwrap().in_flight, 2);
    p.tick(RTO);
    let (a, b) = p.exchange();
    assert_eq!((a, b), (vec![], vec![got(A, 1), got(A, 2)]));
    assert_eq!(p.s[0].unconfirmed().count(), 0);
    assert_eq!((p.epochs(0), p.epochs(1)), (ea, eb));
}

/// While a link forms, only a frame naming our epoch is taken as the peer's: a `Hello` naming
/// another epoch (here garbage with the largest) is answered but trusted for nothing, and
/// does not stall the handshake, at the end that connects or at a passive one.
#[test]
fn a_garbage_hello_does_not_stall_a_forming_link() {
    let garbage = Frame::Hello {
        epochs: Epochs {
            sender: u64::MAX - 1,
            receiver: 0,
        },
    };
    let mut p = Pair::new();
    p.s[0].connect(B, 0).unwrap();
    p.give(0, garbage.clone());
    let (a, b) = p.exchange();
    assert_eq!((a, b), (vec![up(B)], vec![up(A)]));
    assert_eq!(p.epochs(0).receiver, p.epochs(1).sender);
    let mut p = Pair::new();
    p.give(1, garbage);
    p.s[0].connect(B, 0).unwrap();
    let (a, b) = p.exchange();
    assert_eq!((a, b), (vec![up(B)], vec![up(A)]));
    assert_eq!(p.epochs(1).receiver, p.epochs(0).sender);
}

/// Issue 21, finding 5, the cost: a peer that really restarted (its session replaced by a
/// fresh one whose epochs start higher, everything it had lost) is noticed by its silence in
/// the old incarnation. `A` probes it from its first new `Hello` on, every retransmission
/// timeout; the old incarnation ends exactly `LIVE` after the last frame of it arrived, with
/// exactly what `B` did not acknowledge reported lost, and a new incarnation forms within a
/// retransmission timeout and carries messages; a straggler of the old one is never delivered
/// in it. Whether or not `A` wants the link (if not, it answers `B`'s next `Hello`).
fn a_restarted_peer(a_wants: bool) {
    let mut p = Pair::new();
    if a_wants {
        p.s[0].connect(B, 0).unwrap();
    } else {
        p.s[1].connect(A, 0).unwrap();
    }
    p.exchange();
    p.now = 2;
    p.s[0].send(B, 1, 2).unwrap();
    let (_, b) = p.exchange();
    assert_eq!(b, [got(A, 1)]);
    p.now = 4;
    p.s[0].send(B, 2, 4).unwrap();
    p.s[0].send(B, 3, 4).unwrap();
    let old = p.epochs(0);
    let stragglers = p.frames(0);
    // B restarts at 4, having lost everything; it wants A again.
    p.s[1] = Session::new(B, settings()).unwrap().with_epoch_base(1000);
    p.s[1].connect(A, 4).unwrap();
    p.moved.clear();
    let mut seen = Vec::new();
    loop {
        let (a, b) = p.exchange();
        seen.extend(a.into_iter().map(|e| (p.now, A, e)));
        seen.extend(b.into_iter().map(|e| (p.now, B, e)));
        if p.now == 2 + LIVE + RTO {
            break;
        }
        p.tick(p.now + 1);
    }
    // The last frame of the old incarnation, B's acknowledgement, arrived at 2.
    let ended = 2 + LIVE;
    let lost = SessionEvent::Lost {
        peer: B,
        msgs: vec![2, 3],
        precious: 2,
    };
    assert_eq!(seen[..2], [(ended, A, down(B)), (ended, A, lost)]);
    let formed: Vec<_> = seen[2..]
        .iter()
        .map(|(t, at, e)| (*at, e.clone(), *t))
        .collect();
    assert_eq!(formed.len(), 2, "{seen:?}");
    assert!(formed.contains(&(A, up(B), formed[0].2)) && formed.contains(&(B, up(A), formed[0].2)));
    assert!(
        formed[0].2 <= ended + RTO,
        "no new incarnation by {}",
        formed[0].2
    );
    let probes: Vec<u64> = p
        .moved
        .iter()
        .filter(|(_, from, f)| *from == A && *f == Frame::Hello { epochs: old })
        .map(|(t, _, _)| *t)
        .collect();
    let every_rto: Vec<u64> = (4..ended).step_by(RTO as usize).collect();
    assert_eq!(
        probes, every_rto,
        "probed at once, then every retransmission timeout"
    );
    let new = p.epochs(0);
    assert!(new.sender > old.sender && new.receiver > 1000);
    assert_eq!(
        p.epochs(1),
        Epochs {
            sender: new.receiver,
            receiver: new.sender
        }
    );
    p.s[0].send(B, 5, p.now).unwrap();
    for f in stragglers {
        p.give(1, f);
    }
    let (_, b) = p.exchange();
    assert_eq!(b, [got(A, 5)]);
    let st = p.s[0].stats();
    assert_eq!((st.links_abandoned, st.lost, st.lost_precious), (1, 2, 2));
    assert!(st.newer_epoch > 0);
}

#[test]
fn a_restarted_peer_is_noticed_by_silence_and_a_new_incarnation_forms() {
    a_restarted_peer(true);
}

#[test]
fn a_restarted_peer_is_noticed_by_silence_at_a_passive_end_too() {
    a_restarted_peer(false);
}

#[test]
fn old_hellos_and_frames_of_an_earlier_incarnation_are_stale() {
    let mut p = Pair::linked();
    let old_a = p.epochs(0);
    p.s[0].send(B, 1, 0).unwrap();
    let old_data = p.frames(0).remove(0);
    p.give(1, old_data.clone());
    p.s[0].close(B, 0);
    p.exchange();
    p.s[0].connect(B, 1).unwrap();
    p.exchange();
    assert!(p.s[0].is_linked(B) && p.s[1].is_linked(A));
    let delivered = p.s[1].stats().delivered;
    let stale = p.s[1].stats().stale;
    p.give(1, old_data);
    p.give(
        1,
        Frame::Hello {
            epochs: Epochs {
                sender: old_a.sender,
                receiver: 0,
            },
        },
    );
    p.give(
        1,
        Frame::Ack {
            epochs: old_a,
            seq: 0,
        },
    );
    assert_eq!(p.s[1].stats().stale, stale + 3);
    assert_eq!(p.s[1].stats().delivered, delivered);
    assert!(p.events(1).is_empty() && p.frames(1).is_empty());
}

#[test]
fn the_close_handshake_tells_both_cores_with_nothing_in_flight() {
    let mut p = Pair::linked();
    p.s[0].send(B, 1, 0).unwrap();
    p.s[0].close(B, 0);
    assert_eq!(p.s[0].link(B).unwrap().state, LinkState::Closing);
    // Not before the message is acknowledged.
    assert!(p.events(0).is_empty());
    let d = p.frames(0);
    for f in d {
        p.give(1, f);
    }
    let ack = p.frames(1).pop().unwrap();
    p.give(0, ack);
    assert_eq!(p.events(0), [down(B)]);
    assert_eq!(
        p.frames(0),
        [Frame::Close {
            epochs: p.epochs(0),
            last: 1
        }]
    );
    let (a, b) = {
        let close = Frame::Close {
            epochs: p.epochs(0),
            last: 1,
        };
        p.give(1, close);
        p.exchange()
    };
    assert!(a.is_empty());
    assert_eq!(b, [got(A, 1), down(A)]);
    assert!(p.s[0].link(B).is_none() && p.s[1].link(A).is_none());
    for s in &p.s {
        let st = s.stats();
        assert_eq!((st.links_closed, st.links_abandoned, st.lost), (1, 0, 0));
    }
    assert_eq!(
        p.s[0].poll_timeout(),
        None,
        "A no longer wants B, B never did"
    );
}

#[test]
fn the_end_that_closes_first_still_gets_the_peers_last_messages() {
    let mut p = Pair::linked();
    p.s[0].close(B, 0);
    assert_eq!(p.events(0), [down(B)]);
    let close = p.frames(0);
    // B's core sends before it learns of the close.
    p.s[1].send(A, 42, 0).unwrap();
    for f in close {
        p.give(1, f);
    }
    let (a, b) = p.exchange();
    assert_eq!(
        a,
        [got(B, 42)],
        "after A's LinkDown, as the link contract allows"
    );
    assert_eq!(b, [down(A)]);
    assert_eq!(p.s[1].stats().lost, 0);
    assert!(p.s[0].link(B).is_none() && p.s[1].link(A).is_none());
}

#[test]
fn a_link_down_waits_for_the_core_to_consume_earlier_events() {
    let mut p = Pair::linked();
    p.s[1].send(A, 8, 0).unwrap();
    let d = p.frames(1).remove(0);
    p.give(0, d);
    p.s[0].close(B, 0);
    // The Receive comes first; the core answers it; the close now waits for that answer.
    assert_eq!(p.s[0].poll_event(), Some(got(B, 8)));
    p.s[0].send(B, 9, 0).unwrap();
    assert_eq!(p.s[0].poll_event(), None);
    let (a, b) = p.exchange();
    assert_eq!(a, [down(B)]);
    assert_eq!(b, [got(A, 9), down(A)]);
}

#[test]
fn crossing_closes_complete() {
    let mut p = Pair::linked();
    p.s[0].close(B, 0);
    p.s[1].close(A, 0);
    let (a, b) = p.exchange();
    assert_eq!((a, b), (vec![down(B)], vec![down(A)]));
    assert!(p.s[0].link(B).is_none() && p.s[1].link(A).is_none());
}

#[test]
fn a_close_while_connecting_closes_as_soon_as_the_link_is_up() {
    let mut p = Pair::new();
    p.s[0].connect(B, 0).unwrap();
    let hello = p.frames(0).remove(0);
    p.s[0].close(B, 0);
    p.tick(RTO);
    assert!(p.frames(0).is_empty(), "no more Hellos");
    p.give(1, hello);
    let (a, b) = p.exchange();
    assert_eq!((a, b), (vec![up(B), down(B)], vec![up(A), down(A)]));
}

#[test]
fn a_lost_close_ack_is_answered_again_after_the_incarnation_ended() {
    let mut p = Pair::linked();
    let (ea, eb) = (p.epochs(0), p.epochs(1));
    p.s[0].close(B, 0);
    p.events(0);
    let close_a = p.frames(0).remove(0);
    p.give(1, close_a.clone());
    p.events(1);
    let from_b = p.frames(1); // CloseAck, then B's own Close
    assert_eq!(from_b[0], Frame::CloseAck { epochs: eb });
    assert_eq!(
        from_b[1],
        Frame::Close {
            epochs: eb,
            last: 0
        }
    );
    for f in from_b {
        p.give(0, f);
    }
    assert!(p.s[0].link(B).is_none(), "A is done");
    p.frames(0); // A's CloseAck is lost
    p.tick(RTO);
    let again = p.frames(1);
    assert_eq!(
        again,
        [Frame::Close {
            epochs: eb,
            last: 0
        }]
    );
    p.give(0, again[0].clone());
    assert_eq!(p.frames(0), [Frame::CloseAck { epochs: ea }]);
    p.give(1, Frame::CloseAck { epochs: ea });
    assert!(p.s[1].link(A).is_none());
    assert_eq!(
        (p.s[0].stats().links_closed, p.s[1].stats().links_closed),
        (1, 1)
    );
}

#[test]
fn impossible_closes_are_malformed() {
    let mut p = Pair::linked();
    let e = p.epochs(0);
    p.give(1, Frame::CloseAck { epochs: e });
    p.give(1, Frame::Close { epochs: e, last: 3 }); // nothing was delivered
    assert_eq!(p.s[1].stats().malformed, 2);
    assert_eq!(p.s[1].link(A).unwrap().state, LinkState::Up);
    assert!(p.events(1).is_empty());
}

#[test]
fn sends_the_core_may_not_make_are_refused() {
    let mut p = Pair::new();
    assert_eq!(p.s[0].send(B, 1, 0), Err(SessionError::NotLinked(B)));
    p.s[0].connect(B, 0).unwrap();
    assert_eq!(
        p.s[0].send(B, 1, 0),
        Err(SessionError::NotLinked(B)),
        "still forming"
    );
    assert_eq!(p.s[0].connect(A, 0), Err(SessionError::OwnId(A)));
    let mut p = Pair::linked();
    p.s[0].close(B, 0);
    p.events(0); // LinkDown handed out
    assert_eq!(p.s[0].send(B, 1, 0), Err(SessionError::NotLinked(B)));
}

#[test]
fn a_send_after_a_failure_not_yet_handed_out_is_reported_lost() {
    let mut p = Pair::linked();
    p.tick(LIVE + 10);
    p.frames(0);
    assert_eq!(p.s[0].poll_event(), Some(down(B)));
    let mut p = Pair::linked();
    p.tick(LIVE + 10); // B silent: failed, LinkDown not yet handed out
    p.s[0].send(B, 4, LIVE + 10).unwrap();
    assert_eq!(
        p.events(0),
        [
            down(B),
            SessionEvent::Lost {
                peer: B,
                msgs: vec![4],
                precious: 1
            }
        ]
    );
    assert!(p.frames(0).iter().all(|f| !matches!(f, Frame::Data { .. })));
}

#[test]
fn frames_from_strangers_and_from_itself_are_dropped() {
    let mut p = Pair::linked();
    let e = p.epochs(1);
    p.s[0].handle_datagram(
        Datagram {
            from: C,
            frame: data(e, 1, 1),
        },
        0,
    );
    p.s[0].handle_datagram(
        Datagram {
            from: A,
            frame: Frame::Hello { epochs: e },
        },
        0,
    );
    p.s[0].handle_datagram(
        Datagram {
            from: B,
            frame: Frame::Hello {
                epochs: Epochs::default(),
            },
        },
        0,
    );
    let st = *p.s[0].stats();
    assert_eq!((st.unknown_peer, st.malformed), (1, 2));
    let bogus = Epochs {
        sender: e.sender,
        receiver: e.receiver + 1,
    };
    p.give(
        0,
        Frame::Ack {
            epochs: bogus,
            seq: 0,
        },
    );
    assert_eq!(p.s[0].stats().malformed, 3, "an epoch never given to B");
    assert!(p.events(0).is_empty() && p.frames(0).is_empty());
}

#[test]
fn the_peer_table_is_bounded() {
    let s = Settings::new(RTO, LIVE, 4).with_max_peers(2);
    let mut a = Session::<u32>::new(A, s).unwrap();
    let hello = |sender| Frame::Hello {
        epochs: Epochs {
            sender,
            receiver: 0,
        },
    };
    a.connect(B, 0).unwrap();
    a.handle_datagram(
        Datagram {
            from: C,
            frame: hello(1),
        },
        0,
    );
    a.handle_datagram(
        Datagram {
            from: NodeId(3),
            frame: hello(1),
        },
        0,
    );
    assert_eq!(a.stats().refused, 1);
    assert_eq!(a.connect(NodeId(4), 0), Err(SessionError::PeerTableFull(2)));
    // C's handshake expires; not wanted, its entry can be forgotten for a newcomer.
    a.handle_timeout(LIVE);
    a.handle_datagram(
        Datagram {
            from: NodeId(3),
            frame: hello(1),
        },
        LIVE,
    );
    assert_eq!(a.stats().refused, 1);
    assert!(a.link(NodeId(3)).is_some() && a.link(C).is_none());
}

#[test]
fn timeouts_are_asked_for_and_time_never_runs_backwards() {
    let mut p = Pair::new();
    assert_eq!(p.s[0].poll_timeout(), None);
    p.s[0].connect(B, 50).unwrap();
    assert_eq!(p.s[0].poll_timeout(), Some(50 + RTO));
    p.frames(0);
    p.s[0].handle_timeout(20); // earlier than its clock: nothing due
    assert!(p.frames(0).is_empty());
    p.s[0].handle_timeout(u64::MAX);
    p.s[0].handle_timeout(u64::MAX);
    assert!(
        p.s[0].poll_timeout().is_some(),
        "no overflow at the end of time"
    );
}

// Issue 23: unanswered `Hello`s back off exponentially (S2 in docs/ALGORITHMS.md).

/// `A`'s session alone, wanting `B` from 0, with every frame lost (`B` out of reach): what `A`
/// sent until `end`, with when, its timers fired exactly when asked for.
fn unanswered(settings: Settings, end: u64) -> (Session<u32>, Vec<(u64, Frame<u32>)>) {
    let mut a = Session::new(A, settings).unwrap();
    a.connect(B, 0).unwrap();
    let mut sent = Vec::new();
    let mut now = 0;
    loop {
        while let Some(Transmit { to, frame }) = a.poll_transmit() {
            assert_eq!(to, B);
            sent.push((now, frame));
        }
        assert_eq!(a.poll_event(), None, "the core hears of nothing");
        let at = a.poll_timeout().expect("B is wanted");
        assert!(at > now, "a timer due at {at} after handle_timeout({now})");
        if at > end {
            return (a, sent);
        }
        now = at;
        a.handle_timeout(now);
    }
}

/// When the `Hello`s of `sent` went out; each must be a `Hello` of a forming link.
fn hello_times(sent: &[(u64, Frame<u32>)]) -> Vec<u64> {
    sent.iter()
        .map(|(t, f)| match f {
            Frame::Hello { epochs } if epochs.receiver == 0 => *t,
            other => panic!("{other:?} at {t} to a peer that never answered"),
        })
        .collect()
}

/// Against a silent peer the wait between `Hello`s doubles from `RTO` up to the cap, and stays
/// there. The forming link expires every `LIVE` and starts over with a fresh epoch, without a
/// `Hello` of its own and without going back to `RTO`: each `Hello` names the incarnation of
/// its time.
#[test]
fn unanswered_hellos_back_off_exponentially_up_to_the_cap() {
    let cap = 80;
    let (a, sent) = unanswered(settings().with_max_backoff(cap), 1000);
    // Waits of 10, 20, 40, then 80 (the cap) from 70 on.
    let mut expected = vec![0, RTO, 3 * RTO, 7 * RTO];
    expected.extend((7 * RTO + cap..=1000).step_by(cap as usize));
    assert_eq!(hello_times(&sent), expected);
    for (t, f) in &sent {
        // Epochs from 1, a fresh one at every expiry (at LIVE, 2 LIVE, ...).
        assert_eq!(f.epochs().sender, 1 + t / LIVE, "the Hello at {t}");
    }
    let st = a.stats();
    assert_eq!(
        (st.hellos, st.handshakes_expired),
        (expected.len() as u64, 1000 / LIVE)
    );
}

/// No storm: with the default timers (in ms: retransmission 20, cap 1000), a wanted peer
/// silent for 10,000 costs 15 `Hello`s (the doubling's 7, then one per cap), not the 501 that
/// one every retransmission timeout made before the back-off (still what `max_backoff =
/// retransmit_after` gives).
#[test]
fn a_silent_wanted_peer_gets_few_hellos_not_a_storm() {
    let d = Settings::DEFAULT;
    let (a, sent) = unanswered(d, 10_000);
    let mut expected = vec![0, 20, 60, 140, 300, 620, 1260];
    expected.extend((2260..=10_000).step_by(1000));
    assert_eq!(hello_times(&sent), expected);
    assert_eq!(expected.len(), 15);
    // O(log2(cap / retransmit) + duration / cap).
    let bound = (d.max_backoff / d.retransmit_after).ilog2() as usize + 1 + 10_000 / 1000;
    assert!(sent.len() <= bound, "{} datagrams", sent.len());
    assert_eq!(a.stats().hellos, 15);
    let (_, storm) = unanswered(d.with_max_backoff(d.retransmit_after), 10_000);
    assert_eq!(storm.len(), 501, "without the back-off");
}

/// Any `Hello` the forming link answers starts the back-off over: the answer goes out at once
/// and, if it is lost, is repeated after `RTO`, `2 RTO`, ...; the handshake's expiry keeps
/// that back-off too.
#[test]
fn a_hello_from_the_peer_starts_the_backoff_over() {
    let mut a = Session::<u32>::new(A, settings().with_max_backoff(80)).unwrap();
    a.connect(B, 0).unwrap();
    let mut sent = Vec::new();
    let mut now = 0;
    let peers = Frame::Hello {
        epochs: Epochs {
            sender: 7,
            receiver: 0,
        },
    };
    while now < 400 {
        if now == 160 {
            // Hellos at 0, 10, 30, 70, 150; the next was due at 230.
            a.handle_datagram(
                Datagram {
                    from: B,
                    frame: peers.clone(),
                },
                now,
            );
        }
        while let Some(t) = a.poll_transmit() {
            sent.push((now, t.frame));
        }
        now = a
            .poll_timeout()
            .unwrap()
            .min(if now < 160 { 160 } else { u64::MAX });
        a.handle_timeout(now);
    }
    let times: Vec<u64> = sent.iter().map(|(t, _)| *t).collect();
    // The answer at 160, repeated 10, 20, 40 later (the handshake expired at 200 between
    // them), then every 80.
    assert_eq!(times, [0, 10, 30, 70, 150, 160, 170, 190, 230, 310, 390]);
    let answer = Frame::Hello {
        epochs: Epochs {
            sender: 2,
            receiver: 7,
        },
    };
    assert_eq!(
        sent[5..8]
            .iter()
            .map(|(_, f)| f.clone())
            .collect::<Vec<_>>(),
        [answer.clone(), answer.clone(), answer]
    );
    assert_eq!(
        sent[8].1,
        Frame::Hello {
            epochs: Epochs {
                sender: 3,
                receiver: 0
            }
        },
        "a fresh epoch after the expiry at 200"
    );
}

/// How long after the peer comes back in reach at `heal` the link is up at both ends: `A`
/// wants `B` (and `B` wants `A` if `both`), every frame is lost before `heal` and arrives at
/// once after it.
fn reformed_after(both: bool, heal: u64) -> u64 {
    let mut p = Pair::new();
    p.s[0].connect(B, 0).unwrap();
    if both {
        p.s[1].connect(A, 0).unwrap();
    }
    let next = |p: &Pair| {
        p.s.iter()
            .filter_map(Session::poll_timeout)
            .min()
            .expect("a link forms")
    };
    loop {
        p.frames(0);
        p.frames(1);
        assert!(p.events(0).is_empty() && p.events(1).is_empty());
        let at = next(&p);
        if at >= heal {
            break;
        }
        p.tick(at);
    }
    loop {
        let at = next(&p);
        p.tick(at);
        p.exchange();
        if p.s[0].is_linked(B) && p.s[1].is_linked(A) {
            return p.now - heal;
        }
    }
}

/// After a long outage (thousands of time units, many handshake expiries) a link forms at
/// both ends within one cap (`max_backoff`, 250 here) of the peer coming back in reach, with
/// instant delivery; whether one end wants the link or both. And the bound is reached: the
/// back-off really is at the cap.
#[test]
fn a_link_forms_within_one_cap_after_a_long_outage() {
    let cap = settings().max_backoff;
    for both in [false, true] {
        let mut worst = 0;
        for heal in (5000..5000 + 2 * cap).step_by(7) {
            let took = reformed_after(both, heal);
            assert!(
                took <= cap,
                "healed at {heal}, up {took} later (both: {both})"
            );
            worst = worst.max(took);
        }
        assert!(worst + 7 > cap, "at worst {worst} (both: {both})");
    }
}

/// Failure detection on an up link is as before (issue 23 changes nothing there): probes
/// every `RTO` once the peer's keepalive is overdue, never backed off, and `LinkDown` exactly
/// `LIVE` after the peer was last heard. The next incarnation's `Hello`s start at `RTO` again
/// and back off.
#[test]
fn an_up_link_fails_on_time_and_its_next_incarnation_starts_fast() {
    let mut p = Pair::linked();
    let old = p.epochs(0);
    let mut hellos = Vec::new();
    let mut down_at = None;
    while p.now < 600 {
        let at = p.s[0].poll_timeout().unwrap();
        p.tick(at);
        p.frames(1);
        for f in p.frames(0) {
            if let Frame::Hello { epochs } = f {
                hellos.push((p.now, epochs == old));
            }
        }
        for e in p.events(0) {
            assert_eq!(e, down(B));
            assert_eq!(down_at.replace(p.now), None);
        }
    }
    assert_eq!(down_at, Some(LIVE), "B last heard at 0");
    let probes: Vec<u64> = (KEEP + RTO..LIVE).step_by(RTO as usize).collect();
    let fresh = [
        LIVE,
        LIVE + RTO,
        LIVE + 3 * RTO,
        LIVE + 7 * RTO,
        LIVE + 15 * RTO,
        410,
    ];
    let expected: Vec<(u64, bool)> = probes
        .iter()
        .map(|t| (*t, true))
        .chain(fresh.iter().map(|t| (*t, false)))
        .collect();
    assert_eq!(hellos, expected);
}

/// `connect` while the link forms changes nothing (calling it again and again cannot undo the
/// back-off); `connect` that starts a new incarnation (here after `close`, once the forming
/// one expired) says `Hello` at once and backs off from `RTO` again.
#[test]
fn connect_starts_over_fast_only_with_a_new_incarnation() {
    let mut a = Session::<u32>::new(A, settings()).unwrap();
    a.connect(B, 0).unwrap();
    assert!(a.poll_transmit().is_some(), "a Hello at once");
    let mut times = Vec::new();
    let mut now = 0;
    let mut step = |a: &mut Session<u32>, now: &mut u64, to: u64| {
        while let Some(at) = a.poll_timeout().filter(|&at| at <= to) {
            *now = at;
            a.handle_timeout(at);
            while a.poll_transmit().is_some() {
                times.push(*now);
            }
        }
        *now = to;
    };
    step(&mut a, &mut now, 520);
    a.connect(B, 520).unwrap();
    assert!(
        a.poll_transmit().is_none(),
        "no Hello for connect while forming"
    );
    assert_eq!(a.poll_timeout(), Some(560), "the back-off goes on");
    a.close(B, 520);
    step(&mut a, &mut now, 700);
    assert!(a.link(B).is_none() && a.poll_timeout().is_none());
    a.connect(B, 700).unwrap();
    assert!(a.poll_transmit().is_some(), "a Hello at once");
    step(&mut a, &mut now, 760);
    assert_eq!(times, [10, 30, 70, 150, 310, 710, 730]);
}
