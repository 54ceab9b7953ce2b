//! # manet-mutex
//!
//! Sans-IO distributed mutual exclusion for mobile ad hoc networks (MANETs) and message-passing
//! systems. Each algorithm is a pure [`Protocol`] node: feed it [`Event`]s, carry out the
//! [`Action`]s it returns. Nodes do no I/O, read no clock, start no thread and use no global
//! randomness, so any runtime or transport can embed them.
//!
//! | module | algorithm |
//! | --- | --- |
//! | [`reverse_link`] | RL (k = 1), KRL (k tokens) and KRLF (token forwarding): Walter, Cao, Mohanty (2001) |
//! | [`prioritized`] | prioritized h-out-of-k resource allocation, with the maximum-concurrency mode: Jiang |
//! | [`look_ahead`] | look-ahead permission-based mutual exclusion with doze and disconnection: Wu, Cao, Yang (2005) |
//! | [`ricart_agrawala`] | the Ricart–Agrawala baseline (1981) |
//!
//! ## A driving loop, first
//!
//! Three KRL nodes on a line with one token at node 0; node 2 asks for the critical section.
//! The loop is the whole embedding: feed one [`Event`] to one node, carry out the [`Action`]s
//! it returns, in order. Here the "transport" is a queue (KRL needs reliable FIFO links; over
//! real datagrams, put a [`session`] in between, or use the [`driver`], which does all of this
//! behind `handle_datagram`/`poll_transmit`).
//!
//! ```
//! use std::collections::VecDeque;
//! use manet_mutex::reverse_link::{network, Node, Settings};
//! use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol, Status};
//!
//! let edges = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
//! let mut nodes: Vec<Node> = network(3, &edges, &[NodeId(0)], Settings::new(1))?
//!     .into_iter()
//!     .map(Node::new)
//!     .collect::<Result<_, _>>()?;
//! let mut wire = VecDeque::new();
//! let mut fences = Vec::new();
//! let mut next = Some((NodeId(2), Event::Request(CsRequest::ONE)));
//! while let Some((at, event)) = next.take().or_else(|| {
//!     wire.pop_front().map(|(from, to, msg)| (to, Event::Receive { from, msg }))
//! }) {
//!     for action in nodes[at.index()].handle(event)? {
//!         match action {
//!             Action::Send { to, msg } => wire.push_back((at, to, msg)),
//!             // Inside: hand the fence to the resource the critical section protects.
//!             Action::EnterCritical { fence, .. } => fences.push((at, fence)),
//!             // KRL without recovery arms no timers; a permission algorithm, a lease or
//!             // recovery does, and then `SetTimer`/`CancelTimer` must be carried out
//!             // (see "Timers" below). Reports and anomalies are for logs and metrics.
//!             // `Action` is `#[non_exhaustive]`, so a catch-all is required.
//!             _ => {}
//!         }
//!     }
//! }
//! assert_eq!(nodes[2].status(), Status::Critical);
//! assert_eq!(fences.len(), 1);
//! // Leaving: the token stays at node 2 until someone asks.
//! let left: Vec<_> = nodes[2].handle(Event::Release)?.collect();
//! assert!(left.is_empty());
//! # Ok::<(), manet_mutex::Error>(())
//! ```
//!
//! For a timer-driven algorithm (a simulated clock, a lost REQUEST recovered by its timer, a
//! host dozing and waking), see
//! [the look-ahead example](look_ahead#example-an-embedder-with-a-clock); [`prioritized`] has
//! an h-out-of-k one, and every algorithm's module page starts with one. Over real datagrams,
//! the [`driver`] (feature `codec`) owns a core, its link sessions, discovery and timers, and
//! the workspace's `manet-mutex-tokio` crate puts an `acquire().await` on top.
//!
//! Shared building blocks: [`token`] (height triples and the token algorithms' neighbour
//! table, as the nodes show them), [`queue`] (request priorities), [`permission`] (timestamps
//! and the peer clock limit of the permission algorithms), [`fence`] (fencing tokens for the
//! resources the critical section protects), [`session`] (a sans-IO link session that gives
//! the token algorithms their link contract over an unreliable datagram transport),
//! [`discovery`] (neighbour discovery: hellos and link sensing with hysteresis, feeding the
//! session, so a core needs no topology at start), [`driver`] (feature `codec`: a sans-IO
//! driver that owns a core, its sessions or direct datagrams, discovery and timers behind one
//! `handle_datagram`/`poll_transmit` surface, with a wire format for every frame it sends and,
//! with the feature `auth`, datagrams authenticated by a pre-shared key),
//! [`timers`] (a timer table for embedders) and [`Violation`] (what the algorithms'
//! `invariants` checks report). Beside this crate, the workspace's `manet-mutex-sim` holds the
//! deterministic simulators and the trace viewer, and `manet-mutex-testkit` the network
//! drivers with fault injection, fuzz bodies and proptest strategies the crate's own tests
//! use, for testing the algorithms on your own topologies and fault profiles. Items marked
//! `#[doc(hidden)]` are there for those two crates and the tests, and are not part of the
//! stable API. With the `serde` feature every
//! algorithm's `Message` and every type inside it derive `Serialize` and `Deserialize`; with
//! `codec` (which implies `serde`; both work without `std`), `codec` turns messages into a
//! small versioned binary frame and back, with `encode` and `decode`; a CRC-32C closes every
//! frame and detects, for certain, any error of up to 5 bits (corruption, not forgery). A
//! decoded message may hold any field values, as the threat model below assumes of every peer
//! message: decoding fails only on bytes that encode no message, and judging the values is the
//! node's job.
//!
//! ## One API shape
//!
//! Every algorithm module exports the same items:
//!
//! - `Settings`: what every node of a network agrees on, built with `Settings::new(..)` and
//!   its `with_*` methods (`Settings` and `Config` are `#[non_exhaustive]`: their fields are
//!   public to read, not to construct);
//! - `Config`: one node's initial state, `Config::new(..)`;
//! - `network(..)`: a consistent `Config` for every node, in id order, or
//!   [`Error::InvalidNetwork`] (wrong as a whole: the number of holders, no hosts) or
//!   [`Error::InvalidConfig`] (naming the node at fault);
//! - `Node::new(config)`: the node, or [`Error::InvalidConfig`]. It implements [`Protocol`],
//!   is `Clone` and compares by state (`PartialEq`, `Eq`), so tests can snapshot it;
//! - `Message`: the node's [`Protocol::Message`];
//! - `invariants`: `check_safety` over a whole system and `check_node` over one node, as the
//!   test harnesses use, each returning the first [`Violation`] (the rule broken, the node at
//!   fault, what was found; each module tables its rules). The token algorithms add
//!   `check_tally` over the network-wide counts (`Tally`), and `check_settled` and
//!   `check_quiescent` for quiescent states. Parameters come in one order: the nodes (or the
//!   node), then what the network agrees on (`k`, the `capacity` left), then the rest.
//!
//! | module | `Settings::new` | `with_*` | `Config::new` | `network` |
//! | --- | --- | --- | --- | --- |
//! | [`reverse_link`] | `(k)` | `with_forwarding`, `with_idle_pause`, `with_raise_pause`, `with_recovery`, `Config::with_first_token` | `(id, settings, tokens, height, neighbors)` | `(n, edges, holders, settings)` |
//! | [`prioritized`] | `(k, policy)` | `with_aging_step`, `with_raise_pause`, `with_recovery` | `(id, settings, holder, height, neighbors)` | `(n, edges, holders, settings)` |
//! | [`look_ahead`] | `(hosts, retransmit_after)` | `with_seed`, `with_lease`, `with_exclusion`, `with_majority`, `Config::with_info_set`, `Config::with_incarnation` | `(id, settings)` | `(settings)` |
//! | [`ricart_agrawala`] | `(hosts, retransmit_after)` | `with_lease`, `with_exclusion`, `with_majority`, `Config::with_incarnation` | `(id, settings)` | `(settings)` |
//!
//! | `invariants` of | `check_safety` | `check_node` | `check_tally` | `check_settled`, `check_quiescent` |
//! | --- | --- | --- | --- | --- |
//! | [`reverse_link`] | `(nodes, in_flight)` | `(node)` | `(k, total)` | `(nodes)` |
//! | [`prioritized`] | `(nodes, capacity, in_flight)` | `(node, k)` | `(k, capacity, total)` | `(nodes)` |
//! | [`look_ahead`], [`ricart_agrawala`] | `(nodes)` | `(node)` | none | none |
//!
//! Every node answers [`id()`](Protocol::id), [`status()`](Protocol::status) and
//! `settings()`. The token nodes ([`reverse_link::Node`], [`prioritized::Node`]) add
//! `holds_token()`, `height()`, `neighbors()`, `next()`, `queue()` and `raises()` (KRL its
//! `tokens()` and `held_tokens()`, prioritized its resource counts); the
//! permission nodes ([`look_ahead::Node`], [`ricart_agrawala::Node`]) add `timestamp()`,
//! `clock()`, `outstanding()`, `deferred()`, `excluded()`, `is_excluded()`, `probed()`,
//! `incarnation()`, `peer_incarnation()` and `has_quorum()`, and look-ahead its `mode()` and
//! sets.
//!
//! ```
//! use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, NodeId, Protocol};
//!
//! let line = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
//! let token_at_0 = [NodeId(0)];
//! let krlf = reverse_link::Settings::new(1).with_forwarding(true);
//! let krlf = reverse_link::network(3, &line, &token_at_0, krlf)?;
//! let prio = prioritized::Settings::new(4, prioritized::Policy::Explicit).with_aging_step(2);
//! let prio = prioritized::network(3, &line, &token_at_0, prio)?;
//! let la = look_ahead::network(look_ahead::Settings::new(3, 50).with_seed(7))?;
//! let ra = ricart_agrawala::network(ricart_agrawala::Settings::new(3, 50))?;
//!
//! let node = look_ahead::Node::new(la[2].clone())?;
//! assert_eq!((node.id(), node.settings().retransmit_after), (NodeId(2), 50));
//! assert!(reverse_link::Node::new(krlf[0].clone())?.holds_token());
//! assert_eq!(prioritized::Node::new(prio[0].clone())?.available(), Some(4));
//! assert_eq!(ra.len(), 3);
//! # Ok::<(), manet_mutex::Error>(())
//! ```
//!
//! ## Driving contract
//!
//! - Call [`Protocol::handle`] with one event at a time and carry out the returned actions in
//!   order before the next event (actions left unconsumed are lost). `handle` never blocks
//!   and never panics.
//! - Local misuse (an event the node's state, mode or algorithm does not allow, a bad
//!   configuration) returns an [`Error`] and leaves the node unchanged. Bad input from a peer
//!   is ignored and reported as [`Action::Anomaly`]; it never corrupts the node
//!   ([which anomalies are noise](#anomalies)).
//! - Steady-state `handle` does not allocate: actions are drained from a buffer the node
//!   keeps. The returned actions borrow the node until they are dropped;
//!   [`Protocol::handle_into`] moves them into the caller's buffer instead, so the node can be
//!   inspected in an `Err` arm or while they are carried out, and [`Protocol::handle_in`]
//!   lends an empty caller's `Vec` to the node as its buffer, so one buffer serves many nodes.
//!
//! ### Delivery
//!
//! - **Token algorithms** ([`reverse_link`], [`prioritized`]) need reliable FIFO links between
//!   neighbours. Each end of a link may learn of its formation and failure at its own time
//!   ([`Event::LinkUp`], [`Event::LinkDown`]); the first message over a new link may arrive
//!   before the receiver's own `LinkUp`, and a message sent before the sender learned of a
//!   failure may arrive after the receiver's `LinkDown` (it is then reported and dropped, or,
//!   for a token, kept). Two things remain the papers' assumptions: a link fails only when
//!   nothing is in flight on it (incipient failures are detected and in-flight messages
//!   delivered first), and messages of one incarnation of a link never arrive in the next.
//!   A `LinkUp` for a link that is already up is a keepalive; link layers that confirm live
//!   links periodically should report it (it repairs what a corrupted message left wrong).
//!   Over a transport that loses, duplicates or reorders datagrams, put a [`session::Session`]
//!   between each core and the transport: it provides exactly this contract, and where it
//!   cannot (a peer vanished with messages unacknowledged) it reports the loss
//!   ([`session::SessionEvent::Lost`]) instead of hiding or duplicating anything.
//! - **Permission algorithms** ([`look_ahead`], [`ricart_agrawala`]) need nothing from the
//!   network but eventual delivery of a message retransmitted often enough: messages may be
//!   lost, duplicated, delayed and reordered, between any two hosts. The nodes retransmit
//!   REQUESTs themselves, on their timers. Look-ahead's DOZE, DISCONNECT and RECONNECT are
//!   sent once: a lost DOZE or RECONNECT costs only messages, a lost DISCONNECT leaves its
//!   receivers waiting for its host until it returns.
//!
//! ### Timers
//!
//! The permission algorithms emit [`Action::SetTimer`] and [`Action::CancelTimer`] for their
//! retransmissions. The token algorithms set no timer and refuse [`Event::Timeout`] as
//! [`Error::Unsupported`], except KRLF with an idle pause
//! ([`reverse_link::Settings::with_idle_pause`]), which sets one ([`reverse_link::IDLE_PAUSE`])
//! to forward an idle token later and ignores expiries it no longer needs, both token
//! algorithms with their height raises paced ([`reverse_link::Settings::with_raise_pause`],
//! [`prioritized::Settings::with_raise_pause`]; ids with bit 62 set, numbered per arming), and KRL/KRLF with
//! recovery ([`reverse_link::Settings::with_recovery`], [`prioritized::Settings::with_recovery`]),
//! which set beacon, silence, claim and lease timers (the prioritized token a turnover timer too) (ids with bit 63 set, numbered per arming, so an expiry of a timer re-armed or
//! cancelled since changes nothing) and start them at the node's first accepted event.
//!
//! - A node reads no clock. Durations are in *the embedder's time unit*: whatever unit the
//!   embedder's clock counts (the routed simulator, `sim::routed`, counts milliseconds).
//!   `after` is the network's `retransmit_after` (for example
//!   [`look_ahead::Settings::retransmit_after`]), passed through unchanged, so both are in
//!   that unit, and so is the `now` that [`timers::Timers`] takes. `retransmit_after` must be
//!   positive ([`Error::InvalidConfig`]).
//! - One timer runs per peer whose REPLY the node awaits (`outstanding()`), and, with exclusion
//!   by timeout (and, in look-ahead's majority mode, for a peer whose DISCONNECT it applied),
//!   per excluded peer it probes while waiting (`probed()`); with a lease, one
//!   more: the lease while inside, and while waiting the age of the grants collected. Every
//!   `SetTimer` names a fresh [`TimerId`], numbered per node (key timers by node and id).
//!   Asking a peer again cancels its old timer first (asking under a new number after a
//!   lease keeps it); its REPLY (in look-ahead also its applied DOZE or DISCONNECT) or its
//!   exclusion cancels it.
//! - On the `Timeout` of a current timer the node resends that REQUEST and sets a fresh
//!   timer (or, after [`exclusion`](permission::Recovery::exclusion) silent ones, excludes the
//!   peer); a lease timer ends the entry's lease ([`Action::LeaseExpired`]) or, while
//!   waiting, asks again under a new number. A `Timeout` of a timer that was cancelled, re-armed, already fired or never set
//!   returns no actions and changes nothing, so an embedder that lets cancelled timers fire
//!   is still correct.
//! - [`timers::Timers`] keeps one node's timers for an embedder, sans-IO like the nodes: it
//!   records `SetTimer` (deadline `now + after`) and `CancelTimer`, gives the next deadline,
//!   and hands out the timers due at `now`, earliest first, to feed back as `Timeout`.
//!
//! ### Modes
//!
//! Only [`look_ahead`] has modes ([`look_ahead::Mode`]): `Doze` and `Wake` move a host between
//! `Normal` and `Dozing`, `Disconnect` and `Reconnect` between `Normal` and `Disconnected`, and
//! `Reconnect` in `Normal` reports the end of an unannounced outage. What each mode allows is
//! tabled [there](look_ahead#driving-contract). The other algorithms refuse the four events
//! as [`Error::Unsupported`].
//!
//! ### Events by state
//!
//! | event | [`reverse_link`], [`prioritized`] | [`look_ahead`] | [`ricart_agrawala`] |
//! | --- | --- | --- | --- |
//! | `Request(req)` | in `Remainder`; `resources` 1 (KRL), `1..=k` (prioritized) | in `Remainder`, `resources` 1, mode `Normal` | in `Remainder`; `resources` 1 |
//! | `Release` | in `Critical` | in `Critical` | in `Critical` |
//! | `Receive` | always | always | always |
//! | `LinkUp`, `LinkDown` | always | `Unsupported` | `Unsupported` |
//! | `Timeout` | `Unsupported` (with an idle pause, a raise pause or recovery: always) | always | always |
//! | `Doze`, `Wake`, `Disconnect`, `Reconnect` | `Unsupported` | by mode ([table](look_ahead#driving-contract)) | `Unsupported` |
//! | `Cancel` | in `Waiting` | in `Waiting` | in `Waiting` |
//! | `Suspect(peer)`, `Trust(peer)` | `Unsupported` | always; `peer` another host | always; `peer` another host |
//! | `Leave` | in `Remainder`, once | in `Remainder`, once, in any mode | in `Remainder`, once |
//!
//! After `Leave` a node takes no `Request` (nor another `Leave`, nor a look-ahead mode
//! event): [`WrongMode`](Error::WrongMode) with mode `"left"`; it reports
//! [`Report::Left`] once nothing it holds is needed (`docs/ALGORITHMS.md`, L1–L5).
//!
//! Otherwise the node returns, for `Request` outside `Remainder`,
//! [`AlreadyRequested(status)`](Error::AlreadyRequested); for a bad `resources`,
//! [`InvalidResources`](Error::InvalidResources) (prioritized: outside `1..=k`) or
//! [`OneResourceOnly`](Error::OneResourceOnly) (the others: other than one); for `Release`
//! outside `Critical`,
//! [`NotInCritical(status)`](Error::NotInCritical); for `Cancel` outside `Waiting`,
//! [`NotWaiting(status)`](Error::NotWaiting); for an event in the wrong look-ahead mode,
//! or `Doze`/`Disconnect` outside `Remainder`, [`WrongMode`](Error::WrongMode); for
//! `Suspect` or `Trust` naming the node itself or no host,
//! [`NotAPeer`](Error::NotAPeer) (suspecting an excluded peer, or trusting one that is not,
//! does nothing). Every
//! algorithm checks in one order and returns the first failure: the section, then the
//! resources, then (look-ahead) the mode; so a `Request` while `Waiting` for a bad number of
//! resources is `AlreadyRequested(Waiting)` everywhere. [`CsRequest::priority`] is read only by
//! [`prioritized`].
//!
//! ### Actions by algorithm
//!
//! | action | [`reverse_link`] | [`prioritized`] | [`look_ahead`] | [`ricart_agrawala`] |
//! | --- | --- | --- | --- | --- |
//! | `Send` to | a linked neighbour | a linked neighbour | any host | any host |
//! | messages | REQUEST, TOKEN, LinkInfo, Probe, TokenAck (recovery: Beacon, Claim; majority mode: Promise) | TOKEN, REQUEST, UPDATE, RELEASE, LINK, Probe, TokenAck (recovery: Beacon, Claim; majority mode: Promise) | REQUEST, REPLY, DOZE, DISCONNECT, RECONNECT | REQUEST, REPLY, LEAVE |
//! | `EnterCritical { resources, fence }` | 1; `fence` lane: the token's id | `h`, the request's `resources`; lane 0 | 1; lane 0 | 1; lane 0 |
//! | `SetTimer`, `CancelTimer` | with an idle pause, a raise pause or recovery, else never | with a raise pause or recovery, else never | yes | yes |
//! | `LeaseExpired` | with recovery | with recovery | with a lease | with a lease |
//! | `Report` | with recovery: `TokenRegenerated`, `TokenRenumbered`, `TokenDestroyed` | with recovery: likewise | `PeerExcluded`, `PeerReadmitted` | `PeerExcluded`, `PeerReadmitted` |
//! | `Anomaly` kinds | `UnknownPeer`, `OutOfRange`, `Stale`, `RedundantLinkEvent`, `Unexpected` | all of [`Anomaly`] | `UnknownPeer`, `OutOfRange`, `Stale`, `Unexpected` | `UnknownPeer`, `OutOfRange`, `Stale`, `Unexpected` |
//!
//! ### Anomalies
//!
//! An [`Action::Anomaly`] says that the node ignored (part of) a peer's input; the node stays
//! consistent either way. Whether it deserves more than a counter depends on the kind and on
//! the algorithm, so each node type answers it: `Node::anomaly_severity(kind)`
//! ([`Protocol::anomaly_severity`]) is [`Severity::Noise`] for what runs within the
//! algorithm's contract produce, [`Severity::Suspect`] for what they never do (a corrupted or
//! forged message, or a driver that breaks the contract).
//!
//! | kind | [`reverse_link`], [`prioritized`] | [`look_ahead`], [`ricart_agrawala`] |
//! | --- | --- | --- |
//! | `Stale` | noise: REQUESTs crossing tokens or reversals, uphill REQUESTs | noise: late retransmissions and duplicates, overtaken announcements |
//! | `UnknownPeer` | noise: a message crossing its receiver's own `LinkUp` or `LinkDown` | suspect: a sender outside `0..hosts`, or the node itself |
//! | `Unexpected` | suspect: a second token at a holder (prioritized), a second copy of a token id held (KRL) | noise: a REPLY after its request was served (a retransmission answered twice) |
//! | `RedundantLinkEvent` | noise: `LinkDown` without a link, changing nothing (`LinkUp` naming the node itself, a driver bug, has `from` = the node's id) | not reported |
//! | `OutOfRange` | suspect: an impossible value or check word | suspect: likewise |
//!
//! The evidence is the crate's own runs. Without corruption they report noise only, and
//! their property tests assert it: symmetric churn (prioritized), one-sided link events
//! (`UnknownPeer` by the hundred, both token algorithms), and loss, duplicates, late
//! replays, timers firing at any time and mode changes (`Stale` and `Unexpected`, both
//! permission algorithms, even with reliable delivery once a timer fires early), crashes,
//! restarts and partitions (`Stale`: an old incarnation's REQUESTs). The adversarial tests,
//! which corrupt fields, add `OutOfRange`. One `OutOfRange` comes without corruption: a
//! look-ahead announcement of a host restarted under an incarnation its receiver has not seen
//! in a REQUEST yet fails its check word like a corrupted one (`docs/ALGORITHMS.md`, C5).
//!
//! ## Threat model
//!
//! Any field of a peer's message may hold any value (corrupted on the way, replayed,
//! duplicated, delayed within the contract above), and the message's kind is a field too: it
//! may arrive as another kind its bytes fit. Safety of correct nodes never depends on a field
//! being well formed, and a node never panics on one:
//! - impossible values (out of range, naming the wrong node, more than `k`) are reported as
//!   [`Anomaly::OutOfRange`] and not acted on; what cannot be dropped without loss (a token,
//!   released resources) is kept with the impossible part ignored;
//! - where a wrong but possible value would cost safety or liveness, the message carries a
//!   check word (permission REQUESTs, REPLYs and announcements, every height of the token
//!   algorithms, with a token acknowledgement's count), or three copies read by majority (the
//!   prioritized resource counts, the [fences](fence) of tokens and permission messages): a
//!   corrupted field then reads as a lost message or an impossible value;
//! - the kind is covered by the check words: their serde encoding, in any format, is XORed
//!   with a tag of the message's kind, so a message read as another kind fails its word; the
//!   messages that carry tokens or resources, and acknowledgements, have layouts no other kind
//!   shares; and no resource is added from a message whose word does not confirm it is a
//!   release. The `codec` frame adds a CRC-32C over every bit (every error of up to 5 bits
//!   detected);
//! - peer counters are bounded with headroom: clocks and epochs merge at most
//!   [`permission::SKEW_LIMIT`] ahead, heights stay within `±`[`token::Height::LIMIT`],
//!   priorities below [`queue::Priority::LEVEL_LIMIT`], and requests are numbered by their
//!   host, so no single message can make two requests alike, mute a peer, pin a queue or move
//!   a node's height far from its neighbours'.
//! - no message excludes a peer: only the embedder's [`Event::Suspect`] and the node's own
//!   timeout do, and any valid message readmits its sender. A request number carries its
//!   host's incarnation ([`permission::incarnation_of`]) under the REQUEST's check word, so a
//!   corrupted one reads as a lost message; a forged higher one mutes that host's genuine
//!   REQUESTs (refused as an older incarnation) until it restarts above it: liveness, never
//!   safety or a fence (`docs/ALGORITHMS.md`, C8).
//!
//! What no protocol can recover is reported, never papered over: a prioritized RELEASE whose
//! check word fails loses its resources (capacity drops below `k`, with an `OutOfRange`
//! report; the token is never duplicated, and it learns the loss, so a request that fits what
//! is left is still served and only one above it waits; with recovery on, the turnover makes
//! the token again with all `k` units once no grant happened for a lease bound while requests
//! wait, `docs/ALGORITHMS.md` F11), and a lost or corrupted look-ahead
//! DISCONNECT leaves its receivers waiting for the host that left until it returns. After a corruption, a node may need its neighbour's next keepalive to progress. A
//! consistent rewrite of several fields (check word included) is a forgery, which only
//! authentication can tell. Every rule, per field, with the tests that pin it:
//! `docs/ALGORITHMS.md`, "Threat model".
//!
//! ## Failure model
//!
//! Beyond the threat model above, hosts and networks fail. The crate names five failures:
//! **crash-stop** (a host stops for good), **crash-restart** (a host comes back with empty
//! state, under a new incarnation), **loss on a breaking link** (a message, a token among
//! them, in flight when its link failed: the [`session`] reports it "possibly lost"),
//! **partition** and **merge** (the network splits into parts that cannot reach each other,
//! and later joins again). Four guarantees are stated against them, each under its own
//! assumption; `docs/ALGORITHMS.md`, "Failure model and recovery", derives each bound and
//! names the tests that pin it.
//!
//! - **(a) Fences, always.** No timing assumption: a protected resource that admits fences with
//!   [`fence::Fences`] never accepts a grant after a later one for the same unit (for
//!   prioritized h-out-of-k, whose concurrent holders arrive out of grant order,
//!   [`fence::Fences::distinct`]: never the same grant twice, nor one of an older generation). A token made
//!   again after a loss starts a new *generation*, and the generation is the high part of
//!   every fence value it issues, so its grants are later than every grant of the tokens
//!   before it.
//! - **(b) At most k acting holders** (1 for the permission algorithms), with every host's
//!   clock drifting at most ρ and the delivery bounds of the mode: every entry has a *lease*
//!   ([`Action::LeaseExpired`] ends it), and nothing is granted again until the lease of
//!   every entry it could overlap has ended on every clock.
//! - **(c) At most k tokens in existence**, with a live majority of a configured membership,
//!   in a majority mode, including across partitions.
//! - **(d) Liveness**: after the last crash, loss or partition heals, every live requester is
//!   served within a bound each mode states.
//!
//! | algorithm, mode | (a) | (b) | (c) | (d) |
//! | --- | --- | --- | --- | --- |
//! | token algorithms, the papers' (default) | yes | yes: nothing is ever made again | yes | only without crashes and losses: a lost token is gone, reported by the session |
//! | KRL/KRLF and prioritized with [`token::Recovery`] | yes | crashes and losses, in a part whose beacons arrive within the bounds; not across a partition | one token per id and part; a merge destroys the older | after the last fault, within the silence and claim bounds plus service (prioritized: a crashed holder's units, or units lost to a corrupted count, within a lease bound and the token's return; restarted hosts within a bound independent of the heights: `docs/ALGORITHMS.md`, F11–F14) |
//! | KRL/KRLF and prioritized with [`token::Recovery::with_majority`] | yes | as with recovery | no round of a token id made twice system-wide; a part without a majority of the membership makes none (a token cut off in a minority lives on there until the merge destroys it) | in a part with a live majority whose promises are kept ([`Action::Persist`]), within the same bounds plus two claim waits, however many rounds a minority promised before |
//! | permission algorithms, the papers' (default) | yes | yes: nobody is excluded | n/a | only without crashes (a host restarted under a new incarnation is served again) |
//! | permission algorithms with exclusion ([`Event::Suspect`] or a timeout) | yes | when every exclusion is of a crashed host, or by timeout with a lease and [`exclusion_safe`](ricart_agrawala::Settings::exclusion_safe); not across a partition | n/a | after the last crash, within the exclusion timeout plus service |
//! | permission algorithms with exclusion and majority | yes | also across partitions, and after they heal while a holder is inside: only a part with a majority enters, and a host heard again after a silence makes the node count every exclusion afresh (`docs/ALGORITHMS.md`, C9) | n/a | in the part with a majority, within the bound of C9 after the last fault |
//!
//! For the permission algorithms, (a) means: a later entry's fence is above every earlier
//! one's where the later host heard of it (`docs/ALGORITHMS.md`, F1); an entry that may follow
//! grants nobody heard of (a peer excluded or restarted since) starts a new fence generation
//! above every fence its host knew and above the one each peer it excludes would start, and
//! no two hosts ever start the same generation (C6), so two entries that each start one never
//! share a fence, and after any one crash no entry is refused by the resource; after several,
//! an entry may still be, which costs that entry, never (a).
//!
// `no_std` with `alloc`, always; the unit tests get std's prelude.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(unreachable_pub)]

extern crate alloc;
// `arbitrary`'s derives name `std`.
#[cfg(all(feature = "std", not(test)))]
extern crate std;

#[cfg(feature = "codec")]
pub mod codec;
pub mod discovery;
#[cfg(feature = "codec")]
pub mod driver;
mod error;
mod event;
pub mod fence;
pub mod look_ahead;
mod node;
mod peer_map;
pub mod permission;
pub mod prioritized;
pub mod queue;
pub mod reverse_link;
pub mod ricart_agrawala;
mod seal;
pub mod session;
pub mod timers;
pub mod token;
mod violation;

pub use error::Error;
pub use event::{Action, Anomaly, CsRequest, Event, Report, Severity, TimerId};
pub use fence::{Fence, FenceCopies};
pub use node::{Actions, NodeId, Protocol, Status};
pub use violation::Violation;
