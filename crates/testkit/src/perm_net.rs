//! A permission-based system (look-ahead, Ricart–Agrawala) driven one chosen step at a time,
//! shared by their models (`tests/models/look_ahead.rs`, `tests/models/ricart_agrawala.rs`) and
//! fuzz bodies. It follows their driving contract: any host can message any host; messages
//! in flight form a bag (any one may be delivered next), may be duplicated or lost, and are
//! recovered by the retransmission timers, which may fire at any time while armed; a host that
//! disconnected receives nothing until it reconnects (its messages wait in flight).
//!
//! Liveness is checked strictly: hosts that disconnected voluntarily stay away and every other
//! waiting host must still enter; then they come back and everyone must enter. The strict part
//! is waived only where no protocol can be live (V4 in `docs/ALGORITHMS.md`): after a
//! DISCONNECT was lost, or after two hosts were away at once (one left while it counted the
//! other as away, or without having seen the other's DISCONNECT). Retransmission is the
//! recovery from loss and nothing else: until a message is lost, the drain fires no timer.
//!
//! Any message in flight may be corrupted (each message at most once,
//! [`corrupt`](crate::corrupt)): one field rewritten, or its kind changed into another
//! kind its encoding decodes as, or 1 to 4 bits of its frame flipped. A corrupted message may be
//! dropped by its receiver, so it counts as a loss; a corrupted announcement is always dropped
//! (its check word no longer matches), so a corrupted DISCONNECT (a field, or its kind) waives
//! the strict drain like a lost one. A message changed *into* a DISCONNECT waives nothing: its
//! check word fails, and it must be dropped like any corrupted one. A flipped frame fails the
//! codec's frame check (it detects every error of up to 5 bits), and the receiver's codec drops
//! it: this driver treats it as a lost message ([`PermNet::lose`]; the permission algorithms
//! recover from loss by retransmission). (Were a flipped frame ever to decode, the message it
//! decodes to would replace the original, as a corruption.) A corrupted clock can also leave one
//! host's clock far enough ahead that a peer drops one of its messages (`SKEW_LIMIT`), and a
//! corrupted epoch can leave a host's record of a peer ahead of the peer's real epoch until a
//! REPLY corrects it. A DISCONNECT so dropped waives the strict drain too, and so does a record
//! ahead of a host that is away: its DISCONNECT looks stale, or it looks back (as a REQUEST of
//! its next epoch would make it), and no REPLY can correct that until it returns.
//!
//! Hosts fail too (the crate's failure model): a host may crash ([`PermNet::crash`]: it stops,
//! its timers die, messages to it are dropped, messages from it already in flight still
//! arrive), restart with empty state under a larger incarnation ([`PermNet::restart`]), be
//! suspected or trusted by a peer's failure detector ([`PermNet::suspect`], [`PermNet::trust`]),
//! or be cut off by a partition ([`PermNet::partition`]: messages between the two sides are
//! dropped, until [`PermNet::merge`]). With [`PermNet::detector`] the driver plays a *perfect*
//! failure detector ([`PermNet::detect`]): it suspects only crashed hosts and trusts every
//! live one, so safety is still checked strictly. Without one, the nodes exclude only by
//! their own timeouts, which this driver (it has no clock) fires at any time: that is a wrong
//! suspicion at will, so only each host's own invariants are checked then, and liveness
//! ([`PermNet::mutual_exclusion`]). Crashed hosts are left out of every check; a drain first
//! merges the partition and, where nothing would exclude a crashed host (neither a detector nor
//! the hosts' own timeouts), restarts every crashed host. A host restarted while another is
//! away has forgotten that DISCONNECT, and waits for the host away until it returns: that
//! waives strict liveness, like a lost DISCONNECT; so does a DISCONNECT of a restarted host
//! that reaches a peer which has not learnt its new incarnation yet (its seal does not match
//! the incarnation the peer knows: dropped, like a corrupted one).

use manet_mutex::fence::Fences;
use manet_mutex::look_ahead::{self, Mode};
use manet_mutex::permission::Recovery;
use manet_mutex::{
    ricart_agrawala, Action, Anomaly, CsRequest, Error, Event, Fence, NodeId, Protocol, Report,
    Status, TimerId, Violation,
};
use manet_mutex_sim::routed::{Host, HostParams};

use crate::corrupt::{Corruptible, Corruption, Counts, Outcome, Value};
use crate::driver::{amend, contract, fence_went_back, rule, Driver};

/// What the harness needs from an algorithm besides [`Host`].
pub trait PermissionHarness:
    Host + manet_mutex_sim::trace::Visible + PartialEq + Protocol<Message: Corruptible>
{
    /// Whether the host can receive messages now.
    fn reachable(&self) -> bool {
        true
    }

    /// Whether `msg` announces a voluntary disconnection.
    fn departure(_msg: &Self::Message) -> bool {
        false
    }

    /// The host's epoch (the clock of its last announcement).
    fn epoch(&self) -> u64 {
        0
    }

    /// The latest epoch of `peer` the host has seen.
    fn seen(&self, _peer: NodeId) -> u64 {
        0
    }

    /// Whether the host counts `peer` as disconnected.
    fn absent(&self, _peer: NodeId) -> bool {
        false
    }

    /// Whether the host excludes `peer`.
    fn excludes(&self, peer: NodeId) -> bool;

    /// What the network agreed on about failures.
    fn recovery(&self) -> Recovery;

    /// The host restarted with empty state as incarnation `incarnation`.
    fn restarted(&self, incarnation: u32) -> Self;

    /// The host's incarnation.
    fn incarnation(&self) -> u32;

    /// The highest incarnation of `peer` the host has seen.
    fn peer_incarnation(&self, peer: NodeId) -> u32;

    /// The host as built from its configuration, in majority mode (`with_majority(true)`).
    fn in_majority_mode(&self) -> Self;
}

impl PermissionHarness for ricart_agrawala::Node {
    fn excludes(&self, peer: NodeId) -> bool {
        self.is_excluded(peer)
    }

    fn recovery(&self) -> Recovery {
        self.settings().recovery
    }

    fn restarted(&self, incarnation: u32) -> Self {
        let config = ricart_agrawala::Config::new(self.id(), self.settings());
        ricart_agrawala::Node::new(config.with_incarnation(incarnation))
            .expect("the configuration it ran with")
    }

    fn incarnation(&self) -> u32 {
        ricart_agrawala::Node::incarnation(self)
    }

    fn peer_incarnation(&self, peer: NodeId) -> u32 {
        ricart_agrawala::Node::peer_incarnation(self, peer)
    }

    fn in_majority_mode(&self) -> Self {
        let settings = self.settings().with_majority(true);
        ricart_agrawala::Node::new(ricart_agrawala::Config::new(self.id(), settings))
            .expect("the configuration it ran with, in majority mode")
    }
}

impl PermissionHarness for look_ahead::Node {
    fn reachable(&self) -> bool {
        self.mode() != Mode::Disconnected
    }

    fn departure(msg: &look_ahead::Message) -> bool {
        matches!(msg, look_ahead::Message::Disconnect(_))
    }

    fn epoch(&self) -> u64 {
        self.t_rec().clock
    }

    fn seen(&self, peer: NodeId) -> u64 {
        self.peer_epoch(peer)
    }

    fn absent(&self, peer: NodeId) -> bool {
        self.is_absent(peer)
    }

    fn excludes(&self, peer: NodeId) -> bool {
        self.is_excluded(peer)
    }

    fn recovery(&self) -> Recovery {
        self.settings().recovery
    }

    fn restarted(&self, incarnation: u32) -> Self {
        let config = look_ahead::Config::new(self.id(), self.settings());
        look_ahead::Node::new(config.with_incarnation(incarnation))
            .expect("the configuration it ran with")
    }

    fn incarnation(&self) -> u32 {
        look_ahead::Node::incarnation(self)
    }

    fn peer_incarnation(&self, peer: NodeId) -> u32 {
        look_ahead::Node::peer_incarnation(self, peer)
    }

    fn in_majority_mode(&self) -> Self {
        let settings = self.settings().with_majority(true);
        look_ahead::Node::new(look_ahead::Config::new(self.id(), settings))
            .expect("the configuration it ran with, in majority mode")
    }
}

/// A message in flight.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Flight<M> {
    /// The sender.
    pub from: NodeId,
    /// The receiver.
    pub to: NodeId,
    /// The message.
    pub msg: M,
}

/// How many recent sends [`PermNet::replay`] can pick from.
const HISTORY: usize = 64;

/// Hosts, messages in flight, each host's armed timers (sorted), the first contract breach
/// seen (a send to an unknown host or to itself, a valid event rejected, a timer id armed
/// twice: once set, the system stops changing), the epoch of each host's last DISCONNECT, why
/// strict liveness no longer holds, if it does not, and whether a message was lost.
#[derive(Clone, Debug)]
pub struct PermNet<H: PermissionHarness> {
    /// The hosts, host `i` at index `i`.
    pub nodes: Vec<H>,
    /// The messages in flight: a bag, any one may be delivered next.
    pub in_flight: Vec<Flight<H::Message>>,
    /// Whether each message in flight was corrupted already.
    pub marks: Vec<bool>,
    /// In hand-driven mode, the last messages sent, for late replays ([`PermNet::replay`]).
    pub history: Vec<Flight<H::Message>>,
    /// Each host's armed timers, sorted.
    pub timers: Vec<Vec<TimerId>>,
    /// The first contract breach seen, if any (a `driver-contract` or `fence-order`
    /// violation): once set, the system stops changing.
    pub fault: Option<Violation>,
    /// The epoch of each host's last DISCONNECT.
    pub departures: Vec<Option<u64>>,
    /// Why strict liveness no longer holds, if it does not.
    pub waived: Option<&'static str>,
    /// Whether a message was lost (or corrupted, which its receiver may treat as a loss).
    pub lost: bool,
    /// Whether a message was corrupted in this run (a field or its kind changed).
    pub corrupted: bool,
    /// What the corrupt operation did in this run.
    pub corruptions: Counts,
    /// Whether the message being delivered was corrupted (set by [`PermNet::deliver`] for
    /// the one event): a DISCONNECT made by corrupting another kind, dropped, waives nothing.
    receiving_corrupted: bool,
    /// Every entry into the critical section, in order, with its fence.
    pub entries: Vec<(NodeId, Fence)>,
    /// The protected resource: the highest fence so far. Critical sections never overlap
    /// (safety), so every entry's fence must be above the fence of every section that ended
    /// before it: above this one. Otherwise it is a contract breach ([`PermNet::fault`]).
    pub fences: Fences,
    /// Every anomaly reported: `(reporter, peer, kind)`.
    pub anomalies: Vec<(NodeId, NodeId, Anomaly)>,
    /// Whether to check safety after every event and panic, with the trace, on a violation
    /// or contract breach ([`PermNet::checked`]).
    pub checked: bool,
    /// The events applied and what they produced, when tracing (`MANET_MUTEX_TRACE=1`, or
    /// always when [`PermNet::checked`]).
    pub trace: Option<Vec<String>>,
    /// The run for the viewer (unless `MANET_MUTEX_RECORD=0`): a failure's
    /// [`PermNet::trace_text`] writes it as a page and names the file. Hosts may talk to
    /// any host, so the page draws no links, and a delivery is drawn as the oldest message
    /// between its two hosts (this driver delivers in any order). A restart ends it (the
    /// viewer replays events on the first incarnations).
    pub tape: Option<manet_mutex_sim::trace::Tape<H>>,
    /// Which hosts are crashed (and not restarted).
    pub crashed: Vec<bool>,
    /// Crashes so far (a restart of a live host counts as one).
    pub crashes: usize,
    /// The side of each host while the network is partitioned (messages between sides are
    /// dropped); `None` when it is whole.
    pub sides: Option<Vec<bool>>,
    /// Whether the driver plays a perfect failure detector ([`PermNet::detect`]).
    pub detector: bool,
    /// Whether mutual exclusion (and, for look-ahead, pairwise consistency) is checked
    /// across the live hosts, or only each host's own invariants: off when the hosts exclude
    /// by their own timeouts, which this driver fires at any time (wrong suspicions).
    pub mutual_exclusion: bool,
    /// Every `LeaseExpired`: `(host, fence)`.
    pub lease_ends: Vec<(NodeId, Fence)>,
    /// Every `Report`: `(host, report)`.
    pub reports: Vec<(NodeId, Report)>,
    /// Entries whose fence the protected resource refused (not above the highest so far):
    /// a contract breach when the run allows no refusal ([`PermNet::refusal_allowed`]).
    pub refused: Vec<(NodeId, Fence)>,
}

impl<H: PermissionHarness> PermNet<H> {
    /// `hosts` hosts built by [`manet_mutex_sim::Plugin::build`] (seeded initial sets for
    /// look-ahead), with retransmission timeout 1; the error of building them if the
    /// configuration is invalid.
    pub fn new(hosts: u32, seed: u64) -> Result<Self, Error> {
        let nodes = H::build(&hosts, &HostParams::new(seed, 1))?;
        Ok(Self::with_nodes(nodes))
    }

    /// A system of the given hosts (host `i` at index `i`), nothing in flight.
    pub fn with_nodes(nodes: Vec<H>) -> Self {
        let hosts = nodes.len();
        let timeouts = nodes.iter().any(|n| n.recovery().exclusion.is_some());
        PermNet {
            nodes,
            in_flight: Vec::new(),
            marks: Vec::new(),
            history: Vec::new(),
            timers: vec![Vec::new(); hosts],
            fault: None,
            departures: vec![None; hosts],
            waived: None,
            lost: false,
            corrupted: false,
            corruptions: Counts::default(),
            receiving_corrupted: false,
            entries: Vec::new(),
            fences: Fences::new(),
            anomalies: Vec::new(),
            checked: false,
            trace: None,
            tape: None,
            crashed: vec![false; hosts],
            crashes: 0,
            sides: None,
            detector: false,
            mutual_exclusion: !timeouts,
            lease_ends: Vec::new(),
            reports: Vec::new(),
            refused: Vec::new(),
        }
        .traced(std::env::var_os("MANET_MUTEX_TRACE").is_some())
    }

    /// With a perfect failure detector ([`PermNet::detect`]), which a drain consults after
    /// every round.
    pub fn with_detector(mut self) -> Self {
        self.detector = true;
        self
    }

    /// Whether an entry the protected resource refuses is allowed: after a wrong suspicion
    /// (the hosts' own timeouts, fired at any time here) a stale holder may enter below a
    /// newer one, and the resource must refuse it; after two or more crashes an entry may
    /// follow grants no live host heard of (`docs/ALGORITHMS.md`, C6). Otherwise every entry
    /// is above every earlier one (F1), and a refusal is a `fence-order` breach.
    pub fn refusal_allowed(&self) -> bool {
        !self.mutual_exclusion || self.crashes > 1
    }

    /// Whether host `id` is live (not crashed).
    pub fn live(&self, id: NodeId) -> bool {
        !self.crashed[id.index()]
    }

    /// The live hosts, in id order.
    pub fn live_hosts(&self) -> Vec<NodeId> {
        (0..self.nodes.len() as u32)
            .map(NodeId)
            .filter(|&h| self.live(h))
            .collect()
    }

    /// Host `host` crashes (crash-stop): it handles nothing more, its timers die, the
    /// messages in flight to it are lost and later ones dropped. Messages it sent that are in
    /// flight still arrive. A crashed host stays crashed.
    pub fn crash(&mut self, host: NodeId) {
        if !self.live(host) {
            return;
        }
        self.crashed[host.index()] = true;
        self.crashes += 1;
        self.timers[host.index()].clear();
        let mut i = 0;
        while i < self.in_flight.len() {
            if self.in_flight[i].to == host {
                self.in_flight.remove(i);
                self.marks.remove(i);
            } else {
                i += 1;
            }
        }
        self.lost = true;
        if let Some(trace) = &mut self.trace {
            trace.push(format!("{host:?} crashes"));
        }
        self.after_fault();
    }

    /// Host `host` restarts with empty state under incarnation `incarnation` (a live host
    /// crashes first): a fresh node from its configuration
    /// (`Config::new(..).with_incarnation(incarnation)`).
    pub fn restart(&mut self, host: NodeId, incarnation: u32) {
        self.crash(host);
        let node = self.nodes[host.index()].restarted(incarnation);
        self.nodes[host.index()] = node;
        self.crashed[host.index()] = false;
        let away = (0..self.nodes.len())
            .any(|j| self.live(NodeId(j as u32)) && !self.nodes[j].reachable());
        if away && self.waived.is_none() {
            // It forgot the DISCONNECTs it had applied: it asks the hosts away, and waits for
            // them until they return (as after a lost DISCONNECT, V4).
            self.waived = Some("a host restarted while another was away");
        }
        // The viewer replays events on the first incarnations: a restart ends the tape.
        self.tape = None;
        if let Some(trace) = &mut self.trace {
            trace.push(format!("{host:?} restarts as incarnation {incarnation}"));
        }
        self.after_fault();
    }

    /// Restart `host` under the incarnation after its current one.
    pub fn restart_next(&mut self, host: NodeId) {
        let next = self.nodes[host.index()].incarnation().saturating_add(1);
        self.restart(host, next);
    }

    /// `at`'s failure detector suspects `peer` (`Event::Suspect`).
    pub fn suspect(&mut self, at: NodeId, peer: NodeId) {
        self.apply_valid(at, Event::Suspect(peer));
    }

    /// `at`'s failure detector trusts `peer` again (`Event::Trust`).
    pub fn trust(&mut self, at: NodeId, peer: NodeId) {
        self.apply_valid(at, Event::Trust(peer));
    }

    /// The perfect failure detector at live host `at` catches up: it suspects every crashed
    /// peer `at` does not exclude, and trusts every live one it does that is not away
    /// (disconnected) (strong completeness
    /// and accuracy, lazily: the driver decides when each host's detector runs).
    pub fn detect(&mut self, at: NodeId) {
        if !self.live(at) {
            return;
        }
        for j in 0..self.nodes.len() as u32 {
            let peer = NodeId(j);
            if peer == at {
                continue;
            }
            let excludes = self.nodes[at.index()].excludes(peer);
            let reachable = self.nodes[peer.index()].reachable();
            match (self.live(peer), excludes) {
                (false, false) => self.suspect(at, peer),
                // A host that disconnected is away, not back: it is not trusted yet.
                (true, true) if reachable => self.trust(at, peer),
                _ => {}
            }
        }
    }

    /// Every live host's perfect detector catches up ([`PermNet::detect`]).
    pub fn detect_all(&mut self) {
        for at in self.live_hosts() {
            self.detect(at);
        }
    }

    /// The network splits: `side` (hosts) on one side, the rest on the other. Messages in
    /// flight between the sides are lost, and later ones dropped, until [`PermNet::merge`].
    pub fn partition(&mut self, side: &[NodeId]) {
        let mut sides = vec![false; self.nodes.len()];
        for h in side {
            sides[h.index()] = true;
        }
        let mut i = 0;
        while i < self.in_flight.len() {
            let f = &self.in_flight[i];
            if sides[f.from.index()] != sides[f.to.index()] {
                self.marks.remove(i);
                let flight = self.in_flight.remove(i);
                self.dropped(&flight.msg);
            } else {
                i += 1;
            }
        }
        if let Some(trace) = &mut self.trace {
            trace.push(format!("partition {side:?} | the rest"));
        }
        self.sides = Some(sides);
    }

    /// The partition heals.
    pub fn merge(&mut self) {
        if self.sides.take().is_some() {
            if let Some(trace) = &mut self.trace {
                trace.push("merge".into());
            }
        }
    }

    /// `msg` was dropped by a partition (or sent to a crashed host): a loss, and a lost
    /// DISCONNECT waives strict liveness.
    fn dropped(&mut self, msg: &H::Message) {
        self.lost = true;
        if H::departure(msg) {
            self.waived = Some("a DISCONNECT was lost");
        }
    }

    /// Whether `from` can reach `to` now (the same side of a partition, if any).
    fn connected(&self, from: NodeId, to: NodeId) -> bool {
        self.sides
            .as_ref()
            .is_none_or(|s| s[from.index()] == s[to.index()])
    }

    /// After a crash or restart in hand-driven mode: the live hosts must still be safe.
    fn after_fault(&mut self) {
        if self.checked {
            if let Err(e) = self.check_safety() {
                panic!("invariant violated: {e}\n{}", self.trace_text());
            }
        }
    }

    /// Keep the trace and the recording from now on, if `on`.
    fn traced(mut self, on: bool) -> Self {
        crate::driver::start_tracing(&mut self.trace, &mut self.tape, &self.nodes, Vec::new, on);
        self
    }

    /// Hand-driven mode, for tests that stage a scenario: safety is checked after every
    /// event, and a violation or contract breach panics at once with the trace.
    pub fn checked(mut self) -> Self {
        self.checked = true;
        self.traced(true)
    }

    /// Host `id`.
    pub fn node(&self, id: NodeId) -> &H {
        &self.nodes[id.index()]
    }

    /// Feed an event the caller knows to be valid: a rejection is a contract breach
    /// ([`Self::fault`], or a panic in hand-driven mode).
    pub fn apply_valid(&mut self, at: NodeId, event: Event<H::Message>) {
        if let Err(e) = self.apply(at, event) {
            self.breach(contract(at, format!("rejected a valid event: {e}")));
        }
    }

    /// Feed `event` to `at` and carry out its actions. Local misuse returns the host's `Err`
    /// (and the host must be unchanged).
    pub fn apply(&mut self, at: NodeId, event: Event<H::Message>) -> Result<(), Error> {
        if !self.live(at) {
            // A crashed host handles nothing.
            return Ok(());
        }
        let departs = matches!(event, Event::Disconnect);
        let departure_from = match &event {
            Event::Receive { from, msg } if H::departure(msg) => Some(*from),
            _ => None,
        };
        // A DISCONNECT sealed by an incarnation its receiver has not learnt yet is dropped.
        let unknown_incarnation = departure_from.is_some_and(|from| {
            self.nodes[from.index()].incarnation() > self.nodes[at.index()].peer_incarnation(from)
        });
        let Some(outcome) = self.handle(at, event) else {
            return Ok(());
        };
        let actions = outcome?;
        if let Some(from) = departure_from {
            self.departure_received(from, &actions, unknown_incarnation);
        }
        self.check_records_ahead();
        if departs {
            self.departed(at);
        }
        for action in actions {
            if let Err(breach) = self.carry_out(at, action) {
                self.breach(breach);
                return Ok(());
            }
        }
        if self.checked {
            if let Err(e) = self.check_safety() {
                panic!("invariant violated: {e}\n{}", self.trace_text());
            }
        }
        Ok(())
    }

    /// A DISCONNECT from `from` was received, and the receiver answered with `actions`: one
    /// dropped for its clock (out of range) after a corruption waives strict liveness, unless
    /// the message itself was corrupted.
    fn departure_received(
        &mut self,
        from: NodeId,
        actions: &[Action<H::Message>],
        unknown_incarnation: bool,
    ) {
        let dropped = Action::Anomaly {
            from,
            kind: Anomaly::OutOfRange,
        };
        if !self.receiving_corrupted && actions.contains(&dropped) {
            if unknown_incarnation {
                self.waived =
                    Some("a DISCONNECT of a restarted host was dropped: its incarnation was new");
            } else if self.corrupted {
                self.waived = Some("a DISCONNECT was dropped after a corrupted clock");
            }
        }
    }

    /// A record of an away host's epoch beyond its real one (a corrupted epoch that no REPLY
    /// can correct while the host is away) makes its DISCONNECT look stale, or makes it look
    /// back, as a REQUEST from its next epoch would: either way its peers may wait for it until
    /// it returns, which waives strict liveness.
    fn check_records_ahead(&mut self) {
        if !self.corrupted || self.waived.is_some() {
            return;
        }
        let ahead = (0..self.nodes.len()).any(|j| {
            let host = &self.nodes[j];
            !host.reachable()
                && self
                    .nodes
                    .iter()
                    .any(|n| n.seen(NodeId(j as u32)) > host.epoch())
        });
        if ahead {
            self.waived = Some("a corrupted epoch put a record of an away host ahead of it");
        }
    }

    /// `at` disconnected voluntarily: its epoch is recorded, and an absence overlapping
    /// another waives strict liveness.
    fn departed(&mut self, at: NodeId) {
        // Two absences overlap when a host leaves while it counts another as away or
        // has not seen that host's last DISCONNECT (the two are concurrent).
        let node = &self.nodes[at.index()];
        let overlap = self.departures.iter().enumerate().any(|(j, d)| {
            let peer = NodeId(j as u32);
            j != at.index() && d.is_some_and(|clock| node.seen(peer) < clock || node.absent(peer))
        });
        if overlap {
            self.waived = Some("two hosts were away at once");
        }
        self.departures[at.index()] = Some(node.epoch());
    }

    /// Carry out one action of `at`: a contract breach is its `Err`.
    fn carry_out(&mut self, at: NodeId, action: Action<H::Message>) -> Result<(), Violation> {
        match action {
            Action::Send { to, msg } => self.send(at, to, msg),
            Action::SetTimer { timer, .. } => {
                self.arm(at, timer);
                Ok(())
            }
            Action::CancelTimer { timer } => {
                self.timers[at.index()].retain(|&t| t != timer);
                Ok(())
            }
            Action::EnterCritical { fence, .. } => self.enter(at, fence),
            Action::Anomaly { from, kind } => {
                self.anomalies.push((at, from, kind));
                Ok(())
            }
            Action::LeaseExpired { fence } => {
                self.lease_ends.push((at, fence));
                Ok(())
            }
            Action::Report(report) => {
                self.reports.push((at, report));
                Ok(())
            }
            other => Err(contract(
                at,
                format!("returned an action this driver does not know: {other:?}"),
            )),
        }
    }

    /// `at` sends `msg` to `to`, which must be another host: into the bag (and, in
    /// hand-driven mode, the history).
    fn send(&mut self, at: NodeId, to: NodeId, msg: H::Message) -> Result<(), Violation> {
        if to == at || to.index() >= self.nodes.len() {
            return Err(contract(at, format!("sent {msg:?} to {to:?}")));
        }
        if !self.live(to) || !self.connected(at, to) {
            // To a crashed host, or across the partition: dropped.
            self.dropped(&msg);
            return Ok(());
        }
        let flight = Flight { from: at, to, msg };
        if self.checked {
            if self.history.len() == HISTORY {
                self.history.remove(0);
            }
            self.history.push(flight.clone());
        }
        self.in_flight.push(flight);
        self.marks.push(false);
        Ok(())
    }

    /// `at` arms `timer`. Restarting a timer is allowed: it stays armed once.
    fn arm(&mut self, at: NodeId, timer: TimerId) {
        let timers = &mut self.timers[at.index()];
        if let Err(i) = timers.binary_search(&timer) {
            timers.insert(i, timer);
        }
    }

    /// `at` enters the critical section with `fence`, which must be above the highest so far.
    fn enter(&mut self, at: NodeId, fence: Fence) -> Result<(), Violation> {
        self.entries.push((at, fence));
        match self.fences.admit(fence) {
            Ok(()) => Ok(()),
            Err(_) if self.refusal_allowed() => {
                self.refused.push((at, fence));
                Ok(())
            }
            Err(highest) => Err(fence_went_back(at, fence, highest)),
        }
    }

    /// The trace, if one was kept (`MANET_MUTEX_TRACE=1`), for a failure message; with it, the
    /// run is written as a page for the viewer ([`manet_mutex_sim::trace`]) and the message names the file.
    pub fn trace_text(&self) -> String {
        let text = match &self.trace {
            Some(trace) => format!("{}\nhosts: {:#?}", trace.join("\n"), self.nodes),
            None => "(set MANET_MUTEX_TRACE=1 for the trace and a page for the viewer)".into(),
        };
        text + &crate::driver::write_page(self.tape.as_ref())
    }

    /// The section `node` is in.
    pub fn status(&self, node: NodeId) -> Status {
        self.nodes[node.index()].status()
    }

    /// The in-flight messages that can be delivered now (their destination is reachable).
    pub fn deliverable(&self) -> Vec<usize> {
        (0..self.in_flight.len())
            .filter(|&i| self.nodes[self.in_flight[i].to.index()].reachable())
            .collect()
    }

    /// Deliver the `i`-th message in flight (modulo their number); false if none is.
    pub fn deliver(&mut self, i: usize) -> bool {
        if self.in_flight.is_empty() {
            return false;
        }
        let i = i % self.in_flight.len();
        self.receiving_corrupted = self.marks.remove(i);
        let Flight { from, to, msg } = self.in_flight.remove(i);
        self.apply_valid(to, Event::Receive { from, msg });
        self.receiving_corrupted = false;
        true
    }

    /// Deliver the first message in flight that matches `pick`; panics if none does.
    pub fn deliver_where(&mut self, pick: impl Fn(&Flight<H::Message>) -> bool) {
        let i = self
            .in_flight
            .iter()
            .position(pick)
            .expect("no such message in flight");
        self.deliver(i);
    }

    /// Deliver everything in flight, oldest first, until nothing is left; a `quiescence`
    /// violation after `limit` deliveries (a message storm).
    pub fn deliver_all(&mut self, limit: usize) -> Result<(), Violation> {
        for _ in 0..limit {
            if !self.deliver(0) {
                return Ok(());
            }
        }
        let detail = format!("still busy after {limit} deliveries");
        Err(Violation::new(rule::QUIESCENCE, None, detail))
    }

    /// Deliver everything in flight except to `away`, whose messages stay in flight (a host
    /// that is disconnected receives nothing).
    pub fn deliver_all_except(&mut self, away: NodeId) {
        while let Some(i) = self.in_flight.iter().position(|f| f.to != away) {
            self.deliver(i);
        }
    }

    /// The messages in flight to `to`.
    pub fn to(&self, to: NodeId) -> Vec<&Flight<H::Message>> {
        self.in_flight.iter().filter(|f| f.to == to).collect()
    }

    /// Lose the `i`-th message in flight (modulo their number).
    pub fn lose(&mut self, i: usize) {
        if self.in_flight.is_empty() {
            return;
        }
        let i = i % self.in_flight.len();
        self.marks.remove(i);
        let flight = self.in_flight.remove(i);
        self.lost = true;
        if H::departure(&flight.msg) {
            self.waived = Some("a DISCONNECT was lost");
        }
        if let Some(trace) = &mut self.trace {
            trace.push(format!("lost {flight:?}"));
        }
    }

    /// Put a second copy of the `i`-th message in flight (modulo their number). A copy of a
    /// DISCONNECT waives nothing: the original still arrives.
    pub fn duplicate(&mut self, i: usize) {
        if self.in_flight.is_empty() {
            return;
        }
        let i = i % self.in_flight.len();
        self.in_flight.push(self.in_flight[i].clone());
        self.marks.push(self.marks[i]);
    }

    /// Deliver, arbitrarily late, a copy of the `i`-th of the last messages sent (modulo
    /// their number).
    pub fn replay(&mut self, i: usize) {
        if self.history.is_empty() {
            return;
        }
        let Flight { from, to, msg } = self.history[i % self.history.len()].clone();
        if let Some(trace) = &mut self.trace {
            trace.push(format!("replay {from:?} -> {to:?}: {msg:?}"));
        }
        self.apply_valid(to, Event::Receive { from, msg });
    }

    /// The messages in flight not corrupted yet.
    pub fn corruptible(&self) -> Vec<usize> {
        (0..self.in_flight.len())
            .filter(|&i| !self.marks[i])
            .collect()
    }

    /// Rewrite field `field` of the `i`-th message in flight to `value`; whether it changed.
    pub fn corrupt(&mut self, i: usize, field: usize, value: Value) -> bool {
        self.corrupt_as(i, Corruption::Field { field, value }) == Outcome::Changed
    }

    /// Corrupt the `i`-th message in flight as `how` says (see the module docs): a
    /// field, its kind, or bits of its frame. A message is corrupted at most once
    /// (`Unchanged` if it was already). A flipped frame that fails to decode (`Dropped`) is
    /// lost: it leaves the flight.
    pub fn corrupt_as(&mut self, i: usize, how: Corruption) -> Outcome {
        if self.marks[i] {
            return Outcome::Unchanged;
        }
        let departure = H::departure(&self.in_flight[i].msg);
        let outcome = self.in_flight[i].msg.corrupt_as(how);
        self.corruptions.count(&how, outcome);
        match outcome {
            Outcome::Unchanged => return outcome,
            Outcome::Dropped(e) => {
                if let Some(trace) = &mut self.trace {
                    trace.push(format!(
                        "flipped {how:?} of the frame of #{i}: {e}, dropped"
                    ));
                }
                self.lose(i);
                return outcome;
            }
            Outcome::Changed => {}
        }
        self.marks[i] = true;
        self.lost = true;
        self.corrupted = true;
        if let Some(trace) = &mut self.trace {
            trace.push(format!(
                "corrupted #{i} ({how:?}) into {:?}",
                self.in_flight[i]
            ));
        }
        if departure {
            self.waived = Some("a DISCONNECT was corrupted (and so dropped)");
        }
        outcome
    }

    /// Every armed timer of a live host, as `(host, timer)` (a crashed host has none).
    pub fn armed(&self) -> Vec<(NodeId, TimerId)> {
        self.timers
            .iter()
            .enumerate()
            .flat_map(|(i, ts)| ts.iter().map(move |&t| (NodeId(i as u32), t)))
            .collect()
    }

    /// Timer `timer` of `node` expires.
    pub fn fire(&mut self, node: NodeId, timer: TimerId) {
        self.timers[node.index()].retain(|&t| t != timer);
        self.apply_valid(node, Event::Timeout(timer));
    }

    /// `node` asks for the critical section; it must be in its remainder section.
    pub fn request(&mut self, node: NodeId) {
        self.apply_valid(node, Event::Request(CsRequest::ONE));
    }

    /// `node` leaves the critical section; it must be in it.
    pub fn release(&mut self, node: NodeId) {
        self.apply_valid(node, Event::Release);
    }

    /// The algorithm's `check_safety` (one host in the critical section, each host's own invariants,
    /// pairwise consistency of the sets), plus the contract breaches recorded by `apply`
    /// ([`PermNet::fault`]).
    pub fn check_safety(&self) -> Result<(), Violation> {
        if let Some(fault) = &self.fault {
            return Err(fault.clone());
        }
        if self.crashes == 0 && self.mutual_exclusion {
            return H::check_safety(&self.nodes, &());
        }
        let live: Vec<H> = self
            .nodes
            .iter()
            .filter(|n| self.live(n.id()))
            .cloned()
            .collect();
        if self.mutual_exclusion {
            H::check_safety(&live, &())
        } else {
            live.iter()
                .try_for_each(|n| H::check_safety(std::slice::from_ref(n), &()))
        }
    }

    fn busy(&self) -> Vec<NodeId> {
        manet_mutex_sim::busy(&self.nodes)
            .map(|n| n.id())
            .filter(|&id| self.live(id))
            .collect()
    }

    /// Whether a majority-mode system has too few live hosts to enter at all: liveness is not
    /// owed then.
    fn short_of_majority(&self) -> bool {
        let majority = self.nodes.iter().any(|n| n.recovery().majority);
        majority && 2 * self.live_hosts().len() <= self.nodes.len()
    }

    /// Prepare a drain: the partition heals; where nothing would exclude a crashed host
    /// (neither a detector nor the hosts' own timeouts) every crashed host restarts under its
    /// next incarnation; the detectors catch up.
    fn heal(&mut self) {
        self.merge();
        let timeouts = self.nodes.iter().any(|n| n.recovery().exclusion.is_some());
        if !self.detector && !timeouts {
            for i in 0..self.nodes.len() as u32 {
                if !self.live(NodeId(i)) {
                    self.restart_next(NodeId(i));
                }
            }
        }
        if self.detector {
            self.detect_all();
        }
    }

    /// Liveness as a check on one state: with no further requests, losses or mode changes,
    /// every waiting host enters within `rounds` rounds of [`PermNet::settle`] while the hosts
    /// that disconnected stay away (unless [`PermNet::waived`]), and again after they all
    /// reconnect. Safety is checked after every round.
    ///
    /// The error is the algorithm's violation, or the driver's own (`liveness`,
    /// `lossless-liveness`), with the trace added to its detail.
    pub fn drain(&self, rounds: usize) -> Result<(), Violation> {
        let mut healed = self.clone();
        healed.heal();
        if healed.short_of_majority() {
            return Ok(());
        }
        let away: Vec<NodeId> = (0..self.nodes.len())
            .filter(|&i| self.live(NodeId(i as u32)) && !self.nodes[i].reachable())
            .map(|i| NodeId(i as u32))
            .collect();
        // With nobody away the two drains are the same one: run it once.
        if away.is_empty() {
            return healed.settle(rounds);
        }
        let majority = self.nodes.iter().any(|n| n.recovery().majority);
        let present = self.live_hosts().len() - away.len();
        // In majority mode the hosts away count against the majority: with too few present,
        // nobody can enter until they return.
        let strict_owed = !majority || 2 * present > self.nodes.len();
        if self.waived.is_none() && strict_owed {
            // A waiver can also arise in the drain (a DISCONNECT still in flight, dropped).
            let mut strict = healed.clone();
            if let Err(e) = strict.settle(rounds) {
                if strict.waived.is_none() {
                    return Err(amend(e, ", with the disconnected hosts away"));
                }
            }
        }
        let mut net = healed;
        for host in away {
            net.apply_valid(host, Event::Reconnect);
        }
        net.settle(rounds)
    }

    /// Each round releases every host in the critical section and delivers every deliverable
    /// message; a round with nothing to deliver fires every armed timer instead (the
    /// retransmissions that recover lost messages), or fails if no message was lost: the
    /// messages already sent must serve every request, or a host that forgot a deferred REPLY
    /// would pass, rescued by the requester's retransmission. Fails if a host still waits (or
    /// is inside) after `rounds` rounds.
    pub fn settle(&mut self, rounds: usize) -> Result<(), Violation> {
        self.settle_here(rounds)
            .map_err(|v| amend(v, format_args!("\n{}", self.trace_text())))
    }

    fn settle_here(&mut self, rounds: usize) -> Result<(), Violation> {
        for _ in 0..rounds {
            if self.busy().is_empty() {
                return Ok(());
            }
            for i in 0..self.nodes.len() {
                let host = NodeId(i as u32);
                if self.live(host) && self.status(host) == Status::Critical {
                    self.release(host);
                }
            }
            if self.detector {
                // Late messages of crashed hosts readmit them: the detectors suspect again.
                self.detect_all();
            }
            let deliverable = self.deliverable();
            if deliverable.is_empty() {
                let busy = self.busy();
                if !self.lost && !busy.is_empty() {
                    let detail = format!(
                        "nothing lost and nothing to deliver, yet {busy:?} not served: only a \
                         retransmission would help"
                    );
                    return Err(Violation::new(rule::LOSSLESS_LIVENESS, None, detail));
                }
                for (node, timer) in self.armed() {
                    self.fire(node, timer);
                }
            }
            // Highest index first, so earlier indices stay valid.
            for &i in deliverable.iter().rev() {
                self.deliver(i);
            }
            self.check_safety()?;
        }
        match self.busy() {
            busy if busy.is_empty() => Ok(()),
            busy => {
                let detail = format!("starvation: {busy:?} after {rounds} drain rounds");
                Err(Violation::new(rule::LIVENESS, None, detail))
            }
        }
    }
}
