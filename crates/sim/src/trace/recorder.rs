//! Building a [`Recording`] while a simulation runs: numbers every message, and pairs each
//! delivery on a FIFO link with the message it delivers.

use std::collections::{BTreeMap, VecDeque};

use super::{Record, Recording, Sent, View};

/// Records a run step by step (see [`Recording`]).
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    records: Vec<Record>,
    next_message: u64,
    steps: u64,
    /// Per directed link, the numbers of the messages on it, oldest first.
    in_flight: BTreeMap<(u32, u32), VecDeque<u64>>,
    /// Whether recording stopped at the end of the measured window
    /// ([`Recorder::end_window`]): later steps, messages and losses are not recorded.
    stopped: bool,
}

impl Recorder {
    /// A recording of `algorithm` starting from `views`, drawn at `positions`, on `links`.
    pub fn new(
        algorithm: &str,
        positions: Vec<(f64, f64)>,
        links: Vec<(u32, u32)>,
        views: Vec<View>,
    ) -> Self {
        Recorder {
            records: vec![Record::Init {
                algorithm: algorithm.into(),
                positions,
                links,
                views,
                radius: None,
            }],
            ..Recorder::default()
        }
    }

    /// Start a step: `node` handles `event` at `time` (which message it delivers, and which
    /// link it reports, read from the event; the event in words, [`super::words::event`]).
    /// See [`Recorder::begin_step`].
    pub fn begin_event<P: super::Visible>(
        &mut self,
        time: f64,
        node: u32,
        event: &manet_mutex::Event<P::Message>,
    ) {
        if self.stopped {
            return;
        }
        use manet_mutex::Event;
        let (from, link) = match event {
            Event::Receive { from, .. } => (Some(from.0), None),
            Event::LinkUp(peer) => (None, Some((peer.0, true))),
            Event::LinkDown(peer) => (None, Some((peer.0, false))),
            _ => (None, None),
        };
        self.begin_step(
            time,
            node,
            super::words::event::<P>(node, event),
            from,
            link,
        );
    }

    /// Start a step: `node` handles `event` at `time`; `received_from` is the sender of the
    /// message it delivers, if it delivers one (the oldest on that link); `link` a link
    /// event's other end and whether it forms. The node's view is filled in by
    /// [`Recorder::end_step`].
    pub fn begin_step(
        &mut self,
        time: f64,
        node: u32,
        event: String,
        received_from: Option<u32>,
        link: Option<(u32, bool)>,
    ) {
        if self.stopped {
            return;
        }
        self.steps += 1;
        let received = received_from.and_then(|from| {
            self.in_flight
                .get_mut(&(from, node))
                .and_then(VecDeque::pop_front)
        });
        self.records.push(Record::Step {
            step: self.steps,
            time,
            node,
            event,
            received,
            view: View {
                status: String::new(),
                tokens: 0,
                height: None,
                next: None,
                fields: Vec::new(),
            },
            sent: Vec::new(),
            link: link.map(|(peer, up)| (node.min(peer), node.max(peer), up)),
            positions: None,
        });
    }

    /// Hosts that move: links are every pair within `radius` (in the units of the
    /// positions), not a list.
    pub fn with_radius(mut self, radius: f64) -> Self {
        if let Some(Record::Init { radius: r, .. }) = self.records.first_mut() {
            *r = Some(radius);
        }
        self
    }

    /// The nodes are at `now` from the current step on.
    pub fn moved(&mut self, now: Vec<(f64, f64)>) {
        if self.stopped {
            return;
        }
        if let Some(Record::Step { positions, .. }) = self.records.last_mut() {
            *positions = Some(now);
        }
    }

    /// Message `id` was dropped at `time`.
    pub fn lost(&mut self, id: u64, time: f64) {
        if self.stopped {
            return;
        }
        self.records.push(Record::Lost { message: id, time });
    }

    /// The oldest message on `from → to` was dropped at `time` (a delivery to a host that
    /// cannot take it).
    pub fn lost_oldest(&mut self, from: u32, to: u32, time: f64) {
        if let Some(id) = self
            .in_flight
            .get_mut(&(from, to))
            .and_then(VecDeque::pop_front)
        {
            self.lost(id, time);
        }
    }

    /// The current step's node sent `msg` to `to`; the message's number.
    pub fn send(&mut self, to: u32, msg: String) -> u64 {
        let id = self.next_message;
        self.next_message += 1;
        if self.stopped {
            return id;
        }
        if let Some(Record::Step { node, sent, .. }) = self.records.last_mut() {
            sent.push(Sent { id, to, msg });
            self.in_flight.entry((*node, to)).or_default().push_back(id);
        }
        id
    }

    /// End the current step with the node's view after it.
    pub fn end_step(&mut self, after: View) {
        if self.stopped {
            return;
        }
        if let Some(Record::Step { view, .. }) = self.records.last_mut() {
            *view = after;
        }
    }

    /// The measured window ends at `time`, after the steps so far (every request of the
    /// workload has been served): a [`Record::Window`]. Unless `keep_recording`, nothing
    /// after it is recorded (a failure's [`Recorder::violation`] still is).
    pub fn end_window(&mut self, time: f64, keep_recording: bool) {
        if self.stopped {
            return;
        }
        self.records.push(Record::Window {
            step: self.steps,
            time,
        });
        self.stopped = !keep_recording;
    }

    /// Whether recording stopped at the end of the measured window.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The invariant that failed.
    pub fn violation(&mut self, message: String) {
        self.records.push(Record::Violation { message });
    }

    /// The steps recorded so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The recording.
    pub fn finish(self) -> Recording {
        Recording {
            records: self.records,
        }
    }
}
