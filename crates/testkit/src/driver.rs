//! What the drivers share: feeding a node an event with its trace and tape, hand-driven mode
//! and contract breaches ([`Driver`]), the rules they check themselves ([`rule`]), and the
//! viewer page a failure message names.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{Display, Write};

use manet_mutex::{Action, Error, Event, Fence, NodeId, Protocol, Violation};
use manet_mutex_sim::trace::{Tape, Visible};

use crate::{PermNet, PermissionHarness, TokenHarness, TokenNet};

/// The rules the drivers check themselves, as the [`Violation::rule`]s they report (the crate
/// docs list them); the algorithms' own rules come from their `invariants` modules.
pub(crate) mod rule {
    /// A node broke the driving contract: it sent to itself, to an unknown node or over a link
    /// it does not know, returned an action the driver does not know, rejected a valid event,
    /// or returned an `Err` but changed.
    pub(crate) const DRIVER_CONTRACT: &str = "driver-contract";
    /// A node entered the critical section with a fence not above the highest of its lane.
    pub(crate) const FENCE_ORDER: &str = "fence-order";
    /// A drain or settle did not serve every waiting node within its rounds or budget.
    pub(crate) const LIVENESS: &str = "liveness";
    /// `PermNet`'s drain: nothing was lost and nothing is left to deliver, yet a host waits.
    pub(crate) const LOSSLESS_LIVENESS: &str = "lossless-liveness";
    /// The network did not go quiet: still busy after a delivery limit, or messages left in
    /// flight where the algorithm must go quiet.
    pub(crate) const QUIESCENCE: &str = "quiescence";
    /// `SessionNet`: a message held by two sessions, vanished unreported, or reported lost but
    /// still held.
    pub(crate) const MESSAGE_ACCOUNTING: &str = "message-accounting";
    /// `SessionNet`: the sessions did not form every link of the graph in time.
    pub(crate) const LINKS_FORMED: &str = "links-formed";
    /// `SessionNet::new`: the nodes or sessions cannot be built from the configuration.
    pub(crate) const CONFIGURATION: &str = "configuration";
    /// `TokenNet` with recovery: a node reported a suspect anomaly that no fault explains.
    pub(crate) const SUSPECT_ANOMALY: &str = "suspect-anomaly";
    /// `TokenNet` with recovery: a token was made again though none was lost and every timer
    /// kept time.
    pub(crate) const REGENERATION: &str = "regeneration";
    /// `TokenNet` with recovery, every timer on time: more than `k` units acting in one
    /// connected part (rule (b)).
    pub(crate) const LEASE_EXCLUSION: &str = "lease-exclusion";
    /// `TokenNet` with recovery, once quiet after the drain: a connected part without one
    /// token of each id.
    pub(crate) const TOKENS_PER_PART: &str = "tokens-per-part";
    /// `TokenNet` in majority mode: a token id's round made twice anywhere (F9: promises are
    /// exclusive per round and any two majorities share a member).
    pub(crate) const ROUND_MADE_TWICE: &str = "round-made-twice";
}

/// `violation` with `more` added to its detail (where it was found, the trace), its rule and
/// node unchanged.
pub(crate) fn amend(mut violation: Violation, more: impl Display) -> Violation {
    // Writing to a `String` cannot fail.
    let _ = write!(violation.detail, "{more}");
    violation
}

/// Node `at` entered with `fence`, not above `highest`, the highest of its lane so far.
pub(crate) fn fence_went_back(at: NodeId, fence: Fence, highest: u64) -> Violation {
    let detail = format!("entered with {fence:?}, not above {highest}: a fence went back");
    Violation::new(rule::FENCE_ORDER, Some(at), detail)
}

/// Node `at` broke the driving contract: `detail` says how.
pub(crate) fn contract(at: NodeId, detail: String) -> Violation {
    Violation::new(rule::DRIVER_CONTRACT, Some(at), detail)
}

/// What a node's `handle` gave: its actions, or its error.
pub(crate) type Handled<M> = Result<Vec<Action<M>>, Error>;

/// Feed `event` to `node` (node `at`) and collect its actions; with a trace, record both.
/// What every driver does first with an event.
pub(crate) fn traced_handle<P: Protocol>(
    node: &mut P,
    at: NodeId,
    event: Event<P::Message>,
    trace: &mut Option<Vec<String>>,
) -> Handled<P::Message> {
    let described = trace.is_some().then(|| format!("{at:?} <- {event:?}"));
    let outcome = node
        .handle(event)
        .map(|actions| actions.collect::<Vec<_>>());
    if let (Some(trace), Some(event)) = (trace, described) {
        trace.push(format!("{event}\n     -> {outcome:?}"));
    }
    outcome
}

/// A driver's nodes and what it keeps for hand-driven mode and failure messages, borrowed.
pub(crate) struct Parts<'a, P: Visible + Clone> {
    /// The nodes, node `i` at index `i`.
    pub(crate) nodes: &'a mut [P],
    /// Whether the driver is in hand-driven mode (safety checked after every event, a breach
    /// or violation panics).
    pub(crate) checked: bool,
    /// The first contract breach seen: once set, the driver stops changing.
    pub(crate) fault: &'a mut Option<Violation>,
    /// The text trace, if kept.
    pub(crate) trace: &'a mut Option<Vec<String>>,
    /// The tape for the viewer, if kept.
    pub(crate) tape: &'a mut Option<Tape<P>>,
}

/// What the step-by-step drivers ([`TokenNet`](crate::TokenNet), [`PermNet`](crate::PermNet))
/// share: how an event reaches a node, and what a contract breach does.
pub(crate) trait Driver {
    /// The algorithm.
    type Node: Protocol + Clone + PartialEq + Visible;

    /// The driver's parts.
    fn parts(&mut self) -> Parts<'_, Self::Node>;

    /// The trace for a failure message (the driver's `trace_text`).
    fn failure_text(&self) -> String;

    /// Record a contract breach; in hand-driven mode, panic with it.
    fn breach(&mut self, fault: Violation) {
        if self.parts().checked {
            panic!("{fault}\n{}", self.failure_text());
        }
        *self.parts().fault = Some(fault);
    }

    /// Feed `event` to node `at`, onto the tape and into the trace, and collect its actions:
    /// `None` once a breach stopped the driver. Local misuse returns the node's `Err`, and in
    /// hand-driven mode a node that returned it but changed is a breach too.
    fn handle(
        &mut self,
        at: NodeId,
        event: Event<<Self::Node as Protocol>::Message>,
    ) -> Option<Handled<<Self::Node as Protocol>::Message>> {
        let parts = self.parts();
        if parts.fault.is_some() {
            return None;
        }
        let node = &mut parts.nodes[at.index()];
        let before = parts.checked.then(|| node.clone());
        if let Some(t) = parts.tape {
            t.push(at, &event);
        }
        let outcome = traced_handle(node, at, event, parts.trace);
        if let Err(e) = &outcome {
            if before.is_some_and(|b| b != *node) {
                self.breach(contract(at, format!("returned {e} but changed")));
            }
        }
        Some(outcome)
    }
}

/// [`Driver`] for a driver type whose fields `nodes`, `checked`, `fault`, `trace` and `tape`
/// are its [`Parts`], and whose `trace_text` is its failure text.
macro_rules! driver {
    ($($net:ident<$node:ident: $harness:ident>),*) => {$(
        impl<$node: $harness> Driver for $net<$node> {
            type Node = $node;

            fn parts(&mut self) -> Parts<'_, $node> {
                Parts {
                    nodes: &mut self.nodes,
                    checked: self.checked,
                    fault: &mut self.fault,
                    trace: &mut self.trace,
                    tape: &mut self.tape,
                }
            }

            fn failure_text(&self) -> String {
                self.trace_text()
            }
        }
    )*};
}

driver!(TokenNet<P: TokenHarness>, PermNet<H: PermissionHarness>);

/// Whether the drivers keep a tape of every run for the viewer, so that any failure can be
/// drawn: yes, unless `MANET_MUTEX_RECORD=0` (a copy of each event; the drawing is made by
/// replaying the tape only when a failure message asks for it).
fn recording_on() -> bool {
    std::env::var_os("MANET_MUTEX_RECORD").is_none_or(|v| v != "0")
}

/// Start keeping a driver's text trace (if `on`) and its tape (if `on`, or unless
/// `MANET_MUTEX_RECORD=0`), once: the drivers' shared `traced`.
pub(crate) fn start_tracing<P: Visible + Clone>(
    trace: &mut Option<Vec<String>>,
    tape: &mut Option<Tape<P>>,
    nodes: &[P],
    links: impl FnOnce() -> Vec<(u32, u32)>,
    on: bool,
) {
    if on {
        trace.get_or_insert_with(Vec::new);
    }
    if (on || recording_on()) && tape.is_none() {
        *tape = Some(Tape::new(nodes, links()));
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

/// Write the run on `tape` as a viewer page under `target/manet-mutex-traces/` (see
/// [`target_dir`]), named by its content, and say where; empty without a tape.
pub(crate) fn write_page<P: Visible + Clone>(tape: Option<&Tape<P>>) -> String {
    let Some(recording) = tape.map(Tape::recording) else {
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
