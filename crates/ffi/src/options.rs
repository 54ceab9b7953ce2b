//! The creation options ([`ManetMutexOptions`]), their defaults, and the driver they build.

use manet_mutex::driver::{Config, Driver};
use manet_mutex::token::{Height, Promised, RaisePause, Recovery};
use manet_mutex::{discovery, look_ahead, prioritized, reverse_link, ricart_agrawala, session};
use manet_mutex::{Error, NodeId};

use crate::handle::AnyDriver;
use crate::{Fail, ManetMutexPromise};
use crate::{
    MANET_MUTEX_ERR_INVALID_ARGUMENT, MANET_MUTEX_ERR_INVALID_CONFIG, MANET_MUTEX_ERR_NULL_POINTER,
};
use crate::{MANET_MUTEX_KRL, MANET_MUTEX_KRLF, MANET_MUTEX_LOOK_AHEAD, MANET_MUTEX_PRIORITIZED};
use crate::{MANET_MUTEX_POLICY_EQUAL, MANET_MUTEX_POLICY_EXPLICIT};
use crate::{MANET_MUTEX_POLICY_MAX_CONCURRENCY, MANET_MUTEX_RICART_AGRAWALA};

/// How to create a node (`manet_mutex_new`). Fill it with `manet_mutex_options_default`,
/// then change what you need. Every time is in **microseconds**, the unit of every `now_us` passed in.
///
/// Fields marked "token" apply to KRL, KRLF and prioritized, "permission" to look-ahead and
/// Ricart–Agrawala; the others ignore them.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ManetMutexOptions {
    /// `MANET_MUTEX_KRL`, `MANET_MUTEX_KRLF`, `MANET_MUTEX_PRIORITIZED`,
    /// `MANET_MUTEX_LOOK_AHEAD` or `MANET_MUTEX_RICART_AGRAWALA`.
    pub algorithm: u32,
    /// This node's id, `0..nodes`; peers are named by their ids in every call.
    pub id: u32,
    /// The number of nodes of the network (ids `0..nodes`), at least 1. Every node of a
    /// network must be created with the same `nodes` and the same algorithm settings.
    pub nodes: u32,
    /// KRL/KRLF: the number of tokens, held initially by nodes `0..k` (`1..=nodes`).
    /// Prioritized: the number of resources (the token starts at node 0). Permission: must
    /// be 1. Default 1.
    pub k: u32,
    /// Prioritized: `MANET_MUTEX_POLICY_EQUAL` (default, FCFS), `MANET_MUTEX_POLICY_EXPLICIT`
    /// (the request's priority, larger first) or `MANET_MUTEX_POLICY_MAX_CONCURRENCY`.
    pub policy: u32,
    /// Prioritized: how much aging raises every queued priority, at least 1. Default 1.
    pub aging_step: u64,
    /// KRLF: hold an idle token this long before forwarding it; 0 forwards at once (the
    /// paper). Default 5,000 (5 ms).
    pub idle_pause_us: u64,
    /// Permission: a REQUEST is sent again after this long without its replies, at least 1.
    /// Default 20,000 (20 ms).
    pub retransmit_us: u64,
    /// Look-ahead: the seed of the initial `Info_set` matrix (every node the same). Default 0.
    pub seed: u64,
    /// Every entry is leased for this long (0: no lease). Permission: the lease of
    /// recovery. Token: the lease of `recovery` (required, at least 1, when `recovery` is
    /// on). Default 0.
    pub lease_us: u64,
    /// Permission: exclude a peer silent through this many retransmission timeouts (0: never).
    /// Default 0.
    pub exclusion: u32,
    /// Permission: enter only with the grants of a strict majority. Default false.
    pub majority: bool,
    /// Permission: this run of the host, 0 at first, larger after every restart with empty
    /// state. Default 0.
    pub incarnation: u32,
    /// Token: recovery of lost tokens (beacons, claims, regeneration, leases). Default false.
    pub recovery: bool,
    /// Token recovery: a holder's beacon at most this often, at least 1. Default 200,000.
    pub beacon_every_us: u64,
    /// Token recovery: the longest a message over a link takes, retransmissions included.
    /// Default the session's liveness timeout, 400,000.
    pub hop_bound_us: u64,
    /// Token recovery: the most hops across a connected part. Default `nodes - 1` (at least 1).
    pub diameter: u32,
    /// Token recovery: the most any clock drifts, parts per million. Default 100.
    pub drift_ppm: u32,
    /// Token recovery: majority mode over the ids `0..majority_members` (0: off). Default 0.
    pub majority_members: u32,
    /// Token: the node restarted with empty state (no token, learns everything anew).
    /// Default false.
    pub restarted: bool,
    /// Token, with `restarted`: the highest round of the generations the node made before
    /// (from its `TOKEN_REGENERATED`/`TOKEN_RENUMBERED` events), so it may claim at once;
    /// negative: unknown (it waits until it has heard of every token). Default -1.
    pub made_up_to: i32,
    /// Token, majority mode: the promises stored from `PERSIST` events before a restart
    /// (`promises_len` of them), or NULL. Copied; need not outlive the call.
    pub promises: *const ManetMutexPromise,
    /// The number of `promises`.
    pub promises_len: usize,
    /// Token: the link session resends unacknowledged frames after this long. Default 20,000.
    pub session_retransmit_us: u64,
    /// Token: a link silent (or without progress) this long has failed. Default 400,000.
    pub session_liveness_us: u64,
    /// Token: an idle link gets a keepalive after this long. Default 100,000.
    pub session_keepalive_us: u64,
    /// Token: unanswered link `Hello`s back off up to this long apart. Default 1,000,000.
    pub session_max_backoff_us: u64,
    /// Token: frames in flight per link, `1..=4096`. Default 32.
    pub session_window: u32,
    /// Token: peers the session keeps state for. Default `max(nodes, 64)`.
    pub session_max_peers: u32,
    /// Token: the sessions' epochs start above this; a restarted node must start above every
    /// epoch it used (e.g. `incarnation << 32`). Default 0.
    pub epoch_base: u64,
    /// Neighbour discovery by broadcast hellos (`MANET_MUTEX_BROADCAST` transmits). Token
    /// algorithms need it, or `manet_mutex_connect` for every neighbour. Default true for the
    /// token algorithms, false for the permission ones (every host reaches every host
    /// through routing).
    pub discovery: bool,
    /// Discovery: the longest time between two hellos. Default 100,000 (100 ms).
    pub hello_interval_us: u64,
    /// Discovery: each wait is shortened by up to this much, below `hello_interval_us`.
    /// Default 25,000.
    pub hello_jitter_us: u64,
    /// Discovery: consecutive hellos heard before a peer is up, at least 1. Default 2.
    pub hello_up_after: u32,
    /// Discovery: hello intervals of silence before a peer is down, at least 2. Default 4.
    pub hello_missed: u32,
    /// Discovery: peers in the table, `1..=64`. Default 64.
    pub max_neighbours: u32,
    /// Discovery: the jitter's seed (the node's id is mixed in). Default 0.
    pub hello_seed: u64,
    /// The most informational events and direct datagrams that wait to be polled (at least
    /// 1). Default 1024.
    pub max_queued: u32,
    /// A 32-byte pre-shared key that authenticates every datagram, or NULL (default). Every
    /// node of a network must agree. Copied; need not outlive the call. Needs the `auth`
    /// feature (on by default); without it a key is refused.
    pub key: *const u8,
    /// Token: pace height raises (`docs/ALGORITHMS.md`, R15): the first pause; 0 raises at once
    /// (the papers). Where no token can be reached (a lost token's silence, a partition
    /// without one) unpaced partial reversal exchanges heights as fast as the radio carries
    /// them. Default 10,000 (10 ms).
    pub raise_pause_min_us: u64,
    /// Token: the longest raise pause (the pause doubles up to it while raises keep coming),
    /// at least `raise_pause_min_us`. Default 200,000 (200 ms).
    pub raise_pause_max_us: u64,
}

/// The default options of `algorithm` for node `id` of `nodes`.
pub(crate) fn defaults(algorithm: u32, id: u32, nodes: u32) -> ManetMutexOptions {
    let token = matches!(
        algorithm,
        MANET_MUTEX_KRL | MANET_MUTEX_KRLF | MANET_MUTEX_PRIORITIZED
    );
    let s = session::Settings::DEFAULT;
    let d = discovery::Settings::DEFAULT;
    const MS: u64 = 1000;
    ManetMutexOptions {
        algorithm,
        id,
        nodes,
        k: 1,
        policy: MANET_MUTEX_POLICY_EQUAL,
        aging_step: 1,
        idle_pause_us: 5 * MS,
        retransmit_us: s.retransmit_after * MS,
        seed: 0,
        lease_us: 0,
        exclusion: 0,
        majority: false,
        incarnation: 0,
        recovery: false,
        beacon_every_us: 200 * MS,
        hop_bound_us: s.liveness_after * MS,
        diameter: nodes.saturating_sub(1).max(1),
        drift_ppm: Recovery::DEFAULT_DRIFT_PPM,
        majority_members: 0,
        restarted: false,
        made_up_to: -1,
        promises: std::ptr::null(),
        promises_len: 0,
        session_retransmit_us: s.retransmit_after * MS,
        session_liveness_us: s.liveness_after * MS,
        session_keepalive_us: s.keepalive_after * MS,
        session_max_backoff_us: s.max_backoff * MS,
        session_window: s.window,
        session_max_peers: nodes.max(s.max_peers),
        epoch_base: 0,
        discovery: token,
        hello_interval_us: d.hello_interval * MS,
        hello_jitter_us: d.jitter * MS,
        hello_up_after: d.up_after,
        hello_missed: d.missed_hellos,
        max_neighbours: d.max_neighbours,
        hello_seed: d.seed,
        max_queued: 1024,
        key: std::ptr::null(),
        raise_pause_min_us: 10 * MS,
        raise_pause_max_us: 200 * MS,
    }
}

fn invalid(message: impl Into<String>) -> Fail {
    Fail::new(MANET_MUTEX_ERR_INVALID_ARGUMENT, message)
}

fn config_error(e: impl std::fmt::Display) -> Fail {
    Fail::new(MANET_MUTEX_ERR_INVALID_CONFIG, e.to_string())
}

fn core_config(e: Error) -> Fail {
    crate::from_core(e)
}

/// The driver `o` describes, started at `now`.
///
/// # Safety
///
/// `o.promises` (with `o.promises_len`) and `o.key` are null or valid for reads as documented.
pub(crate) unsafe fn build(o: &ManetMutexOptions, now: u64) -> Result<AnyDriver, Fail> {
    if o.nodes == 0 || o.nodes == u32::MAX {
        return Err(invalid("nodes must be 1..=4294967294"));
    }
    if o.id >= o.nodes {
        return Err(invalid(format!(
            "id {} is not below nodes ({})",
            o.id, o.nodes
        )));
    }
    let me = NodeId(o.id);
    let mut config = Config::DEFAULT
        .with_session(
            session::Settings::new(
                o.session_retransmit_us,
                o.session_liveness_us,
                o.session_window,
            )
            .with_keepalive(o.session_keepalive_us)
            .with_max_backoff(o.session_max_backoff_us)
            .with_max_peers(o.session_max_peers),
        )
        .with_epoch_base(o.epoch_base)
        .with_max_queued(o.max_queued as usize);
    if o.discovery {
        config = config.with_discovery(
            discovery::Settings::new(o.hello_interval_us)
                .with_jitter(o.hello_jitter_us)
                .with_up_after(o.hello_up_after)
                .with_missed_hellos(o.hello_missed)
                .with_max_neighbours(o.max_neighbours)
                .with_seed(o.hello_seed),
        );
    }
    if !o.key.is_null() {
        config = with_key(config, o.key)?;
    }
    let promises: Vec<Promised> = match (o.promises.is_null(), o.promises_len) {
        (_, 0) => Vec::new(),
        (true, _) => {
            return Err(Fail::new(
                MANET_MUTEX_ERR_NULL_POINTER,
                "promises is NULL but promises_len is not 0",
            ))
        }
        (false, len) => {
            // SAFETY: the caller promises `promises` points at `promises_len` readable
            // promises (checked non-null above); they are plain integers, any bits valid.
            let slice = unsafe { std::slice::from_raw_parts(o.promises, len) };
            slice
                .iter()
                .map(|p| Promised::new(p.lane, p.ballot))
                .collect()
        }
    };
    let token = matches!(
        o.algorithm,
        MANET_MUTEX_KRL | MANET_MUTEX_KRLF | MANET_MUTEX_PRIORITIZED
    );
    if !token && o.k != 1 {
        return Err(invalid(
            "k must be 1 for the permission algorithms (one critical section)",
        ));
    }
    let recovery = (token && o.recovery).then(|| {
        let r = Recovery::new(o.beacon_every_us, o.lease_us, o.hop_bound_us, o.diameter)
            .with_drift_ppm(o.drift_ppm);
        match o.majority_members {
            0 => r,
            members => r.with_majority(members),
        }
    });
    let made_up_to = match o.made_up_to {
        m if m < 0 => None,
        m => Some(u16::try_from(m).map_err(|_| invalid("made_up_to must be below 65536"))?),
    };
    let restart_height = Height::new(0, 0, me);
    // A bad pair (max below min) is the core's to refuse, as every other setting.
    let raise_pause = (o.raise_pause_min_us > 0)
        .then(|| RaisePause::new(o.raise_pause_min_us, o.raise_pause_max_us));
    let driver = match o.algorithm {
        MANET_MUTEX_KRL | MANET_MUTEX_KRLF => {
            if o.k == 0 || o.k > o.nodes {
                return Err(invalid("k (tokens, held by nodes 0..k) must be 1..=nodes"));
            }
            let mut settings = reverse_link::Settings::new(o.k);
            if let Some(pause) = raise_pause {
                settings = settings.with_raise_pause(pause);
            }
            if o.algorithm == MANET_MUTEX_KRLF {
                settings = settings.with_forwarding(true);
                if o.idle_pause_us > 0 {
                    settings = settings.with_idle_pause(o.idle_pause_us);
                }
            }
            if let Some(r) = recovery {
                settings = settings.with_recovery(r);
            }
            let c = if o.restarted {
                let c = reverse_link::Config::new(me, settings, 0, restart_height, Vec::new());
                match made_up_to {
                    Some(m) => c.restarted_after(m),
                    None => c.restarted(),
                }
            } else {
                let holders: Vec<NodeId> = (0..o.k).map(NodeId).collect();
                reverse_link::network(o.nodes, &[], &holders, settings)
                    .map_err(core_config)?
                    .swap_remove(o.id as usize)
            };
            let c = if promises.is_empty() {
                c
            } else {
                c.with_promises(promises)
            };
            let node = reverse_link::Node::new(c).map_err(core_config)?;
            AnyDriver::Krl(Driver::new(node, config, now).map_err(config_error)?)
        }
        MANET_MUTEX_PRIORITIZED => {
            if o.k == 0 {
                return Err(invalid("k (resources) must be at least 1"));
            }
            let policy = match o.policy {
                MANET_MUTEX_POLICY_EQUAL => prioritized::Policy::Equal,
                MANET_MUTEX_POLICY_EXPLICIT => prioritized::Policy::Explicit,
                MANET_MUTEX_POLICY_MAX_CONCURRENCY => prioritized::Policy::MaxConcurrency,
                other => return Err(invalid(format!("unknown policy {other}"))),
            };
            let mut settings =
                prioritized::Settings::new(o.k, policy).with_aging_step(o.aging_step);
            if let Some(pause) = raise_pause {
                settings = settings.with_raise_pause(pause);
            }
            if let Some(r) = recovery {
                settings = settings.with_recovery(r);
            }
            let c = if o.restarted {
                let c = prioritized::Config::new(me, settings, false, restart_height, Vec::new());
                match made_up_to {
                    Some(m) => c.restarted_after(m),
                    None => c.restarted(),
                }
            } else {
                prioritized::network(o.nodes, &[], &[NodeId(0)], settings)
                    .map_err(core_config)?
                    .swap_remove(o.id as usize)
            };
            let c = if promises.is_empty() {
                c
            } else {
                c.with_promises(promises)
            };
            let node = prioritized::Node::new(c).map_err(core_config)?;
            AnyDriver::Prioritized(Driver::new(node, config, now).map_err(config_error)?)
        }
        MANET_MUTEX_LOOK_AHEAD => {
            let mut settings = look_ahead::Settings::new(o.nodes, o.retransmit_us)
                .with_seed(o.seed)
                .with_majority(o.majority);
            if o.lease_us > 0 {
                settings = settings.with_lease(o.lease_us);
            }
            if o.exclusion > 0 {
                settings = settings.with_exclusion(o.exclusion);
            }
            let c = look_ahead::network(settings)
                .map_err(core_config)?
                .swap_remove(o.id as usize)
                .with_incarnation(o.incarnation);
            let node = look_ahead::Node::new(c).map_err(core_config)?;
            AnyDriver::LookAhead(Driver::new(node, config, now).map_err(config_error)?)
        }
        MANET_MUTEX_RICART_AGRAWALA => {
            let mut settings =
                ricart_agrawala::Settings::new(o.nodes, o.retransmit_us).with_majority(o.majority);
            if o.lease_us > 0 {
                settings = settings.with_lease(o.lease_us);
            }
            if o.exclusion > 0 {
                settings = settings.with_exclusion(o.exclusion);
            }
            let c = ricart_agrawala::network(settings)
                .map_err(core_config)?
                .swap_remove(o.id as usize)
                .with_incarnation(o.incarnation);
            let node = ricart_agrawala::Node::new(c).map_err(core_config)?;
            AnyDriver::RicartAgrawala(Driver::new(node, config, now).map_err(config_error)?)
        }
        other => return Err(invalid(format!("unknown algorithm {other}"))),
    };
    Ok(driver)
}

/// `config` with the 32 bytes at `key`.
#[cfg(feature = "auth")]
fn with_key(config: Config, key: *const u8) -> Result<Config, Fail> {
    let mut bytes = [0u8; 32];
    // SAFETY: the caller promises a non-null `key` points at 32 readable bytes; `bytes` is a
    // distinct local array of 32.
    unsafe { std::ptr::copy_nonoverlapping(key, bytes.as_mut_ptr(), 32) };
    Ok(config.with_key(manet_mutex::driver::AuthKey(bytes)))
}

/// Without the `auth` feature a key is refused.
#[cfg(not(feature = "auth"))]
fn with_key(_: Config, _: *const u8) -> Result<Config, Fail> {
    Err(invalid(
        "a key needs manet-mutex-ffi built with the `auth` feature",
    ))
}
