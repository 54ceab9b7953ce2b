//! Each place where `reverse_link` interprets or departs from the KRL appendix pseudocode,
//! pinned by a test (see `docs/ALGORITHMS.md`).

use manet_mutex::reverse_link::{Config, Message, Node, Settings};
use manet_mutex::token::Height;
use manet_mutex::{Action, Anomaly, CsRequest, Event, NodeId, Protocol, Status};

use super::unit::{fence, T0};

fn h(h1: i64, h2: i64, id: u32) -> Height {
    Height::new(h1, h2, NodeId(id))
}

fn node(id: u32, k: u32, tokens: u32, own: Height, neighbors: &[Height]) -> Node {
    Node::new(
        Config::new(
            NodeId(id),
            Settings::new(k),
            tokens,
            own,
            neighbors.to_vec(),
        )
        .with_first_token(0),
    )
    .unwrap()
}

fn recv(n: &mut Node, from: u32, msg: Message) -> Vec<Action<Message>> {
    n.handle(Event::Receive {
        from: NodeId(from),
        msg,
    })
    .unwrap()
    .collect()
}

fn sends(actions: &[Action<Message>]) -> Vec<(NodeId, Message)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, msg } => Some((*to, *msg)),
            _ => None,
        })
        .collect()
}

/// The paper marks a token as acknowledged when a LinkInfo arrives whose height equals the
/// guess stored on sending. If a token from the same neighbour crosses ours, line 3 of the
/// Token handler overwrites that guess, the acknowledgement never matches, and every later
/// Request from the neighbour is ignored forever. A dedicated TokenAck cannot be confused.
#[test]
fn token_ack_survives_a_crossing_token() {
    // k = 2: node 0 holds both tokens, neighbour 1 is above it.
    let mut n0 = node(0, 2, 2, h(0, 0, 0), &[h(1, 0, 1)]);
    recv(&mut n0, 1, Message::Request(h(1, 0, 1).into()));
    assert_eq!(n0.tokens(), 1, "one token went to node 1");
    assert!(!n0.neighbors().get(NodeId(1)).unwrap().received_li());
    // A token node 1 sent before it got ours crosses it on the link.
    recv(&mut n0, 1, Message::Token(h(1, 0, 1).into(), fence(1, 0)));
    assert_eq!(n0.tokens(), 2);
    // Node 1's acknowledgement of our token: its true height, below our height at sending.
    recv(&mut n0, 1, Message::token_ack(h(0, -1, 1), 1));
    assert!(n0.neighbors().get(NodeId(1)).unwrap().received_li());
    // Node 1 now looks lower, so the holder lowered itself to regain an incoming link.
    let own = n0.height();
    assert!(own < h(0, -1, 1));
    // Node 1 is trusted again: its next request is served.
    let out = recv(&mut n0, 1, Message::Request(h(1, 5, 1).into()));
    assert_eq!(
        sends(&out),
        vec![(NodeId(1), Message::Token(own.into(), fence(1, 0)))],
        "the request was honoured, not ignored"
    );
    assert_eq!(n0.tokens(), 1);
}

/// The token recipient acknowledges with its true height, not the sender's guess: a node that
/// was already lower than the token's sender keeps its height, and the sender learns it.
#[test]
fn token_ack_reports_the_true_height() {
    let mut n1 = node(1, 1, 0, h(0, 0, 1), &[h(5, 0, 0), h(-1, 0, 2)]);
    n1.handle(Event::Request(CsRequest::ONE))
        .unwrap()
        .for_each(drop);
    let out = recv(&mut n1, 0, Message::Token(h(5, 0, 0).into(), T0));
    assert_eq!(n1.height(), h(0, 0, 1), "already lower: no change");
    assert_eq!(
        sends(&out),
        vec![(NodeId(0), Message::token_ack(h(0, 0, 1), 1))],
        "the paper would send LinkInfo(5, -1, 1)"
    );
    assert_eq!(n1.status(), Status::Critical);
}

/// Release, line 3: LowerHeight is the token holder's mirror of RaiseHeight. A node that just
/// gave its only token away does not lower itself (it would lose its outgoing link to the
/// token's new holder).
#[test]
fn release_lowers_only_a_node_that_still_holds_a_token() {
    // Node 0 holds the token, node 1 above it requests while 0 is in the CS.
    let mut n0 = node(0, 1, 1, h(1, 0, 0), &[h(2, 0, 1), h(0, 0, 2)]);
    n0.handle(Event::Request(CsRequest::ONE))
        .unwrap()
        .for_each(drop);
    recv(&mut n0, 1, Message::Request(h(2, 0, 1).into()));
    assert_eq!(n0.queue().collect::<Vec<_>>(), vec![NodeId(1)]);
    let out: Vec<_> = n0.handle(Event::Release).unwrap().collect();
    assert_eq!(n0.tokens(), 0);
    // Every neighbour now looks lower (1 is assumed just below us), yet no LowerHeight.
    assert!(n0.neighbors().all_lower(n0.height()));
    assert_eq!(n0.height(), h(1, 0, 0));
    assert_eq!(
        sends(&out),
        vec![(NodeId(1), Message::Token(h(1, 0, 0).into(), fence(0, 1)))]
    );
}

/// Link failure, lines 9–10: read as the token holder's branch ("else if all lower:
/// LowerHeight"), because a non-holder with only outgoing links is in the normal state.
#[test]
fn link_failure_lowers_a_holder_but_not_a_non_holder() {
    // Non-holder with two lower neighbours loses one: it keeps its height.
    let mut a = node(5, 1, 0, h(3, 0, 5), &[h(1, 0, 1), h(2, 0, 2)]);
    let out: Vec<_> = a.handle(Event::LinkDown(NodeId(1))).unwrap().collect();
    assert!(out.is_empty());
    assert_eq!(a.height(), h(3, 0, 5));
    // Holder loses its only incoming link: it lowers below the remaining neighbour.
    let mut b = node(0, 1, 1, h(1, 0, 0), &[h(2, 0, 1), h(0, 5, 2)]);
    let out: Vec<_> = b.handle(Event::LinkDown(NodeId(1))).unwrap().collect();
    assert!(b.height() < h(0, 5, 2));
    assert_eq!(
        sends(&out),
        vec![(NodeId(2), Message::LinkInfo(b.height().into()))]
    );
}

/// With no neighbour at all, "all neighbours are higher" is vacuously true but RaiseHeight has
/// no minimum to take: the node keeps its height and its request, and forwards it as soon as a
/// link forms. Needing the new link, it probes the peer rather than just announcing itself
/// (the peer's own announcement may have come before our LinkUp and been dropped, T1).
#[test]
fn isolated_node_keeps_its_request_until_a_link_forms() {
    let mut n = node(3, 1, 0, h(1, 0, 3), &[h(0, 0, 0)]);
    n.handle(Event::Request(CsRequest::ONE))
        .unwrap()
        .for_each(drop);
    let out: Vec<_> = n.handle(Event::LinkDown(NodeId(0))).unwrap().collect();
    assert!(out.is_empty());
    assert_eq!(n.status(), Status::Waiting);
    assert_eq!(n.height(), h(1, 0, 3));
    let out: Vec<_> = n.handle(Event::LinkUp(NodeId(7))).unwrap().collect();
    assert_eq!(
        sends(&out),
        vec![(NodeId(7), Message::Probe(h(1, 0, 3).into()))]
    );
    // The new neighbour is higher: we are a sink without a token, so we raise and forward.
    let out = recv(&mut n, 7, Message::LinkInfo(h(4, 0, 7).into()));
    assert!(n.height() > h(4, 0, 7));
    assert!(sends(&out).contains(&(NodeId(7), Message::Request(n.height().into()))));
}

/// LinkInfo, lines 2–4: `forming[j]` is cleared by the first LinkInfo from `j` whether or not
/// our height changed meanwhile (the OCR leaves line 4's nesting ambiguous), so a later
/// LinkInfo does not trigger a second resend.
#[test]
fn forming_flag_clears_on_the_first_link_info() {
    let mut n = node(0, 1, 1, h(0, 0, 0), &[h(1, 0, 1)]);
    n.handle(Event::LinkUp(NodeId(2))).unwrap().for_each(drop);
    assert!(n.neighbors().get(NodeId(2)).unwrap().forming());
    recv(&mut n, 2, Message::LinkInfo(h(3, 0, 2).into()));
    assert!(!n.neighbors().get(NodeId(2)).unwrap().forming());
    assert!(n.neighbors().is_member(NodeId(2)));
}

/// Our height changed between detecting the link and hearing from the peer: resend it.
#[test]
fn height_change_while_forming_is_resent() {
    let mut n = node(3, 2, 0, h(2, 0, 3), &[h(1, 0, 1)]);
    n.handle(Event::LinkUp(NodeId(2))).unwrap().for_each(drop);
    // A token from node 1 lowers node 3 before 2's LinkInfo comes.
    recv(&mut n, 1, Message::Token(h(1, 0, 1).into(), T0));
    let lowered = n.height();
    assert_eq!(lowered, h(1, -1, 3));
    let out = recv(&mut n, 2, Message::LinkInfo(h(0, 0, 2).into()));
    assert!(sends(&out).contains(&(NodeId(2), Message::LinkInfo(lowered.into()))));
}

/// A raise while a link is forming probes the peer with the new height (so no resend is
/// needed when the peer's LinkInfo comes): the way down may lie through that link (T1).
#[test]
fn a_raise_while_a_link_is_forming_probes_the_peer() {
    let mut n = node(3, 1, 0, h(2, 0, 3), &[h(1, 0, 1)]);
    n.handle(Event::LinkUp(NodeId(2))).unwrap().for_each(drop);
    let out = recv(&mut n, 1, Message::LinkInfo(h(5, 0, 1).into()));
    let raised = n.height();
    assert!(raised > h(5, 0, 1));
    assert!(sends(&out).contains(&(NodeId(2), Message::Probe(raised.into()))));
    let out = recv(&mut n, 2, Message::LinkInfo(h(0, 0, 2).into()));
    assert!(!sends(&out)
        .iter()
        .any(|(_, m)| matches!(m, Message::LinkInfo(_))));
}

/// A token is never silently dropped: one from a node that is not a neighbour is kept (its
/// height is not trusted), and one beyond `k` is refused with an anomaly report.
#[test]
fn unexpected_tokens_are_kept_or_refused_visibly() {
    let mut n = node(4, 2, 1, h(0, 0, 4), &[h(1, 0, 1)]);
    let out = recv(&mut n, 9, Message::Token(h(7, 7, 9).into(), fence(1, 0)));
    assert_eq!(n.tokens(), 2);
    assert!(out.contains(&Action::Anomaly {
        from: NodeId(9),
        kind: Anomaly::UnknownPeer
    }));
    assert_eq!(n.height(), h(0, 0, 4), "a stranger's height is ignored");
    let out = recv(&mut n, 1, Message::Token(h(1, 0, 1).into(), T0));
    assert_eq!(
        n.tokens(),
        2,
        "a third token with k = 2 (a copy of token 0) is refused"
    );
    assert_eq!(
        out,
        vec![Action::Anomaly {
            from: NodeId(1),
            kind: Anomaly::Unexpected
        }]
    );
}

/// Link failure: when the link to `next` fails, `next` is cleared. Otherwise a node isolated by
/// the failure keeps `next` pointing at the lost neighbour; if that same link re-forms and the
/// neighbour is still lower, the LinkInfo handler sees a valid `next` and does not re-send the
/// request — which the neighbour dropped with the link. Found by the prioritized property test
/// (the same mechanism, see P8 in this file's prioritized counterpart).
#[test]
fn request_is_resent_when_the_link_to_next_fails_and_re_forms() {
    let mut n = node(3, 1, 0, h(1, 0, 3), &[h(0, 0, 0)]);
    let out: Vec<_> = n.handle(Event::Request(CsRequest::ONE)).unwrap().collect();
    assert_eq!(
        sends(&out),
        vec![(NodeId(0), Message::Request(h(1, 0, 3).into()))]
    );
    assert_eq!(n.next(), Some(NodeId(0)));
    n.handle(Event::LinkDown(NodeId(0))).unwrap().for_each(drop);
    assert_eq!(n.next(), None);
    n.handle(Event::LinkUp(NodeId(0))).unwrap().for_each(drop);
    let out = recv(&mut n, 0, Message::LinkInfo(h(0, 0, 0).into()));
    assert_eq!(
        sends(&out),
        vec![(NodeId(0), Message::Request(h(1, 0, 3).into()))],
        "the request must be sent again over the re-formed link"
    );
}
