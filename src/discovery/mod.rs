//! Neighbour discovery: periodic hellos and link sensing with hysteresis, sans-IO, so that a
//! node learns its neighbours by radio range instead of from a configured topology.
//!
//! One [`Discovery`] per node. It says hello at most every
//! [`hello_interval`](Settings::hello_interval), listing the peers it hears; it hears a peer
//! once [`up_after`](Settings::up_after) consecutive hellos of it arrive, and stops hearing
//! it after more than [`missed_hellos`](Settings::missed_hellos) intervals of silence. The
//! link to a peer is *up* when this node hears the peer **and** the peer's last hello lists this node:
//! both directions work (OLSR's symmetric link, RFC 3626 section 7; the hysteresis is NHDP's
//! idea, RFC 6130, in its simplest form: counts of consecutive hellos and of intervals).
//! Each end decides on its own, at its own time, from what it hears. Like the rest of the
//! crate it does no I/O, reads no clock and uses no global randomness: the embedder passes
//! `now` (in [the embedder's time unit](crate#timers), the unit of [`Settings`]) to every
//! call and asks [`Discovery::poll_timeout`] when to call [`Discovery::handle_timeout`]; the
//! jitter comes from a small deterministic generator seeded from [`Settings::seed`].
//!
//! # Inputs and outputs
//!
//! | in | out |
//! | --- | --- |
//! | [`Discovery::handle_hello`]: a peer's [`Hello`] | [`Discovery::poll_transmit`]: this node's [`Hello`], to broadcast |
//! | `Discovery::handle_datagram` (feature `codec`): a hello's bytes | [`Discovery::poll_event`]: [`DiscoveryEvent::NeighbourUp`], [`DiscoveryEvent::NeighbourDown`] |
//! | [`Discovery::handle_timeout`]: the time [`Discovery::poll_timeout`] asked for | |
//!
//! After every input, drain the events and the transmit. A hello is broadcast best effort (to
//! whoever is in range; it may be lost, duplicated, delayed, reordered); with the `codec`
//! feature `Hello::encode_into` and `Hello::decode` give it a compact versioned frame
//! closed by the codec's CRC-32C.
//!
//! Events report *state*: [`Discovery::poll_event`] hands out, in id order, each peer whose
//! link is up or down other than the embedder was last told. An embedder that drains the
//! events after every input sees every change; one that lets several inputs pass sees the
//! state they led to (a link that went down and up again in between is reported as
//! nothing). So the events never pile up: what is pending is at most one per table entry.
//!
//! # What is guaranteed
//!
//! Let `I` be [`hello_interval`](Settings::hello_interval), `H`
//! [`up_after`](Settings::up_after), `M` [`missed_hellos`](Settings::missed_hellos) (the
//! same on every node) and `D` the longest time the network holds a hello; assume the
//! embedder calls [`Discovery::handle_timeout`] at the times [`Discovery::poll_timeout`]
//! gives. "X hears Y" is [`Discovery::hears`]; "X's link to Y is up" is
//! [`Discovery::is_up`], which is what the events have told.
//!
//! 1. **A link is up only where both directions worked recently.** X's link to Y is up only
//!    if X heard `H` consecutive hellos of Y, the last at most `M·I` ago, and that last
//!    one lists X: Y heard `H` consecutive hellos of X when it sent it. A one-way link (X
//!    hears Y, Y never hears X) is never up at either end.
//! 2. **No end stays up long after the other stopped hearing it.** If X does not hear Y
//!    throughout `[s, t]`, then Y's link to X is down at every time in `[s, t]` later than
//!    `s + M·I + D`: every hello of X that lists Y was sent before `s` and arrived by
//!    `s + D`, and Y's link is up only while its last accepted hello of X lists Y and is at
//!    most `M·I` old. X's own link to Y is down throughout `[s, t]`. With `D = 0` and the
//!    defaults the bound is 400.
//! 3. **Both ends agree within a bound once the channel is stable.** If from `t0` on every
//!    hello between X and Y is delivered, in the order sent, within `D < (M − 1)·I`, and
//!    neither table is full of other peers, both ends report the link up by
//!    `t0 + (H + 1)·I + 2D` and keep it up as long as the channel stays so: each end hears
//!    the other after `H` hellos (by `t0 + H·I + D`), and its next hello, within `I`, lists
//!    it; the gaps between accepted hellos stay below `I + D < M·I`. If X or Y restarted
//!    at `r`, count from `max(t0, r + D + M·I + 1)` instead: the restarted end's first
//!    hellos may be stale at the other until its old entry expires (see
//!    [bad input](self#bad-input-and-limits)), which that bounds.
//!    If instead the channel is cut from `t0` on (nothing sent from `t0` is delivered, either
//!    way), both ends stop hearing each other, and so report the link down, after
//!    `t0 + D + M·I` (at the next time unit); if only one direction is cut, the end that
//!    stops hearing does so then, and the other follows within `M·I + D` of that by 2 (in
//!    practice within `I + D`, at the first hello that no longer lists it). So after any
//!    stable period of `2(M·I + D) + I` both ends agree.
//!
//! What is not guaranteed: that the two ends change state at the same instant (each decides
//! alone; they may disagree for up to the bounds above), and anything about a link whose
//! channel keeps changing faster than the bounds. Losses below the hysteresis keep an up
//! link up: on a channel whose delay does not vary, `M − 1` consecutive lost hellos never
//! lose a peer (the next one arrives at most `M·I` after the last), `M` do when hellos are
//! exactly `I` apart (jitter 0), and with jitter `J` any `⌊M·I / (I − J)⌋` do (5 with the
//! defaults). A link comes up only after `H` hellos in a row. Forged hellos (any sender id,
//! any list) are out of reach without authentication: a forger can make a link look up or
//! down at its receivers. The tests that pin 1 to 3: `docs/ALGORITHMS.md`, "N1".
//!
//! # Discovery, the session and the cores
//!
//! Discovery's view is *not* the token cores' link contract. A core's `LinkDown` promises
//! that nothing is in flight on the link, and its messages must arrive once, in order, in the
//! incarnation they were sent in; hellos carry no acknowledgement of data, so discovery
//! alone cannot promise that. Discovery therefore feeds the [link session](crate::session),
//! not the core: a [`NeighbourUp`](DiscoveryEvent::NeighbourUp) is
//! [`Session::connect`](crate::session::Session::connect) (the session forms a link, with its
//! own handshake, and hands the core `LinkUp` once both ends know it), a
//! [`NeighbourDown`](DiscoveryEvent::NeighbourDown) is
//! [`Session::close`](crate::session::Session::close) (the close handshake, the core's
//! `LinkDown` with nothing in flight, or, if the peer is gone, the session's liveness rule
//! and its loss report). [`DiscoveryEvent::apply`] does exactly that. The cores then learn
//! every neighbour from the session's `LinkUp`, so a token core needs no topology at start:
//! build its `Config` with no neighbours (for [`reverse_link`](crate::reverse_link),
//! `network(n, &[], holders, settings)` gives every node its height and none; the test
//! `tests/discovery/stack.rs` runs KRL so, over discovery and sessions).
//!
//! The session may form a link again after a `NeighbourDown` at this end: it answers any
//! peer's `Hello`, and the other end still wants the link until its own discovery reports it
//! down, which guarantee 2 bounds (`M·I + D` after this end stopped hearing). The permission
//! algorithms ([`look_ahead`](crate::look_ahead), [`ricart_agrawala`](crate::ricart_agrawala))
//! take no link events: a neighbour out of radio range is not a host that crashed (their
//! messages travel over any route), so discovery's events are not `Suspect`/`Trust`.
//!
//! # Bad input and limits
//!
//! A hello's every field may hold anything. A hello naming this node as its sender is
//! counted ([`Stats::own`]) and ignored. A hello whose number is not above the sender's last
//! is stale (duplicated, reordered, replayed: [`Stats::stale`]) and ignored, unless it fell
//! back by [`RESTART_GAP`] or more: then the sender restarted (its numbers start at 0 again),
//! and it is heard afresh ([`Stats::restarts`]; its link goes down until it hears this node
//! again, which its restart ended anyway). A restarted peer whose old numbers were below
//! `RESTART_GAP` goes unrecognised for at most the hold time: its hellos are stale until its
//! old entry expires or its numbers pass the old ones, and its first accepted hello does not
//! list this node, so the link goes down within guarantee 2's bound either way. A hello
//! delayed by `RESTART_GAP` hellos or more reads as a restart (a spurious down, until the
//! peer is heard again).
//!
//! Memory is fixed: the table holds at most [`max_neighbours`](Settings::max_neighbours)
//! entries (at most [`MAX_HEARD`]), allocated once, when the node is made; a hello holds its
//! list inline. Nothing after [`Discovery::new`] allocates. A stream of hellos from any
//! number of forged ids never grows it: a new id when the table is full takes the place of
//! the entry heard least recently among those this node does not hear yet (still counting
//! consecutive hellos; [`Stats::evicted`]), and is refused if every entry is heard or has a
//! link the embedder was told is up ([`Stats::refused`]). So a flood never takes down a link
//! that is up, nor unlists a peer this node hears; while it lasts it can keep new peers out
//! (a forger that also sends consecutive numbers for each id makes its ids heard, and fills
//! the table for a hold time). With the `codec` feature, bytes that are no hello are counted
//! ([`Stats::garbage`]) and dropped; decoding never panics and never allocates.
//!
//! # Example: two nodes find each other, then lose each other
//!
//! ```
//! use manet_mutex::discovery::{Discovery, DiscoveryEvent, Settings};
//! use manet_mutex::NodeId;
//!
//! // Hellos at most every 100 time units, heard after 2 in a row, lost after 4 intervals.
//! let settings = Settings::new(100).with_up_after(2).with_missed_hellos(4);
//! let (a, b) = (NodeId(0), NodeId(1));
//! let mut nodes = [Discovery::new(a, settings, 0)?, Discovery::new(b, settings, 0)?];
//! let mut seen = Vec::new();
//!
//! run(&mut nodes, 1000, true, &mut seen);
//! // Each heard the other twice, then saw itself listed: up at both ends within 3 intervals.
//! assert!(nodes[0].is_up(b) && nodes[1].is_up(a));
//! assert_eq!(seen.len(), 2);
//! for &(at, i, event) in &seen {
//!     assert_eq!(event, DiscoveryEvent::NeighbourUp([b, a][i]));
//!     assert!(at <= 3 * 100);
//! }
//!
//! // Silence from 1000 on: both report the link down within the hold time (400).
//! seen.clear();
//! run(&mut nodes, 2000, false, &mut seen);
//! assert!(!nodes[0].is_up(b) && !nodes[1].is_up(a));
//! assert_eq!(seen.len(), 2);
//! for &(at, i, event) in &seen {
//!     assert_eq!(event, DiscoveryEvent::NeighbourDown([b, a][i]));
//!     assert!(at <= 1000 + settings.hold_time());
//! }
//!
//! /// Run both nodes until `until`; hellos cross at once while `radio` is on.
//! fn run(
//!     nodes: &mut [Discovery; 2],
//!     until: u64,
//!     radio: bool,
//!     seen: &mut Vec<(u64, usize, DiscoveryEvent)>,
//! ) {
//!     loop {
//!         let now = nodes[0].poll_timeout().min(nodes[1].poll_timeout());
//!         if now > until {
//!             return;
//!         }
//!         for i in 0..2 {
//!             nodes[i].handle_timeout(now);
//!             while let Some(hello) = nodes[i].poll_transmit() {
//!                 // An embedder broadcasts `hello.encode_into(..)` (feature `codec`).
//!                 if radio {
//!                     nodes[1 - i].handle_hello(now, &hello);
//!                 }
//!             }
//!         }
//!         for i in 0..2 {
//!             while let Some(event) = nodes[i].poll_event() {
//!                 // An embedder feeds it to the session: `event.apply(&mut session, now)`.
//!                 seen.push((now, i, event));
//!             }
//!         }
//!     }
//! }
//! # Ok::<(), manet_mutex::discovery::DiscoveryError>(())
//! ```

use alloc::vec::Vec;

use crate::session::{Session, SessionError};
use crate::NodeId;

pub(crate) mod hello;
mod settings;

pub use hello::{Hello, MAX_HEARD};
#[cfg(feature = "codec")]
pub use hello::{MAX_HELLO_FRAME, WIRE_VERSION};
pub use settings::{DiscoveryError, Settings, Stats};

/// A hello whose sequence number is this many or more below the sender's last accepted one
/// is taken as the sender's restart; one less far below is stale (see the
/// [module docs](self#bad-input-and-limits)).
pub const RESTART_GAP: u64 = 16;

/// What discovery hands out: a change of a link's state, as this end sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiscoveryEvent {
    /// The link to the peer is up: this node hears it and its last hello lists this node.
    NeighbourUp(NodeId),
    /// The link to the peer is down: the peer fell silent for the hold time, stopped listing
    /// this node, or restarted.
    NeighbourDown(NodeId),
}

impl DiscoveryEvent {
    /// The peer the event is about.
    pub fn peer(&self) -> NodeId {
        match *self {
            DiscoveryEvent::NeighbourUp(peer) | DiscoveryEvent::NeighbourDown(peer) => peer,
        }
    }

    /// Feed the event to a link session (see the
    /// [module docs](self#discovery-the-session-and-the-cores)): `NeighbourUp` is
    /// [`Session::connect`], `NeighbourDown` is [`Session::close`]. Fails only as `connect`
    /// does when the session's peer table is full
    /// ([`SessionError::PeerTableFull`]; give the session at least
    /// [`max_neighbours`](Settings::max_neighbours) peers).
    pub fn apply<M: Clone>(self, session: &mut Session<M>, now: u64) -> Result<(), SessionError> {
        match self {
            DiscoveryEvent::NeighbourUp(peer) => session.connect(peer, now),
            DiscoveryEvent::NeighbourDown(peer) => {
                session.close(peer, now);
                Ok(())
            }
        }
    }
}

/// One peer in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    id: NodeId,
    /// The sequence number of its last accepted hello.
    last_seq: u64,
    /// When that hello arrived.
    heard_at: u64,
    /// Accepted hellos with consecutive numbers, up to the last.
    streak: u32,
    /// This node hears the peer: `streak` reached `up_after`, and the peer has not been
    /// silent for the hold time or restarted since.
    heard: bool,
    /// The peer's last accepted hello lists this node.
    listed: bool,
    /// The embedder was told the link is up (and not told it is down since).
    told: bool,
    /// Silent for the hold time: kept only until its `NeighbourDown` is handed out.
    gone: bool,
}

impl Entry {
    fn fresh(id: NodeId, seq: u64, now: u64) -> Self {
        Entry {
            id,
            last_seq: seq,
            heard_at: now,
            streak: 1,
            heard: false,
            listed: false,
            told: false,
            gone: false,
        }
    }

    fn up(&self) -> bool {
        !self.gone && self.heard && self.listed
    }
}

/// A small deterministic pseudo-random generator for the jitter: xorshift64* (Vigna 2016),
/// seeded through SplitMix64. Not for anything that needs unpredictability.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Jitter(u64);

impl Jitter {
    fn new(seed: u64, id: NodeId) -> Self {
        // SplitMix64 of the seed and the id, so nodes with one seed draw differently.
        let mut z =
            (seed ^ (u64::from(id.0) << 32 | u64::from(id.0))).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // xorshift's state must not be 0.
        Jitter(if z == 0 { 0x9e37_79b9_7f4a_7c15 } else { z })
    }

    /// A draw in `0..=max` (the modulo's bias, below `max / 2^64`, does not matter here).
    fn draw(&mut self, max: u64) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        let out = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
        match max.checked_add(1) {
            Some(n) => out % n,
            None => out,
        }
    }
}

/// One node's neighbour discovery (see the [module docs](self)).
///
/// Every method is non-blocking, never panics and, after [`Discovery::new`], never allocates.
/// Bad hellos are counted ([`Discovery::stats`]) and dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    id: NodeId,
    settings: Settings,
    /// Sorted by id, at most `max_neighbours` (capacity reserved at the start).
    table: Vec<Entry>,
    /// The next hello's number.
    seq: u64,
    /// When the next hello is due.
    next_hello: u64,
    /// A hello is due and not yet handed out.
    due: bool,
    jitter: Jitter,
    now: u64,
    stats: Stats,
}

impl Discovery {
    /// The discovery of node `id`, started at `now`, hearing nobody yet. Its first hello is
    /// due after a pseudo-random wait in `0..=jitter`. `Err` if the settings are invalid
    /// ([`Settings::validate`]).
    pub fn new(id: NodeId, settings: Settings, now: u64) -> Result<Self, DiscoveryError> {
        settings.validate()?;
        let mut jitter = Jitter::new(settings.seed, id);
        let first = now.saturating_add(jitter.draw(settings.jitter));
        Ok(Discovery {
            id,
            settings,
            table: Vec::with_capacity(settings.max_neighbours as usize),
            seq: 0,
            next_hello: first,
            due: false,
            jitter,
            now,
            stats: Stats::default(),
        })
    }

    /// This node.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The settings.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// What discovery counted so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    fn advance(&mut self, now: u64) {
        self.now = self.now.max(now);
    }

    fn find(&self, peer: NodeId) -> Result<usize, usize> {
        self.table.binary_search_by_key(&peer, |e| e.id)
    }

    /// A hello from a peer arrived at `now` (decoded by the embedder, or built by a test).
    /// Stale, own and refused hellos are counted and dropped.
    pub fn handle_hello(&mut self, now: u64, hello: &Hello) {
        self.advance(now);
        let now = self.now;
        let (from, seq) = (hello.sender(), hello.seq());
        if from == self.id {
            self.stats.own += 1;
            return;
        }
        let i = match self.find(from) {
            Ok(i) => {
                let e = &mut self.table[i];
                if e.gone {
                    *e = Entry {
                        told: e.told,
                        ..Entry::fresh(from, seq, now)
                    };
                } else if seq > e.last_seq {
                    e.streak = if seq == e.last_seq + 1 {
                        e.streak.saturating_add(1)
                    } else {
                        1
                    };
                } else if e.last_seq - seq >= RESTART_GAP {
                    self.stats.restarts += 1;
                    *e = Entry {
                        told: e.told,
                        ..Entry::fresh(from, seq, now)
                    };
                } else {
                    self.stats.stale += 1;
                    return;
                }
                i
            }
            Err(at) => match self.admit(at) {
                Some(at) => {
                    self.table.insert(at, Entry::fresh(from, seq, now));
                    at
                }
                None => {
                    self.stats.refused += 1;
                    return;
                }
            },
        };
        self.stats.hellos_accepted += 1;
        let up_after = self.settings.up_after;
        let e = &mut self.table[i];
        e.last_seq = seq;
        e.heard_at = now;
        e.heard |= e.streak >= up_after;
        e.listed = hello.lists(self.id);
    }

    /// Room for a new entry that would go at `at`: `Some(at)` (moved if an entry before it
    /// was evicted), or `None` if the table is full of entries that cannot be evicted.
    fn admit(&mut self, at: usize) -> Option<usize> {
        if self.table.len() < self.settings.max_neighbours as usize {
            return Some(at);
        }
        let victim = self
            .table
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.heard && !e.told)
            .min_by_key(|(_, e)| e.heard_at)
            .map(|(i, _)| i)?;
        self.table.remove(victim);
        self.stats.evicted += 1;
        Some(if victim < at { at - 1 } else { at })
    }

    /// Feed the bytes of a datagram that should hold a hello (feature `codec`): decoded with
    /// [`Hello::decode`] and handled as [`Discovery::handle_hello`] does, or counted in
    /// [`Stats::garbage`] and dropped. The error says why, for logs; nothing else needs it.
    #[cfg(feature = "codec")]
    pub fn handle_datagram(
        &mut self,
        now: u64,
        bytes: &[u8],
    ) -> Result<(), crate::codec::DecodeError> {
        match Hello::decode(bytes) {
            Ok(hello) => {
                self.handle_hello(now, &hello);
                Ok(())
            }
            Err(e) => {
                self.advance(now);
                self.stats.garbage += 1;
                Err(e)
            }
        }
    }

    /// Time has come to `now`: peers silent for longer than the hold time are lost, and the
    /// hello due is made ready for [`Discovery::poll_transmit`] (its list is made then).
    pub fn handle_timeout(&mut self, now: u64) {
        self.advance(now);
        let now = self.now;
        let hold = self.settings.hold_time();
        for e in &mut self.table {
            if !e.gone && now > e.heard_at.saturating_add(hold) {
                e.gone = true;
                e.heard = false;
                e.listed = false;
                self.stats.expired += 1;
            }
        }
        // A lost peer the embedder was never told of is forgotten at once; the others once
        // their `NeighbourDown` is handed out.
        self.table.retain(|e| !e.gone || e.told);
        if now >= self.next_hello {
            self.due = true;
            let wait = self.settings.hello_interval - self.jitter.draw(self.settings.jitter);
            self.next_hello = now.saturating_add(wait);
        }
    }

    /// When to call [`Discovery::handle_timeout`] next: the next hello, or the first moment a
    /// peer has been silent for longer than the hold time (one time unit after it ran out),
    /// whichever is first (a time in the past means now). There is always one: hellos never
    /// stop.
    pub fn poll_timeout(&self) -> u64 {
        let hold = self.settings.hold_time();
        self.table
            .iter()
            .filter(|e| !e.gone)
            .map(|e| e.heard_at.saturating_add(hold).saturating_add(1))
            .fold(self.next_hello, u64::min)
    }

    /// The hello to broadcast, if one is due: it lists every peer this node hears, in id
    /// order. Handed out once; a due hello not taken before the next is due is sent once.
    pub fn poll_transmit(&mut self) -> Option<Hello> {
        if !self.due {
            return None;
        }
        self.due = false;
        let hello = self.hello(self.seq);
        self.seq = self.seq.saturating_add(1);
        self.stats.hellos_sent += 1;
        Some(hello)
    }

    /// The hello this node would send now, numbered `seq`.
    fn hello(&self, seq: u64) -> Hello {
        let mut hello = Hello::new(self.id, seq, &[]).unwrap_or_else(|| unreachable!());
        for e in self.table.iter().filter(|e| e.heard) {
            hello.push(e.id);
        }
        hello
    }

    /// The next change of a link's state the embedder was not told of, in id order (see the
    /// [module docs](self#inputs-and-outputs)): feed it to the session
    /// ([`DiscoveryEvent::apply`]).
    pub fn poll_event(&mut self) -> Option<DiscoveryEvent> {
        let i = self.table.iter().position(|e| e.up() != e.told)?;
        let e = &mut self.table[i];
        e.told = e.up();
        let event = if e.told {
            self.stats.neighbours_up += 1;
            DiscoveryEvent::NeighbourUp(e.id)
        } else {
            self.stats.neighbours_down += 1;
            DiscoveryEvent::NeighbourDown(e.id)
        };
        if self.table[i].gone {
            self.table.remove(i);
        }
        Some(event)
    }

    /// Whether the link to `peer` is up, as this end sees it now (this node hears the peer
    /// and the peer's last hello lists it). The events tell each change of it.
    pub fn is_up(&self, peer: NodeId) -> bool {
        self.find(peer).is_ok_and(|i| self.table[i].up())
    }

    /// Whether this node hears `peer` (and lists it in its hellos).
    pub fn hears(&self, peer: NodeId) -> bool {
        self.find(peer)
            .is_ok_and(|i| self.table[i].heard && !self.table[i].gone)
    }

    /// The peers whose link is up, in id order.
    pub fn neighbours(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.table.iter().filter(|e| e.up()).map(|e| e.id)
    }

    /// How many peers the table holds (heard, being heard, or lost with their
    /// `NeighbourDown` not handed out yet); at most
    /// [`max_neighbours`](Settings::max_neighbours).
    pub fn table_len(&self) -> usize {
        self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_is_deterministic_in_range_and_differs_by_node() {
        let draws = |seed, id| {
            let mut j = Jitter::new(seed, NodeId(id));
            (0..200).map(|_| j.draw(25)).collect::<Vec<_>>()
        };
        assert_eq!(draws(7, 1), draws(7, 1));
        assert_ne!(draws(7, 1), draws(7, 2));
        assert_ne!(draws(7, 1), draws(8, 1));
        let d = draws(0, 0);
        assert!(d.iter().all(|&x| x <= 25));
        // Every value of the range comes up.
        assert!((0..=25).all(|v| d.contains(&v)), "{d:?}");
        assert_eq!(Jitter::new(1, NodeId(1)).draw(0), 0);
        let _ = Jitter::new(3, NodeId(3)).draw(u64::MAX);
    }

    #[test]
    fn hellos_are_spaced_by_the_interval_minus_the_jitter() {
        let settings = Settings::new(100).with_seed(42);
        let mut d = Discovery::new(NodeId(3), settings, 1000).unwrap();
        let first = d.poll_timeout();
        assert!((1000..=1025).contains(&first));
        let mut at = Vec::new();
        let mut now = first;
        for _ in 0..50 {
            d.handle_timeout(now);
            let hello = d.poll_transmit().expect("due");
            assert_eq!(hello.seq(), at.len() as u64);
            assert!(d.poll_transmit().is_none(), "handed out once");
            at.push(now);
            now = d.poll_timeout();
        }
        assert!(at.windows(2).all(|w| (75..=100).contains(&(w[1] - w[0]))));
        assert!(
            at.windows(2).any(|w| w[1] - w[0] != at[1] - at[0]),
            "jittered"
        );
    }

    fn hello(from: u32, seq: u64, heard: &[u32]) -> Hello {
        let ids: Vec<NodeId> = heard.iter().map(|&i| NodeId(i)).collect();
        Hello::new(NodeId(from), seq, &ids).unwrap()
    }

    #[test]
    fn up_needs_the_streak_and_the_listing_and_stale_hellos_change_nothing() {
        let me = NodeId(0);
        let mut d = Discovery::new(me, Settings::new(100).with_up_after(3), 0).unwrap();
        d.handle_hello(1, &hello(5, 10, &[0]));
        d.handle_hello(2, &hello(5, 11, &[0]));
        assert!(!d.hears(NodeId(5)) && !d.is_up(NodeId(5)));
        // A gap starts the count over.
        d.handle_hello(3, &hello(5, 13, &[0]));
        d.handle_hello(4, &hello(5, 14, &[0]));
        assert!(!d.hears(NodeId(5)));
        let before = d.clone();
        d.handle_hello(5, &hello(5, 12, &[0]));
        d.handle_hello(5, &hello(5, 14, &[0]));
        assert_eq!(d.stats().stale, 2);
        assert_eq!(d.table, before.table);
        d.handle_hello(6, &hello(5, 15, &[1, 2]));
        assert!(
            d.hears(NodeId(5)) && !d.is_up(NodeId(5)),
            "heard, not listed"
        );
        assert_eq!(d.poll_event(), None);
        d.handle_hello(7, &hello(5, 16, &[0, 1]));
        assert_eq!(d.poll_event(), Some(DiscoveryEvent::NeighbourUp(NodeId(5))));
        assert_eq!(d.poll_event(), None);
        // Its own id as sender.
        d.handle_hello(8, &hello(0, 99, &[0]));
        assert_eq!(d.stats().own, 1);
    }

    #[test]
    fn hellos_list_the_peers_heard_in_id_order() {
        let mut d = Discovery::new(NodeId(0), Settings::new(100).with_up_after(1), 0).unwrap();
        for id in [9, 2, 7] {
            d.handle_hello(0, &hello(id, 0, &[]));
        }
        d.handle_timeout(d.poll_timeout());
        let h = d.poll_transmit().unwrap();
        assert_eq!(h.heard(), [NodeId(2), NodeId(7), NodeId(9)]);
        assert_eq!(h.sender(), NodeId(0));
    }

    #[cfg(feature = "codec")]
    #[test]
    fn the_hello_frame_is_pinned_and_round_trips() {
        use crate::codec::{frame_check, DecodeError};
        let h = hello(1, 2, &[3, 4]);
        let mut buf = [0; MAX_HELLO_FRAME];
        let frame = h.encode_into(&mut buf).to_vec();
        assert_eq!(frame[..6], [0x81, 1, 2, 2, 3, 4]);
        assert_eq!(frame[6..], frame_check(&frame[..6]));
        assert_eq!(Hello::decode(&frame), Ok(h));
        let ids: Vec<u32> = (0..MAX_HEARD as u32).map(|i| u32::MAX - 63 + i).collect();
        let big = hello(u32::MAX, u64::MAX, &ids);
        let frame = big.encode_into(&mut buf).to_vec();
        assert_eq!(frame.len(), MAX_HELLO_FRAME);
        assert_eq!(Hello::decode(&frame), Ok(big));
        assert_eq!(Hello::decode(&frame[..4]), Err(DecodeError::Truncated));
        let unsorted = hello(1, 2, &[4, 3]);
        let frame = unsorted.encode_into(&mut buf).to_vec();
        assert_eq!(Hello::decode(&frame), Err(DecodeError::Malformed));
    }
}
