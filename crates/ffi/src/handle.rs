//! Handles: a registry of live nodes keyed by numbers that are never reused, so that a freed,
//! foreign or garbage handle is refused without being dereferenced.
//!
//! A `manet_mutex_node *` is not the address of anything: it carries the node's number
//! (1, 2, 3, ... in creation order). Every call looks the number up in the registry; a number
//! not there (never created, or freed) is `MANET_MUTEX_ERR_INVALID_HANDLE`. Each node sits
//! behind its own lock, so two threads calling with the same handle are serialized (memory
//! safe), and `manet_mutex_free` racing a call waits for nothing: the call keeps the node
//! alive until it returns.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use manet_mutex::driver::{Driver, Transmit};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala};

use crate::{Fail, ManetMutexNode};
use crate::{
    MANET_MUTEX_ERR_INTERNAL, MANET_MUTEX_ERR_INVALID_HANDLE, MANET_MUTEX_ERR_NULL_HANDLE,
};

/// The driver of one of the four node types.
#[derive(Debug)]
pub(crate) enum AnyDriver {
    /// KRL or KRLF.
    Krl(Driver<reverse_link::Node>),
    /// Prioritized h-out-of-k.
    Prioritized(Driver<prioritized::Node>),
    /// Look-ahead.
    LookAhead(Driver<look_ahead::Node>),
    /// Ricart–Agrawala.
    RicartAgrawala(Driver<ricart_agrawala::Node>),
}

/// `$body` with `$d` bound to the driver, whatever its node type.
macro_rules! with_driver {
    ($any:expr, $d:ident => $body:expr) => {
        match $any {
            $crate::handle::AnyDriver::Krl($d) => $body,
            $crate::handle::AnyDriver::Prioritized($d) => $body,
            $crate::handle::AnyDriver::LookAhead($d) => $body,
            $crate::handle::AnyDriver::RicartAgrawala($d) => $body,
        }
    };
}
pub(crate) use with_driver;

/// One node behind a handle.
#[derive(Debug)]
pub(crate) struct Node {
    /// The algorithm code it was created with.
    pub(crate) algorithm: u32,
    /// The number of nodes of its network (ids `0..nodes`).
    pub(crate) nodes: u32,
    pub(crate) driver: AnyDriver,
    /// A transmit polled from the driver that did not fit the caller's buffer: handed out
    /// first by the next `poll_transmit`.
    pub(crate) pending: Option<Transmit>,
    /// A panic was caught inside a call on this node: its state may be half updated, so
    /// every later call but `free` fails with `MANET_MUTEX_ERR_INTERNAL`.
    pub(crate) broken: bool,
}

type Shared = Arc<Mutex<Node>>;

/// The live nodes by number.
static REGISTRY: Mutex<BTreeMap<usize, Shared>> = Mutex::new(BTreeMap::new());
/// The next node's number (0 is the null handle, never given).
static NEXT: AtomicUsize = AtomicUsize::new(1);

fn registry() -> MutexGuard<'static, BTreeMap<usize, Shared>> {
    // The registry is only ever inserted into and removed from, never left half updated.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Register `node`: its handle.
pub(crate) fn insert(node: Node) -> *mut ManetMutexNode {
    let number = NEXT.fetch_add(1, Ordering::Relaxed);
    registry().insert(number, Arc::new(Mutex::new(node)));
    std::ptr::without_provenance_mut(number)
}

fn number(handle: *const ManetMutexNode) -> Result<usize, Fail> {
    match handle.addr() {
        0 => Err(Fail::new(
            MANET_MUTEX_ERR_NULL_HANDLE,
            "the node handle is NULL",
        )),
        n => Ok(n),
    }
}

fn unknown(n: usize) -> Fail {
    Fail::new(
        MANET_MUTEX_ERR_INVALID_HANDLE,
        format!("{n:#x} is no live node handle (freed already, or never created)"),
    )
}

/// Remove the node behind `handle` from the registry.
pub(crate) fn remove(handle: *mut ManetMutexNode) -> Result<(), Fail> {
    let n = number(handle)?;
    registry().remove(&n).map(drop).ok_or_else(|| unknown(n))
}

/// `f` on the node behind `handle`. A panic inside `f` marks the node broken.
pub(crate) fn with_node<T>(
    handle: *const ManetMutexNode,
    f: impl FnOnce(&mut Node) -> Result<T, Fail>,
) -> Result<T, Fail> {
    let n = number(handle)?;
    let shared = registry().get(&n).cloned().ok_or_else(|| unknown(n))?;
    let mut node = shared.lock().unwrap_or_else(PoisonError::into_inner);
    if node.broken {
        return Err(Fail::new(
            MANET_MUTEX_ERR_INTERNAL,
            "an earlier call on this node failed internally; only manet_mutex_free is allowed",
        ));
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut node))) {
        Ok(result) => result,
        Err(panic) => {
            node.broken = true;
            Err(Fail::panicked(panic.as_ref()))
        }
    }
}
