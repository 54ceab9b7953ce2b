//! A simulated broadcast channel for discovery nodes: every hello goes, as bytes, to every
//! other node through a channel function that loses it or delays it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use manet_mutex::discovery::{Discovery, DiscoveryEvent, Hello, Settings, MAX_HELLO_FRAME};
use manet_mutex::NodeId;

/// Decides the fate of a hello sent at `now` from one node to another: `Some(delay)` or lost.
pub type Channel = Box<dyn FnMut(u64, usize, usize) -> Option<u64>>;

/// A hello in flight: (arrival, order sent, destination, frame).
type InFlight = Reverse<(u64, u64, usize, Vec<u8>)>;

pub struct Net {
    pub nodes: Vec<Discovery>,
    pub settings: Settings,
    pub now: u64,
    /// In flight: (arrival, order, to, frame).
    wire: BinaryHeap<InFlight>,
    order: u64,
    pub channel: Channel,
    /// Every event handed out: (time, node, event).
    pub events: Vec<(u64, usize, DiscoveryEvent)>,
    /// Hellos sent: (time, node, hello).
    pub sent: Vec<(u64, usize, Hello)>,
    /// `since[x][y]`: since when node x does not hear y (`None` while it does).
    pub not_hearing_since: Vec<Vec<Option<u64>>>,
}

pub fn id(i: usize) -> NodeId {
    NodeId(i as u32)
}

impl Net {
    pub fn new(n: usize, settings: Settings, channel: Channel) -> Self {
        let nodes = (0..n)
            .map(|i| Discovery::new(id(i), settings, 0).unwrap())
            .collect();
        Net {
            nodes,
            settings,
            now: 0,
            wire: BinaryHeap::new(),
            order: 0,
            channel,
            events: Vec::new(),
            sent: Vec::new(),
            not_hearing_since: vec![vec![Some(0); n]; n],
        }
    }

    /// A perfect channel with a fixed delay.
    pub fn perfect(delay: u64) -> Channel {
        Box::new(move |_, _, _| Some(delay))
    }

    fn drain(&mut self, i: usize) {
        while let Some(hello) = self.nodes[i].poll_transmit() {
            self.sent.push((self.now, i, hello));
            let mut buf = [0; MAX_HELLO_FRAME];
            let frame = hello.encode_into(&mut buf).to_vec();
            for j in 0..self.nodes.len() {
                if j != i {
                    if let Some(delay) = (self.channel)(self.now, i, j) {
                        self.order += 1;
                        self.wire
                            .push(Reverse((self.now + delay, self.order, j, frame.clone())));
                    }
                }
            }
        }
        while let Some(event) = self.nodes[i].poll_event() {
            self.events.push((self.now, i, event));
        }
    }

    pub fn observe(&mut self) {
        let n = self.nodes.len();
        for x in 0..n {
            for y in 0..n {
                if self.nodes[x].hears(id(y)) {
                    self.not_hearing_since[x][y] = None;
                } else if self.not_hearing_since[x][y].is_none() {
                    self.not_hearing_since[x][y] = Some(self.now);
                }
            }
        }
    }

    /// Process everything due at the earliest time up to `until`; `false` if nothing is.
    /// Timers go before arrivals at one instant.
    pub fn step(&mut self, until: u64) -> bool {
        let timer = self.nodes.iter().map(|d| d.poll_timeout()).min().unwrap();
        let arrival = self.wire.peek().map_or(u64::MAX, |Reverse(m)| m.0);
        let at = timer.min(arrival);
        if at > until {
            self.now = until;
            return false;
        }
        self.now = at;
        if timer <= arrival {
            for i in 0..self.nodes.len() {
                if self.nodes[i].poll_timeout() <= at {
                    self.nodes[i].handle_timeout(at);
                    self.drain(i);
                }
            }
        } else {
            let Reverse((_, _, to, frame)) = self.wire.pop().unwrap();
            self.nodes[to].handle_datagram(at, &frame).unwrap();
            self.drain(to);
        }
        self.observe();
        true
    }

    /// Run until `until`, calling `check` after every step.
    pub fn run_checked(&mut self, until: u64, mut check: impl FnMut(&Net)) {
        while self.step(until) {
            check(self);
        }
    }

    pub fn run(&mut self, until: u64) {
        self.run_checked(until, |_| {});
    }

    pub fn up(&self, x: usize, y: usize) -> bool {
        self.nodes[x].is_up(id(y))
    }

    /// Events of node `x` about `y` after `from`.
    pub fn events_of(&self, x: usize, y: usize, from: u64) -> Vec<(u64, DiscoveryEvent)> {
        self.events
            .iter()
            .filter(|&&(t, i, e)| i == x && e.peer() == id(y) && t >= from)
            .map(|&(t, _, e)| (t, e))
            .collect()
    }

    /// Replace node `i` by a fresh one (a restart: numbers from 0 again).
    pub fn restart(&mut self, i: usize, seed: u64) {
        let settings = self.settings.with_seed(seed);
        self.nodes[i] = Discovery::new(id(i), settings, self.now).unwrap();
    }
}
