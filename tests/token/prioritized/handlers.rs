//! Unit tests of the prioritized node's handlers for the application's events, TOKEN,
//! REQUEST and UPDATE, one node at a time: what it sends, what it changes, what it refuses.

use super::unit::*;
use manet_mutex::prioritized::{Config, Message, Node, Policy, Resources, Settings};
use manet_mutex::token::Height;
use manet_mutex::{Anomaly, Error, Event, Fence, FenceCopies, Protocol, Status};

// ---- local misuse -------------------------------------------------------------------------

#[test]
fn bad_local_input_is_err_and_leaves_the_node_unchanged() {
    let mut a = holder();
    let before = a.clone();
    assert_eq!(
        a.handle(req(0, 1)).unwrap_err(),
        Error::InvalidResources { requested: 0, k: K }
    );
    assert_eq!(
        a.handle(req(K + 1, 1)).unwrap_err(),
        Error::InvalidResources {
            requested: K + 1,
            k: K
        }
    );
    assert_eq!(
        a.handle(Event::Release).unwrap_err(),
        Error::NotInCritical(Status::Remainder)
    );
    assert_eq!(
        a.handle(Event::Doze).unwrap_err(),
        Error::Unsupported("Doze")
    );
    assert_eq!(a, before);
    go(&mut a, req(K, 0));
    let before = a.clone();
    assert_eq!(
        a.handle(req(1, 0)).unwrap_err(),
        Error::AlreadyRequested(Status::Critical)
    );
    assert_eq!(a, before);
}

#[test]
fn invalid_configs_are_refused() {
    let bad = |settings: Settings, height: Height, neighbors: Vec<Height>, holder: bool| {
        Node::new(Config::new(n(1), settings, holder, height, neighbors)).is_err()
    };
    let s = Settings::new(K, Policy::Equal);
    assert!(bad(
        Settings::new(0, Policy::Equal),
        h(0, 0, 1),
        vec![],
        true
    ));
    assert!(bad(s.with_aging_step(0), h(0, 0, 1), vec![], true));
    assert!(bad(s, h(0, 0, 2), vec![], true), "height of another node");
    assert!(
        bad(s, h(0, 0, 1), vec![h(0, 1, 1)], true),
        "itself as neighbour"
    );
    assert!(
        bad(s, h(0, 0, 1), vec![h(0, 1, 2), h(0, 3, 2)], true),
        "duplicates"
    );
    assert!(
        bad(s, h(0, 0, 1), vec![h(0, 1, 2)], false),
        "no lower neighbour"
    );
}

// ---- the application's request and release -------------------------------------------------

#[test]
fn holder_enters_at_once_when_t_suffices() {
    let mut a = holder();
    assert_eq!(go(&mut a, req(3, 0)), vec![enter(3, 1)]);
    assert_eq!(a.status(), Status::Critical);
    assert_eq!((a.available(), a.held()), (Some(2), 3));
}

#[test]
fn holder_short_of_resources_keeps_the_token_and_waits() {
    let mut a = holder();
    go(&mut a, req(3, 0));
    // A neighbour takes the remaining 2 via the token, then hands it back.
    go(&mut a, request_msg(2, 0, h(0, 1, 2)));
    assert!(!a.holds_token());
    go(&mut a, Event::Release);
    assert_eq!(a.queue().count(), 0);
    go(
        &mut a,
        recv(
            2,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(3),
                priority: p(0),
                height: h(0, -1, 2).into(),
                fence: FenceCopies::default(),
            },
        ),
    );
    assert!(a.holds_token());
    assert!(go(&mut a, req(4, 0)).is_empty(), "t = 3 < 4: wait");
    assert_eq!(a.status(), Status::Waiting);
    assert_eq!((a.available(), a.requested()), (Some(3), Some(4)));
    assert_eq!(
        a.queue().next().map(|e| e.0),
        Some(n(1)),
        "own request stays queued"
    );
}

#[test]
fn non_holder_request_goes_to_the_lowest_neighbour() {
    let mut a = middle();
    let out = go(&mut a, req(2, 7));
    assert_eq!(
        out,
        vec![send(
            0,
            Message::Request {
                priority: p(7),
                height: h(0, 1, 1).into()
            }
        )]
    );
    assert_eq!(a.next(), Some(n(0)));
}

#[test]
fn own_request_overtaking_the_queue_front_sends_an_update() {
    // Deviation: the paper's request handler sends nothing when Q is non-empty, so the holder
    // would never learn of a more urgent local request.
    let mut a = middle();
    go(&mut a, request_msg(2, 3, h(0, 2, 2)));
    let out = go(&mut a, req(1, 9));
    assert_eq!(out, vec![send(0, Message::Update { priority: p(9) })]);
}

#[test]
fn release_returns_resources_towards_the_token_and_ages_the_queue() {
    let mut a = holder();
    go(&mut a, req(5, 0));
    let out = go(&mut a, request_msg(2, 4, h(0, 1, 2)));
    assert_eq!(
        sends(&out)[0].0,
        2,
        "token passed on though t = 0 (holder is in the CS)"
    );
    assert!(!a.holds_token());
    go(&mut a, request_msg(3, 2, h(0, 2, 3)));
    let out = go(&mut a, Event::Release);
    assert_eq!(
        out,
        vec![send(
            2,
            Message::Release {
                lost: Resources::new(0),
                resources: Resources::new(5),
                height: a.height().into(),
                generation: [0; 3],
            }
        )]
    );
    assert_eq!(a.status(), Status::Remainder);
    assert_eq!(a.queue().next(), Some((n(3), p(3))), "aging(Q) on release");
}

#[test]
fn release_at_the_holder_adds_to_t_and_serves_the_queue() {
    let mut a = waiting_holder(0, 5, 9);
    // The waiting holder gets the resources back in two RELEASEs and enters; its own release
    // then returns them to t.
    go(
        &mut a,
        recv(
            2,
            Message::Release {
                lost: Resources::new(0),
                resources: Resources::new(3),
                height: h(0, 1, 2).into(),
                generation: [0; 3],
            },
        ),
    );
    let out = go(
        &mut a,
        recv(
            3,
            Message::Release {
                lost: Resources::new(0),
                resources: Resources::new(2),
                height: h(0, 2, 3).into(),
                generation: [0; 3],
            },
        ),
    );
    assert_eq!(out, vec![enter(5, 1)]);
    assert!(go(&mut a, Event::Release).is_empty());
    assert_eq!(a.available(), Some(5));
}

#[test]
fn release_at_a_non_holder_is_forwarded_without_moving_next() {
    // Node 1 asked node 0 (its next) for the token; then node 0's link reversed relative to
    // node 2, which became the lowest neighbour. The release goes to the lowest neighbour,
    // but `next` still names where the request went.
    let mut a = node(1, h(0, 5, 1), &[h(0, 4, 0), h(0, 1, 2)], false);
    assert_eq!(a.next(), Some(n(2)));
    go(&mut a, Event::LinkDown(n(2)));
    go(&mut a, Event::LinkUp(n(2)));
    go(
        &mut a,
        recv(
            2,
            Message::Link {
                height: h(0, 9, 2).into(),
            },
        ),
    );
    go(&mut a, req(1, 0));
    assert_eq!(a.next(), Some(n(0)));
    go(
        &mut a,
        recv(
            2,
            Message::Link {
                height: h(0, 1, 2).into(),
            },
        ),
    );
    let out = go(
        &mut a,
        recv(
            3,
            Message::Release {
                lost: Resources::new(0),
                resources: Resources::new(2),
                height: h(0, 9, 3).into(),
                generation: [0; 3],
            },
        ),
    );
    assert_eq!(
        out,
        vec![
            anomaly(3, Anomaly::UnknownPeer),
            send(
                2,
                Message::Release {
                    lost: Resources::new(0),
                    resources: Resources::new(2),
                    height: h(0, 5, 1).into(),
                    generation: [0; 3],
                }
            )
        ]
    );
    assert_eq!(a.next(), Some(n(0)), "forwardRelease leaves next alone");
}

// ---- TOKEN -----------------------------------------------------------------------------------

#[test]
fn token_recipient_above_the_sender_moves_just_below_it_and_one_below_keeps_its_height() {
    // Node 1 is above the sender: it moves just below it (as in KRL), tells its other
    // neighbours, and the sender hears the new height in the acknowledgement (T3).
    let mut a = node(1, h(2, 0, 1), &[h(0, 0, 0), h(3, 2, 2), h(4, 0, 3)], false);
    let token = Message::Token {
        lost: Resources::new(0),
        available: Resources::new(5),
        priority: p(0),
        height: h(0, 0, 0).into(),
        fence: FenceCopies::default(),
    };
    let out = go(&mut a, recv(0, token.clone()));
    assert_eq!(a.height(), h(0, -1, 1));
    assert!(a.holds_token() && a.next() == Some(n(1)));
    let link = Message::Link {
        height: h(0, -1, 1).into(),
    };
    let ack = Message::token_ack(h(0, -1, 1), 1);
    assert_eq!(
        out,
        vec![send(2, link.clone()), send(3, link), send(0, ack)]
    );
    // Node 1 already far below the sender keeps its height (the paper moves it up to just
    // below the sender; a forged TOKEN height would then lift the holder above every node,
    // and all would climb over it one level at a time, T5).
    let mut a = node(
        1,
        h(-7, 0, 1),
        &[h(0, 0, 0), h(0, 2, 2), h(-9, 0, 3)],
        false,
    );
    let out = go(&mut a, recv(0, token));
    assert_eq!(a.height(), h(-7, 0, 1));
    let ack = Message::token_ack(h(-7, 0, 1), 1);
    assert_eq!(out, vec![send(0, ack)]);
}

#[test]
fn token_serves_the_queue_and_follows_with_a_request_for_the_rest() {
    let mut a = middle();
    go(&mut a, req(2, 1));
    go(&mut a, request_msg(2, 5, h(0, 2, 2)));
    go(&mut a, request_msg(3, 3, h(0, 3, 3)));
    let out = go(
        &mut a,
        recv(
            0,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(4),
                priority: p(0),
                height: h(0, 0, 0).into(),
                fence: FenceCopies::default(),
            },
        ),
    );
    let s = sends(&out);
    // LINKs to 0, 2, 3, then TOKEN to the front (2, priority 5) and a REQUEST carrying the
    // next priority (3's, before aging) behind it.
    assert_eq!(s.len(), 5);
    assert_eq!(
        s[3],
        (
            2,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(4),
                priority: p(5),
                height: h(0, -1, 1).into(),
                fence: FenceCopies::default(),
            }
        )
    );
    assert_eq!(
        s[4],
        (
            2,
            Message::Request {
                priority: p(3),
                height: h(0, -1, 1).into()
            }
        )
    );
    assert_eq!(a.neighbors().get(n(2)).unwrap().height(), h(0, -2, 2));
    assert!(!a.neighbors().get(n(2)).unwrap().received_li());
}

#[test]
fn a_second_token_is_refused_and_reported() {
    let mut a = holder();
    let before = a.clone();
    let out = go(
        &mut a,
        recv(
            2,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(5),
                priority: p(0),
                height: h(0, 1, 2).into(),
                fence: FenceCopies::default(),
            },
        ),
    );
    assert_eq!(out, vec![anomaly(2, Anomaly::Unexpected)]);
    assert_eq!(a, before);
}

#[test]
fn a_token_whose_count_is_impossible_is_kept_with_nothing_free_and_reported() {
    let mut a = middle();
    let out = go(
        &mut a,
        recv(
            0,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(K + 10),
                priority: p(0),
                height: h(0, 0, 0).into(),
                fence: FenceCopies::default(),
            },
        ),
    );
    assert!(out.contains(&anomaly(0, Anomaly::OutOfRange)));
    // Clamping to k could create resources; 0 can only lose some (T4).
    assert_eq!(
        a.available(),
        Some(0),
        "never dropped, never more than there is"
    );
}

#[test]
fn a_token_with_one_copy_of_its_count_corrupted_keeps_the_majority() {
    for (copies, kept) in [
        ([3, 3, 1], 3),
        ([1, 3, 3], 3),
        ([3, K + 1, 3], 3),
        ([u32::MAX, 2, 2], 2),
        ([0, 4, 0], 0),
        // No majority (a forgery): the smallest possible copy.
        ([3, 1, 2], 1),
        ([u32::MAX, 2, K + 1], 2),
    ] {
        let mut a = middle();
        let out = go(
            &mut a,
            recv(
                0,
                Message::Token {
                    lost: Resources::new(0),
                    available: Resources(copies),
                    priority: p(0),
                    height: h(0, 0, 0).into(),
                    fence: FenceCopies::default(),
                },
            ),
        );
        assert!(out.contains(&anomaly(0, Anomaly::OutOfRange)), "{copies:?}");
        assert_eq!(a.available(), Some(kept), "{copies:?}");
    }
}

// ---- REQUEST ---------------------------------------------------------------------------------

#[test]
fn idle_holder_passes_the_token_to_a_requester() {
    let mut a = holder();
    let out = go(&mut a, request_msg(2, 0, h(0, 1, 2)));
    assert_eq!(
        out,
        vec![send(
            2,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(K),
                priority: p(0),
                height: h(0, 0, 1).into(),
                fence: FenceCopies::default(),
            }
        )]
    );
    assert_eq!(a.next(), Some(n(2)));
}

#[test]
fn holder_in_the_cs_passes_the_remaining_resources_on() {
    // Interpretation: the 1st paper's prose says "state = CS", its appendix is garbled, the
    // 2nd paper says "state ≠ CS". We pass the token whenever the front is not the holder's
    // own unmet request, so resources left over by a holder in the CS are used concurrently.
    let mut a = holder();
    go(&mut a, req(2, 0));
    let out = go(&mut a, request_msg(3, 0, h(0, 2, 3)));
    assert_eq!(
        out,
        vec![send(
            3,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(3),
                priority: p(0),
                height: h(0, 0, 1).into(),
                // The holder's own entry was the token's first grant.
                fence: Fence::new(0, 1).into(),
            }
        )]
    );
}

#[test]
fn waiting_holder_keeps_the_token_against_a_lower_priority_request() {
    let mut a = waiting_holder(3, 4, 8);
    let out = go(&mut a, request_msg(3, 2, h(0, 2, 3)));
    assert!(
        out.is_empty(),
        "lower priority waits behind the holder: {out:?}"
    );
    assert!(a.holds_token());
    assert_eq!(a.queue().map(|e| e.0).collect::<Vec<_>>(), vec![n(1), n(3)]);
}

#[test]
fn waiting_holder_is_preempted_by_a_higher_priority_request() {
    let mut a = waiting_holder(3, 4, 1);
    let out = go(&mut a, request_msg(3, 9, h(0, 2, 3)));
    assert_eq!(
        sends(&out),
        vec![
            (
                3,
                Message::Token {
                    lost: Resources::new(0),
                    available: Resources::new(3),
                    priority: p(9),
                    height: h(0, -2, 1).into(),
                    fence: FenceCopies::default(),
                }
            ),
            // Its own request follows the token, at its priority before this aging step.
            (
                3,
                Message::Request {
                    priority: p(1),
                    height: h(0, -2, 1).into()
                }
            ),
        ]
    );
    assert_eq!(a.status(), Status::Waiting);
}

#[test]
fn first_queued_request_is_forwarded_later_ones_are_not() {
    let mut a = middle();
    let out = go(&mut a, request_msg(2, 4, h(0, 2, 2)));
    assert_eq!(
        out,
        vec![send(
            0,
            Message::Request {
                priority: p(4),
                height: h(0, 1, 1).into()
            }
        )]
    );
    assert!(go(&mut a, request_msg(3, 1, h(0, 3, 3))).is_empty());
}

#[test]
fn update_is_sent_when_a_second_entry_takes_the_front() {
    // The papers disagree: |Q| > 2 (1st) vs |Q| ≥ 2 (2nd). With |Q| = 2 the newcomer at the
    // front is more urgent than what was reported; only ≥ 2 tells the holder.
    let mut a = middle();
    go(&mut a, request_msg(2, 1, h(0, 2, 2)));
    let out = go(&mut a, request_msg(3, 6, h(0, 3, 3)));
    assert_eq!(out, vec![send(0, Message::Update { priority: p(6) })]);
}

#[test]
fn request_from_a_lower_neighbour_is_not_queued_and_is_answered_with_our_height() {
    let mut a = middle();
    let out = go(&mut a, request_msg(0, 4, h(0, 0, 0)));
    // The sender takes us for lower than we are (a crossing height change, or our LINK was
    // corrupted and dropped): it learns our height and routes its request elsewhere (T2).
    assert_eq!(
        out,
        vec![
            anomaly(0, Anomaly::Stale),
            send(
                0,
                Message::Link {
                    height: h(0, 1, 1).into()
                }
            )
        ]
    );
    assert_eq!(a.queue().count(), 0);
}

#[test]
fn request_before_the_token_handshake_completes_is_stale() {
    let mut a = holder();
    go(&mut a, request_msg(2, 0, h(0, 1, 2))); // token to 2: receivedLINK[2] = false
    let before = a.clone();
    let out = go(&mut a, request_msg(2, 0, h(0, 1, 2)));
    assert_eq!(out, vec![anomaly(2, Anomaly::Stale)]);
    assert_eq!(a, before);
    // A LINK sent before node 2 took the token does not count; its acknowledgement (with
    // whatever height) re-enables node 2's height information (T3).
    go(
        &mut a,
        recv(
            2,
            Message::Link {
                height: h(0, -1, 2).into(),
            },
        ),
    );
    assert!(!a.neighbors().get(n(2)).unwrap().received_li());
    go(&mut a, recv(2, Message::token_ack(h(0, -1, 2), 1)));
    assert!(a.neighbors().get(n(2)).unwrap().received_li());
}

#[test]
fn messages_from_strangers_are_reported_and_ignored() {
    let mut a = middle();
    let before = a.clone();
    assert_eq!(
        go(&mut a, request_msg(9, 1, h(0, 9, 9))),
        vec![anomaly(9, Anomaly::UnknownPeer)]
    );
    assert_eq!(
        go(&mut a, recv(9, Message::Update { priority: p(1) })),
        vec![anomaly(9, Anomaly::UnknownPeer)]
    );
    assert_eq!(
        go(
            &mut a,
            recv(
                9,
                Message::Link {
                    height: h(0, 9, 9).into()
                }
            )
        ),
        vec![anomaly(9, Anomaly::UnknownPeer)]
    );
    assert_eq!(a, before);
}

#[test]
fn a_request_with_an_impossible_height_is_kept_on_the_view_we_had() {
    // Dropping it would lose the request: the sender waits for a token from us.
    let mut a = middle();
    for bad in [h(0, 9, 3), h(i64::MAX, 0, 2), h(0, -Height::LIMIT - 1, 2)] {
        let out = go(&mut a, request_msg(2, 1, bad));
        assert_eq!(out[0], anomaly(2, Anomaly::OutOfRange), "{bad:?}");
        assert_eq!(a.neighbors().get(n(2)).unwrap().height(), h(0, 2, 2));
    }
    assert_eq!(a.queue().map(|(q, _)| q).collect::<Vec<_>>(), vec![n(2)]);
}

// ---- UPDATE ----------------------------------------------------------------------------------

#[test]
fn update_reorders_and_is_forwarded_when_the_front_changes() {
    let mut a = middle();
    go(&mut a, request_msg(2, 5, h(0, 2, 2)));
    go(&mut a, request_msg(3, 1, h(0, 3, 3)));
    let out = go(&mut a, recv(3, Message::Update { priority: p(7) }));
    assert_eq!(out, vec![send(0, Message::Update { priority: p(7) })]);
    assert_eq!(a.queue().next(), Some((n(3), p(7))));
    // Not moving the front: nothing to report.
    assert!(go(&mut a, recv(2, Message::Update { priority: p(6) })).is_empty());
}

#[test]
fn update_never_lowers_a_priority() {
    let mut a = middle();
    go(&mut a, request_msg(2, 5, h(0, 2, 2)));
    assert!(go(&mut a, recv(2, Message::Update { priority: p(1) })).is_empty());
    assert_eq!(a.queue().next(), Some((n(2), p(5))));
}

#[test]
fn update_for_a_request_not_in_the_queue_is_stale() {
    let mut a = middle();
    let before = a.clone();
    let out = go(&mut a, recv(2, Message::Update { priority: p(3) }));
    assert_eq!(out, vec![anomaly(2, Anomaly::Stale)]);
    assert_eq!(a, before);
}

#[test]
fn update_preempts_a_waiting_holder() {
    let mut a = waiting_holder(3, 4, 5);
    go(&mut a, request_msg(3, 1, h(0, 2, 3)));
    let out = go(&mut a, recv(3, Message::Update { priority: p(9) }));
    let s = sends(&out);
    assert!(matches!(
        s[0],
        (
            3,
            Message::Token {
                available: Resources([3, 3, 3]),
                ..
            }
        )
    ));
    assert!(matches!(s[1], (3, Message::Request { .. })));
    assert!(!a.holds_token());
}

#[test]
fn token_raises_the_front_to_the_priority_it_was_granted_at() {
    // Deviation: aging the request earned in the sender's queue travels with the token, so
    // the recipient does not rank its own request back at its base priority.
    let mut a = middle();
    go(&mut a, req(5, 1));
    go(
        &mut a,
        recv(
            0,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(2),
                priority: p(7),
                height: h(0, 0, 0).into(),
                fence: FenceCopies::default(),
            },
        ),
    );
    assert_eq!(a.queue().next(), Some((n(1), p(7))));
    // A request that would have beaten the base priority 1 now waits behind.
    let out = go(&mut a, request_msg(2, 6, h(0, 2, 2)));
    assert!(out.is_empty());
    assert!(a.holds_token());
}

/// A token is never dropped, even with fence copies of which no two agree (a forgery, which
/// no single corrupted field makes): it is kept with the largest copy as its grant counter, so
/// its fences cannot go back while any copy is true, and the forgery is reported (F1).
#[test]
fn a_token_with_disagreeing_fence_copies_is_kept_with_the_largest() {
    let mut a = middle();
    let forged = FenceCopies([Fence::new(0, 3), Fence::new(0, 9), Fence::new(1, 5)]);
    let out = go(
        &mut a,
        recv(
            0,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(K),
                priority: p(0),
                height: h(0, 0, 0).into(),
                fence: forged,
            },
        ),
    );
    assert!(out.contains(&anomaly(0, Anomaly::OutOfRange)), "{out:?}");
    assert!(a.holds_token());
    assert_eq!(go(&mut a, req(1, 0)), vec![enter(1, 10)]);
}
