//! Unit tests of the link handlers of a KRL/KRLF node (LinkInfo, TokenAck, link failure, link
//! formation), driving one `Node` directly through `Protocol::handle` and asserting the exact
//! actions and the resulting state. The fixtures (`waiter()`, `holder(t)`) are described in
//! `rl_unit`.

use super::unit::*;

// ---------------------------------------------------------------- LinkInfo and TokenAck

#[test]
fn link_info_from_new_neighbour_joins_it_to_n_without_resend_if_height_unchanged() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(7))),
        vec![send(7, LinkInfo(h(1, 0, 5).into()))]
    );
    assert_eq!(run(&mut n, recv(7, LinkInfo(h(4, 0, 7).into()))), vec![]);
    let e = entry(&n, 7);
    assert!(e.in_n() && !e.forming() && e.received_li());
    assert_eq!(e.height(), h(4, 0, 7));
    assert!(n.neighbors().is_member(NodeId(7)));
}

#[test]
fn link_info_from_new_neighbour_triggers_resend_when_own_height_changed_since_formation() {
    let mut n = waiter();
    run(&mut n, Event::LinkUp(NodeId(7)));
    let new = h(0, -1, 5);
    // 7 is not in N yet, so the lowering does not reach it...
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1).into(), T0))),
        vec![send(1, Message::token_ack(new, 1))]
    );
    // ...until its first LinkInfo arrives (formHeight differs from myHeight).
    assert_eq!(
        run(&mut n, recv(7, LinkInfo(h(4, 0, 7).into()))),
        vec![send(7, LinkInfo(new.into()))]
    );
    assert!(!entry(&n, 7).forming());
    // A later LinkInfo from 7 sends nothing.
    assert_eq!(run(&mut n, recv(7, LinkInfo(h(4, 1, 7).into()))), vec![]);
    assert_eq!(view(&n, 7), h(4, 1, 7));
}

#[test]
fn link_info_showing_a_requester_now_below_deletes_it_from_the_queue() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2).into())));
    // LinkInfo line 7: 2 routes its requests elsewhere now.
    assert_eq!(run(&mut n, recv(2, LinkInfo(h(0, 5, 2).into()))), vec![]);
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(view(&n, 2), h(0, 5, 2));
}

#[test]
fn link_info_leaving_a_holder_without_incoming_link_lowers_it() {
    let mut n = node(0, 1, 1, h(0, 0, 0), &[h(1, 0, 2)], false);
    // max h1 = -1 ⇒ h1 = -2; nobody else has h1 = -2, h2 stays 0.
    assert_eq!(
        run(&mut n, recv(2, LinkInfo(h(-1, 0, 2).into()))),
        vec![send(2, LinkInfo(h(-2, 0, 0).into()))]
    );
    assert_eq!(n.height(), h(-2, 0, 0));
    assert_eq!(n.raises(), 0);
}

#[test]
fn link_info_leaving_a_non_holder_without_outgoing_link_raises_it_and_reforwards() {
    let mut n = node(5, 1, 0, h(1, 0, 5), &[h(0, 0, 1)], false);
    run(&mut n, request());
    let new = h(3, 0, 5);
    assert_eq!(
        run(&mut n, recv(1, LinkInfo(h(2, 0, 1).into()))),
        vec![send(1, LinkInfo(new.into())), send(1, Request(new.into()))]
    );
    assert_eq!(n.height(), new);
    assert_eq!(n.raises(), 1);
    assert_eq!(queue(&n), vec![5]);
    assert_eq!(n.next(), Some(NodeId(1)));
}

#[test]
fn link_info_raise_drops_requests_of_neighbours_now_below() {
    // 2 asked through 5; then 1 rises above both: 5 raises above 2 and drops its request.
    let mut n = node(5, 1, 0, h(1, 0, 5), &[h(0, 0, 1), h(2, 0, 2)], false);
    run(&mut n, recv(2, Request(h(2, 0, 2).into())));
    // min h1 = 2 ⇒ h1 = 3, h2 stays 0: (3,0,5) is above (2,0,2).
    let new = h(3, 0, 5);
    assert_eq!(
        run(&mut n, recv(1, LinkInfo(h(4, 0, 1).into()))),
        vec![send(1, LinkInfo(new.into())), send(2, LinkInfo(new.into()))]
    );
    assert_eq!(queue(&n), Vec::<u32>::new());
}

#[test]
fn link_info_making_next_higher_reroutes_the_request() {
    let mut n = node(
        5,
        1,
        0,
        h(1, 0, 5),
        &[h(0, 0, 1), h(0, 5, 4), h(2, 0, 2)],
        false,
    );
    run(&mut n, request());
    assert_eq!(
        run(&mut n, recv(1, LinkInfo(h(2, 5, 1).into()))),
        vec![send(4, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(n.next(), Some(NodeId(4)));
    assert_eq!(queue(&n), vec![5]);
}

#[test]
fn link_info_while_token_ack_pending_is_not_recorded_and_ack_restores_trust() {
    let mut n = holder(1);
    run(&mut n, recv(2, Request(h(1, 0, 2).into())));
    // A LinkInfo 2 sent before receiving the token: stale, not recorded.
    assert_eq!(run(&mut n, recv(2, LinkInfo(h(9, 0, 2).into()))), vec![]);
    assert_eq!(view(&n, 2), h(0, -1, 2));
    assert!(!entry(&n, 2).received_li());
    // The ack carries 2's real height (deviation (b)): recorded, trust restored.
    assert_eq!(
        run(&mut n, recv(2, Message::token_ack(h(-3, 0, 2), 1))),
        vec![]
    );
    assert_eq!(view(&n, 2), h(-3, 0, 2));
    assert!(entry(&n, 2).received_li());
    // From now on LinkInfo is recorded again.
    assert_eq!(run(&mut n, recv(2, LinkInfo(h(-4, 0, 2).into()))), vec![]);
    assert_eq!(view(&n, 2), h(-4, 0, 2));
}

#[test]
fn token_ack_of_an_earlier_token_does_not_restore_trust_while_a_later_one_is_unacknowledged() {
    // KRLF can send a second token to the same neighbour before the first is acknowledged.
    let mut n = node(0, 2, 2, h(0, 0, 0), &[h(1, 0, 1)], true);
    run(&mut n, request());
    assert_eq!(
        run(&mut n, Event::Release),
        vec![
            send(1, Token(h(0, 0, 0).into(), fence(1, 0))),
            send(1, LinkInfo(h(-1, 0, 0).into()))
        ]
    );
    run(&mut n, request());
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(1, Token(h(-1, 0, 0).into(), fence(0, 2)))]
    );
    assert_eq!(entry(&n, 1).unacked(), 2);
    // The first ack reports 1's height after the first token only: still stale.
    assert_eq!(
        run(&mut n, recv(1, Message::token_ack(h(0, -1, 1), 1))),
        vec![]
    );
    assert!(!entry(&n, 1).received_li());
    assert_eq!(
        view(&n, 1),
        h(-1, -1, 1),
        "the guess for the latest token stays"
    );
    assert_eq!(n.raises(), 0);
    let before = n.clone();
    assert_eq!(
        run(&mut n, recv(1, Request(h(0, -1, 1).into()))),
        vec![anomaly(1, Anomaly::Stale)]
    );
    assert_eq!(n, before);
    // The second ack (counting both tokens) completes the handshake, without an anomaly.
    assert_eq!(
        run(&mut n, recv(1, Message::token_ack(h(-1, -1, 1), 2))),
        vec![]
    );
    assert!(entry(&n, 1).received_li());
    assert_eq!(entry(&n, 1).unacked(), 0);
    assert_eq!(view(&n, 1), h(-1, -1, 1));
}

#[test]
fn token_ack_to_a_node_that_still_holds_a_token_can_make_it_lower() {
    // Node 0 holds 2 tokens and has one neighbour; it gives one away and keeps one. The ack
    // shows the recipient below, so 0 has no incoming link and lowers itself.
    let mut n = node(0, 2, 2, h(0, 0, 0), &[h(1, 0, 2)], false);
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2).into()))),
        vec![send(2, Token(h(0, 0, 0).into(), fence(1, 0)))]
    );
    assert_eq!(n.tokens(), 1);
    // Already at the assumed (0,-1,2) 0 sees no incoming link; the ack triggers LowerHeight:
    // max h1 = 0 ⇒ h1 = -1, nobody at h1 = -1 ⇒ h2 stays 0.
    assert_eq!(
        run(&mut n, recv(2, Message::token_ack(h(0, -1, 2), 1))),
        vec![send(2, LinkInfo(h(-1, 0, 0).into()))]
    );
    assert_eq!(n.height(), h(-1, 0, 0));
}

// ---------------------------------------------------------------- link failure

#[test]
fn link_failure_to_the_only_lower_neighbour_makes_a_waiting_node_raise_and_reforward() {
    let mut n = waiter();
    run(&mut n, request());
    // Left with 2 (2,0,2) and 3 (3,0,3): h1 = 3, below 3's h2 ⇒ (3,-1,5).
    let new = h(3, -1, 5);
    assert_eq!(
        run(&mut n, Event::LinkDown(NodeId(1))),
        vec![
            send(2, LinkInfo(new.into())),
            send(3, LinkInfo(new.into())),
            send(2, Request(new.into()))
        ]
    );
    assert_eq!(n.height(), new);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(queue(&n), vec![5]);
    assert_eq!(n.raises(), 1);
    assert!(n.neighbors().get(NodeId(1)).is_none());
}

#[test]
fn link_failure_to_the_only_lower_neighbour_raises_an_idle_node_too() {
    let mut n = waiter();
    let new = h(3, -1, 5);
    assert_eq!(
        run(&mut n, Event::LinkDown(NodeId(1))),
        vec![send(2, LinkInfo(new.into())), send(3, LinkInfo(new.into()))]
    );
    assert_eq!(n.height(), new);
}

#[test]
fn link_failure_to_next_reroutes_to_the_remaining_lower_neighbour() {
    let mut n = node(
        5,
        1,
        0,
        h(1, 0, 5),
        &[h(0, 0, 1), h(0, 5, 4), h(2, 0, 2)],
        false,
    );
    run(&mut n, request());
    assert_eq!(
        run(&mut n, Event::LinkDown(NodeId(1))),
        vec![send(4, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(n.next(), Some(NodeId(4)));
    assert_eq!(n.raises(), 0);
}

#[test]
fn link_failure_to_a_queued_requester_deletes_it_silently() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2).into())));
    assert_eq!(run(&mut n, Event::LinkDown(NodeId(2))), vec![]);
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(n.next(), Some(NodeId(1)));
    assert!(n.neighbors().get(NodeId(2)).is_none());
}

#[test]
fn link_failure_leaving_a_holder_without_incoming_link_lowers_it() {
    let mut n = node(0, 1, 1, h(0, 0, 0), &[h(-1, 0, 1), h(1, 0, 2)], false);
    assert_eq!(
        run(&mut n, Event::LinkDown(NodeId(2))),
        vec![send(1, LinkInfo(h(-2, 0, 0).into()))]
    );
    assert_eq!(n.height(), h(-2, 0, 0));
    assert_eq!(n.tokens(), 1);
}

#[test]
fn link_failure_at_holder_with_an_incoming_link_left_only_trims_the_queue() {
    let mut n = holder(1);
    run(&mut n, request());
    run(&mut n, recv(2, Request(h(1, 0, 2).into())));
    run(&mut n, recv(3, Request(h(1, 0, 3).into())));
    assert_eq!(run(&mut n, Event::LinkDown(NodeId(2))), vec![]);
    assert_eq!(queue(&n), vec![3]);
    assert_eq!(n.height(), h(0, 0, 0));
    assert_eq!(n.status(), Status::Critical);
}

#[test]
fn link_failure_to_a_stranger_is_a_redundant_event_that_changes_nothing() {
    let mut n = waiter();
    let before = n.clone();
    assert_eq!(
        run(&mut n, Event::LinkDown(NodeId(9))),
        vec![anomaly(9, Anomaly::RedundantLinkEvent)]
    );
    assert_eq!(n, before);
}

#[test]
fn isolated_waiting_node_keeps_its_request_and_forwards_it_when_a_link_forms() {
    let mut n = node(5, 1, 0, h(1, 0, 5), &[h(0, 0, 1)], false);
    run(&mut n, request());
    assert_eq!(run(&mut n, Event::LinkDown(NodeId(1))), vec![]);
    assert_eq!(n.height(), h(1, 0, 5), "an isolated node does not raise");
    assert_eq!(queue(&n), vec![5]);
    // Needing the link, the node probes the peer (T1).
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(7))),
        vec![send(7, Message::Probe(h(1, 0, 5).into()))]
    );
    assert_eq!(
        run(&mut n, recv(7, LinkInfo(h(0, 0, 7).into()))),
        vec![send(7, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(n.next(), Some(NodeId(7)));
}

#[test]
fn isolated_waiting_node_resends_its_request_when_the_link_to_its_old_next_comes_back() {
    // The failed link took the request queued at 1 with it (1 deletes 5 from its queue on
    // LinkDown). When the same link forms again, 1 is below 5 as before, but the request must
    // be sent again: nothing else will ever bring a token to 5.
    let mut n = node(5, 1, 0, h(1, 0, 5), &[h(0, 0, 1)], false);
    assert_eq!(
        run(&mut n, request()),
        vec![send(1, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(run(&mut n, Event::LinkDown(NodeId(1))), vec![]);
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(1))),
        vec![send(1, Message::Probe(h(1, 0, 5).into()))]
    );
    assert_eq!(
        run(&mut n, recv(1, LinkInfo(h(0, 0, 1).into()))),
        vec![send(1, Request(h(1, 0, 5).into()))]
    );
    assert_eq!(n.next(), Some(NodeId(1)));
}

#[test]
fn isolated_waiting_node_raises_above_a_new_lower_neighbour_before_forwarding() {
    let mut n = node(5, 1, 0, h(1, 0, 5), &[h(0, 0, 1)], false);
    run(&mut n, request());
    run(&mut n, Event::LinkDown(NodeId(1)));
    run(&mut n, Event::LinkUp(NodeId(7)));
    let new = h(5, 0, 5);
    assert_eq!(
        run(&mut n, recv(7, LinkInfo(h(4, 0, 7).into()))),
        vec![send(7, LinkInfo(new.into())), send(7, Request(new.into()))]
    );
    assert_eq!(n.height(), new);
}

#[test]
fn isolated_holder_neither_lowers_nor_raises() {
    let mut n = node(0, 1, 1, h(0, 0, 0), &[h(1, 0, 2)], false);
    assert_eq!(run(&mut n, Event::LinkDown(NodeId(2))), vec![]);
    assert_eq!(n.height(), h(0, 0, 0));
    assert_eq!(n.tokens(), 1);
    assert!(n.neighbors().is_empty());
}

// ---------------------------------------------------------------- link formation

#[test]
fn link_up_sends_own_height_and_records_a_forming_link_outside_n() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(7))),
        vec![send(7, LinkInfo(h(1, 0, 5).into()))]
    );
    let e = entry(&n, 7);
    assert!(e.forming() && !e.in_n() && e.received_li() && !e.visited());
    assert_eq!(n.neighbors().form_height(NodeId(7)), Some(h(1, 0, 5)));
    assert!(!n.neighbors().is_member(NodeId(7)));
    assert_eq!(n.neighbors().lowest(), Some(NodeId(1)));
}

#[test]
fn link_up_to_an_existing_neighbour_is_a_keepalive_that_changes_nothing_but_announces() {
    // The link layer confirming a link: the node announces its height again, so a view of it
    // corrupted on the way is corrected (T6); its state does not change.
    let mut n = waiter();
    let before = n.clone();
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(2))),
        vec![send(2, LinkInfo(h(1, 0, 5).into()))]
    );
    assert_eq!(n, before);
    run(&mut n, Event::LinkUp(NodeId(7)));
    let before = n.clone();
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(7))),
        vec![send(7, LinkInfo(h(1, 0, 5).into()))],
        "a second LinkUp while the link is still forming"
    );
    assert_eq!(n, before);
}

#[test]
fn link_up_to_itself_is_redundant() {
    let mut n = waiter();
    let before = n.clone();
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(5))),
        vec![anomaly(5, Anomaly::RedundantLinkEvent)]
    );
    assert_eq!(n, before);
}
