//! # manet-mutex-testkit
//!
//! A test kit for property-testing the [`manet_mutex`] algorithms on your own topologies and
//! fault profiles. The protocol crate's own tests, fuzz targets and models use the same pieces.
//!
//! A property test needs three things, all at the crate root:
//!
//! - **A driver**, built on your topology (node ids are [`NodeId`]s: edges as
//!   `(NodeId, NodeId)`, token holders as `NodeId`):
//!   - [`TokenNet`]: a network of a token algorithm ([`manet_mutex::reverse_link`],
//!     [`manet_mutex::prioritized`]) over FIFO links, driven one chosen step at a time: deliver
//!     the head of a link, fail or form a link (each end told at its own time, within the
//!     algorithms' link contract), corrupt a message in flight (a field, its kind, or bits of
//!     its frame, which the link session retransmits). It checks safety (knowing what
//!     corruption destroyed) and liveness by a fair drain.
//!   - [`PermNet`]: a system of a permission algorithm ([`manet_mutex::look_ahead`],
//!     [`manet_mutex::ricart_agrawala`]) whose messages form a bag: deliver any one, lose,
//!     duplicate, replay or corrupt it (a field, its kind, or bits of its frame, which the
//!     receiver's codec drops: a loss), fire any armed timer, change modes. Same checks.
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
//!   [`TokenFaults`]), [`permission_schedule`] ([`PermissionOp`]s, [`PermissionFaults`]),
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
pub use token_net::{TokenHarness, TokenNet};

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use manet_mutex::{Action, Error, Event, NodeId, Protocol};

/// Feed `event` to `node` (node `at`) and collect its actions; with a trace, record both.
/// What every driver does first with an event.
fn traced_handle<P: Protocol>(
    node: &mut P,
    at: NodeId,
    event: Event<P::Message>,
    trace: &mut Option<Vec<String>>,
) -> Result<Vec<Action<P::Message>>, Error> {
    let described = trace.is_some().then(|| format!("{at:?} <- {event:?}"));
    let outcome = node
        .handle(event)
        .map(|actions| actions.collect::<Vec<_>>());
    if let (Some(trace), Some(event)) = (trace, described) {
        trace.push(format!("{event}\n     -> {outcome:?}"));
    }
    outcome
}

/// Whether the drivers keep a tape of every run for the viewer, so that any failure can be
/// drawn: yes, unless `MANET_MUTEX_RECORD=0` (a copy of each event; the drawing is made by
/// replaying the tape only when a failure message asks for it).
fn recording_on() -> bool {
    std::env::var_os("MANET_MUTEX_RECORD").is_none_or(|v| v != "0")
}

/// Start keeping a driver's text trace (if `on`) and its tape (if `on`, or unless
/// `MANET_MUTEX_RECORD=0`), once: the drivers' shared `traced`.
fn start_tracing<P: manet_mutex_sim::trace::Visible + Clone>(
    trace: &mut Option<Vec<String>>,
    tape: &mut Option<manet_mutex_sim::trace::Tape<P>>,
    nodes: &[P],
    links: impl FnOnce() -> Vec<(u32, u32)>,
    on: bool,
) {
    if on {
        trace.get_or_insert_with(Vec::new);
    }
    if (on || recording_on()) && tape.is_none() {
        *tape = Some(manet_mutex_sim::trace::Tape::new(nodes, links()));
    }
}

/// `$CARGO_TARGET_DIR`, else the `target` folder of the workspace the tests run in (cargo runs
/// a member's tests in the member's folder; the nearest folder up with a `Cargo.lock` is the
/// workspace's), else `target`.
fn target_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return dir.into();
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    cwd.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(&cwd)
        .join("target")
}

/// Write the recording as a viewer page under `target/manet-mutex-traces/` (see
/// [`target_dir`]), named by its content, and say where; empty without a recording.
fn write_page(recording: Option<manet_mutex_sim::trace::Recording>) -> String {
    let Some(recording) = recording else {
        return String::new();
    };
    let page = manet_mutex_sim::trace::html::page(&recording);
    let dir = target_dir().join("manet-mutex-traces");
    // A content hash names the file, so reruns of one counterexample overwrite one page.
    let name = format!("trace-{:016x}.html", fnv(&page));
    let path = dir.join(name);
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, page)) {
        Ok(()) => format!("\nviewer ({} steps): {}", recording.steps(), path.display()),
        Err(e) => format!(
            "\n(could not write the viewer page {}: {e})",
            path.display()
        ),
    }
}

/// FNV-1a of `text`: a cheap content fingerprint.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
