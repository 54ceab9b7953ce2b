//! Unit tests of the application and token handlers of a KRL/KRLF node (RequestCS,
//! ReleaseCS, Request, Token), driving one `Node` directly through `Protocol::handle` and
//! asserting the exact actions and the resulting state (status, tokens, height, neighbour
//! view, `next`, queue). The link handlers are in `reverse_link_link_handlers.rs`; the fixtures
//! (`waiter()`, `holder(t)`) are described in `rl_unit`.

use super::unit::*;

// ---------------------------------------------------------------- RequestCS

#[test]
fn request_at_holder_enters_critical_at_once_without_messages() {
    let mut n = holder(1);
    assert_eq!(run(&mut n, request()), vec![enter()]);
    assert_eq!(n.status(), Status::Critical);
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(0)));
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(n.height(), h(0, 0, 0));
}

#[test]
fn request_at_holder_of_two_tokens_uses_one_and_keeps_both() {
    let mut n = holder(2);
    assert_eq!(run(&mut n, request()), vec![enter()]);
    assert_eq!(n.status(), Status::Critical);
    assert_eq!(n.tokens(), 2);
}

#[test]
fn request_at_non_holder_with_empty_queue_asks_lowest_neighbour() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, request()),
        vec![send(1, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(n.status(), Status::Waiting);
    assert_eq!(queue(&n), vec![5]);
    assert_eq!(n.next(), Some(NodeId(1)));
    assert_eq!(n.tokens(), 0);
}

#[test]
fn request_at_non_holder_with_non_empty_queue_only_enqueues_itself() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, recv(2, Request(h(2, 0, 2).into()))),
        vec![send(1, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(run(&mut n, request()), vec![]);
    assert_eq!(n.status(), Status::Waiting);
    assert_eq!(queue(&n), vec![2, 5]);
    assert_eq!(n.next(), Some(NodeId(1)));
}

#[test]
fn request_at_isolated_non_holder_is_queued_and_waits_for_a_link() {
    let mut n = node(5, 1, 0, h(1, 0, 5), &[], false);
    assert_eq!(run(&mut n, request()), vec![]);
    assert_eq!(n.status(), Status::Waiting);
    assert_eq!(queue(&n), vec![5]);
    assert_eq!(n.next(), None, "no neighbour to ask yet");
}

// ---------------------------------------------------------------- ReleaseCS

#[test]
fn release_without_queue_keeps_the_token_and_height() {
    let mut n = holder(1);
    run(&mut n, request());
    assert_eq!(run(&mut n, Event::Release), vec![]);
    assert_eq!(n.status(), Status::Remainder);
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(0)));
    assert_eq!(n.height(), h(0, 0, 0));
}

#[test]
fn release_with_one_queued_neighbour_sends_it_the_token_and_assumes_it_below() {
    let mut n = holder(1);
    run(&mut n, request());
    assert_eq!(run(&mut n, recv(2, Request(h(1, 0, 2).into()))), vec![]);
    assert_eq!(queue(&n), vec![2]);
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, Token(h(0, 0, 0).into(), fence(0, 1)))]
    );
    assert_eq!(n.status(), Status::Remainder);
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(view(&n, 2), h(0, -1, 2));
    assert!(!entry(&n, 2).received_li());
    assert!(entry(&n, 3).received_li());
    assert_eq!(n.height(), h(0, 0, 0));
}

#[test]
fn release_with_two_queued_neighbours_sends_token_then_request_for_the_rest() {
    let mut n = holder(1);
    run(&mut n, request());
    run(&mut n, recv(2, Request(h(1, 0, 2).into())));
    run(&mut n, recv(3, Request(h(1, 0, 3).into())));
    assert_eq!(queue(&n), vec![2, 3]);
    assert_eq!(
        run(&mut n, Event::Release),
        vec![
            send(2, Token(h(0, 0, 0).into(), fence(0, 1))),
            send(2, Request(h(0, 0, 0).into()))
        ]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(queue(&n), vec![3]);
}

#[test]
fn release_lowers_a_holder_left_without_incoming_link() {
    let mut n = node(0, 1, 1, h(5, 0, 0), &[h(1, 0, 1), h(2, 0, 2)], false);
    assert_eq!(
        run(&mut n, request()),
        vec![enter()],
        "no lowering on entry"
    );
    assert_eq!(n.height(), h(5, 0, 0));
    // max h1 = 2, so h1 = 1; neighbour 1 shares h1 = 1 with h2 = 0, so h2 = 1. Only the
    // neighbours now above (incoming) are told, as in the paper's LowerHeight.
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, LinkInfo(h(1, 1, 0).into()))]
    );
    assert_eq!(n.height(), h(1, 1, 0));
    assert!(n.height() < view(&n, 2), "gained an incoming link");
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.raises(), 0, "lowering is not a raise");
}

#[test]
fn release_that_hands_over_the_last_token_does_not_lower() {
    let mut n = node(0, 1, 1, h(1, 0, 0), &[h(0, 0, 1), h(2, 0, 2)], false);
    run(&mut n, request());
    run(&mut n, recv(2, Request(h(2, 0, 2).into())));
    // After the token leaves, 0 sees both neighbours below it (2 at the assumed (1,-1,2)),
    // but only a holder lowers (deviation (e)).
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, Token(h(1, 0, 0).into(), fence(0, 1)))]
    );
    assert!(n.neighbors().all_lower(n.height()));
    assert_eq!(n.height(), h(1, 0, 0));
}

#[test]
fn release_by_a_holder_left_with_a_token_and_no_incoming_link_lowers() {
    let mut n = node(0, 2, 2, h(1, 0, 0), &[h(2, 0, 2)], false);
    run(&mut n, request());
    assert_eq!(
        run(&mut n, recv(2, Request(h(2, 0, 2).into()))),
        vec![send(2, Token(h(1, 0, 0).into(), fence(1, 0)))]
    );
    // max h1 = 1 ⇒ h1 = 0; nobody at h1 = 0 ⇒ h2 stays 0; 2 (at (1,-1,2)) is now above.
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, LinkInfo(h(0, 0, 0).into()))]
    );
    assert_eq!(n.height(), h(0, 0, 0));
    assert_eq!(n.tokens(), 1);
}

#[test]
fn release_in_krlf_forwards_the_idle_token_to_lowest_unvisited_neighbour() {
    let mut n = node(0, 1, 1, h(0, 0, 0), &[h(1, 0, 2), h(1, 0, 3)], true);
    run(&mut n, request());
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, Token(h(0, 0, 0).into(), fence(0, 1)))]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(visited(&n), vec![2]);
    assert_eq!(view(&n, 2), h(0, -1, 2));
    assert!(!entry(&n, 2).received_li());
    assert_eq!(n.status(), Status::Remainder);
}

#[test]
fn release_in_krlf_with_two_tokens_forwards_only_one() {
    let mut n = node(0, 2, 2, h(0, 0, 0), &[h(1, 0, 2), h(1, 0, 3)], true);
    run(&mut n, request());
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, Token(h(0, 0, 0).into(), fence(1, 0)))]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(0)));
    assert_eq!(visited(&n), vec![2]);
}

#[test]
fn release_in_krlf_with_queue_serves_the_queue_and_marks_nothing() {
    let mut n = node(0, 1, 1, h(0, 0, 0), &[h(1, 0, 2), h(1, 0, 3)], true);
    run(&mut n, request());
    run(&mut n, recv(3, Request(h(1, 0, 3).into())));
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(3, Token(h(0, 0, 0).into(), fence(0, 1)))]
    );
    assert_eq!(n.next(), Some(NodeId(3)));
    assert_eq!(visited(&n), Vec::<u32>::new());
}

// ---------------------------------------------------------------- Request message

#[test]
fn request_from_higher_neighbour_is_queued_and_forwarded_downhill() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, recv(2, Request(h(2, 0, 2).into()))),
        vec![send(1, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(queue(&n), vec![2]);
    assert_eq!(n.next(), Some(NodeId(1)));
    assert_eq!(view(&n, 2), h(2, 0, 2));
    assert_eq!(n.status(), Status::Remainder);
}

#[test]
fn request_from_second_higher_neighbour_is_queued_without_a_new_message() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2).into())));
    assert_eq!(run(&mut n, recv(3, Request(h(3, 0, 3).into()))), vec![]);
    assert_eq!(queue(&n), vec![2, 3]);
}

#[test]
fn request_repeated_by_the_only_queued_neighbour_is_forwarded_again_as_in_the_paper() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2).into())));
    // Appendix line 10: Q = [j] ⇒ ForwardRequest, even though j is already queued.
    assert_eq!(
        run(&mut n, recv(2, Request(h(2, 0, 2).into()))),
        vec![send(1, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(queue(&n), vec![2]);
}

#[test]
fn request_from_lower_neighbour_updates_the_view_but_is_not_queued() {
    let mut n = waiter();
    // Not queued, but answered with our height, so the requester routes elsewhere even if
    // our last LinkInfo to it was lost to corruption (T2).
    assert_eq!(
        run(&mut n, recv(1, Request(h(0, 3, 1).into()))),
        vec![
            Action::Anomaly {
                from: NodeId(1),
                kind: Anomaly::Stale
            },
            send(1, Message::LinkInfo(h(1, 0, 5).into()))
        ]
    );
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(view(&n, 1), h(0, 3, 1));
    assert_eq!(n.height(), h(1, 0, 5));
}

#[test]
fn request_carrying_a_raised_height_from_the_only_lower_neighbour_triggers_raise_height() {
    let mut n = waiter();
    // Neighbour 1 is now at (4,0,1): every neighbour is above node 5.
    // min h1 = 2 ⇒ h1 = 3; neighbour 3 has h1 = 3, h2 = 0 ⇒ h2 = -1.
    let new = h(3, -1, 5);
    assert_eq!(
        run(&mut n, recv(1, Request(h(4, 0, 1).into()))),
        vec![
            send(1, LinkInfo(new.into())),
            send(2, LinkInfo(new.into())),
            send(3, LinkInfo(new.into())),
            send(2, Request(new.into())),
        ]
    );
    assert_eq!(n.height(), new);
    assert_eq!(n.raises(), 1);
    assert_eq!(
        queue(&n),
        vec![1],
        "1 is still above node 5, its request stays"
    );
    assert_eq!(n.next(), Some(NodeId(2)));
}

#[test]
fn request_at_holder_in_remainder_sends_the_token_at_once() {
    let mut n = holder(1);
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2).into()))),
        vec![send(2, Token(h(0, 0, 0).into(), T0))]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(view(&n, 2), h(0, -1, 2));
    assert!(!entry(&n, 2).received_li());
}

#[test]
fn request_at_holder_in_remainder_with_two_tokens_serves_two_requesters() {
    let mut n = holder(2);
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2).into()))),
        vec![send(2, Token(h(0, 0, 0).into(), fence(1, 0)))]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(
        n.next(),
        Some(NodeId(0)),
        "still a holder: next points home"
    );
    assert_eq!(
        run(&mut n, recv(3, Request(h(1, 0, 3).into()))),
        vec![send(3, Token(h(0, 0, 0).into(), T0))]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(3)));
}

#[test]
fn request_at_holder_in_critical_with_one_token_is_queued() {
    let mut n = holder(1);
    run(&mut n, request());
    assert_eq!(run(&mut n, recv(2, Request(h(1, 0, 2).into()))), vec![]);
    assert_eq!(queue(&n), vec![2]);
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(0)));
    assert_eq!(n.status(), Status::Critical);
}

#[test]
fn request_at_holder_in_critical_with_two_tokens_gets_the_spare_one() {
    let mut n = holder(2);
    run(&mut n, request());
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2).into()))),
        vec![send(2, Token(h(0, 0, 0).into(), fence(1, 0)))]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(0)));
    assert_eq!(n.status(), Status::Critical);
    // The remaining token is in use: the next requester waits.
    assert_eq!(run(&mut n, recv(3, Request(h(1, 0, 3).into()))), vec![]);
    assert_eq!(queue(&n), vec![3]);
    assert_eq!(n.tokens(), 1);
    // Release hands the last token on.
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(3, Token(h(0, 0, 0).into(), fence(0, 1)))]
    );
    assert_eq!(n.tokens(), 0);
}

#[test]
fn request_from_next_that_now_lies_above_reroutes_to_the_new_lowest() {
    let mut n = node(
        5,
        1,
        0,
        h(1, 0, 5),
        &[h(0, 0, 1), h(0, 5, 4), h(2, 0, 2)],
        false,
    );
    assert_eq!(
        run(&mut n, request()),
        vec![send(1, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(
        run(&mut n, recv(1, Request(h(3, 0, 1).into()))),
        vec![send(4, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(queue(&n), vec![5, 1]);
    assert_eq!(n.next(), Some(NodeId(4)));
    assert_eq!(n.raises(), 0);
}

#[test]
fn request_sent_before_our_token_arrived_is_dropped_as_stale() {
    let mut n = holder(1);
    run(&mut n, recv(2, Request(h(1, 0, 2).into())));
    let before = n.clone();
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2).into()))),
        vec![anomaly(2, Anomaly::Stale)]
    );
    assert_eq!(n, before);
}

// ---------------------------------------------------------------- Token

#[test]
fn token_from_lower_neighbour_lowers_height_acks_and_enters() {
    let mut n = waiter();
    run(&mut n, request());
    let new = h(0, -1, 5);
    // 2 and 3 were above and stay above: the paper does not tell them.
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1).into(), T0))),
        vec![send(1, Message::token_ack(new, 1)), enter()]
    );
    assert_eq!(n.height(), new);
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.status(), Status::Critical);
    assert_eq!(n.next(), Some(NodeId(5)));
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(view(&n, 1), h(0, 0, 1));
}

#[test]
fn token_lowering_informs_the_other_outgoing_neighbours_only() {
    let mut n = node(
        5,
        1,
        0,
        h(1, 0, 5),
        &[h(0, 0, 1), h(0, 5, 4), h(2, 0, 2)],
        false,
    );
    let new = h(0, -1, 5);
    // 4 was below 5 and is now above it: its link flips, so it must learn the new height.
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1).into(), T0))),
        vec![
            send(4, LinkInfo(new.into())),
            send(1, Message::token_ack(new, 1))
        ]
    );
    assert_eq!(n.height(), new);
    assert!(view(&n, 4) > new);
}

#[test]
fn token_from_higher_neighbour_keeps_height_and_acks_the_actual_height() {
    let mut n = waiter();
    run(&mut n, request());
    assert_eq!(
        run(&mut n, recv(2, Token(h(2, 0, 2).into(), T0))),
        vec![send(2, Message::token_ack(h(1, 0, 5), 1)), enter()]
    );
    assert_eq!(n.height(), h(1, 0, 5));
    assert_eq!(view(&n, 2), h(2, 0, 2));
    assert_eq!(n.status(), Status::Critical);
}

#[test]
fn token_with_empty_queue_in_krl_stays_and_next_points_home() {
    let mut n = waiter();
    let new = h(0, -1, 5);
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1).into(), T0))),
        vec![send(1, Message::token_ack(new, 1))]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(5)));
    assert_eq!(n.status(), Status::Remainder);
    assert_eq!(
        visited(&n),
        vec![1],
        "the sender's link is marked even in KRL"
    );
}

#[test]
fn token_serves_the_front_neighbour_and_follows_it_with_a_request_for_the_rest() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2).into())));
    assert_eq!(run(&mut n, request()), vec![]);
    let new = h(0, -1, 5);
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1).into(), T0))),
        vec![
            send(1, Message::token_ack(new, 1)),
            send(2, Token(new.into(), T0)),
            send(2, Request(new.into())),
        ]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(queue(&n), vec![5]);
    assert_eq!(n.status(), Status::Waiting);
    assert_eq!(view(&n, 2), h(0, -2, 2));
    assert!(!entry(&n, 2).received_li());
}

#[test]
fn second_token_arriving_during_critical_section_serves_the_queue() {
    let mut n = holder(1);
    run(&mut n, request());
    run(&mut n, recv(2, Request(h(1, 0, 2).into())));
    assert_eq!(
        run(&mut n, recv(3, Token(h(1, 0, 3).into(), fence(1, 0)))),
        vec![
            send(3, Message::token_ack(h(0, 0, 0), 1)),
            send(2, Token(h(0, 0, 0).into(), fence(1, 0)))
        ]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(0)));
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(n.status(), Status::Critical);
}

#[test]
fn token_in_krlf_with_empty_queue_goes_to_lowest_unvisited_and_marks_both_links() {
    let mut n = node(
        5,
        1,
        0,
        h(1, 0, 5),
        &[h(0, 0, 1), h(2, 0, 2), h(3, 0, 3)],
        true,
    );
    let new = h(0, -1, 5);
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1).into(), T0))),
        vec![
            send(1, Message::token_ack(new, 1)),
            send(2, Token(new.into(), T0))
        ]
    );
    assert_eq!(visited(&n), vec![1, 2]);
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(view(&n, 2), h(0, -2, 2));
}

#[test]
fn token_in_krlf_resets_visited_marks_once_every_neighbour_is_visited() {
    let mut n = node(5, 1, 0, h(1, 0, 5), &[h(0, 0, 1), h(2, 0, 2)], true);
    // From 2 (above): no lowering; forwarded to 1, the only unvisited neighbour.
    assert_eq!(
        run(&mut n, recv(2, Token(h(2, 0, 2).into(), T0))),
        vec![
            send(2, Message::token_ack(h(1, 0, 5), 1)),
            send(1, Token(h(1, 0, 5).into(), T0))
        ]
    );
    assert_eq!(visited(&n), vec![1, 2]);
    assert_eq!(
        run(&mut n, recv(1, Message::token_ack(h(0, 0, 1), 1))),
        vec![]
    );
    // 1 sends it back: every link is visited, the marks are cleared and the lowest (1) wins.
    let new = h(0, -1, 5);
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1).into(), T0))),
        vec![
            send(1, Message::token_ack(new, 1)),
            send(1, Token(new.into(), T0))
        ]
    );
    assert_eq!(visited(&n), vec![1]);
    assert_eq!(n.tokens(), 0);
}

// ---------------------------------------------------------------- fencing (F1)

#[test]
fn a_token_whose_id_is_held_already_or_impossible_is_refused_unchanged() {
    // Node 0 holds token 0 of k = 2.
    let mut n = holder(1);
    for (forged, kind) in [
        // A second copy of token 0: a suspect second token (R14).
        (fence(0, 5), Anomaly::Unexpected),
        (fence(2, 0), Anomaly::OutOfRange),
        (
            FenceCopies([Fence::new(1, 0), Fence::new(1, 1), Fence::new(0, 0)]),
            Anomaly::OutOfRange,
        ),
    ] {
        let before = n.clone();
        assert_eq!(
            run(&mut n, recv(2, Token(h(1, 0, 2).into(), forged))),
            vec![anomaly(2, kind)],
            "{forged:?}"
        );
        assert_eq!(n, before, "{forged:?} changed the node");
    }
    // Token 1, its copies outvoting one corrupted copy, is new here: kept, with its counter.
    let one_bad = FenceCopies([Fence::new(1, 7), Fence::new(9, 7), Fence::new(1, 7)]);
    run(&mut n, recv(2, Token(h(1, 0, 2).into(), one_bad)));
    assert_eq!(
        n.held_tokens().collect::<Vec<_>>(),
        [Fence::new(0, 0), Fence::new(1, 7)]
    );
}

#[test]
fn each_entry_raises_the_counter_of_the_token_it_uses() {
    let mut n = holder(2);
    assert_eq!(run(&mut n, request()), vec![enter_with(0, 1)]);
    // The spare token leaves from the end; the one in use stays.
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2).into()))),
        vec![send(2, Token(h(0, 0, 0).into(), fence(1, 0)))]
    );
    run(&mut n, Event::Release);
    assert_eq!(run(&mut n, request()), vec![enter_with(0, 2)]);
}
