//! A token network whose nodes talk through link [`Session`]s over an unreliable datagram
//! network: datagrams are lost, duplicated, delayed and reordered at chosen rates, links and
//! whole nodes fall silent for a while and come back, and the application closes links. The
//! cores ([`manet_mutex::reverse_link`], [`manet_mutex::prioritized`]) see only what their sessions tell
//! them.
//!
//! Every message a core sends is tagged with a unique id ([`Tagged`]), so the harness follows
//! each one: sent, then delivered to the peer's core (at most once), or reported lost by its
//! sender's session ([`SessionEvent::Lost`]). It checks, after every event:
//! - the core algorithm's safety invariants, counting as in flight every message not yet
//!   delivered, whether it sits in a session buffer, in the air, or was reported lost (a
//!   lost token is still counted, as a ghost, so the token count stays exact: a duplicated
//!   token would show as one too many);
//! - no message is delivered twice, none is delivered that was never sent, and each directed
//!   link delivers in the order its messages were sent (FIFO);
//! - after every input, every message not delivered and not reported lost is still in its
//!   sender's session (nothing disappears unreported).
//!
//! At the end ([`SessionNet::heal_and_drain`]) every silence ends, the application wants
//! every link again, and the run must serve every waiting node, unless a precious message
//! (a token, released resources) really was lost: reported and never delivered. KRL and the
//! prioritized algorithm must then go quiet, unless no token is left at all: without one,
//! partial reversal never ends (`docs/ALGORITHMS.md`, V13).
//!
//! Stray frames ([`SessionNet::stray`]) stand for garbage from a neighbour's address that
//! decodes, or for what a restarted neighbour would send: they name a newer epoch of the
//! neighbour than the receiving session's incarnation with it (issue 21, finding 5), and must
//! end nothing: a forged message delivered is a violation like any message never sent.
//!
//! Time is discrete; every datagram takes 1 to `max_delay` time units, so reordering comes
//! from the spread of delays. Randomness comes from a seed, so a run is a pure function of
//! its input.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::driver::{amend, rule};
use crate::TokenHarness;
use manet_mutex::fence::Fences;
use manet_mutex::session::{self, Datagram, Epochs, Frame, Session, SessionEvent, Transmit};
use manet_mutex::{Action, CsRequest, Error, Event, NodeId, Status, Violation};
use manet_mutex_sim::{busy, Channels, Graph, Params};

/// A core message with a unique id, so the harness can follow it through the sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tagged<M> {
    /// Unique in the run.
    pub uid: u64,
    /// The core's message.
    pub msg: M,
}

/// How the network treats datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weather {
    /// Datagrams lost, per mille.
    pub loss: u32,
    /// Datagrams delivered twice (each copy with its own delay), per mille.
    pub duplicate: u32,
    /// Each datagram takes `1..=max_delay` time units (at least 1): more than 1 reorders.
    pub max_delay: u64,
}

impl Weather {
    /// Nothing lost, duplicated or reordered: every datagram takes one time unit.
    pub const CALM: Weather = Weather {
        loss: 0,
        duplicate: 0,
        max_delay: 1,
    };
}

/// What a run exercised and how it ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Report {
    /// Datagrams the sessions sent.
    pub datagrams: u64,
    /// Of those, dropped: lost at random, over a silent link, or to a non-neighbour.
    pub dropped: u64,
    /// Of those, delivered twice.
    pub duplicated: u64,
    /// Entries into the critical section.
    pub entries: u64,
    /// Links and nodes made silent for a while.
    pub flaps: u64,
    /// Links closed by the application.
    pub closes: u64,
    /// `Lost` reports, and the messages they named.
    pub loss_reports: u64,
    /// Messages named in `Lost` reports.
    pub lost_messages: u64,
    /// Precious messages (tokens, resources) reported lost and never delivered.
    pub precious_destroyed: u64,
    /// Messages reported lost that were delivered after all (an acknowledgement lost, or a
    /// delayed datagram), or before the report.
    pub false_alarms: u64,
    /// Stray frames injected ([`SessionNet::stray`]).
    pub strays: u64,
    /// The sessions' counters, summed over the nodes.
    pub sessions: session::Stats,
}

/// A network of token cores behind link sessions; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct SessionNet<P: TokenHarness> {
    /// The cores, node `i` at index `i`.
    pub nodes: Vec<P>,
    /// Their sessions.
    pub sessions: Vec<Session<Tagged<P::Message>>>,
    /// The physical links: datagrams travel only along these.
    pub graph: Graph,
    /// The current time.
    pub now: u64,
    /// How the network treats datagrams.
    pub weather: Weather,
    /// How long a node stays in the critical section.
    pub cs_time: u64,
    /// What happened so far.
    pub report: Report,
    /// Datagrams in the air, by arrival time (and launch order), with their destination.
    air: BTreeMap<(u64, u64), InAir<P::Message>>,
    launched: u64,
    /// Directed links silent until the given time.
    silent: BTreeMap<(NodeId, NodeId), u64>,
    releases: BTreeSet<(u64, NodeId)>,
    rng: ChaCha8Rng,
    next_uid: u64,
    flying: BTreeMap<u64, (NodeId, NodeId, P::Message)>,
    ghosts: BTreeMap<u64, (NodeId, NodeId, P::Message)>,
    delivered: BTreeSet<u64>,
    /// Per directed link, the id of the last message delivered: ids grow in sending order,
    /// so FIFO delivery means they grow here too.
    last_delivered: BTreeMap<(NodeId, NodeId), u64>,
    /// Whether the warm-up is over (until then the cores, configured with every link, are not
    /// told the sessions' `LinkUp`s).
    warm: bool,
    /// The protected resource: per lane, every entry's fence must be above the last.
    fences: Fences,
    trace: Option<Vec<String>>,
}

/// A datagram in the air and its destination.
type InAir<M> = (NodeId, Datagram<Tagged<M>>);

fn precious<P: TokenHarness>(m: &Tagged<P::Message>) -> bool {
    P::precious(&m.msg)
}

impl<P: TokenHarness> SessionNet<P> {
    /// The network `params` describes on `graph`, with sessions of `settings` and datagram
    /// randomness from `seed`. The cores start with every link of `graph`; the sessions form
    /// them in a calm warm-up before the cores hear anything, then `weather` sets in.
    ///
    /// A `configuration` violation if the cores or the sessions cannot be built (at the node
    /// whose configuration is invalid, when the error names one), `links-formed` if the
    /// warm-up does not form every link.
    pub fn new(
        graph: Graph,
        params: &Params<P::Settings>,
        settings: session::Settings,
        weather: Weather,
        seed: u64,
    ) -> Result<Self, Violation> {
        let nodes = P::build(&graph, params).map_err(|e| {
            let node = match e {
                Error::InvalidConfig { node, .. } => Some(node),
                _ => None,
            };
            Violation::new(rule::CONFIGURATION, node, format!("cannot build: {e}"))
        })?;
        let sessions = (0..nodes.len() as u32)
            .map(|i| {
                Session::new(NodeId(i), settings)
                    .map(|s| s.with_precious(precious::<P>))
                    .map_err(|e| {
                        let detail = format!("cannot build the sessions: {e}");
                        Violation::new(rule::CONFIGURATION, None, detail)
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut net = SessionNet {
            nodes,
            sessions,
            graph,
            now: 0,
            weather: Weather::CALM,
            cs_time: 2,
            report: Report::default(),
            air: BTreeMap::new(),
            launched: 0,
            silent: BTreeMap::new(),
            releases: BTreeSet::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            next_uid: 0,
            flying: BTreeMap::new(),
            ghosts: BTreeMap::new(),
            delivered: BTreeSet::new(),
            last_delivered: BTreeMap::new(),
            warm: false,
            fences: Fences::new(),
            trace: std::env::var_os("MANET_MUTEX_TRACE").map(|_| Vec::new()),
        };
        net.connect_all();
        let limit = 20 * settings.retransmit_after;
        net.run_until(limit);
        if !net.all_linked() {
            let detail = format!("the warm-up did not form every link by {limit}");
            return Err(Violation::new(rule::LINKS_FORMED, None, detail));
        }
        net.warm = true;
        net.weather = weather;
        Ok(net)
    }

    /// The application wants every link of the graph, at both ends.
    pub fn connect_all(&mut self) {
        for (a, b) in self.graph.edges().to_vec() {
            for (x, y) in [(a, b), (b, a)] {
                if let Err(e) = self.sessions[x.index()].connect(y, self.now) {
                    self.violation(format!("{x:?} cannot connect to {y:?}: {e}"));
                }
                self.pump(x);
            }
        }
    }

    /// Whether every link of the graph is up at both ends, as the cores were told.
    pub fn all_linked(&self) -> bool {
        self.graph.edges().iter().all(|&(a, b)| {
            self.sessions[a.index()].is_linked(b) && self.sessions[b.index()].is_linked(a)
        })
    }

    fn note(&mut self, line: impl FnOnce() -> String) {
        if let Some(trace) = &mut self.trace {
            trace.push(line());
        }
    }

    /// The trace, if one was kept (`MANET_MUTEX_TRACE=1`), for a failure message.
    pub fn trace_text(&self) -> String {
        match &self.trace {
            Some(trace) => format!(
                "{}\nin flight: {:?}\nghosts: {:?}\nnodes: {:#?}",
                trace.join("\n"),
                self.flying,
                self.ghosts,
                self.nodes
            ),
            None => "(set MANET_MUTEX_TRACE=1 for the trace)".into(),
        }
    }

    fn violation(&self, what: String) -> ! {
        panic!("at {}: {what}\n{}", self.now, self.trace_text())
    }

    /// `node` asks for the critical section, if it is in its remainder section.
    pub fn request(&mut self, node: NodeId, request: CsRequest) {
        if self.nodes[node.index()].status() == Status::Remainder {
            self.apply(node, Event::Request(request));
            self.pump(node);
        }
    }

    /// `node` withdraws its request ([`Event::Cancel`]), if it is waiting.
    pub fn cancel(&mut self, node: NodeId) {
        if self.nodes[node.index()].status() == Status::Waiting {
            self.apply(node, Event::Cancel);
            self.pump(node);
        }
    }

    /// The link `a`–`b` falls silent until `now + ticks`: in both directions, or only from
    /// `a` to `b` if `one_way`.
    pub fn flap(&mut self, a: NodeId, b: NodeId, ticks: u64, one_way: bool) {
        let until = self.now.saturating_add(ticks);
        self.silent.insert((a, b), until);
        if !one_way {
            self.silent.insert((b, a), until);
        }
        self.report.flaps += 1;
        self.note(|| format!("{a:?}-{b:?} silent until {until} (one way: {one_way})"));
    }

    /// Node `a` falls silent (every link, both ways) until `now + ticks`.
    pub fn silence(&mut self, a: NodeId, ticks: u64) {
        let until = self.now.saturating_add(ticks);
        for b in self.graph.neighbors(a).collect::<Vec<_>>() {
            self.silent.insert((a, b), until);
            self.silent.insert((b, a), until);
        }
        self.report.flaps += 1;
        self.note(|| format!("{a:?} silent until {until}"));
    }

    /// The application at `a` closes its link to `b` (the peer, still wanting it, may form it
    /// again).
    pub fn close(&mut self, a: NodeId, b: NodeId) {
        self.sessions[a.index()].close(b, self.now);
        self.report.closes += 1;
        self.note(|| format!("{a:?} closes its link to {b:?}"));
        self.pump(a);
    }

    /// A stray frame arrives at `at` from `from`'s address, naming a newer epoch of `from` than
    /// `at`'s incarnation with it (any above, by `sender`), and as receiver `at`'s epoch, the
    /// one before, none or any (by `receiver`). `kind` picks `Hello`, `Ack`, `Close`,
    /// `CloseAck`, or `Data` carrying a copy of a message in flight under an id never sent
    /// (a `Hello` if none is in flight); the rest of it numbers the frame.
    pub fn stray(&mut self, at: NodeId, from: NodeId, kind: u8, sender: u64, receiver: u64) {
        let e = self.sessions[at.index()]
            .link(from)
            .map_or(Epochs::default(), |l| l.epochs);
        let epochs = Epochs {
            sender: e.receiver + 1 + sender % (u64::MAX - e.receiver),
            receiver: match receiver % 4 {
                0 => 0,
                1 => e.sender,
                2 => e.sender.saturating_sub(1),
                _ => receiver,
            },
        };
        let number = u64::from(kind / 5);
        let forged = |msg: &P::Message| Tagged {
            uid: u64::MAX - self.report.strays,
            msg: msg.clone(),
        };
        let frame = match (kind % 5, self.flying.values().next()) {
            (1, _) => Frame::Ack {
                epochs,
                seq: number,
            },
            (2, _) => Frame::Close {
                epochs,
                last: number,
            },
            (3, _) => Frame::CloseAck { epochs },
            (4, Some((_, _, msg))) => Frame::Data {
                epochs,
                seq: number,
                msg: forged(msg),
            },
            _ => Frame::Hello { epochs },
        };
        self.report.strays += 1;
        self.note(|| format!("{at:?} <= stray from {from:?}: {frame:?}"));
        self.sessions[at.index()].handle_datagram(Datagram { from, frame }, self.now);
        self.pump(at);
    }

    /// Feed `event` to core `at` and carry out its actions (sends go to its session).
    fn apply(&mut self, at: NodeId, event: Event<P::Message>) {
        let outcome =
            crate::driver::traced_handle(&mut self.nodes[at.index()], at, event, &mut self.trace);
        let actions = match outcome {
            Ok(actions) => actions,
            Err(e) => self.violation(format!("{at:?} rejected a valid event: {e}")),
        };
        for action in actions {
            match action {
                Action::Send { to, msg } => {
                    let uid = self.next_uid;
                    self.next_uid += 1;
                    self.flying.insert(uid, (at, to, msg.clone()));
                    let sent = self.sessions[at.index()].send(to, Tagged { uid, msg }, self.now);
                    if let Err(e) = sent {
                        self.violation(format!("{at:?}'s session refused its core's send: {e}"));
                    }
                }
                Action::EnterCritical { fence, .. } => {
                    if let Err(highest) = self.fences.admit(fence) {
                        self.violation(format!(
                            "{at:?} entered with {fence:?}, not above {highest}"
                        ));
                    }
                    self.report.entries += 1;
                    self.releases.insert((self.now + self.cs_time, at));
                }
                Action::SetTimer { .. } | Action::CancelTimer { .. } => {
                    self.violation(format!("{at:?} set a timer: not supported here"))
                }
                _ => {}
            }
        }
        if let Err(e) = self.check_safety() {
            self.violation(format!("invariant violated: {e}"));
        }
    }

    /// The core algorithm's safety invariants, with every message not delivered yet in
    /// flight (those reported lost included).
    pub fn check_safety(&self) -> Result<(), manet_mutex::Violation> {
        let mut channels = Channels::default();
        for (from, to, msg) in self.flying.values().chain(self.ghosts.values()) {
            channels.push(*from, *to, msg.clone());
        }
        P::check(&self.nodes, &channels, 0)
    }

    /// Every message sent, not delivered and not reported lost is still in its sender's
    /// session; every message a session holds was sent and is not reported lost. A
    /// `message-accounting` violation otherwise (at the node whose session should hold the
    /// message, or holds it).
    pub fn check_accounting(&self) -> Result<(), Violation> {
        let broken = |node, detail| Err(Violation::new(rule::MESSAGE_ACCOUNTING, node, detail));
        let mut held = BTreeMap::new();
        for (i, s) in self.sessions.iter().enumerate() {
            for (to, m) in s.unconfirmed() {
                if held.insert(m.uid, (NodeId(i as u32), to)).is_some() {
                    return broken(None, format!("message {} held twice", m.uid));
                }
            }
        }
        for (uid, (from, to, _)) in &self.flying {
            if held.get(uid) != Some(&(*from, *to)) {
                return broken(
                    Some(*from),
                    format!(
                        "message {uid} ({from:?} -> {to:?}) vanished: not delivered, not held by {from:?}'s session, not reported lost"
                    ),
                );
            }
        }
        if let Some((uid, (holder, _))) = held.iter().find(|(u, _)| self.ghosts.contains_key(u)) {
            return broken(
                Some(*holder),
                format!("message {uid} reported lost but still held"),
            );
        }
        Ok(())
    }

    /// Hand node `i`'s session events to its core, then its frames to the network.
    fn pump(&mut self, at: NodeId) {
        let i = at.index();
        while let Some(event) = self.sessions[i].poll_event() {
            match event {
                SessionEvent::Core(Event::Receive { from, msg }) => {
                    let Tagged { uid, msg } = msg;
                    if !self.delivered.insert(uid) {
                        self.violation(format!(
                            "message {uid} delivered twice ({from:?} -> {at:?})"
                        ));
                    }
                    if let Some(last) = self.last_delivered.insert((from, at), uid) {
                        if last > uid {
                            self.violation(format!(
                                "message {uid} delivered after {last} ({from:?} -> {at:?}): not FIFO"
                            ));
                        }
                    }
                    match (self.flying.remove(&uid), self.ghosts.remove(&uid)) {
                        (Some((f, t, _)), None) if (f, t) == (from, at) => {}
                        (None, Some((f, t, _))) if (f, t) == (from, at) => {
                            self.report.false_alarms += 1;
                        }
                        other => self.violation(format!(
                            "message {uid} delivered from {from:?} to {at:?} but sent as {other:?}"
                        )),
                    }
                    self.apply(at, Event::Receive { from, msg });
                }
                SessionEvent::Core(Event::LinkUp(peer)) => {
                    if self.warm {
                        self.apply(at, Event::LinkUp(peer));
                    }
                }
                SessionEvent::Core(Event::LinkDown(peer)) => self.apply(at, Event::LinkDown(peer)),
                SessionEvent::Core(event) => {
                    self.violation(format!("{at:?}'s session handed out {event:?}"))
                }
                SessionEvent::Lost { peer, msgs, .. } => {
                    self.report.loss_reports += 1;
                    self.note(|| format!("{at:?} reports lost to {peer:?}: {msgs:?}"));
                    for Tagged { uid, .. } in msgs {
                        self.report.lost_messages += 1;
                        if let Some(entry) = self.flying.remove(&uid) {
                            if (entry.0, entry.1) != (at, peer) {
                                self.violation(format!("message {uid} reported by the wrong link"));
                            }
                            self.ghosts.insert(uid, entry);
                        } else if self.delivered.contains(&uid) {
                            self.report.false_alarms += 1;
                        } else {
                            self.violation(format!("message {uid} reported lost twice"));
                        }
                    }
                }
                other => self.violation(format!("{at:?}'s session handed out {other:?}")),
            }
        }
        if let Err(e) = self.check_accounting() {
            self.violation(e.to_string());
        }
        while let Some(transmit) = self.sessions[i].poll_transmit() {
            self.launch(at, transmit);
        }
    }

    fn launch(&mut self, from: NodeId, Transmit { to, frame }: Transmit<Tagged<P::Message>>) {
        self.report.datagrams += 1;
        let silent = self
            .silent
            .get(&(from, to))
            .is_some_and(|&until| self.now < until);
        let w = self.weather;
        if !self.graph.has(from, to) || silent || self.rng.random_range(0..1000) < w.loss {
            self.report.dropped += 1;
            return;
        }
        let copies = if self.rng.random_range(0..1000) < w.duplicate {
            self.report.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let at = self.now + self.rng.random_range(1..=w.max_delay.max(1));
            self.launched += 1;
            let datagram = Datagram {
                from,
                frame: frame.clone(),
            };
            self.air.insert((at, self.launched), (to, datagram));
        }
    }

    fn next_time(&self) -> Option<u64> {
        let air = self.air.keys().next().map(|&(at, _)| at);
        let release = self.releases.iter().next().map(|&(at, _)| at);
        let timer = self.sessions.iter().filter_map(Session::poll_timeout).min();
        [air, release, timer].into_iter().flatten().min()
    }

    /// Run the network until `end`: deliver datagrams, release the critical section after
    /// `cs_time`, fire the sessions' timers.
    pub fn run_until(&mut self, end: u64) {
        let mut spins = 0u32;
        while let Some(at) = self.next_time().filter(|&at| at <= end) {
            let at = at.max(self.now);
            spins = if at == self.now { spins + 1 } else { 0 };
            if spins > 100_000 {
                self.violation("the network does not advance: a timer that never moves on".into());
            }
            self.now = at;
            while let Some((&(t, k), _)) = self.air.first_key_value() {
                if t > at {
                    break;
                }
                let (to, datagram) = self.air.remove(&(t, k)).expect("just seen");
                self.note(|| format!("{to:?} <= {datagram:?}"));
                self.sessions[to.index()].handle_datagram(datagram, at);
                self.pump(to);
            }
            while let Some(&(t, node)) = self.releases.first() {
                if t > at {
                    break;
                }
                self.releases.remove(&(t, node));
                if self.nodes[node.index()].status() == Status::Critical {
                    self.apply(node, Event::Release);
                    self.pump(node);
                }
            }
            for i in 0..self.sessions.len() {
                if self.sessions[i].poll_timeout().is_some_and(|t| t <= at) {
                    self.sessions[i].handle_timeout(at);
                    self.pump(NodeId(i as u32));
                }
            }
        }
        self.now = self.now.max(end);
    }

    /// Whether a precious message was lost for good (reported, never delivered).
    pub fn destroyed(&self) -> bool {
        self.ghosts.values().any(|(_, _, m)| P::precious(m))
    }

    /// Whether a token is left: held by a node, or sent and neither delivered nor reported
    /// lost.
    pub fn token_left(&self) -> bool {
        self.nodes.iter().any(P::holds_token)
            || self.flying.values().any(|(_, _, m)| P::is_token(m))
    }

    /// End every silence, want every link again, and run until every waiting node has been
    /// served (within `budget` time units), every link is up again and, for an algorithm that
    /// goes quiet, nothing is in flight; then the drained-state checks. Starvation is an
    /// error unless a precious message was destroyed; not going quiet is an error unless no
    /// token is left ([`SessionNet::token_left`]). Returns the report.
    ///
    /// The error is the algorithm's violation (of `check_settled`), or the driver's own:
    /// `liveness` (starvation), `links-formed`, `quiescence` (not quiet); with the trace added
    /// to its detail, except for `links-formed`.
    pub fn heal_and_drain(&mut self, budget: u64) -> Result<Report, Violation> {
        self.silent.clear();
        self.connect_all();
        let deadline = self.now + budget;
        let step = self.sessions[0].settings().retransmit_after;
        while self.now < deadline && busy(&self.nodes).next().is_some() {
            self.run_until(self.now + step);
        }
        let stuck: Vec<_> = busy(&self.nodes).map(|n| (n.id(), n.status())).collect();
        if !stuck.is_empty() {
            if self.destroyed() {
                return Ok(self.finish_report());
            }
            let detail = format!(
                "starvation: {stuck:?} at {} with no precious message lost\n{}",
                self.now,
                self.trace_text()
            );
            return Err(Violation::new(rule::LIVENESS, None, detail));
        }
        // An algorithm whose drained state must be quiet (KRL, prioritized; not KRLF, whose
        // idle tokens keep moving) refuses a drained state with messages in flight. With no
        // token left (every one destroyed with a link) nothing can go quiet: every node
        // without a token that finds itself a sink raises its height, and partial reversal
        // with no destination never ends (docs/ALGORITHMS.md, V13).
        let goes_quiet = P::check_drained(&self.nodes, &Channels::default(), false).is_err();
        let quiet = |net: &Self| goes_quiet && net.token_left();
        while self.now < deadline
            && !(self.all_linked() && (!quiet(self) || self.flying.is_empty()))
        {
            self.run_until(self.now + step);
        }
        if !self.all_linked() {
            let detail = format!("links not formed again by {}", self.now);
            return Err(Violation::new(rule::LINKS_FORMED, None, detail));
        }
        if quiet(self) {
            if !self.flying.is_empty() {
                let detail = format!(
                    "still {} messages in flight at {}: the algorithm did not go quiet\n{}",
                    self.flying.len(),
                    self.now,
                    self.trace_text()
                );
                return Err(Violation::new(rule::QUIESCENCE, None, detail));
            }
            P::check_settled(&self.nodes)
                .map_err(|v| amend(v, format_args!("\n{}", self.trace_text())))?;
        }
        Ok(self.finish_report())
    }

    fn finish_report(&mut self) -> Report {
        let mut sum = session::Stats::default();
        for s in &self.sessions {
            let t = s.stats();
            sum.data_sent += t.data_sent;
            sum.retransmitted += t.retransmitted;
            sum.hellos += t.hellos;
            sum.delivered += t.delivered;
            sum.duplicates += t.duplicates;
            sum.out_of_window += t.out_of_window;
            sum.stale += t.stale;
            sum.newer_epoch += t.newer_epoch;
            sum.unknown_peer += t.unknown_peer;
            sum.refused += t.refused;
            sum.malformed += t.malformed;
            sum.links_up += t.links_up;
            sum.links_closed += t.links_closed;
            sum.links_abandoned += t.links_abandoned;
            sum.handshakes_expired += t.handshakes_expired;
            sum.lost += t.lost;
            sum.lost_precious += t.lost_precious;
        }
        self.report.sessions = sum;
        self.report.precious_destroyed = self
            .ghosts
            .values()
            .filter(|(_, _, m)| P::precious(m))
            .count() as u64;
        self.report
    }
}

/// One step of a session-network schedule. Node and link choices are taken modulo what
/// exists; `R` is what a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionOp<R> {
    /// A node asks for the critical section, if it is in its remainder section.
    Request(u8, R),
    /// Time passes: `1 + ticks` time units.
    Wait(u8),
    /// A link falls silent for `ticks` time units: both ways (`direction % 3 == 0`) or one way.
    Flap {
        /// Which link of the graph.
        link: u8,
        /// For how long.
        ticks: u16,
        /// Both ways, or which way.
        direction: u8,
    },
    /// A node falls silent for `ticks` time units.
    Silence {
        /// Which node.
        node: u8,
        /// For how long.
        ticks: u16,
    },
    /// The application at one end closes a link.
    Close {
        /// Which link of the graph.
        link: u8,
        /// At its lower end or its upper end.
        lower: bool,
    },
    /// A stray frame arrives at one end of a link from the other's address
    /// ([`SessionNet::stray`]).
    Stray {
        /// Which link of the graph.
        link: u8,
        /// At its lower end or its upper end.
        lower: bool,
        /// The frame's kind and number.
        kind: u8,
        /// Picks the sender's epoch (newer than the receiver knows).
        sender: u64,
        /// Picks the receiver's epoch.
        receiver: u64,
    },
}

/// A whole run: the weather, the randomness, and the schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSchedule<R> {
    /// How the network treats datagrams.
    pub weather: Weather,
    /// Seed of the network's randomness (loss, duplication, delays).
    pub seed: u64,
    /// The steps.
    pub ops: Vec<SessionOp<R>>,
}

/// Play `ops` on `net` (each step also lets one time unit pass), then
/// [`SessionNet::heal_and_drain`] with `budget`; panics on any violation. Returns the report.
pub fn run_session_schedule<P: TokenHarness, R: Copy + Debug>(
    mut net: SessionNet<P>,
    ops: &[SessionOp<R>],
    request: impl Fn(R) -> CsRequest,
    budget: u64,
) -> Report {
    let n = net.nodes.len() as u32;
    for &op in ops {
        let edges = net.graph.edges().to_vec();
        let link = |x: u8| edges[usize::from(x) % edges.len()];
        match op {
            SessionOp::Request(x, r) => net.request(NodeId(u32::from(x) % n), request(r)),
            SessionOp::Wait(t) => net.run_until(net.now + u64::from(t)),
            SessionOp::Flap {
                link: x,
                ticks,
                direction,
            } => {
                let (a, b) = link(x);
                let (a, b) = if direction % 3 == 2 { (b, a) } else { (a, b) };
                net.flap(a, b, u64::from(ticks), direction % 3 != 0);
            }
            SessionOp::Silence { node, ticks } => {
                net.silence(NodeId(u32::from(node) % n), u64::from(ticks))
            }
            SessionOp::Close { link: x, lower } => {
                let (a, b) = link(x);
                let (a, b) = if lower == (a < b) { (a, b) } else { (b, a) };
                net.close(a, b);
            }
            SessionOp::Stray {
                link: x,
                lower,
                kind,
                sender,
                receiver,
            } => {
                let (a, b) = link(x);
                let (a, b) = if lower == (a < b) { (a, b) } else { (b, a) };
                net.stray(a, b, kind, sender, receiver);
            }
        }
        net.run_until(net.now + 1);
    }
    match net.heal_and_drain(budget) {
        Ok(report) => report,
        Err(e) => panic!("{e}"),
    }
}
