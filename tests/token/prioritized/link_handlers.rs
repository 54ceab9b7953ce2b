//! Unit tests of the prioritized node's RELEASE and LINK handlers and of link formation and
//! failure, one node at a time.

use super::unit::*;
use manet_mutex::prioritized::{Message, Resources};
use manet_mutex::token::Sealed;
use manet_mutex::{Action, Anomaly, Event, FenceCopies};

// ---- RELEASE ---------------------------------------------------------------------------------

#[test]
fn release_message_at_a_waiting_holder_completes_its_wait() {
    let mut a = waiting_holder(2, 4, 0);
    assert!(go(
        &mut a,
        recv(
            2,
            Message::Release {
                lost: Resources::new(0),
                resources: Resources::new(1),
                height: h(0, 1, 2).into(),
                generation: [0; 3],
            }
        )
    )
    .is_empty());
    assert_eq!(a.available(), Some(3));
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
    assert_eq!(out, vec![enter(4, 1)]);
    assert_eq!(a.available(), Some(1));
}

#[test]
fn impossible_release_amounts_are_refused_and_reported() {
    let mut a = holder();
    let before = a.clone();
    for r in [0, K + 1] {
        let out = go(
            &mut a,
            recv(
                2,
                Message::Release {
                    lost: Resources::new(0),
                    resources: Resources::new(r),
                    height: h(0, 1, 2).into(),
                    generation: [0; 3],
                },
            ),
        );
        assert_eq!(out, vec![anomaly(2, Anomaly::OutOfRange)]);
    }
    // t = k already: one more resource would exceed k.
    let out = go(
        &mut a,
        recv(
            2,
            Message::Release {
                lost: Resources::new(0),
                resources: Resources::new(1),
                height: h(0, 1, 2).into(),
                generation: [0; 3],
            },
        ),
    );
    assert_eq!(out, vec![anomaly(2, Anomaly::OutOfRange)]);
    assert_eq!(a, before);
    let mut b = middle();
    let out = go(
        &mut b,
        recv(
            2,
            Message::Release {
                lost: Resources::new(0),
                resources: Resources::new(K + 1),
                height: h(0, 1, 2).into(),
                generation: [0; 3],
            },
        ),
    );
    assert_eq!(out, vec![anomaly(2, Anomaly::OutOfRange)]);
}

// ---- LINK, link formation and failure ----------------------------------------------------------

#[test]
fn link_formation_sends_link_and_joins_n_on_the_first_height() {
    let mut a = middle();
    let out = go(&mut a, Event::LinkUp(n(4)));
    assert_eq!(
        out,
        vec![send(
            4,
            Message::Link {
                height: h(0, 1, 1).into()
            }
        )]
    );
    assert!(!a.neighbors().is_member(n(4)));
    // The link layer confirming the link (a keepalive): the height is announced again (T6).
    assert_eq!(
        go(&mut a, Event::LinkUp(n(4))),
        vec![send(
            4,
            Message::Link {
                height: h(0, 1, 1).into()
            }
        )]
    );
    assert!(go(
        &mut a,
        recv(
            4,
            Message::Link {
                height: h(0, 7, 4).into()
            }
        )
    )
    .is_empty());
    assert!(a.neighbors().is_member(n(4)));
    // A Probe asks for our height (our LINK crossed its LinkUp).
    assert_eq!(
        go(
            &mut a,
            recv(
                4,
                Message::Probe {
                    height: h(0, 7, 4).into()
                }
            )
        ),
        vec![send(
            4,
            Message::Link {
                height: h(0, 1, 1).into()
            }
        )]
    );
}

#[test]
fn a_link_before_our_own_link_up_is_dropped_and_the_peer_is_asked_when_we_need_it() {
    // Node 1's only link is to 0; the link to 4 forms and 4's LINK arrives first.
    let mut a = node(1, h(0, 1, 1), &[h(0, 0, 0)], false);
    assert_eq!(
        go(
            &mut a,
            recv(
                4,
                Message::Link {
                    height: h(-1, 0, 4).into()
                }
            )
        ),
        vec![anomaly(4, Anomaly::UnknownPeer)]
    );
    go(&mut a, Event::LinkUp(n(4)));
    go(&mut a, Event::LinkDown(n(0)));
    // Node 1 has nobody in N and, now that it must forward a request, asks 4.
    let out = go(&mut a, req(1, 0));
    assert!(
        out.contains(&send(
            4,
            Message::Probe {
                height: a.height().into()
            }
        )),
        "{out:?}"
    );
    let out = go(
        &mut a,
        recv(
            4,
            Message::Link {
                height: h(-1, 0, 4).into(),
            },
        ),
    );
    assert!(a.neighbors().is_member(n(4)));
    assert_eq!(a.next(), Some(n(4)));
    assert!(
        matches!(out.last(), Some(Action::Send { to, msg: Message::Request { .. } }) if *to == n(4))
    );
}

#[test]
fn link_is_resent_when_the_height_changed_while_the_link_was_forming() {
    // OCR shows "height = formHeight[j]"; KRL has ≠, which is the only reading that makes
    // sense: resend only if the LINK sent at formation is out of date.
    let mut a = node(1, h(0, 1, 1), &[h(0, 0, 0), h(0, 2, 2)], false);
    go(&mut a, Event::LinkUp(n(4)));
    // The token moves node 1 just below node 0.
    let token = Message::Token {
        lost: Resources::new(0),
        available: Resources::new(K),
        priority: p(0),
        height: h(0, 0, 0).into(),
        fence: FenceCopies::default(),
    };
    let out = go(&mut a, recv(0, token));
    assert_eq!(a.height(), h(0, -1, 1));
    assert!(
        !sends(&out).iter().any(|(to, _)| *to == 4),
        "4 is not in N yet: {out:?}"
    );
    let out = go(
        &mut a,
        recv(
            4,
            Message::Link {
                height: h(2, 0, 4).into(),
            },
        ),
    );
    assert_eq!(
        out,
        vec![send(
            4,
            Message::Link {
                height: h(0, -1, 1).into()
            }
        )]
    );
    // Height unchanged since formation: no resend.
    go(&mut a, Event::LinkUp(n(5)));
    assert!(go(
        &mut a,
        recv(
            5,
            Message::Link {
                height: h(2, 0, 5).into()
            }
        )
    )
    .is_empty());
}

#[test]
fn link_failure_of_the_last_outgoing_link_raises_the_height_and_reroutes() {
    let mut a = middle();
    go(&mut a, req(1, 0));
    let out = go(&mut a, Event::LinkDown(n(0)));
    // Partial reversal: h1 = 1 + min h1 = 1; no neighbour at h1 = 1, so h2 stays.
    assert_eq!(a.height(), h(1, 1, 1));
    let s = sends(&out);
    assert_eq!(
        s,
        vec![
            (
                2,
                Message::Link {
                    height: h(1, 1, 1).into()
                }
            ),
            (
                3,
                Message::Link {
                    height: h(1, 1, 1).into()
                }
            ),
            (
                2,
                Message::Request {
                    priority: p(0),
                    height: h(1, 1, 1).into()
                }
            ),
        ]
    );
    assert_eq!(a.next(), Some(n(2)));
}

#[test]
fn raising_drops_requests_of_neighbours_now_below() {
    let mut a = middle();
    go(&mut a, request_msg(2, 1, h(0, 2, 2)));
    go(&mut a, Event::LinkDown(n(0)));
    assert_eq!(
        a.queue().count(),
        0,
        "2 is below the raised node: it must reroute"
    );
}

#[test]
fn link_failure_to_next_reroutes_the_request() {
    let mut a = node(1, h(0, 5, 1), &[h(0, 0, 0), h(0, 1, 2), h(0, 9, 3)], false);
    go(&mut a, req(1, 3));
    assert_eq!(a.next(), Some(n(0)));
    let out = go(&mut a, Event::LinkDown(n(0)));
    assert_eq!(
        out,
        vec![send(
            2,
            Message::Request {
                priority: p(3),
                height: h(0, 5, 1).into()
            }
        )]
    );
    assert_eq!(
        go(&mut a, Event::LinkDown(n(0))),
        vec![anomaly(0, Anomaly::RedundantLinkEvent)]
    );
}

#[test]
fn link_failure_deletes_the_peers_request() {
    let mut a = middle();
    go(&mut a, request_msg(2, 1, h(0, 2, 2)));
    go(&mut a, Event::LinkDown(n(2)));
    assert_eq!(a.queue().count(), 0);
}

#[test]
fn link_reversing_next_reroutes_and_a_sink_raises() {
    let mut a = node(1, h(0, 5, 1), &[h(0, 0, 0), h(0, 1, 2)], false);
    go(&mut a, req(1, 0));
    let out = go(
        &mut a,
        recv(
            0,
            Message::Link {
                height: h(0, 8, 0).into(),
            },
        ),
    );
    assert_eq!(
        out,
        vec![send(
            2,
            Message::Request {
                priority: p(0),
                height: h(0, 5, 1).into()
            }
        )]
    );
    let out = go(
        &mut a,
        recv(
            2,
            Message::Link {
                height: h(0, 9, 2).into(),
            },
        ),
    );
    assert_eq!(a.height(), h(1, 5, 1));
    assert_eq!(
        sends(&out).len(),
        3,
        "LINK to both, REQUEST to the new lowest"
    );
}

#[test]
fn link_from_a_lower_requester_deletes_its_entry() {
    let mut a = middle();
    go(&mut a, request_msg(2, 1, h(0, 2, 2)));
    go(
        &mut a,
        recv(
            2,
            Message::Link {
                height: h(0, 0, 2).into(),
            },
        ),
    );
    assert!(a.queue().all(|(v, _)| v != n(2)));
}

#[test]
fn an_isolated_node_keeps_released_resources_until_a_link_forms() {
    let mut a = node(1, h(0, 1, 1), &[h(0, 0, 0)], false);
    go(
        &mut a,
        recv(
            0,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(K),
                priority: p(0),
                height: h(0, 0, 0).into(),
                fence: FenceCopies::default(),
            },
        ),
    );
    go(&mut a, req(2, 0));
    go(&mut a, Event::LinkUp(n(4)));
    go(
        &mut a,
        recv(
            4,
            Message::Link {
                height: h(0, 9, 4).into(),
            },
        ),
    );
    go(&mut a, request_msg(4, 0, h(0, 9, 4))); // token to 4; 1 still in the CS
    assert!(!a.holds_token());
    go(&mut a, Event::LinkDown(n(0)));
    go(&mut a, Event::LinkDown(n(4)));
    assert!(go(&mut a, Event::Release).is_empty());
    assert_eq!(a.release_backlog(), 2);
    go(&mut a, Event::LinkUp(n(5)));
    let out = go(
        &mut a,
        recv(
            5,
            Message::Link {
                height: h(0, 0, 5).into(),
            },
        ),
    );
    // 5 is above it, so the node first raises (LINK), then sends the backlog downhill.
    assert_eq!(
        out,
        vec![
            send(
                5,
                Message::Link {
                    height: h(1, -1, 1).into()
                }
            ),
            send(
                5,
                Message::Release {
                    lost: Resources::new(0),
                    resources: Resources::new(2),
                    height: h(1, -1, 1).into(),
                    generation: [0; 3],
                }
            )
        ]
    );
    assert_eq!(a.release_backlog(), 0);
}

#[test]
fn update_goes_where_the_request_went_not_to_the_new_lowest_neighbour() {
    // Deviation: forwardUpdate in the paper re-selects the lowest neighbour as `next`; an
    // UPDATE there would name a request that neighbour never got.
    let mut a = node(1, h(0, 5, 1), &[h(0, 1, 0), h(0, 9, 2), h(0, 8, 3)], false);
    go(&mut a, request_msg(2, 1, h(0, 9, 2)));
    assert_eq!(a.next(), Some(n(0)));
    go(&mut a, Event::LinkUp(n(4)));
    go(
        &mut a,
        recv(
            4,
            Message::Link {
                height: h(0, 0, 4).into(),
            },
        ),
    );
    assert_eq!(a.neighbors().lowest(), Some(n(4)));
    let out = go(&mut a, request_msg(3, 7, h(0, 8, 3)));
    assert_eq!(out, vec![send(0, Message::Update { priority: p(7) })]);
}

#[test]
fn a_keepalive_from_next_repeats_the_request() {
    // Our REQUEST to `next` may have been lost to corruption (its height failed the check and
    // the holder could not queue it): the link layer's keepalive makes us ask again (T6).
    let mut a = middle();
    let asked = go(&mut a, req(1, 3));
    let request = Message::Request {
        priority: p(3),
        height: h(0, 1, 1).into(),
    };
    assert_eq!(asked, vec![send(0, request.clone())]);
    assert_eq!(
        go(&mut a, Event::LinkUp(n(0))),
        vec![
            send(
                0,
                Message::Link {
                    height: h(0, 1, 1).into()
                }
            ),
            send(0, request)
        ]
    );
    // A keepalive from another neighbour only announces the height.
    assert_eq!(go(&mut a, Event::LinkUp(n(2))).len(), 1);
}

#[test]
fn a_token_whose_height_fails_its_check_word_is_kept_without_adopting_the_height() {
    let mut a = middle();
    go(&mut a, req(1, 0));
    let corrupted = Sealed {
        height: h(-1000, 0, 0),
        check: Sealed::new(h(0, 0, 0)).check,
    };
    let out = go(
        &mut a,
        recv(
            0,
            Message::Token {
                lost: Resources::new(0),
                available: Resources::new(5),
                priority: p(0),
                height: corrupted,
                fence: FenceCopies::default(),
            },
        ),
    );
    assert!(a.holds_token());
    assert_eq!(
        a.height(),
        h(0, 1, 1),
        "the corrupted height is not adopted (T8)"
    );
    assert!(out.contains(&anomaly(0, Anomaly::OutOfRange)));
}

#[test]
fn a_non_holder_far_above_every_neighbour_comes_down_to_one_level_above_them() {
    let mut a = node(1, h(40, 3, 1), &[h(0, 0, 0), h(2, 0, 2)], false);
    let out = go(
        &mut a,
        recv(
            2,
            Message::Link {
                height: h(2, 1, 2).into(),
            },
        ),
    );
    assert_eq!(
        a.height(),
        h(3, 3, 1),
        "every link keeps its direction (T7)"
    );
    let link = Message::Link {
        height: h(3, 3, 1).into(),
    };
    assert_eq!(out, vec![send(0, link.clone()), send(2, link)]);
}
