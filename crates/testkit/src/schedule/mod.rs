//! Schedules: what happens to a network, step by step, and the runs that apply one to a driver
//! and check it.
//!
//! - A token network ([`TokenNet`](crate::TokenNet)) runs a [`TokenSchedule`]: steps
//!   ([`TokenOp`]: requests, releases, deliveries, symmetric link changes) and the faults timed
//!   between them ([`TimedFault`]: corruption of a message in flight, link events noticed at one
//!   end at a time, and in a network with recovery the failure model's faults: crashes,
//!   restarts, partitions and merges, tokens lost on breaking links, timers fired at will). [`run_token_schedule`] applies it with safety checked after every step,
//!   then drains: every waiting node must be served.
//! - A permission system ([`PermNet`](crate::PermNet)) runs a sequence of [`PermissionOp`]s
//!   (deliveries in any order, losses, duplicates, timer expiries, mode changes, corruption):
//!   [`run_permission_schedule`].
//!
//! Every choice in a step (which node, which link, which message) is taken modulo what exists
//! when the step comes, so any schedule fits any network, and a step that is not possible then
//! does nothing. The [strategies](crate::strategy) generate schedules with fault profiles; the
//! [fuzz bodies](crate::fuzz) decode them from fuzzer bytes (their layouts are frozen:
//! [`crate::fuzz`] says how).

use crate::corrupt::{Corruption, How, Value};

mod permission;
mod token;

pub use permission::{apply_permission_schedule, run_permission_schedule, PermissionOp};
pub use token::{
    apply_token_schedule, run_token_schedule, TimedFault, TokenFault, TokenOp, TokenSchedule,
};
pub(crate) use token::{apply_token_steps, drain_token_steps};

/// Steps beyond this are ignored (and as many timed faults), so one schedule is one bounded
/// run.
const MAX_OPS: usize = 256;

/// A corruption step: corrupt the `msg`-th message in flight not corrupted yet, as `how` says:
/// rewrite field `field` (modulo the message's fields) to `value`, change its kind into its
/// `field`-th other kind, or flip bits of its frame ([`How::corruption`]). What the token
/// networks' [`TokenFault::Corrupt`] and the permission systems' [`PermissionOp::Corrupt`]
/// carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CorruptStep {
    /// Which message (modulo the messages not corrupted yet).
    pub msg: u8,
    /// Which field (modulo the message's fields), or which other kind.
    pub field: u8,
    /// What the field becomes.
    pub value: Value,
    /// A field, the kind, or bits of the frame.
    pub how: How,
}

impl CorruptStep {
    /// The corruption it asks of the message it picks.
    pub fn corruption(self) -> Corruption {
        self.how.corruption(usize::from(self.field), self.value)
    }
}

/// The `i`-th of `items`, modulo their number; `None` if there are none.
fn nth<T: Copy>(items: &[T], i: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[usize::from(i) % items.len()])
}
