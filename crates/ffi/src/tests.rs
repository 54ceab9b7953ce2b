//! The interface from Rust, through the `extern "C"` functions: creation for every
//! algorithm, the event mapping, the datagram bound, panics kept inside, handles never reused.

use std::ptr;

use manet_mutex::driver::DriverEvent;
use manet_mutex::token::Promised;
use manet_mutex::{Anomaly, Fence, NodeId, Report, Severity};

use super::*;

fn options(algorithm: u32, id: u32, nodes: u32) -> ManetMutexOptions {
    let mut o = std::mem::MaybeUninit::uninit();
    // SAFETY: `o` is valid for a write.
    let rc = unsafe { manet_mutex_options_default(algorithm, id, nodes, o.as_mut_ptr()) };
    assert_eq!(rc, MANET_MUTEX_OK);
    // SAFETY: written on success.
    unsafe { o.assume_init() }
}

fn create(o: &ManetMutexOptions) -> Result<*mut ManetMutexNode, i32> {
    let mut node = ptr::null_mut();
    // SAFETY: `o` and `node` are valid; `o`'s pointers are NULL or valid.
    match unsafe { manet_mutex_new(o, 0, &mut node) } {
        MANET_MUTEX_OK => Ok(node),
        code => Err(code),
    }
}

fn last_error() -> String {
    let mut buf = [0 as c_char; 512];
    // SAFETY: `buf` is valid for its length; `len` may be NULL.
    unsafe { manet_mutex_last_error_message(buf.as_mut_ptr(), buf.len(), ptr::null_mut()) };
    // SAFETY: NUL-terminated by the call.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_algorithm_is_created_with_its_defaults_and_with_its_options() {
    for algorithm in MANET_MUTEX_KRL..=MANET_MUTEX_RICART_AGRAWALA {
        for id in 0..4 {
            let node = create(&options(algorithm, id, 4)).expect("defaults create");
            let (mut a, mut me) = (0, 0);
            // SAFETY: valid out-pointers.
            assert_eq!(
                unsafe { manet_mutex_get_info(node, &mut a, &mut me) },
                MANET_MUTEX_OK
            );
            assert_eq!((a, me), (algorithm, id));
            assert_eq!(manet_mutex_free(node), MANET_MUTEX_OK);
        }
    }
    // KRLF with two tokens and recovery; prioritized by explicit priority with recovery in
    // majority mode, restarted with its promises; permission algorithms with leases,
    // exclusion, majority, a later incarnation.
    let mut krlf = options(MANET_MUTEX_KRLF, 1, 5);
    krlf.k = 2;
    krlf.recovery = true;
    krlf.lease_us = 1_000_000;
    assert!(create(&krlf).is_ok());
    let promises = [ManetMutexPromise { lane: 0, ballot: 3 }];
    let mut prio = options(MANET_MUTEX_PRIORITIZED, 2, 5);
    prio.k = 3;
    prio.policy = MANET_MUTEX_POLICY_EXPLICIT;
    prio.recovery = true;
    prio.lease_us = 1_000_000;
    prio.majority_members = 5;
    prio.restarted = true;
    prio.made_up_to = 4;
    prio.promises = promises.as_ptr();
    prio.promises_len = promises.len();
    assert!(create(&prio).is_ok(), "{}", last_error());
    for algorithm in [MANET_MUTEX_LOOK_AHEAD, MANET_MUTEX_RICART_AGRAWALA] {
        let mut o = options(algorithm, 0, 5);
        o.lease_us = 500_000;
        o.exclusion = 5;
        o.majority = true;
        o.incarnation = 2;
        o.epoch_base = 2 << 32;
        assert!(create(&o).is_ok(), "{}", last_error());
    }
}

/// A change to valid options.
type Change = fn(&mut ManetMutexOptions);

#[test]
fn bad_options_are_refused_with_their_codes() {
    let cases: [(Change, i32); 10] = [
        (|o| o.algorithm = 0, MANET_MUTEX_ERR_INVALID_ARGUMENT),
        (|o| o.nodes = 0, MANET_MUTEX_ERR_INVALID_ARGUMENT),
        (|o| o.id = o.nodes, MANET_MUTEX_ERR_INVALID_ARGUMENT),
        (|o| o.k = 0, MANET_MUTEX_ERR_INVALID_ARGUMENT),
        (|o| o.policy = 7, MANET_MUTEX_ERR_INVALID_ARGUMENT),
        (|o| o.made_up_to = 70_000, MANET_MUTEX_ERR_INVALID_ARGUMENT),
        (|o| o.promises_len = 1, MANET_MUTEX_ERR_NULL_POINTER),
        (|o| o.session_window = 0, MANET_MUTEX_ERR_INVALID_CONFIG),
        (
            |o| o.hello_jitter_us = o.hello_interval_us,
            MANET_MUTEX_ERR_INVALID_CONFIG,
        ),
        (
            |o| o.raise_pause_max_us = o.raise_pause_min_us - 1,
            MANET_MUTEX_ERR_INVALID_CONFIG,
        ),
    ];
    for (i, (change, code)) in cases.into_iter().enumerate() {
        let mut o = options(MANET_MUTEX_PRIORITIZED, 0, 3);
        change(&mut o);
        assert_eq!(create(&o), Err(code), "case {i}: {}", last_error());
        assert!(!last_error().is_empty());
    }
    // Recovery without a lease: the core's own check.
    let mut o = options(MANET_MUTEX_KRL, 0, 3);
    o.recovery = true;
    assert_eq!(create(&o), Err(MANET_MUTEX_ERR_INVALID_CONFIG));
    let mut o = options(MANET_MUTEX_RICART_AGRAWALA, 0, 3);
    o.k = 2;
    assert_eq!(create(&o), Err(MANET_MUTEX_ERR_INVALID_ARGUMENT));
}

#[cfg(not(feature = "auth"))]
#[test]
fn a_key_without_the_auth_feature_is_refused() {
    let key = [1u8; 32];
    let mut o = options(MANET_MUTEX_RICART_AGRAWALA, 0, 3);
    o.key = key.as_ptr();
    assert_eq!(create(&o), Err(MANET_MUTEX_ERR_INVALID_ARGUMENT));
}

/// No datagram of any algorithm, hello or frame, keyed or not, is longer than
/// `MANET_MUTEX_MAX_DATAGRAM`.
#[test]
fn the_datagram_bound_covers_every_frame_with_its_tag() {
    let tag = 16; // manet_mutex::driver::TAG_LEN, with the `auth` feature.
    assert!(manet_mutex::driver::wire::MAX_DRIVER_FRAME + tag <= MANET_MUTEX_MAX_DATAGRAM);
    assert!(manet_mutex::discovery::MAX_HELLO_FRAME + tag <= MANET_MUTEX_MAX_DATAGRAM);
    #[cfg(feature = "auth")]
    assert_eq!(manet_mutex::driver::TAG_LEN, tag);
}

#[test]
fn every_driver_event_maps_to_its_own_kind_with_its_fields() {
    let f = Fence::new(2, 77);
    let p = NodeId(5);
    let anomaly = DriverEvent::Anomaly {
        from: p,
        kind: Anomaly::OutOfRange,
        severity: Severity::Suspect,
    };
    let cases = [
        (
            DriverEvent::Entered {
                resources: 2,
                fence: f,
            },
            MANET_MUTEX_EVENT_ENTERED,
        ),
        (
            DriverEvent::LeaseExpired { fence: f },
            MANET_MUTEX_EVENT_LEASE_EXPIRED,
        ),
        (
            DriverEvent::Persist {
                promised: Promised::new(1, 9),
            },
            MANET_MUTEX_EVENT_PERSIST,
        ),
        (
            DriverEvent::Lost {
                peer: p,
                messages: 3,
                precious: 1,
            },
            MANET_MUTEX_EVENT_LOST,
        ),
        (
            DriverEvent::Report(Report::TokenRegenerated { fence: f }),
            MANET_MUTEX_EVENT_TOKEN_REGENERATED,
        ),
        (
            DriverEvent::Report(Report::TokenRenumbered { fence: f }),
            MANET_MUTEX_EVENT_TOKEN_RENUMBERED,
        ),
        (
            DriverEvent::Report(Report::TokenDestroyed { fence: f }),
            MANET_MUTEX_EVENT_TOKEN_DESTROYED,
        ),
        (
            DriverEvent::Report(Report::PeerExcluded(p)),
            MANET_MUTEX_EVENT_PEER_EXCLUDED,
        ),
        (
            DriverEvent::Report(Report::PeerReadmitted(p)),
            MANET_MUTEX_EVENT_PEER_READMITTED,
        ),
        (DriverEvent::LinkUp(p), MANET_MUTEX_EVENT_LINK_UP),
        (DriverEvent::LinkDown(p), MANET_MUTEX_EVENT_LINK_DOWN),
        (DriverEvent::NeighbourUp(p), MANET_MUTEX_EVENT_NEIGHBOUR_UP),
        (
            DriverEvent::NeighbourDown(p),
            MANET_MUTEX_EVENT_NEIGHBOUR_DOWN,
        ),
        (anomaly, MANET_MUTEX_EVENT_ANOMALY),
        (DriverEvent::Report(Report::Left), MANET_MUTEX_EVENT_LEFT),
    ];
    let mut kinds: Vec<u32> = cases.iter().map(|(_, k)| *k).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), cases.len(), "one kind per event");
    assert!(!kinds.contains(&MANET_MUTEX_EVENT_UNKNOWN));
    for (event, kind) in &cases {
        let e = event_of(event);
        assert_eq!(e.kind, *kind, "{event:?}");
        let has_fence = matches!(
            event,
            DriverEvent::Entered { .. }
                | DriverEvent::LeaseExpired { .. }
                | DriverEvent::Report(
                    Report::TokenRegenerated { .. }
                        | Report::TokenRenumbered { .. }
                        | Report::TokenDestroyed { .. }
                )
        );
        if has_fence {
            assert_eq!((e.fence_lane, e.fence_value), (2, 77), "{event:?}");
        } else {
            // Persist and Left name no peer.
            let named = ![MANET_MUTEX_EVENT_PERSIST, MANET_MUTEX_EVENT_LEFT].contains(kind);
            assert_eq!(e.peer, 5 * u32::from(named), "{event:?}");
        }
    }
    let e = event_of(&cases[0].0);
    assert_eq!(e.resources, 2);
    let e = event_of(&cases[2].0);
    assert_eq!((e.promise_lane, e.promise_ballot), (1, 9));
    let e = event_of(&cases[3].0);
    assert_eq!((e.messages, e.precious), (3, 1));
    let e = event_of(&cases[13].0);
    assert_eq!(
        (e.anomaly, e.severity),
        (
            MANET_MUTEX_ANOMALY_OUT_OF_RANGE,
            MANET_MUTEX_SEVERITY_SUSPECT
        )
    );
}

/// A panic inside a call is caught: the call returns `MANET_MUTEX_ERR_INTERNAL` with a
/// message, the node refuses every later call but free, and other nodes are untouched.
#[test]
fn a_panic_never_crosses_the_boundary_and_breaks_only_its_node() {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    assert_eq!(
        guard(|| panic!("boom at the boundary")),
        MANET_MUTEX_ERR_INTERNAL
    );
    assert!(last_error().contains("boom at the boundary"));
    let node = create(&options(MANET_MUTEX_RICART_AGRAWALA, 0, 3)).unwrap();
    let other = create(&options(MANET_MUTEX_RICART_AGRAWALA, 1, 3)).unwrap();
    let rc =
        guard(|| handle::with_node(node, |_| -> Result<i32, Fail> { panic!("boom in a node") }));
    std::panic::set_hook(hook);
    assert_eq!(rc, MANET_MUTEX_ERR_INTERNAL);
    assert!(last_error().contains("boom in a node"));
    assert_eq!(manet_mutex_request(node, 0, 1, 0), MANET_MUTEX_ERR_INTERNAL);
    assert_eq!(manet_mutex_request(other, 0, 1, 0), MANET_MUTEX_OK);
    assert_eq!(manet_mutex_free(node), MANET_MUTEX_OK);
    assert_eq!(manet_mutex_free(other), MANET_MUTEX_OK);
}

/// Handles are numbers never given twice: a freed one stays invalid whatever is created
/// after it, and freeing it again frees nothing.
#[test]
fn a_freed_handle_stays_invalid_after_later_creations() {
    let o = options(MANET_MUTEX_KRL, 0, 2);
    let first = create(&o).unwrap();
    assert_eq!(manet_mutex_free(first), MANET_MUTEX_OK);
    let later: Vec<_> = (0..50).map(|_| create(&o).unwrap()).collect();
    assert!(later.iter().all(|&h| h != first));
    assert_eq!(manet_mutex_free(first), MANET_MUTEX_ERR_INVALID_HANDLE);
    assert_eq!(
        manet_mutex_handle_timeout(first, 0),
        MANET_MUTEX_ERR_INVALID_HANDLE
    );
    for h in later {
        assert_eq!(manet_mutex_free(h), MANET_MUTEX_OK);
        assert_eq!(manet_mutex_free(h), MANET_MUTEX_ERR_INVALID_HANDLE);
    }
}

#[test]
fn every_status_code_has_its_own_name() {
    let codes = [
        MANET_MUTEX_OK,
        MANET_MUTEX_EMPTY,
        MANET_MUTEX_ERR_NULL_HANDLE,
        MANET_MUTEX_ERR_INVALID_HANDLE,
        MANET_MUTEX_ERR_NULL_POINTER,
        MANET_MUTEX_ERR_INVALID_ARGUMENT,
        MANET_MUTEX_ERR_WRONG_ALGORITHM,
        MANET_MUTEX_ERR_BUFFER_TOO_SMALL,
        MANET_MUTEX_ERR_ALREADY_REQUESTED,
        MANET_MUTEX_ERR_NOT_IN_CRITICAL,
        MANET_MUTEX_ERR_NOT_WAITING,
        MANET_MUTEX_ERR_INVALID_RESOURCES,
        MANET_MUTEX_ERR_WRONG_MODE,
        MANET_MUTEX_ERR_NOT_A_PEER,
        MANET_MUTEX_ERR_INVALID_CONFIG,
        MANET_MUTEX_ERR_INTERNAL,
    ];
    let mut names: Vec<String> = codes
        .iter()
        .map(|&c| {
            // SAFETY: a static NUL-terminated string.
            unsafe { std::ffi::CStr::from_ptr(manet_mutex_status_name(c)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(names.iter().all(|n| n.starts_with("MANET_MUTEX_")));
    names.sort();
    names.dedup();
    assert_eq!(names.len(), codes.len());
}

/// Look-ahead's modes through `manet_mutex_core_event`: a request while dozing is
/// `MANET_MUTEX_ERR_WRONG_MODE`; suspecting itself is `MANET_MUTEX_ERR_NOT_A_PEER`.
#[test]
fn core_events_reach_the_core_and_its_refusals_keep_their_codes() {
    let node = create(&options(MANET_MUTEX_LOOK_AHEAD, 0, 3)).unwrap();
    assert_eq!(
        manet_mutex_core_event(node, 1, MANET_MUTEX_CORE_DOZE, 0),
        MANET_MUTEX_OK
    );
    assert_eq!(
        manet_mutex_request(node, 2, 1, 0),
        MANET_MUTEX_ERR_WRONG_MODE
    );
    assert_eq!(
        manet_mutex_core_event(node, 3, MANET_MUTEX_CORE_WAKE, 0),
        MANET_MUTEX_OK
    );
    assert_eq!(
        manet_mutex_core_event(node, 4, MANET_MUTEX_CORE_SUSPECT, 0),
        MANET_MUTEX_ERR_NOT_A_PEER
    );
    assert_eq!(
        manet_mutex_core_event(node, 4, MANET_MUTEX_CORE_SUSPECT, 2),
        MANET_MUTEX_OK
    );
    assert_eq!(manet_mutex_request(node, 5, 1, 0), MANET_MUTEX_OK);
    assert_eq!(manet_mutex_free(node), MANET_MUTEX_OK);
}

/// `MANET_MUTEX_CORE_LEAVE`: refused while a request waits, then taken from the remainder
/// section, which reports `MANET_MUTEX_EVENT_LEFT`; a request afterwards is a wrong mode.
#[test]
fn leave_reaches_the_core_and_reports_left() {
    let node = create(&options(MANET_MUTEX_RICART_AGRAWALA, 0, 3)).unwrap();
    assert_eq!(manet_mutex_request(node, 1, 1, 0), MANET_MUTEX_OK);
    assert_eq!(
        manet_mutex_core_event(node, 2, MANET_MUTEX_CORE_LEAVE, 0),
        MANET_MUTEX_ERR_WRONG_MODE
    );
    assert_eq!(manet_mutex_cancel(node, 3), MANET_MUTEX_OK);
    drain(node);
    assert_eq!(
        manet_mutex_core_event(node, 4, MANET_MUTEX_CORE_LEAVE, 0),
        MANET_MUTEX_OK
    );
    let mut kinds = Vec::new();
    loop {
        let mut e = ManetMutexEvent::default();
        // SAFETY: a live handle and a valid out-pointer.
        match unsafe { manet_mutex_poll_event(node, &mut e) } {
            MANET_MUTEX_OK => kinds.push(e.kind),
            _ => break,
        }
    }
    assert!(kinds.contains(&MANET_MUTEX_EVENT_LEFT), "{kinds:?}");
    assert_eq!(
        manet_mutex_request(node, 5, 1, 0),
        MANET_MUTEX_ERR_WRONG_MODE
    );
    assert_eq!(manet_mutex_free(node), MANET_MUTEX_OK);
}

/// Every call with arbitrary arguments (live, freed and garbage handles, any event code, any
/// peer, any fence, garbage and bit-flipped datagrams, buffers of any size), from a seeded
/// generator: every status is a known one, never `MANET_MUTEX_ERR_INTERNAL`.
#[test]
fn arbitrary_calls_return_known_codes_and_never_an_internal_error() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let known = [
        MANET_MUTEX_OK,
        MANET_MUTEX_EMPTY,
        MANET_MUTEX_ERR_NULL_HANDLE,
        MANET_MUTEX_ERR_INVALID_HANDLE,
        MANET_MUTEX_ERR_INVALID_ARGUMENT,
        MANET_MUTEX_ERR_WRONG_ALGORITHM,
        MANET_MUTEX_ERR_BUFFER_TOO_SMALL,
        MANET_MUTEX_ERR_ALREADY_REQUESTED,
        MANET_MUTEX_ERR_NOT_IN_CRITICAL,
        MANET_MUTEX_ERR_NOT_WAITING,
        MANET_MUTEX_ERR_INVALID_RESOURCES,
        MANET_MUTEX_ERR_WRONG_MODE,
        MANET_MUTEX_ERR_NOT_A_PEER,
    ];
    let nodes = 4;
    let mut handles = Vec::new();
    for algorithm in MANET_MUTEX_KRL..=MANET_MUTEX_RICART_AGRAWALA {
        for id in 0..nodes {
            let mut o = options(algorithm, id, nodes);
            o.k = if algorithm == MANET_MUTEX_PRIORITIZED {
                3
            } else {
                1
            };
            handles.push((create(&o).unwrap(), algorithm));
        }
    }
    let freed = create(&options(MANET_MUTEX_KRL, 0, nodes)).unwrap();
    assert_eq!(manet_mutex_free(freed), MANET_MUTEX_OK);
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    let mut now = 0u64;
    for step in 0..40_000u32 {
        now += next() % 3_000;
        let r = next();
        let (handle, algorithm) = match r % 50 {
            0 => (ptr::null_mut(), 0),
            1 => (freed, 0),
            2 => (std::ptr::without_provenance_mut(next() as usize | 1), 0),
            _ => handles[(r >> 8) as usize % handles.len()],
        };
        let peer = (next() % u64::from(nodes + 2)) as u32;
        let rc = match next() % 12 {
            0 => manet_mutex_request(handle, now, (next() % 4) as u32, (next() % 3) as u32),
            1 => manet_mutex_release(handle, now),
            2 => manet_mutex_cancel(handle, now),
            3 => manet_mutex_core_event(handle, now, (next() % 8) as u32, peer),
            4 => manet_mutex_refused(
                handle,
                now,
                (next() % 3) as u32,
                next() % 8,
                (next() % 3) as u32,
                next() % 8,
            ),
            5 if algorithm == MANET_MUTEX_KRL => manet_mutex_connect(handle, now, peer),
            5 => manet_mutex_close(handle, now, peer),
            6..=8 => {
                // Deliver a datagram seen before (to anyone, as from anyone), perhaps with
                // a bit flipped or cut short, or pure garbage.
                let mut bytes = match seen.is_empty() {
                    true => vec![0x83; 8],
                    false => seen[next() as usize % seen.len()].clone(),
                };
                match next() % 4 {
                    0 => {
                        let i = next() as usize % bytes.len();
                        bytes[i] ^= 1 << (next() % 8);
                    }
                    1 => bytes.truncate(next() as usize % bytes.len()),
                    _ => {}
                }
                // SAFETY: `bytes` is valid for its length.
                unsafe {
                    manet_mutex_handle_datagram(handle, now, peer, bytes.as_ptr(), bytes.len())
                }
            }
            9 => manet_mutex_handle_timeout(handle, now),
            10 => {
                let mut ev = ManetMutexEvent::default();
                // SAFETY: valid out-pointer.
                unsafe { manet_mutex_poll_event(handle, &mut ev) }
            }
            _ => {
                let mut buf = [0u8; MANET_MUTEX_MAX_DATAGRAM];
                let cap = match next() % 4 {
                    0 => (next() % 64) as usize,
                    _ => buf.len(),
                };
                let (mut len, mut to, mut broadcast) = (0usize, 0u32, false);
                // SAFETY: `buf` is valid for `cap <= buf.len()` bytes; valid out-pointers.
                let rc = unsafe {
                    manet_mutex_poll_transmit(
                        handle,
                        buf.as_mut_ptr(),
                        cap,
                        &mut len,
                        &mut to,
                        &mut broadcast,
                    )
                };
                if rc == MANET_MUTEX_OK {
                    assert!(len <= MANET_MUTEX_MAX_DATAGRAM);
                    if seen.len() < 256 {
                        seen.push(buf[..len].to_vec());
                    } else {
                        seen[next() as usize % 256] = buf[..len].to_vec();
                    }
                }
                rc
            }
        };
        assert!(
            known.contains(&rc),
            "step {step}: status {rc} ({})",
            last_error()
        );
        *counts.entry(rc).or_insert(0u32) += 1;
    }
    // The run reached the nodes: most calls on live handles, datagrams handed out, requests
    // taken, some refused.
    assert!(counts[&MANET_MUTEX_OK] > 10_000, "{counts:?}");
    assert!(counts[&MANET_MUTEX_ERR_BUFFER_TOO_SMALL] > 50, "{counts:?}");
    assert!(counts[&MANET_MUTEX_ERR_INVALID_HANDLE] > 100, "{counts:?}");
    assert!(counts[&MANET_MUTEX_ERR_NOT_IN_CRITICAL] > 100, "{counts:?}");
    assert!(seen.len() == 256, "{} datagrams seen", seen.len());
    for (handle, _) in handles {
        let mut stats = ManetMutexStats::default();
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { manet_mutex_get_stats(handle, &mut stats) },
            MANET_MUTEX_OK
        );
        assert_eq!(manet_mutex_free(handle), MANET_MUTEX_OK);
    }
}

/// Runs `f` on a thread and fails if it has not returned within `secs` seconds: a hang is a
/// failure, not a stuck test run.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .expect("the calls hung (or panicked)")
}

/// Issue 39: `manet_mutex_handle_timeout(node, UINT64_MAX)` never returned while a request
/// waited (a timer re-armed at the end of time is due at once, and the driver fired due
/// timers until none was). Now it returns, for every algorithm, again and again.
#[test]
fn handle_timeout_at_uint64_max_returns_while_a_request_waits() {
    within(60, || {
        for algorithm in MANET_MUTEX_KRL..=MANET_MUTEX_RICART_AGRAWALA {
            let mut o = options(algorithm, 1, 3);
            with_recovery(&mut o);
            let node = create(&o).unwrap();
            assert_eq!(manet_mutex_request(node, 5, 1, 0), MANET_MUTEX_OK);
            for now in [u64::MAX, u64::MAX, 7, u64::MAX - 1, u64::MAX] {
                assert_eq!(manet_mutex_handle_timeout(node, now), MANET_MUTEX_OK);
                drain(node);
            }
            let mut status = 0;
            // SAFETY: valid out-pointer.
            assert_eq!(
                unsafe { manet_mutex_get_status(node, &mut status) },
                MANET_MUTEX_OK
            );
            assert_eq!(manet_mutex_free(node), MANET_MUTEX_OK);
        }
    });
}

/// Recovery on, with the settings [`every_algorithm_is_created_with_its_defaults_and_with_its_options`]
/// uses: a lease for the token algorithms, a lease and an exclusion for the permission ones.
fn with_recovery(o: &mut ManetMutexOptions) {
    match o.algorithm {
        MANET_MUTEX_LOOK_AHEAD | MANET_MUTEX_RICART_AGRAWALA => {
            o.lease_us = 500_000;
            o.exclusion = 5;
        }
        _ => {
            o.recovery = true;
            o.lease_us = 1_000_000;
        }
    }
}

/// Polls every event and transmit of `node` (a bounded number: the queues are bounded).
fn drain(node: *mut ManetMutexNode) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for _ in 0..10_000 {
        let mut ev = ManetMutexEvent::default();
        // SAFETY: valid out-pointer.
        if unsafe { manet_mutex_poll_event(node, &mut ev) } != MANET_MUTEX_OK {
            break;
        }
    }
    for _ in 0..10_000 {
        let mut buf = [0u8; MANET_MUTEX_MAX_DATAGRAM];
        let (mut len, mut to, mut broadcast) = (0usize, 0u32, false);
        // SAFETY: `buf` is valid for its length; valid out-pointers.
        let rc = unsafe {
            manet_mutex_poll_transmit(
                node,
                buf.as_mut_ptr(),
                buf.len(),
                &mut len,
                &mut to,
                &mut broadcast,
            )
        };
        if rc != MANET_MUTEX_OK {
            break;
        }
        out.push(buf[..len].to_vec());
    }
    out
}

/// Every time-taking entry point with extreme times, for every algorithm with and without
/// recovery: 0, `u64::MAX`, times going backwards, huge jumps, small steps, in seeded
/// random sequences over a network of three nodes that hand each other their datagrams.
/// No call hangs, none panics (`MANET_MUTEX_ERR_INTERNAL`), every status is a known one.
#[test]
fn extreme_times_never_hang_nor_panic() {
    within(120, || {
        let known = [
            MANET_MUTEX_OK,
            MANET_MUTEX_EMPTY,
            MANET_MUTEX_ERR_INVALID_ARGUMENT,
            MANET_MUTEX_ERR_WRONG_ALGORITHM,
            MANET_MUTEX_ERR_ALREADY_REQUESTED,
            MANET_MUTEX_ERR_NOT_IN_CRITICAL,
            MANET_MUTEX_ERR_NOT_WAITING,
            MANET_MUTEX_ERR_INVALID_RESOURCES,
            MANET_MUTEX_ERR_WRONG_MODE,
            MANET_MUTEX_ERR_NOT_A_PEER,
        ];
        for seed in 1..=24u64 {
            let mut seed = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            let algorithm = MANET_MUTEX_KRL + (next() % 5) as u32;
            let recovery = next() % 2 == 0;
            let nodes: Vec<*mut ManetMutexNode> = (0..3)
                .map(|id| {
                    let mut o = options(algorithm, id, 3);
                    if recovery {
                        with_recovery(&mut o);
                    }
                    create(&o).unwrap()
                })
                .collect();
            let mut now = 0u64;
            for step in 0..2_000u32 {
                now = match next() % 8 {
                    0 => 0,
                    1 => u64::MAX,
                    2 => u64::MAX - next() % 1_000,
                    3 => now.saturating_sub(next() % 1_000_000), // backwards
                    4 => now.saturating_add(next() >> (next() % 64)), // a jump, any size
                    _ => now.saturating_add(next() % 50_000),
                };
                let i = (next() % 3) as usize;
                let node = nodes[i];
                let rc = match next() % 7 {
                    0 => manet_mutex_request(node, now, 1, 0),
                    1 => manet_mutex_release(node, now),
                    2 => manet_mutex_cancel(node, now),
                    3 if algorithm <= MANET_MUTEX_PRIORITIZED => {
                        manet_mutex_connect(node, now, ((i + 1) % 3) as u32)
                    }
                    _ => manet_mutex_handle_timeout(node, now),
                };
                assert!(
                    known.contains(&rc),
                    "seed {seed} step {step}: {rc} ({})",
                    last_error()
                );
                // Hand what it sent to the others, at the same (extreme) time.
                for bytes in drain(node) {
                    for (j, &other) in nodes.iter().enumerate().filter(|&(j, _)| j != i) {
                        // SAFETY: `bytes` is valid for its length.
                        let rc = unsafe {
                            manet_mutex_handle_datagram(
                                other,
                                now,
                                i as u32,
                                bytes.as_ptr(),
                                bytes.len(),
                            )
                        };
                        assert_eq!(rc, MANET_MUTEX_OK, "to {j}: {}", last_error());
                        drain(other);
                    }
                }
                let mut armed = false;
                let mut deadline = 0u64;
                // SAFETY: valid out-pointers.
                let rc = unsafe { manet_mutex_poll_timeout(node, &mut deadline, &mut armed) };
                assert_eq!(rc, MANET_MUTEX_OK);
            }
            for node in nodes {
                assert_eq!(manet_mutex_free(node), MANET_MUTEX_OK);
            }
        }
    });
}
