//! # manet-mutex-testkit
//!
//! A test kit for property-testing the [`manet_mutex`] algorithms on your own topologies and
//! fault profiles. The protocol crate's own tests, fuzz targets and models use the same pieces.
//!
//! A property test needs three things, all at the crate root:
//!
//! - **A driver**, built on your topology, with [`NodeId`](manet_mutex::NodeId)s for nodes
//!   (edges as `(NodeId, NodeId)`, token holders as `NodeId`):
//!   - [`TokenNet`]: a network of a token algorithm ([`manet_mutex::reverse_link`],
//!     [`manet_mutex::prioritized`]) over FIFO links, driven one chosen step at a time: deliver
//!     the head of a link, fail or form a link (each end told at its own time, within the
//!     algorithms' link contract), corrupt a message in flight (a field, its kind, or bits of
//!     its frame, which the link session retransmits). It checks safety (knowing what
//!     corruption destroyed) and liveness by a fair drain. A network with token recovery also
//!     takes the failure model's faults (issue 23): crash-stop, crash-restart with empty state,
//!     partitions and merges, a token lost on a breaking link, and armed timers fired at will
//!     ([`TokenNet::crash`] lists what is checked); its drain runs on the network's clock.
//!   - [`PermNet`]: a system of a permission algorithm ([`manet_mutex::look_ahead`],
//!     [`manet_mutex::ricart_agrawala`]) whose messages form a bag: deliver any one, lose,
//!     duplicate, replay or corrupt it (a field, its kind, or bits of its frame, which the
//!     receiver's codec drops: a loss), fire any armed timer, change modes; and hosts fail:
//!     crash, restart under a new incarnation, are suspected or trusted by a peer's detector,
//!     or are cut off by a partition, with an optional perfect failure detector. Same checks.
//!   - [`SessionNet`]: a token network whose cores talk through link
//!     [sessions](manet_mutex::session) over a datagram network that loses, duplicates, delays
//!     and reorders, with links and nodes falling silent and links closed ([`datagram`]). It
//!     follows every message, so it checks that none is duplicated or lost unreported.
//!
//!   [`TokenNet`] and [`PermNet`] also have a hand-driven mode ([`TokenNet::checked`],
//!   [`PermNet::checked`]) that checks safety after every event and panics with the trace, for
//!   staging a scenario step by step.
//! - **Schedules** from proptest strategies with fault profiles, shrinkable to a short
//!   counterexample: [`token_schedule`] ([`TokenSchedule`], faults weighted by
//!   [`TokenFaults`]; [`TokenFaults::CRASHES`] and [`TokenFaults::RECOVERY`] add the failure
//!   model's faults, for networks with recovery: [`harness_recovery`], in majority mode [`harness_majority`]), [`permission_schedule`] ([`PermissionOp`]s, [`PermissionFaults`]),
//!   [`session_schedule`] ([`SessionSchedule`]); [`cases`] is the crate's convention for case
//!   counts. More strategies are in [`strategy`].
//! - **A run** that applies a schedule to a driver, checks safety after every step, drains and
//!   checks liveness, and panics with the trace on a violation: [`run_token_schedule`],
//!   [`run_permission_schedule`], [`run_session_schedule`] ([`apply_token_schedule`] and
//!   [`apply_permission_schedule`] stop before the drain). See [`schedule`].
//!
//! The detailed pieces are in modules:
//! - [`corrupt`]: the corrupt operation every driver shares ([`corrupt::Corruption`]): a
//!   field rewritten (which value it becomes, [`corrupt::Fields`] for every message type), the
//!   kind changed into another kind the message's encoding decodes as ([`corrupt::kinds_of`],
//!   computed through the wire codec, whose messages' check words are tagged with their kind),
//!   or 1 to 4 bits of the message's frame flipped ([`corrupt::Flip`]; the frame check always
//!   catches them). The drivers count what it did ([`corrupt::Counts`]). This is why the
//!   test kit turns on the protocol crate's `codec` feature.
//! - [`fuzz`]: the fuzz bodies and their arbitrary inputs, plumbing for the fuzz targets in
//!   `fuzz/` and the protocol crate's seeded tests.
//! - The invariant checkers are each algorithm's `invariants` module.
//!
//! Set `MANET_MUTEX_TRACE=1` to keep the event trace of every network for failure messages.
//!
//! # Failures
//!
//! Every check of the drivers returns a [`manet_mutex::Violation`], the type of the
//! algorithms' own invariant checks: a broken algorithm invariant (a rule of its `invariants`
//! module, such as `mutual-exclusion` or `token-count`) is passed through, and what a driver
//! finds itself is one of these rules, with the node at fault when there is one:
//!
//! | rule | reported by | what must hold |
//! | --- | --- | --- |
//! | `driver-contract` | [`TokenNet::check_safety`], [`PermNet::check_safety`] (from [`TokenNet::fault`], [`PermNet::fault`]) | a node keeps the driving contract: it sends only over a link it knows (`TokenNet`) or to another existing host (`PermNet`), returns only actions the driver knows, accepts every valid event, and changes nothing when it returns an `Err` |
//! | `fence-order` | the same | every entry's fence is above the highest fence of its lane so far (`PermNet`: unless the run allows the resource to refuse one, [`PermNet::refusal_allowed`]: after wrong suspicions or two crashes; `TokenNet` with recovery: unless its generation is older than one admitted) |
//! | `suspect-anomaly` | [`TokenNet`] with recovery, after every event | no suspect anomaly but those a failure explains (and none checked after a corruption) |
//! | `regeneration` | [`TokenNet`] with recovery, after every event | no generation is made twice (a restarted node keeps its last round: `docs/ALGORITHMS.md` F8), and no token is made again by a claim while every timer kept time and no failure destroyed or cut off anything |
//! | `lease-exclusion` | [`TokenNet::check_safety`] with recovery, every timer on time | at most `k` units acting (in the critical section, lease not expired) per connected part (rule (b)) |
//! | `tokens-per-part` | [`TokenNet::drain`] with recovery | once quiet after the drain, one token of each id in every connected part |
//! | `liveness` | [`TokenNet::drain`], [`TokenNet::settle`], [`PermNet::drain`], [`PermNet::settle`], [`SessionNet::heal_and_drain`] | every waiting node is served within the drain's rounds (or budget), except where a fault destroyed what liveness needs (each driver's docs say where) |
//! | `lossless-liveness` | [`PermNet::drain`], [`PermNet::settle`] | until a message is lost, the messages already sent serve every waiting host: no round is left with nothing to deliver while one waits |
//! | `quiescence` | [`TokenNet::run`], [`TokenNet::drain`] with recovery, [`PermNet::deliver_all`], [`SessionNet::heal_and_drain`] | the network goes quiet: nothing in flight within the delivery limit, or once every request is served; with recovery, no message storm (more than [`STORM`] in flight) while every timer kept time |
//! | `message-accounting` | [`SessionNet::check_accounting`] | every message sent and neither delivered nor reported lost is held by its sender's session, by that one only, and none reported lost is still held |
//! | `links-formed` | [`SessionNet::new`], [`SessionNet::heal_and_drain`] | the sessions form every link of the graph: in the calm warm-up, and again after the faults end |
//! | `configuration` | [`SessionNet::new`] | the cores and the sessions can be built from the configuration |
//!
//! A drain's or settle's violation carries, at the end of its detail, where it was found (with
//! the disconnected hosts away, when every node asked once more) and the trace with the
//! viewer page ([`TokenNet::trace_text`]). [`TokenNet::new`], [`TokenNet::with_edges`] and
//! [`PermNet::new`] return the protocol's [`manet_mutex::Error`] (an invalid configuration);
//! [`SessionNet::new`] also warms the network up, so it reports a `Violation`. The runs
//! ([`run_token_schedule`], …) panic with the violation's text.
//!
//! # Example
//!
//! KRL with two tokens on a ring of five nodes that never changes, with corrupted fields (and
//! frame bits flipped, which the link session retransmits) but no one-sided link events: every
//! schedule keeps safety, and the drain at the end serves every waiting node.
//!
//! ```
//! use manet_mutex::reverse_link::{Node, Settings};
//! use manet_mutex::{CsRequest, NodeId};
//! use manet_mutex_testkit::{run_token_schedule, token_schedule, TokenFaults, TokenNet};
//! use proptest::strategy::Just;
//! use proptest::test_runner::{Config, TestRunner};
//!
//! let ring: Vec<_> = (0..5).map(|i| (NodeId(i), NodeId((i + 1) % 5))).collect();
//! let holders = [NodeId(0), NodeId(2)];
//! let faults = TokenFaults { corrupt: 1, flip: 1, ..TokenFaults::NONE };
//! let schedules = token_schedule(Just(()), 0, 0..60, faults);
//! let config = Config { failure_persistence: None, ..Config::with_cases(16) };
//! let mut runner = TestRunner::new(config);
//! runner
//!     .run(&schedules, |schedule| {
//!         let net = TokenNet::<Node>::with_edges(5, &ring, &holders, Settings::new(2)).unwrap();
//!         // Panics (and proptest shrinks the schedule) on any violation.
//!         run_token_schedule(net, &schedule, |()| CsRequest::ONE, &"ring of five");
//!         Ok(())
//!     })
//!     .unwrap();
//! ```

#![deny(missing_docs)]
#![deny(unreachable_pub)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod corrupt;
pub mod datagram;
mod driver;
pub mod fuzz;
mod perm_net;
pub mod schedule;
pub mod strategy;
mod token_net;

pub use datagram::{run_session_schedule, SessionNet, SessionOp, SessionSchedule, Weather};
pub use perm_net::{Flight, PermNet, PermissionHarness};
pub use schedule::{
    apply_permission_schedule, apply_token_schedule, run_permission_schedule, run_token_schedule,
    PermissionOp, TimedFault, TokenFault, TokenOp, TokenSchedule,
};
pub use strategy::{
    cases, permission_schedule, session_schedule, token_schedule, PermissionFaults, TokenFaults,
};
pub use token_net::{harness_majority, harness_recovery, Failures, TokenHarness, TokenNet, STORM};
