//! Unit tests of every KRL/KRLF handler, driving one `Node` directly through
//! `Protocol::handle` and asserting the exact actions and the resulting state (status, tokens,
//! height, neighbour view, `next`, queue).
//!
//! Two fixtures recur:
//! - `waiter()`: node 5 at (1,0,5) without a token; neighbour 1 at (0,0,1) is below it,
//!   neighbours 2 at (2,0,2) and 3 at (3,0,3) are above it.
//! - `holder(t)`: node 0 at (0,0,0) holding `t` of k = 2 tokens; neighbours 2 at (1,0,2) and
//!   3 at (1,0,3) are above it.

use manet_mutex::height::Height;
use manet_mutex::neighbors::Neighbor;
use manet_mutex::reverse_link::{Config, Message, Node};
use manet_mutex::{Action, Anomaly, CsRequest, Event, NodeId, Protocol, Status};

fn h(h1: i64, h2: i64, id: u32) -> Height {
    Height::new(h1, h2, NodeId(id))
}

fn node(id: u32, k: u32, tokens: u32, height: Height, nbrs: &[Height], fwd: bool) -> Node {
    Node::new(Config {
        id: NodeId(id),
        k,
        tokens,
        height,
        neighbors: nbrs.to_vec(),
        forwarding: fwd,
    })
    .expect("valid config")
}

fn waiter() -> Node {
    node(
        5,
        2,
        0,
        h(1, 0, 5),
        &[h(0, 0, 1), h(2, 0, 2), h(3, 0, 3)],
        false,
    )
}

fn holder(tokens: u32) -> Node {
    node(0, 2, tokens, h(0, 0, 0), &[h(1, 0, 2), h(1, 0, 3)], false)
}

fn run(node: &mut Node, event: Event<Message>) -> Vec<Action<Message>> {
    node.handle(event).expect("a valid event").collect()
}

fn recv(from: u32, msg: Message) -> Event<Message> {
    Event::Receive {
        from: NodeId(from),
        msg,
    }
}

fn request() -> Event<Message> {
    Event::Request(CsRequest::ONE)
}

fn send(to: u32, msg: Message) -> Action<Message> {
    Action::Send {
        to: NodeId(to),
        msg,
    }
}

fn enter() -> Action<Message> {
    Action::EnterCritical { resources: 1 }
}

fn anomaly(from: u32, kind: Anomaly) -> Action<Message> {
    Action::Anomaly {
        from: NodeId(from),
        kind,
    }
}

fn queue(node: &Node) -> Vec<u32> {
    node.queue().iter().map(|id| id.0).collect()
}

fn entry(node: &Node, id: u32) -> Neighbor {
    node.neighbors()
        .get(NodeId(id))
        .cloned()
        .unwrap_or_else(|| panic!("n{id} is not in the neighbour table"))
}

fn view(node: &Node, id: u32) -> Height {
    entry(node, id).height
}

fn visited(node: &Node) -> Vec<u32> {
    node.neighbors()
        .members()
        .filter(|n| n.visited)
        .map(|n| n.id.0)
        .collect()
}

use Message::{LinkInfo, Request, Token, TokenAck};

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
    assert_eq!(run(&mut n, request()), vec![send(1, Request(h(1, 0, 5)))]);
    assert_eq!(n.status(), Status::Waiting);
    assert_eq!(queue(&n), vec![5]);
    assert_eq!(n.next(), Some(NodeId(1)));
    assert_eq!(n.tokens(), 0);
}

#[test]
fn request_at_non_holder_with_non_empty_queue_only_enqueues_itself() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, recv(2, Request(h(2, 0, 2)))),
        vec![send(1, Request(h(1, 0, 5)))]
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
    assert_eq!(run(&mut n, recv(2, Request(h(1, 0, 2)))), vec![]);
    assert_eq!(queue(&n), vec![2]);
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.status(), Status::Remainder);
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(view(&n, 2), h(0, -1, 2));
    assert!(!entry(&n, 2).received_li);
    assert!(entry(&n, 3).received_li);
    assert_eq!(n.height(), h(0, 0, 0));
}

#[test]
fn release_with_two_queued_neighbours_sends_token_then_request_for_the_rest() {
    let mut n = holder(1);
    run(&mut n, request());
    run(&mut n, recv(2, Request(h(1, 0, 2))));
    run(&mut n, recv(3, Request(h(1, 0, 3))));
    assert_eq!(queue(&n), vec![2, 3]);
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, Token(h(0, 0, 0))), send(2, Request(h(0, 0, 0)))]
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
        vec![send(2, LinkInfo(h(1, 1, 0)))]
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
    run(&mut n, recv(2, Request(h(2, 0, 2))));
    // After the token leaves, 0 sees both neighbours below it (2 at the assumed (1,-1,2)),
    // but only a holder lowers (deviation (e)).
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, Token(h(1, 0, 0)))]
    );
    assert!(n.neighbors().all_lower(n.height()));
    assert_eq!(n.height(), h(1, 0, 0));
}

#[test]
fn release_by_a_holder_left_with_a_token_and_no_incoming_link_lowers() {
    let mut n = node(0, 2, 2, h(1, 0, 0), &[h(2, 0, 2)], false);
    run(&mut n, request());
    assert_eq!(
        run(&mut n, recv(2, Request(h(2, 0, 2)))),
        vec![send(2, Token(h(1, 0, 0)))]
    );
    // max h1 = 1 ⇒ h1 = 0; nobody at h1 = 0 ⇒ h2 stays 0; 2 (at (1,-1,2)) is now above.
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, LinkInfo(h(0, 0, 0)))]
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
        vec![send(2, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(visited(&n), vec![2]);
    assert_eq!(view(&n, 2), h(0, -1, 2));
    assert!(!entry(&n, 2).received_li);
    assert_eq!(n.status(), Status::Remainder);
}

#[test]
fn release_in_krlf_with_two_tokens_forwards_only_one() {
    let mut n = node(0, 2, 2, h(0, 0, 0), &[h(1, 0, 2), h(1, 0, 3)], true);
    run(&mut n, request());
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(2, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(0)));
    assert_eq!(visited(&n), vec![2]);
}

#[test]
fn release_in_krlf_with_queue_serves_the_queue_and_marks_nothing() {
    let mut n = node(0, 1, 1, h(0, 0, 0), &[h(1, 0, 2), h(1, 0, 3)], true);
    run(&mut n, request());
    run(&mut n, recv(3, Request(h(1, 0, 3))));
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(3, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.next(), Some(NodeId(3)));
    assert_eq!(visited(&n), Vec::<u32>::new());
}

// ---------------------------------------------------------------- Request message

#[test]
fn request_from_higher_neighbour_is_queued_and_forwarded_downhill() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, recv(2, Request(h(2, 0, 2)))),
        vec![send(1, Request(h(1, 0, 5)))]
    );
    assert_eq!(queue(&n), vec![2]);
    assert_eq!(n.next(), Some(NodeId(1)));
    assert_eq!(view(&n, 2), h(2, 0, 2));
    assert_eq!(n.status(), Status::Remainder);
}

#[test]
fn request_from_second_higher_neighbour_is_queued_without_a_new_message() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2))));
    assert_eq!(run(&mut n, recv(3, Request(h(3, 0, 3)))), vec![]);
    assert_eq!(queue(&n), vec![2, 3]);
}

#[test]
fn request_repeated_by_the_only_queued_neighbour_is_forwarded_again_as_in_the_paper() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2))));
    // Appendix line 10: Q = [j] ⇒ ForwardRequest, even though j is already queued.
    assert_eq!(
        run(&mut n, recv(2, Request(h(2, 0, 2)))),
        vec![send(1, Request(h(1, 0, 5)))]
    );
    assert_eq!(queue(&n), vec![2]);
}

#[test]
fn request_from_lower_neighbour_updates_the_view_but_is_not_queued() {
    let mut n = waiter();
    assert_eq!(run(&mut n, recv(1, Request(h(0, 3, 1)))), vec![]);
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
        run(&mut n, recv(1, Request(h(4, 0, 1)))),
        vec![
            send(1, LinkInfo(new)),
            send(2, LinkInfo(new)),
            send(3, LinkInfo(new)),
            send(2, Request(new)),
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
        run(&mut n, recv(2, Request(h(1, 0, 2)))),
        vec![send(2, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(view(&n, 2), h(0, -1, 2));
    assert!(!entry(&n, 2).received_li);
}

#[test]
fn request_at_holder_in_remainder_with_two_tokens_serves_two_requesters() {
    let mut n = holder(2);
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2)))),
        vec![send(2, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(
        n.next(),
        Some(NodeId(0)),
        "still a holder: next points home"
    );
    assert_eq!(
        run(&mut n, recv(3, Request(h(1, 0, 3)))),
        vec![send(3, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(3)));
}

#[test]
fn request_at_holder_in_critical_with_one_token_is_queued() {
    let mut n = holder(1);
    run(&mut n, request());
    assert_eq!(run(&mut n, recv(2, Request(h(1, 0, 2)))), vec![]);
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
        run(&mut n, recv(2, Request(h(1, 0, 2)))),
        vec![send(2, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.tokens(), 1);
    assert_eq!(n.next(), Some(NodeId(0)));
    assert_eq!(n.status(), Status::Critical);
    // The remaining token is in use: the next requester waits.
    assert_eq!(run(&mut n, recv(3, Request(h(1, 0, 3)))), vec![]);
    assert_eq!(queue(&n), vec![3]);
    assert_eq!(n.tokens(), 1);
    // Release hands the last token on.
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(3, Token(h(0, 0, 0)))]
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
    assert_eq!(run(&mut n, request()), vec![send(1, Request(h(1, 0, 5)))]);
    assert_eq!(
        run(&mut n, recv(1, Request(h(3, 0, 1)))),
        vec![send(4, Request(h(1, 0, 5)))]
    );
    assert_eq!(queue(&n), vec![5, 1]);
    assert_eq!(n.next(), Some(NodeId(4)));
    assert_eq!(n.raises(), 0);
}

#[test]
fn request_sent_before_our_token_arrived_is_dropped_as_stale() {
    let mut n = holder(1);
    run(&mut n, recv(2, Request(h(1, 0, 2))));
    let before = n.clone();
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2)))),
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
        run(&mut n, recv(1, Token(h(0, 0, 1)))),
        vec![send(1, TokenAck(new)), enter()]
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
        run(&mut n, recv(1, Token(h(0, 0, 1)))),
        vec![send(4, LinkInfo(new)), send(1, TokenAck(new))]
    );
    assert_eq!(n.height(), new);
    assert!(view(&n, 4) > new);
}

#[test]
fn token_from_higher_neighbour_keeps_height_and_acks_the_actual_height() {
    let mut n = waiter();
    run(&mut n, request());
    assert_eq!(
        run(&mut n, recv(2, Token(h(2, 0, 2)))),
        vec![send(2, TokenAck(h(1, 0, 5))), enter()]
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
        run(&mut n, recv(1, Token(h(0, 0, 1)))),
        vec![send(1, TokenAck(new))]
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
    run(&mut n, recv(2, Request(h(2, 0, 2))));
    assert_eq!(run(&mut n, request()), vec![]);
    let new = h(0, -1, 5);
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1)))),
        vec![
            send(1, TokenAck(new)),
            send(2, Token(new)),
            send(2, Request(new)),
        ]
    );
    assert_eq!(n.tokens(), 0);
    assert_eq!(n.next(), Some(NodeId(2)));
    assert_eq!(queue(&n), vec![5]);
    assert_eq!(n.status(), Status::Waiting);
    assert_eq!(view(&n, 2), h(0, -2, 2));
    assert!(!entry(&n, 2).received_li);
}

#[test]
fn second_token_arriving_during_critical_section_serves_the_queue() {
    let mut n = holder(1);
    run(&mut n, request());
    run(&mut n, recv(2, Request(h(1, 0, 2))));
    assert_eq!(
        run(&mut n, recv(3, Token(h(1, 0, 3)))),
        vec![send(3, TokenAck(h(0, 0, 0))), send(2, Token(h(0, 0, 0)))]
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
        run(&mut n, recv(1, Token(h(0, 0, 1)))),
        vec![send(1, TokenAck(new)), send(2, Token(new))]
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
        run(&mut n, recv(2, Token(h(2, 0, 2)))),
        vec![send(2, TokenAck(h(1, 0, 5))), send(1, Token(h(1, 0, 5)))]
    );
    assert_eq!(visited(&n), vec![1, 2]);
    assert_eq!(run(&mut n, recv(1, TokenAck(h(0, 0, 1)))), vec![]);
    // 1 sends it back: every link is visited, the marks are cleared and the lowest (1) wins.
    let new = h(0, -1, 5);
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1)))),
        vec![send(1, TokenAck(new)), send(1, Token(new))]
    );
    assert_eq!(visited(&n), vec![1]);
    assert_eq!(n.tokens(), 0);
}

// ---------------------------------------------------------------- LinkInfo and TokenAck

#[test]
fn link_info_from_new_neighbour_joins_it_to_n_without_resend_if_height_unchanged() {
    let mut n = waiter();
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(7))),
        vec![send(7, LinkInfo(h(1, 0, 5)))]
    );
    assert_eq!(run(&mut n, recv(7, LinkInfo(h(4, 0, 7)))), vec![]);
    let e = entry(&n, 7);
    assert!(e.in_n && !e.forming && e.received_li);
    assert_eq!(e.height, h(4, 0, 7));
    assert!(n.neighbors().is_member(NodeId(7)));
}

#[test]
fn link_info_from_new_neighbour_triggers_resend_when_own_height_changed_since_formation() {
    let mut n = waiter();
    run(&mut n, Event::LinkUp(NodeId(7)));
    let new = h(0, -1, 5);
    // 7 is not in N yet, so the lowering does not reach it...
    assert_eq!(
        run(&mut n, recv(1, Token(h(0, 0, 1)))),
        vec![send(1, TokenAck(new))]
    );
    // ...until its first LinkInfo arrives (formHeight differs from myHeight).
    assert_eq!(
        run(&mut n, recv(7, LinkInfo(h(4, 0, 7)))),
        vec![send(7, LinkInfo(new))]
    );
    assert!(!entry(&n, 7).forming);
    // A later LinkInfo from 7 sends nothing.
    assert_eq!(run(&mut n, recv(7, LinkInfo(h(4, 1, 7)))), vec![]);
    assert_eq!(view(&n, 7), h(4, 1, 7));
}

#[test]
fn link_info_showing_a_requester_now_below_deletes_it_from_the_queue() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2))));
    assert_eq!(run(&mut n, recv(2, LinkInfo(h(0, 5, 2)))), vec![]);
    assert_eq!(queue(&n), Vec::<u32>::new());
    assert_eq!(view(&n, 2), h(0, 5, 2));
}

#[test]
fn link_info_leaving_a_holder_without_incoming_link_lowers_it() {
    let mut n = node(0, 1, 1, h(0, 0, 0), &[h(1, 0, 2)], false);
    // max h1 = -1 ⇒ h1 = -2; nobody else has h1 = -2, h2 stays 0.
    assert_eq!(
        run(&mut n, recv(2, LinkInfo(h(-1, 0, 2)))),
        vec![send(2, LinkInfo(h(-2, 0, 0)))]
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
        run(&mut n, recv(1, LinkInfo(h(2, 0, 1)))),
        vec![send(1, LinkInfo(new)), send(1, Request(new))]
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
    run(&mut n, recv(2, Request(h(2, 0, 2))));
    // min h1 = 2 ⇒ h1 = 3, h2 stays 0: (3,0,5) is above (2,0,2).
    let new = h(3, 0, 5);
    assert_eq!(
        run(&mut n, recv(1, LinkInfo(h(4, 0, 1)))),
        vec![send(1, LinkInfo(new)), send(2, LinkInfo(new))]
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
        run(&mut n, recv(1, LinkInfo(h(2, 5, 1)))),
        vec![send(4, Request(h(1, 0, 5)))]
    );
    assert_eq!(n.next(), Some(NodeId(4)));
    assert_eq!(queue(&n), vec![5]);
}

#[test]
fn link_info_while_token_ack_pending_is_not_recorded_and_ack_restores_trust() {
    let mut n = holder(1);
    run(&mut n, recv(2, Request(h(1, 0, 2))));
    // A LinkInfo 2 sent before receiving the token: stale, not recorded.
    assert_eq!(run(&mut n, recv(2, LinkInfo(h(9, 0, 2)))), vec![]);
    assert_eq!(view(&n, 2), h(0, -1, 2));
    assert!(!entry(&n, 2).received_li);
    // The ack carries 2's real height (deviation (b)): recorded, trust restored.
    assert_eq!(run(&mut n, recv(2, TokenAck(h(-3, 0, 2)))), vec![]);
    assert_eq!(view(&n, 2), h(-3, 0, 2));
    assert!(entry(&n, 2).received_li);
    // From now on LinkInfo is recorded again.
    assert_eq!(run(&mut n, recv(2, LinkInfo(h(-4, 0, 2)))), vec![]);
    assert_eq!(view(&n, 2), h(-4, 0, 2));
}

#[test]
fn token_ack_of_an_earlier_token_does_not_restore_trust_while_a_later_one_is_unacknowledged() {
    // KRLF can send a second token to the same neighbour before the first is acknowledged.
    let mut n = node(0, 2, 2, h(0, 0, 0), &[h(1, 0, 1)], true);
    run(&mut n, request());
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(1, Token(h(0, 0, 0))), send(1, LinkInfo(h(-1, 0, 0)))]
    );
    run(&mut n, request());
    assert_eq!(
        run(&mut n, Event::Release),
        vec![send(1, Token(h(-1, 0, 0)))]
    );
    assert_eq!(entry(&n, 1).unacked, 2);
    // The first ack reports 1's height after the first token only: still stale.
    assert_eq!(run(&mut n, recv(1, TokenAck(h(0, -1, 1)))), vec![]);
    assert!(!entry(&n, 1).received_li);
    assert_eq!(
        view(&n, 1),
        h(-1, -1, 1),
        "the guess for the latest token stays"
    );
    assert_eq!(n.raises(), 0);
    let before = n.clone();
    assert_eq!(
        run(&mut n, recv(1, Request(h(0, -1, 1)))),
        vec![anomaly(1, Anomaly::Stale)]
    );
    assert_eq!(n, before);
    // The second ack completes the handshake, without an anomaly.
    assert_eq!(run(&mut n, recv(1, TokenAck(h(-1, -1, 1)))), vec![]);
    assert!(entry(&n, 1).received_li);
    assert_eq!(entry(&n, 1).unacked, 0);
    assert_eq!(view(&n, 1), h(-1, -1, 1));
}

#[test]
fn token_ack_to_a_node_that_still_holds_a_token_can_make_it_lower() {
    // Node 0 holds 2 tokens and has one neighbour; it gives one away and keeps one. The ack
    // shows the recipient below, so 0 has no incoming link and lowers itself.
    let mut n = node(0, 2, 2, h(0, 0, 0), &[h(1, 0, 2)], false);
    assert_eq!(
        run(&mut n, recv(2, Request(h(1, 0, 2)))),
        vec![send(2, Token(h(0, 0, 0)))]
    );
    assert_eq!(n.tokens(), 1);
    // Already at the assumed (0,-1,2) 0 sees no incoming link; the ack triggers LowerHeight:
    // max h1 = 0 ⇒ h1 = -1, nobody at h1 = -1 ⇒ h2 stays 0.
    assert_eq!(
        run(&mut n, recv(2, TokenAck(h(0, -1, 2)))),
        vec![send(2, LinkInfo(h(-1, 0, 0)))]
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
            send(2, LinkInfo(new)),
            send(3, LinkInfo(new)),
            send(2, Request(new))
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
        vec![send(2, LinkInfo(new)), send(3, LinkInfo(new))]
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
        vec![send(4, Request(h(1, 0, 5)))]
    );
    assert_eq!(n.next(), Some(NodeId(4)));
    assert_eq!(n.raises(), 0);
}

#[test]
fn link_failure_to_a_queued_requester_deletes_it_silently() {
    let mut n = waiter();
    run(&mut n, recv(2, Request(h(2, 0, 2))));
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
        vec![send(1, LinkInfo(h(-2, 0, 0)))]
    );
    assert_eq!(n.height(), h(-2, 0, 0));
    assert_eq!(n.tokens(), 1);
}

#[test]
fn link_failure_at_holder_with_an_incoming_link_left_only_trims_the_queue() {
    let mut n = holder(1);
    run(&mut n, request());
    run(&mut n, recv(2, Request(h(1, 0, 2))));
    run(&mut n, recv(3, Request(h(1, 0, 3))));
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
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(7))),
        vec![send(7, LinkInfo(h(1, 0, 5)))]
    );
    assert_eq!(
        run(&mut n, recv(7, LinkInfo(h(0, 0, 7)))),
        vec![send(7, Request(h(1, 0, 5)))]
    );
    assert_eq!(n.next(), Some(NodeId(7)));
}

#[test]
fn isolated_waiting_node_resends_its_request_when_the_link_to_its_old_next_comes_back() {
    // The failed link took the request queued at 1 with it (1 deletes 5 from its queue on
    // LinkDown). When the same link forms again, 1 is below 5 as before, but the request must
    // be sent again: nothing else will ever bring a token to 5.
    let mut n = node(5, 1, 0, h(1, 0, 5), &[h(0, 0, 1)], false);
    assert_eq!(run(&mut n, request()), vec![send(1, Request(h(1, 0, 5)))]);
    assert_eq!(run(&mut n, Event::LinkDown(NodeId(1))), vec![]);
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(1))),
        vec![send(1, LinkInfo(h(1, 0, 5)))]
    );
    assert_eq!(
        run(&mut n, recv(1, LinkInfo(h(0, 0, 1)))),
        vec![send(1, Request(h(1, 0, 5)))]
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
        run(&mut n, recv(7, LinkInfo(h(4, 0, 7)))),
        vec![send(7, LinkInfo(new)), send(7, Request(new))]
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
        vec![send(7, LinkInfo(h(1, 0, 5)))]
    );
    let e = entry(&n, 7);
    assert!(e.forming && !e.in_n && e.received_li && !e.visited);
    assert_eq!(e.form_height, h(1, 0, 5));
    assert!(!n.neighbors().is_member(NodeId(7)));
    assert_eq!(n.neighbors().lowest(), Some(NodeId(1)));
}

#[test]
fn link_up_to_an_existing_neighbour_is_redundant_and_changes_nothing() {
    let mut n = waiter();
    let before = n.clone();
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(2))),
        vec![anomaly(2, Anomaly::RedundantLinkEvent)]
    );
    assert_eq!(n, before);
    run(&mut n, Event::LinkUp(NodeId(7)));
    let before = n.clone();
    assert_eq!(
        run(&mut n, Event::LinkUp(NodeId(7))),
        vec![anomaly(7, Anomaly::RedundantLinkEvent)],
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
