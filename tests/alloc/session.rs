//! A link session's steady state does not allocate: once two linked sessions have warmed up
//! (their send queues, reorder buffers and output queues at working capacity), further rounds
//! of messages both ways, delivered out of order, with duplicates, retransmissions and
//! keepalives, make no heap allocation inside any session call.

use std::collections::VecDeque;

use manet_mutex::session::{Datagram, Frame, Session, SessionEvent, Settings, Transmit};
use manet_mutex::{Event, NodeId};

use crate::counting::counted;

const A: NodeId = NodeId(0);
const B: NodeId = NodeId(1);

struct Run {
    s: [Session<u64>; 2],
    /// Frames in flight, with their sender.
    wire: VecDeque<(NodeId, Transmit<u64>)>,
    now: u64,
    next: u64,
    received: u64,
    allocations: u64,
}

impl Run {
    /// Count what `f` allocates.
    fn count<R>(&mut self, f: impl FnOnce(&mut [Session<u64>; 2]) -> R) -> R {
        let (r, made) = counted(|| f(&mut self.s));
        self.allocations += made;
        r
    }

    fn drain(&mut self, i: usize) {
        while let Some(event) = self.count(|s| s[i].poll_event()) {
            match event {
                SessionEvent::Core(Event::Receive { .. }) => self.received += 1,
                SessionEvent::Core(_) => {}
                other => panic!("{other:?} on a reliable wire"),
            }
        }
        let from = [A, B][i];
        while let Some(t) = self.count(|s| s[i].poll_transmit()) {
            self.wire.push_back((from, t));
        }
    }

    /// Each side sends `burst` messages (more than the window); the frames are delivered
    /// newest first (reordered), the oldest of each batch twice, and the first data frame of
    /// the round is lost; time passes between deliveries, so retransmissions and keepalives
    /// run.
    fn round(&mut self, burst: usize) {
        for i in 0..2 {
            for _ in 0..burst {
                let (to, msg, now) = ([B, A][i], self.next, self.now);
                self.next += 1;
                self.count(|s| s[i].send(to, msg, now)).unwrap();
            }
            self.drain(i);
        }
        let mut lost = false;
        for _ in 0..4 {
            while !self.wire.is_empty() {
                let mut batch: Vec<_> = self.wire.drain(..).collect();
                batch.reverse();
                if let Some(oldest) = batch.last().cloned() {
                    batch.push(oldest);
                }
                for (from, Transmit { to, frame }) in batch {
                    if !lost && matches!(frame, Frame::Data { .. }) {
                        lost = true;
                        continue;
                    }
                    let (i, now) = (to.index(), self.now);
                    self.count(|s| s[i].handle_datagram(Datagram { from, frame }, now));
                    self.drain(i);
                }
            }
            self.now += 30;
            for i in 0..2 {
                let now = self.now;
                self.count(|s| s[i].handle_timeout(now));
                self.drain(i);
            }
        }
    }
}

#[test]
fn steady_state_session_calls_do_not_allocate() {
    let settings = Settings::new(10, 1000, 8).with_keepalive(25);
    let mut run = Run {
        s: [
            Session::new(A, settings).unwrap(),
            Session::new(B, settings).unwrap(),
        ],
        wire: VecDeque::with_capacity(1024),
        now: 0,
        next: 0,
        received: 0,
        allocations: 0,
    };
    run.s[0].connect(B, 0).unwrap();
    run.drain(0);
    while let Some((from, Transmit { to, frame })) = run.wire.pop_front() {
        run.s[to.index()].handle_datagram(Datagram { from, frame }, 0);
        run.drain(to.index());
    }
    for _ in 0..50 {
        run.round(12);
    }
    assert!(run.s[0].is_linked(B) && run.s[1].is_linked(A));
    let before = run.received;
    run.allocations = 0;
    for _ in 0..500 {
        run.round(12);
    }
    run.round(0); // what the last round left in flight
    assert_eq!(
        run.received - before,
        500 * 24,
        "every message delivered once"
    );
    let stats =
        |f: fn(&manet_mutex::session::Stats) -> u64| f(run.s[0].stats()) + f(run.s[1].stats());
    assert!(stats(|s| s.retransmitted) >= 500 && stats(|s| s.duplicates) >= 500);
    assert_eq!(run.allocations, 0, "steady-state session calls allocated");
}
