//! Each recovery rule, unit by unit, in both algorithms (C1–C7).

use manet_mutex::{Action, CsRequest, Error, Event, Fence, NodeId, Report, Status};

use super::common::{entered, feed, reports, sent_to, timers_set, Algo, Knobs};

/// `$name::<A>` for both algorithms, as two tests.
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod ricart_agrawala {
            $(#[test] fn $name() { super::$name::<manet_mutex::ricart_agrawala::Node>() })*
        }
        mod look_ahead {
            $(#[test] fn $name() { super::$name::<manet_mutex::look_ahead::Node>() })*
        }
    };
}

both!(
    suspect_and_trust_must_name_another_host,
    suspecting_an_excluded_peer_or_trusting_a_counted_one_is_a_no_op,
    suspect_ends_the_wait_and_the_node_enters_in_a_new_fence_generation,
    an_excluded_peer_is_not_asked_but_still_answered,
    trust_while_waiting_asks_the_peer_again_and_waits_for_it,
    trust_after_the_peers_grant_asks_nothing,
    any_valid_message_readmits,
    own_timeout_excludes_after_m_silent_retransmissions_then_probes,
    a_reply_sent_restarts_the_count_of_silence,
    a_message_heard_restarts_the_count_of_silence,
    the_lease_ends_once_inside_and_release_cancels_it,
    a_grant_a_lease_old_is_asked_for_again_under_a_new_number,
    majority_mode_enters_only_with_a_majority_of_grants,
    local_misuse_of_the_settings_is_refused,
);

fn hosts<A: Algo>(n: u32, knobs: Knobs) -> Vec<A> {
    A::hosts(n, 10, knobs)
}

/// `msg` from `from` to `node`.
fn recv<A: Algo>(node: &mut A, from: u32, msg: A::Message) -> Vec<Action<A::Message>> {
    feed(
        node,
        Event::Receive {
            from: NodeId(from),
            msg,
        },
    )
}

/// The REQUEST `actions` send to `to`.
fn request_to<A: Algo>(actions: &[Action<A::Message>], to: u32) -> A::Message {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Send { to: t, msg } if *t == NodeId(to) && A::is_request(msg) => {
                Some(msg.clone())
            }
            _ => None,
        })
        .expect("a REQUEST")
}

/// The message `actions` send to `to`.
fn sent<A: Algo>(actions: &[Action<A::Message>], to: u32) -> A::Message {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Send { to: t, msg } if *t == NodeId(to) => Some(msg.clone()),
            _ => None,
        })
        .expect("a message")
}

/// The current timer `actions` set (the last one).
fn timer<M>(actions: &[Action<M>]) -> manet_mutex::TimerId {
    timers_set(actions).last().expect("a timer").0
}

/// C1: Suspect and Trust naming the node itself or no host are local misuse, refused with
/// `NotAPeer`, the node unchanged.
fn suspect_and_trust_must_name_another_host<A: Algo>() {
    let mut a = hosts::<A>(3, Knobs::default()).remove(0);
    feed(&mut a, Event::Request(CsRequest::ONE));
    for peer in [NodeId(0), NodeId(3), NodeId(u32::MAX)] {
        for (event, name) in [
            (Event::Suspect(peer), "Suspect"),
            (Event::Trust(peer), "Trust"),
        ] {
            let before = a.clone();
            let refused = a.handle(event).err();
            assert_eq!(refused, Some(Error::NotAPeer { event: name, peer }));
            assert_eq!(a, before, "an Err changes nothing");
        }
    }
}

/// C1: suspecting an excluded peer, or trusting one that is counted, does nothing.
fn suspecting_an_excluded_peer_or_trusting_a_counted_one_is_a_no_op<A: Algo>() {
    let mut a = hosts::<A>(3, Knobs::default()).remove(0);
    assert!(feed(&mut a, Event::Trust(NodeId(1))).is_empty());
    let acts = feed(&mut a, Event::Suspect(NodeId(1)));
    assert_eq!(reports(&acts), [Report::PeerExcluded(NodeId(1))]);
    let before = a.clone();
    assert!(feed(&mut a, Event::Suspect(NodeId(1))).is_empty());
    assert_eq!(a, before);
    let acts = feed(&mut a, Event::Trust(NodeId(1)));
    assert_eq!(reports(&acts), [Report::PeerReadmitted(NodeId(1))]);
}

/// C1: a suspected peer is no longer waited for: its timer is cancelled, the exclusion
/// reported, and the node enters if it waited for nothing else, with the first fence of a new
/// generation (C6).
fn suspect_ends_the_wait_and_the_node_enters_in_a_new_fence_generation<A: Algo>() {
    let mut h = hosts::<A>(3, Knobs::default());
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    let t2 = timers_set(&acts)[1].0;
    // Host 1 answers; host 2 is silent.
    let req = request_to::<A>(&acts, 1);
    let reply = sent::<A>(&recv(&mut h[1], 0, req), 0);
    recv(&mut h[0], 1, reply);
    assert_eq!(h[0].status(), Status::Waiting);
    let acts = feed(&mut h[0], Event::Suspect(NodeId(2)));
    assert!(
        acts.contains(&Action::CancelTimer { timer: t2 }),
        "{acts:?}"
    );
    assert_eq!(reports(&acts), [Report::PeerExcluded(NodeId(2))]);
    // Generation 3: above 2, the one host 2 would start from the same knowledge, and host
    // 0's own modulo the 3 hosts (C6).
    assert_eq!(entered(&acts), Some(Fence::new(0, 3 << 32)), "{acts:?}");
    assert_eq!(h[0].status(), Status::Critical);
}

/// C1: an excluded peer is not asked (look-ahead: it is in `Status_set`, as after its
/// DISCONNECT), but its REQUESTs are still answered (answering is always safe), which
/// readmits it.
fn an_excluded_peer_is_not_asked_but_still_answered<A: Algo>() {
    let mut h = hosts::<A>(3, Knobs::default());
    feed(&mut h[0], Event::Suspect(NodeId(2)));
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    assert_eq!(sent_to(&acts), [NodeId(1)], "{acts:?}");
    assert_eq!(h[0].excluded_peers(), [NodeId(2)]);
    feed(&mut h[0], Event::Cancel);
    let acts = feed(&mut h[2], Event::Request(CsRequest::ONE));
    let req = request_to::<A>(&acts, 0);
    let acts = recv(&mut h[0], 2, req);
    assert!(sent_to(&acts).contains(&NodeId(2)), "answered: {acts:?}");
    assert_eq!(reports(&acts), [Report::PeerReadmitted(NodeId(2))]);
}

/// C2: a peer readmitted while the node waits without its grant is asked now, and waited
/// for: the node does not enter until it answers (a wrong suspicion costs nothing more).
fn trust_while_waiting_asks_the_peer_again_and_waits_for_it<A: Algo>() {
    let mut h = hosts::<A>(2, Knobs::default());
    feed(&mut h[0], Event::Suspect(NodeId(1)));
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    // Generation 2: above host 1's next (1), host 0's own modulo the 2 hosts (C6).
    assert_eq!(entered(&acts), Some(Fence::new(0, 2 << 32)));
    feed(&mut h[0], Event::Release);
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    assert!(entered(&acts).is_some(), "still excluded: enters alone");
    feed(&mut h[0], Event::Release);
    // Excluded while waiting for it, then trusted again.
    let mut a = hosts::<A>(3, Knobs::default()).remove(0);
    let acts = feed(&mut a, Event::Request(CsRequest::ONE));
    assert_eq!(sent_to(&acts), [NodeId(1), NodeId(2)]);
    feed(&mut a, Event::Suspect(NodeId(1)));
    feed(&mut a, Event::Suspect(NodeId(2)));
    assert_eq!(a.status(), Status::Critical);
    feed(&mut a, Event::Release);
    feed(&mut a, Event::Request(CsRequest::ONE)).len();
    feed(&mut a, Event::Release);
    let acts = feed(&mut a, Event::Trust(NodeId(2)));
    assert_eq!(reports(&acts), [Report::PeerReadmitted(NodeId(2))]);
    assert!(sent_to(&acts).is_empty(), "not waiting: nothing to ask");
    let acts = feed(&mut a, Event::Request(CsRequest::ONE));
    assert_eq!(sent_to(&acts), [NodeId(2)], "{acts:?}");
    let acts = feed(&mut a, Event::Trust(NodeId(1)));
    assert_eq!(reports(&acts), [Report::PeerReadmitted(NodeId(1))]);
    assert_eq!(sent_to(&acts), [NodeId(1)], "asked at once: {acts:?}");
    assert_eq!(timers_set(&acts).len(), 1);
    assert_eq!(a.outstanding_peers(), [NodeId(1), NodeId(2)]);
    assert_eq!(a.status(), Status::Waiting);
}

/// C2: a peer whose grant for the current number came in before it was excluded is not asked
/// again when readmitted.
fn trust_after_the_peers_grant_asks_nothing<A: Algo>() {
    let mut h = hosts::<A>(3, Knobs::default());
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    let reply = sent::<A>(&recv(&mut h[1], 0, request_to::<A>(&acts, 1)), 0);
    recv(&mut h[0], 1, reply);
    feed(&mut h[0], Event::Suspect(NodeId(1)));
    let acts = feed(&mut h[0], Event::Trust(NodeId(1)));
    assert_eq!(reports(&acts), [Report::PeerReadmitted(NodeId(1))]);
    assert!(sent_to(&acts).is_empty(), "{acts:?}");
    assert_eq!(h[0].outstanding_peers(), [NodeId(2)]);
}

/// C2: a valid message from an excluded peer readmits it (a trusting detector): a REPLY it
/// owed counts as its grant.
fn any_valid_message_readmits<A: Algo>() {
    let mut h = hosts::<A>(2, Knobs::default());
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    let req = request_to::<A>(&acts, 1);
    feed(&mut h[0], Event::Suspect(NodeId(1)));
    assert_eq!(h[0].status(), Status::Critical);
    feed(&mut h[0], Event::Release);
    // Its late REPLY to the withdrawn-by-release request: readmits, grants nothing.
    let reply = sent::<A>(&recv(&mut h[1], 0, req), 0);
    let acts = recv(&mut h[0], 1, reply);
    assert_eq!(reports(&acts), [Report::PeerReadmitted(NodeId(1))]);
    assert!(!h[0].excludes(NodeId(1)));
}

/// C3: with `with_exclusion(2)`, a peer silent through two consecutive retransmission
/// timeouts is excluded on the second (no REQUEST sent then), the node enters, and (it
/// excludes by timeout) a waiting node probes it later.
fn own_timeout_excludes_after_m_silent_retransmissions_then_probes<A: Algo>() {
    let mut a = A::host(0, 3, 10, Knobs::default().exclusion(2), 0);
    let acts = feed(&mut a, Event::Request(CsRequest::ONE));
    let (t1, t2) = (timers_set(&acts)[0].0, timers_set(&acts)[1].0);
    let acts = feed(&mut a, Event::Timeout(t1));
    assert_eq!(sent_to(&acts), [NodeId(1)], "first timeout: resent");
    let t1 = timer(&acts);
    let acts = feed(&mut a, Event::Timeout(t1));
    assert_eq!(reports(&acts), [Report::PeerExcluded(NodeId(1))]);
    assert!(
        sent_to(&acts).is_empty(),
        "no REQUEST to an excluded peer: {acts:?}"
    );
    let probe = timer(&acts);
    assert_eq!(a.probed_peers(), [NodeId(1)]);
    assert_eq!(a.outstanding_peers(), [NodeId(2)]);
    // The probe resends as a probe; host 2's silence excludes it too, and the node enters.
    let acts = feed(&mut a, Event::Timeout(probe));
    assert_eq!(sent_to(&acts), [NodeId(1)]);
    let acts = feed(&mut a, Event::Timeout(t2));
    let t2 = timer(&acts);
    let acts = feed(&mut a, Event::Timeout(t2));
    assert_eq!(reports(&acts), [Report::PeerExcluded(NodeId(2))]);
    assert!(entered(&acts).is_some());
    assert!(a.probed_peers().is_empty(), "probes end at the entry");
}

/// C3: the silence counts only since the last REPLY the node sent the peer: a host it
/// granted may be inside for up to its lease. Host 0 waits for host 1, whose answers are lost
/// (two silent timeouts of three); it withdraws, granting host 1's deferred request on the
/// way, and asks again: host 1 (inside, on that grant) must be given three more timeouts.
fn a_reply_sent_restarts_the_count_of_silence<A: Algo>() {
    let knobs = Knobs::default().exclusion(3);
    let mut h = hosts::<A>(2, knobs);
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    let req0 = request_to::<A>(&acts, 1);
    let mut t = timer(&acts);
    // Host 1 asks too (younger); host 0 defers it. Host 1 answers host 0, but the REPLY is
    // lost, and so are the next ones.
    let acts = feed(&mut h[1], Event::Request(CsRequest::ONE));
    let req1 = request_to::<A>(&acts, 0);
    recv(&mut h[1], 0, req0);
    let acts = recv(&mut h[0], 1, req1);
    assert!(sent_to(&acts).is_empty(), "deferred: {acts:?}");
    for _ in 0..2 {
        let acts = feed(&mut h[0], Event::Timeout(t));
        assert!(reports(&acts).is_empty());
        t = timer(&acts);
    }
    // Host 0 withdraws: host 1 gets its REPLY and enters.
    let acts = feed(&mut h[0], Event::Cancel);
    let reply = sent::<A>(&acts, 1);
    recv(&mut h[1], 0, reply);
    assert_eq!(h[1].status(), Status::Critical);
    // Host 0 asks again; host 1, inside, defers. Two timeouts are not three since the REPLY.
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    let mut t = timer(&acts);
    for i in 0..3 {
        let acts = feed(&mut h[0], Event::Timeout(t));
        if i < 2 {
            assert!(reports(&acts).is_empty(), "timeout {i}: {acts:?}");
            t = timer(&acts);
        } else {
            assert_eq!(reports(&acts), [Report::PeerExcluded(NodeId(1))]);
        }
    }
}

/// C3: a valid message from the peer restarts the count too.
fn a_message_heard_restarts_the_count_of_silence<A: Algo>() {
    let mut h = hosts::<A>(2, Knobs::default().exclusion(2));
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    let req0 = request_to::<A>(&acts, 1);
    let t = timer(&acts);
    let acts = feed(&mut h[0], Event::Timeout(t));
    let t = timer(&acts);
    // A duplicate REPLY-less message from host 1: its own REQUEST (younger: deferred).
    recv(&mut h[1], 0, req0.clone()); // its REPLY is lost
    let acts = feed(&mut h[1], Event::Request(CsRequest::ONE));
    recv(&mut h[0], 1, request_to::<A>(&acts, 0));
    let acts = feed(&mut h[0], Event::Timeout(t));
    assert!(reports(&acts).is_empty(), "heard from it since: {acts:?}");
    let t = timer(&acts);
    let acts = feed(&mut h[0], Event::Timeout(t));
    let t = timer(&acts);
    let acts = feed(&mut h[0], Event::Timeout(t));
    assert_eq!(reports(&acts), [Report::PeerExcluded(NodeId(1))]);
}

/// C4: on entry a lease timer starts; if it fires while the node is still inside, the node
/// emits `LeaseExpired` with the entry's fence, once, and stays inside; a release cancels it.
fn the_lease_ends_once_inside_and_release_cancels_it<A: Algo>() {
    let mut a = A::host(0, 1, 10, Knobs::default().lease(500), 0);
    let acts = feed(&mut a, Event::Request(CsRequest::ONE));
    let fence = entered(&acts).expect("alone: enters");
    let (lease, after) = *timers_set(&acts).last().unwrap();
    assert_eq!(after, 500);
    let acts = feed(&mut a, Event::Timeout(lease));
    assert_eq!(acts, [Action::LeaseExpired { fence }]);
    assert_eq!(a.status(), Status::Critical);
    assert!(feed(&mut a, Event::Timeout(lease)).is_empty(), "once");
    feed(&mut a, Event::Release);
    let acts = feed(&mut a, Event::Request(CsRequest::ONE));
    let (lease, _) = *timers_set(&acts).last().unwrap();
    let acts = feed(&mut a, Event::Release);
    assert_eq!(acts, [Action::CancelTimer { timer: lease }]);
    assert!(feed(&mut a, Event::Timeout(lease)).is_empty());
}

/// C4: a grant is good for one lease: a node still waiting a lease after it (re)numbered its
/// request asks again under a new number, and a REPLY to the old number grants nothing.
fn a_grant_a_lease_old_is_asked_for_again_under_a_new_number<A: Algo>() {
    let mut h = hosts::<A>(3, Knobs::default().lease(100));
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    let lease = timers_set(&acts)[0].0;
    let old = request_to::<A>(&acts, 1);
    let old_seq = A::request_seq(&old).unwrap();
    let reply = sent::<A>(&recv(&mut h[1], 0, old.clone()), 0);
    recv(&mut h[0], 1, reply.clone());
    let acts = feed(&mut h[0], Event::Timeout(lease));
    let renewed = request_to::<A>(&acts, 2);
    assert_eq!(A::request_seq(&renewed), Some(old_seq + 1));
    // Ricart–Agrawala asks host 1 again too; look-ahead does not: host 1 moved into its
    // `Status_set` with its REPLY, and will ask before it enters (C4 says why that is enough).
    let again = sent_to(&acts).contains(&NodeId(1));
    assert_eq!(again, A::NAME == "ricart_agrawala", "{acts:?}");
    assert_eq!(h[0].outstanding_peers().contains(&NodeId(1)), again);
    // Host 1's REPLY to the old number grants nothing now.
    let acts = recv(&mut h[0], 1, reply);
    assert!(
        acts.iter().any(|a| matches!(a, Action::Anomaly { .. })),
        "{acts:?}"
    );
    assert_eq!(h[0].status(), Status::Waiting);
}

/// C7: in majority mode a node enters only with grants from a strict majority of the hosts,
/// itself included: with two of five peers excluded it enters, with three it waits (and
/// awaits nothing), and a readmitted peer's grant lets it in; two of four is not a majority.
fn majority_mode_enters_only_with_a_majority_of_grants<A: Algo>() {
    let mut h = hosts::<A>(5, Knobs::default().majority());
    let acts = feed(&mut h[0], Event::Request(CsRequest::ONE));
    assert_eq!(
        sent_to(&acts).len(),
        4,
        "asks every peer it counts: {acts:?}"
    );
    let req = request_to::<A>(&acts, 1);
    let reply = sent::<A>(&recv(&mut h[1], 0, req.clone()), 0);
    recv(&mut h[0], 1, reply);
    let reply = sent::<A>(&recv(&mut h[2], 0, request_to::<A>(&acts, 2)), 0);
    recv(&mut h[0], 2, reply);
    feed(&mut h[0], Event::Suspect(NodeId(3)));
    let acts = feed(&mut h[0], Event::Suspect(NodeId(4)));
    assert!(entered(&acts).is_some(), "3 of 5: {acts:?}");
    feed(&mut h[0], Event::Release);
    // Now host 1 excluded as well: 2 of 5.
    let mut g = hosts::<A>(5, Knobs::default().majority());
    let acts = feed(&mut g[0], Event::Request(CsRequest::ONE));
    let reply = sent::<A>(&recv(&mut g[1], 0, request_to::<A>(&acts, 1)), 0);
    recv(&mut g[0], 1, reply);
    for p in [2, 3, 4] {
        let acts = feed(&mut g[0], Event::Suspect(NodeId(p)));
        assert!(entered(&acts).is_none(), "{acts:?}");
    }
    assert_eq!(g[0].status(), Status::Waiting);
    assert!(g[0].outstanding_peers().is_empty());
    assert!(!g[0].quorum());
    let acts = feed(&mut g[0], Event::Trust(NodeId(2)));
    let reply = sent::<A>(&recv(&mut g[2], 0, request_to::<A>(&acts, 2)), 0);
    let acts = recv(&mut g[0], 2, reply);
    assert!(entered(&acts).is_some(), "3 of 5 again: {acts:?}");
    // Half is not a majority: 2 of 4 stay out.
    let mut e = hosts::<A>(4, Knobs::default().majority());
    let acts = feed(&mut e[0], Event::Request(CsRequest::ONE));
    let reply = sent::<A>(&recv(&mut e[1], 0, request_to::<A>(&acts, 1)), 0);
    recv(&mut e[0], 1, reply);
    feed(&mut e[0], Event::Suspect(NodeId(2)));
    let acts = feed(&mut e[0], Event::Suspect(NodeId(3)));
    assert!(entered(&acts).is_none(), "2 of 4: {acts:?}");
    assert!(!e[0].quorum());
}

/// A lease or an exclusion of 0 is an invalid configuration.
fn local_misuse_of_the_settings_is_refused<A: Algo>() {
    for knobs in [Knobs::default().lease(0), Knobs::default().exclusion(0)] {
        let bad = A::try_host(0, 2, 10, knobs, 0).err();
        assert!(matches!(bad, Some(Error::InvalidConfig { .. })), "{bad:?}");
    }
}
