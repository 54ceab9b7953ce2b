//! A deterministic in-memory network of drivers: datagrams lost, duplicated and delayed by a
//! seeded generator (so reordered), broadcasts to everyone in range, and an application per
//! node that asks for the critical section a number of times, stays a few ticks, leaves.

use std::collections::BTreeMap;

use manet_mutex::codec::Wire;
use manet_mutex::driver::{Algorithm, Destination, Driver, DriverEvent};
use manet_mutex::{CsRequest, Fence, NodeId, Report};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How the channel treats each datagram.
#[derive(Debug, Clone, Copy)]
pub struct Channel {
    pub loss: f64,
    pub duplicate: f64,
    /// Delays are drawn in `1..=max_delay`.
    pub max_delay: u64,
}

pub struct App {
    pub left: u32,
    pub waiting: bool,
    pub leave_at: Option<u64>,
    pub next_request: u64,
}

pub struct Net<P: Algorithm>
where
    P::Message: Wire,
{
    pub nodes: Vec<Driver<P>>,
    pub apps: Vec<App>,
    pub channel: Channel,
    pub rng: ChaCha8Rng,
    /// (deliver at, order) -> (to, from, bytes)
    pub air: BTreeMap<(u64, u64), (usize, usize, Vec<u8>)>,
    pub order: u64,
    pub now: u64,
    /// Every entry: (when, node, fence).
    pub entries: Vec<(u64, usize, Fence)>,
    pub inside: Vec<usize>,
    /// Whether `a` and `b` are in range of each other.
    pub in_range: fn(usize, usize) -> bool,
    /// The longest datagram sent.
    pub longest: usize,
    /// Crashed nodes: nothing reaches them or comes from them, their applications stop.
    pub dead: Vec<bool>,
    /// Every token regenerated: (when, node).
    pub regenerated: Vec<(u64, usize)>,
    /// Tokens or resources the sessions gave up with a failed link (`DriverEvent::Lost`).
    pub precious_lost: usize,
}

impl<P: Algorithm> Net<P>
where
    P::Message: Wire,
{
    pub fn new(nodes: Vec<Driver<P>>, requests: u32, channel: Channel, seed: u64) -> Self {
        let n = nodes.len();
        let apps = (0..nodes.len())
            .map(|i| App {
                left: requests,
                waiting: false,
                leave_at: None,
                next_request: 500 + 37 * i as u64,
            })
            .collect();
        Net {
            nodes,
            apps,
            channel,
            rng: ChaCha8Rng::seed_from_u64(seed),
            air: BTreeMap::new(),
            order: 0,
            now: 0,
            entries: Vec::new(),
            inside: Vec::new(),
            in_range: |_, _| true,
            longest: 0,
            dead: vec![false; n],
            regenerated: Vec::new(),
            precious_lost: 0,
        }
    }

    fn send(&mut self, from: usize, to: usize, bytes: &[u8]) {
        if !(self.in_range)(from, to)
            || self.dead[from]
            || self.dead[to]
            || self.rng.random_bool(self.channel.loss)
        {
            return;
        }
        let copies = 1 + usize::from(self.rng.random_bool(self.channel.duplicate));
        for _ in 0..copies {
            let at = self.now + self.rng.random_range(1..=self.channel.max_delay);
            self.order += 1;
            self.air
                .insert((at, self.order), (to, from, bytes.to_vec()));
        }
    }

    /// Drain node `i`'s events (the application's part) and transmits (onto the channel).
    pub fn drain(&mut self, i: usize) {
        while let Some(event) = self.nodes[i].poll_event() {
            match event {
                DriverEvent::Entered { fence, .. } => {
                    assert!(
                        self.inside.is_empty(),
                        "node {i} entered at {} while {:?} inside",
                        self.now,
                        self.inside
                    );
                    self.inside.push(i);
                    self.entries.push((self.now, i, fence));
                    let app = &mut self.apps[i];
                    app.waiting = false;
                    app.leave_at = Some(self.now + 3);
                }
                DriverEvent::Anomaly { .. } => panic!("node {i}: {event:?}"),
                DriverEvent::Lost { precious, .. } => self.precious_lost += precious,
                DriverEvent::Report(Report::TokenRegenerated { .. }) => {
                    self.regenerated.push((self.now, i));
                }
                _ => {}
            }
        }
        while let Some(t) = self.nodes[i].poll_transmit() {
            self.longest = self.longest.max(t.bytes.len());
            match t.to {
                Destination::Broadcast => {
                    for j in (0..self.nodes.len()).filter(|&j| j != i) {
                        self.send(i, j, &t.bytes);
                    }
                }
                Destination::Peer(p) => self.send(i, p.index(), &t.bytes),
            }
        }
    }

    /// One time unit: deliveries due, timeouts due, the applications.
    pub fn step(&mut self) {
        let now = self.now;
        while let Some(entry) = self.air.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (to, from, bytes) = entry.remove();
            if self.dead[to] {
                continue;
            }
            self.nodes[to].handle_datagram(now, NodeId(from as u32), &bytes);
            self.drain(to);
        }
        for i in 0..self.nodes.len() {
            if self.dead[i] {
                continue;
            }
            if self.nodes[i].poll_timeout().is_some_and(|at| at <= now) {
                self.nodes[i].handle_timeout(now);
                self.drain(i);
            }
            let app = &mut self.apps[i];
            if app.leave_at.is_some_and(|at| at <= now) {
                app.leave_at = None;
                app.next_request = now + 5 + (i as u64 * 7) % 11;
                self.inside.retain(|&n| n != i);
                self.nodes[i].release(now).unwrap();
                self.drain(i);
            } else if !app.waiting
                && app.leave_at.is_none()
                && app.left > 0
                && app.next_request <= now
            {
                app.left -= 1;
                app.waiting = true;
                self.nodes[i].request(now, CsRequest::ONE).unwrap();
                self.drain(i);
            }
        }
        self.now += 1;
    }

    /// Run until every request is served and left, or `limit`.
    pub fn run(&mut self, limit: u64) {
        while self.now < limit {
            self.step();
            if self
                .apps
                .iter()
                .zip(&self.dead)
                .all(|(a, &dead)| dead || (a.left == 0 && !a.waiting && a.leave_at.is_none()))
            {
                return;
            }
        }
    }

    /// Every request served and the fences of each lane increasing in the order of entry.
    pub fn check_served(&self, requests: u32) {
        let n = self.nodes.len();
        for (i, app) in self.apps.iter().enumerate() {
            assert!(
                app.left == 0 && !app.waiting && app.leave_at.is_none(),
                "node {i} not served by {}: {} left, waiting {}",
                self.now,
                app.left,
                app.waiting
            );
        }
        assert_eq!(self.entries.len(), n * requests as usize);
        let tag = 16; // at most, with a key
        assert!(self.longest <= manet_mutex::driver::wire::MAX_DRIVER_FRAME + tag);
        let mut last: BTreeMap<u32, u64> = BTreeMap::new();
        for &(at, node, fence) in &self.entries {
            if let Some(&before) = last.get(&fence.lane) {
                assert!(
                    fence.value > before,
                    "node {node} entered at {at} under {fence:?}, not above {before}"
                );
            }
            last.insert(fence.lane, fence.value);
        }
    }
}
