//! The findings of issue 21 ("the message kind is a field too"), replayed with the public API
//! only (`docs/ALGORITHMS.md`, W1, W2, R13, R14, P15; finding 5, the link session's, is pinned
//! by `tests/token/session/handlers.rs` and the `session_frames` properties, S1):
//! 1. a prioritized REQUEST that arrived as a RELEASE (one bit of the kind) added a unit to `t`:
//!    four units in use with k = 3;
//! 2. a RELEASE that arrived as a REQUEST lost its units without any report;
//! 3. a token acknowledgement that arrived as another kind left the holder ignoring its peer
//!    for ever (KRL and prioritized);
//! 4. after a reported capacity loss a request that fits was never served behind one that
//!    did not;
//! 6. two hand-built KRL holders both held token 0, and the network silently lost one.

use std::collections::VecDeque;

use manet_mutex::codec::{decode, encode, DecodeError, Wire};
use manet_mutex::prioritized::{self, Policy, Resources};
use manet_mutex::token::Height;
use manet_mutex::{reverse_link, Action, Anomaly, CsRequest, Error, Event, NodeId, Protocol};
use manet_mutex::{Fence, Severity, Status};

use crate::codec::seal;

/// The frame of `msg` with its kind (the variant index) replaced by `kind` and the frame check
/// recomputed: what an embedder without the frame check would decode if that byte were
/// corrupted.
fn rekind<M: Wire>(msg: &M, kind: u8) -> Result<M, DecodeError> {
    let frame = encode(msg);
    let mut body = frame[..frame.len() - 4].to_vec();
    body[1] = kind;
    decode(&seal(&body))
}

/// The frame of `msg` with bit `bit` of its kind byte flipped, as it travels.
fn flip_kind_bit<M: Wire>(msg: &M, bit: u8) -> Result<M, DecodeError> {
    let mut frame = encode(msg);
    frame[1] ^= 1 << bit;
    decode(&frame)
}

fn h(h1: i64, h2: i64, id: u32) -> Height {
    Height::new(h1, h2, NodeId(id))
}

/// Nodes of one algorithm joined by FIFO links; `tamper` may rewrite (or drop, `None`) each
/// message as it is delivered.
struct Wires<N: Protocol> {
    nodes: Vec<N>,
    wire: VecDeque<(NodeId, NodeId, N::Message)>,
    anomalies: Vec<(NodeId, Anomaly)>,
    entries: Vec<(NodeId, u32, Fence)>,
}

impl<N: Protocol> Wires<N>
where
    N::Message: Clone + std::fmt::Debug,
{
    fn new(nodes: Vec<N>) -> Self {
        Wires {
            nodes,
            wire: VecDeque::new(),
            anomalies: Vec::new(),
            entries: Vec::new(),
        }
    }

    fn apply(&mut self, at: u32, event: Event<N::Message>) -> Result<(), Error> {
        let at = NodeId(at);
        let actions: Vec<_> = self.nodes[at.index()].handle(event)?.collect();
        for action in actions {
            match action {
                Action::Send { to, msg } => self.wire.push_back((at, to, msg)),
                Action::Anomaly { kind, .. } => self.anomalies.push((at, kind)),
                Action::EnterCritical { resources, fence } => {
                    self.entries.push((at, resources, fence))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Deliver everything, in order, through `tamper`.
    fn drain(&mut self, mut tamper: impl FnMut(NodeId, NodeId, N::Message) -> N::Message) {
        while let Some((from, to, msg)) = self.wire.pop_front() {
            let msg = tamper(from, to, msg);
            self.apply(to.0, Event::Receive { from, msg }).unwrap();
        }
    }

    fn status(&self, i: u32) -> Status {
        self.nodes[i as usize].status()
    }
}

/// `msg`, with `corrupt` applied to its sealed height if it is a RELEASE.
fn corrupt_release(
    msg: prioritized::Message,
    corrupt: impl Fn(&mut manet_mutex::token::Sealed),
) -> prioritized::Message {
    match msg {
        prioritized::Message::Release {
            resources,
            lost,
            mut height,
            generation,
        } => {
            corrupt(&mut height);
            prioritized::Message::Release {
                resources,
                lost,
                height,
                generation,
            }
        }
        m => m,
    }
}

fn prio_line(k: u32, policy: Policy) -> Wires<prioritized::Node> {
    let line = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
    let settings = prioritized::Settings::new(k, policy);
    let nodes = prioritized::network(3, &line, &[NodeId(0)], settings)
        .unwrap()
        .into_iter()
        .map(|c| prioritized::Node::new(c).unwrap())
        .collect();
    Wires::new(nodes)
}

fn resources(n: u32) -> Event<prioritized::Message> {
    Event::Request(CsRequest {
        resources: n,
        priority: 0,
    })
}

/// Every kind change of `msg` that decodes, as (index, message).
fn decodable_kinds<M: Wire>(msg: &M, kinds: u8) -> Vec<(u8, M)> {
    (0..kinds)
        .filter(|&k| k != encode(msg)[1])
        .filter_map(|k| rekind(msg, k).ok().map(|m| (k, m)))
        .collect()
}

#[test]
fn finding_1_a_request_read_as_a_release_adds_no_resource() {
    let mut net = prio_line(3, Policy::MaxConcurrency);
    net.apply(0, resources(3)).unwrap();
    assert_eq!(net.status(0), Status::Critical);
    net.apply(1, resources(1)).unwrap();
    let (_, _, request) = net.wire.front().cloned().unwrap();
    assert!(matches!(request, prioritized::Message::Request { .. }));
    // On the wire one flipped bit of the kind (1 -> 3, RELEASE) fails the frame check, and
    // the same body read as a RELEASE does not even decode: a RELEASE's layout is its own.
    assert_eq!(flip_kind_bit(&request, 1), Err(DecodeError::Checksum));
    assert!(rekind(&request, 3).is_err());
    // What it can be read as (LINK, Probe: the same height layout) fails its check word, so
    // the holder adds nothing and hears no height from it.
    for (kind, other) in decodable_kinds(&request, 7) {
        assert!(!other.is_intact(), "{kind}: {other:?}");
        assert!(!other.carries_resources(), "{kind}: {other:?}");
        let mut net = prio_line(3, Policy::MaxConcurrency);
        net.apply(0, resources(3)).unwrap();
        net.apply(1, resources(1)).unwrap();
        let mut first = true;
        net.drain(|_, _, m| {
            if std::mem::take(&mut first) {
                other.clone()
            } else {
                m
            }
        });
        assert_eq!(net.nodes[0].held(), 3, "{kind}");
        assert_eq!(
            net.nodes[1].status(),
            Status::Waiting,
            "{kind}: 4 units with k = 3"
        );
        assert!(net.anomalies.contains(&(NodeId(0), Anomaly::OutOfRange)));
    }
}

#[test]
fn finding_2_a_release_cannot_be_read_as_another_kind_and_a_lost_one_is_reported() {
    for policy in [Policy::MaxConcurrency, Policy::Explicit, Policy::Equal] {
        let mut net = prio_line(3, policy);
        // Node 1 takes 2 units; the token goes back to node 0 for 1 unit, and node 1's
        // RELEASE of 2 travels to it.
        net.apply(1, resources(2)).unwrap();
        net.drain(|_, _, m| m);
        assert_eq!(net.status(1), Status::Critical);
        net.apply(0, resources(1)).unwrap();
        net.drain(|_, _, m| m);
        assert_eq!(net.status(0), Status::Critical, "{policy:?}");
        net.apply(1, Event::Release).unwrap();
        let (_, _, release) = net.wire.front().cloned().unwrap();
        assert!(matches!(release, prioritized::Message::Release { .. }));
        for bit in 0..8 {
            assert_eq!(
                flip_kind_bit(&release, bit),
                Err(DecodeError::Checksum),
                "{bit}"
            );
        }
        assert!(decodable_kinds(&release, 7).is_empty());
        // A RELEASE whose check word fails (its height corrupted) is not added: its units
        // are reported lost, never silently.
        net.drain(|_, _, m| corrupt_release(m, |h| h.height.h1 += 1));
        assert!(
            net.anomalies.contains(&(NodeId(0), Anomaly::OutOfRange)),
            "{policy:?}"
        );
        assert_eq!(
            prioritized::Node::anomaly_severity(Anomaly::OutOfRange),
            Severity::Suspect
        );
        assert_eq!(
            net.nodes[0].available(),
            Some(0),
            "{policy:?}: 2 units lost"
        );
        assert_eq!(
            net.nodes[0].capacity(),
            Some(1),
            "{policy:?}: and known lost"
        );
    }
}

/// Two nodes, the token at 0. Node 1 takes it with its acknowledgement's height corrupted
/// (the holder cannot trust it, so it settles nothing): the holder asks again, and the link
/// works both ways afterwards.
#[test]
fn finding_3_a_corrupted_token_acknowledgement_is_repaired_krl() {
    let edge = [(NodeId(0), NodeId(1))];
    let nodes: Vec<_> =
        reverse_link::network(2, &edge, &[NodeId(0)], reverse_link::Settings::new(1))
            .unwrap()
            .into_iter()
            .map(|c| reverse_link::Node::new(c).unwrap())
            .collect();
    // The acknowledgement decodes as no other kind; the kinds that share a layout fail their
    // check words when read as one another.
    let ack = reverse_link::Message::token_ack(h(0, -1, 1), 1);
    assert!(decodable_kinds(&ack, 5).is_empty());
    let info = reverse_link::Message::LinkInfo(h(0, 0, 1).into());
    let others = decodable_kinds(&info, 5);
    assert_eq!(others.iter().map(|(k, _)| *k).collect::<Vec<_>>(), [0, 3]);
    assert!(others.iter().all(|(_, m)| m.height() == Height::CORRUPTED));

    let mut net = Wires::new(nodes);
    net.apply(1, Event::Request(CsRequest::ONE)).unwrap();
    let mut corrupted = 0;
    net.drain(|_, _, m| match m {
        reverse_link::Message::TokenAck(mut s, n) if corrupted == 0 => {
            corrupted += 1;
            s.height.h2 -= 5;
            reverse_link::Message::TokenAck(s, n)
        }
        m => m,
    });
    assert_eq!(corrupted, 1);
    assert_eq!(net.status(1), Status::Critical);
    assert!(net.anomalies.contains(&(NodeId(0), Anomaly::OutOfRange)));
    let entry = net.nodes[0].neighbors().get(NodeId(1)).unwrap();
    assert!(
        entry.received_li(),
        "the holder asked again and was answered"
    );
    // The token goes back to 0 and forth to 1 again: node 1's requests are heard.
    net.apply(1, Event::Release).unwrap();
    for _ in 0..3 {
        for i in [0, 1] {
            net.apply(i, Event::Request(CsRequest::ONE)).unwrap();
            net.drain(|_, _, m| m);
            if net.status(i) != Status::Critical {
                net.drain(|_, _, m| m);
            }
            assert_eq!(net.status(i), Status::Critical, "node {i}");
            net.apply(i, Event::Release).unwrap();
        }
    }
    assert_eq!(net.entries.len(), 7);
}

/// The harness's counterexample to the first repair (W3): the acknowledgement corrupted, and
/// then the holder's Probe asking for it read as another kind (both fail their check words).
/// The token's receiver answers what it cannot read from the token's sender, so the exchange
/// goes on until one gets through.
#[test]
fn finding_3_the_question_for_a_lost_acknowledgement_can_be_corrupted_too() {
    for (kind, rounds) in [(0, 1), (2, 1), (2, 3)] {
        let edge = [(NodeId(0), NodeId(1))];
        let settings = reverse_link::Settings::new(1);
        let nodes: Vec<_> = reverse_link::network(2, &edge, &[NodeId(0)], settings)
            .unwrap()
            .into_iter()
            .map(|c| reverse_link::Node::new(c).unwrap())
            .collect();
        let mut net = Wires::new(nodes);
        net.apply(1, Event::Request(CsRequest::ONE)).unwrap();
        // The acknowledgement, then `rounds` questions and answers, each read as another kind.
        let mut left = 1 + 2 * rounds;
        let mut changed = Vec::new();
        net.drain(|from, _, m| {
            let doubtful = matches!(
                m,
                reverse_link::Message::TokenAck(..) | reverse_link::Message::Probe(_)
            ) || (from == NodeId(1) && left < 1 + 2 * rounds);
            if left > 0 && doubtful && !m.is_token() {
                left -= 1;
                changed.push(format!("{m:?}"));
                match m {
                    reverse_link::Message::TokenAck(mut s, n) => {
                        s.check ^= 1;
                        reverse_link::Message::TokenAck(s, n)
                    }
                    m => rekind(&m, kind).unwrap_or(m),
                }
            } else {
                m
            }
        });
        assert_eq!(left, 0, "{kind} {rounds}: {changed:?}");
        let entry = net.nodes[0].neighbors().get(NodeId(1)).unwrap();
        assert!(entry.received_li(), "{kind} {rounds}: {changed:?}");
    }
}

#[test]
fn finding_3_a_corrupted_token_acknowledgement_is_repaired_prioritized() {
    for policy in [Policy::MaxConcurrency, Policy::Explicit] {
        let mut net = prio_line(2, policy);
        let ack = prioritized::Message::token_ack(h(0, -1, 1), 1);
        assert!(decodable_kinds(&ack, 7).is_empty());
        net.apply(1, resources(1)).unwrap();
        let mut corrupted = 0;
        net.drain(|_, _, m| match m {
            prioritized::Message::TokenAck { height, .. } if corrupted == 0 => {
                corrupted += 1;
                // The count corrupted: the check word covers it.
                prioritized::Message::TokenAck { height, tokens: 7 }
            }
            m => m,
        });
        assert_eq!(corrupted, 1);
        assert_eq!(net.status(1), Status::Critical);
        let entry = net.nodes[0].neighbors().get(NodeId(1)).unwrap();
        assert!(entry.received_li(), "{policy:?}: repaired");
        net.apply(1, Event::Release).unwrap();
        net.drain(|_, _, m| m);
        // Both ends of the link serve each other from now on.
        for _ in 0..3 {
            for i in [0, 1] {
                net.apply(i, resources(2)).unwrap();
                net.drain(|_, _, m| m);
                assert_eq!(net.status(i), Status::Critical, "{policy:?}: node {i}");
                net.apply(i, Event::Release).unwrap();
                net.drain(|_, _, m| m);
            }
        }
    }
}

/// k = 3 on the line 0-1-2. Node 1 holds 2 units and the token goes to node 0, which waits
/// for 3; node 1's RELEASE of 2 arrives with a corrupted height and is lost (reported). The
/// holder's request for 3 can never be served now, but node 1's later request for 1 is.
#[test]
fn finding_4_a_request_that_fits_is_served_after_a_capacity_loss() {
    for policy in [Policy::Explicit, Policy::MaxConcurrency, Policy::Equal] {
        let mut net = prio_line(3, policy);
        net.apply(1, resources(2)).unwrap();
        net.drain(|_, _, m| m);
        assert_eq!(net.status(1), Status::Critical);
        net.apply(0, resources(3)).unwrap();
        net.drain(|_, _, m| m);
        assert!(net.nodes[0].holds_token(), "{policy:?}");
        assert_eq!(net.status(0), Status::Waiting);
        net.apply(1, Event::Release).unwrap();
        net.drain(|_, _, m| corrupt_release(m, |h| h.check ^= 1));
        assert!(net.anomalies.contains(&(NodeId(0), Anomaly::OutOfRange)));
        assert_eq!(net.nodes[0].capacity(), Some(1), "{policy:?}");
        for i in [1, 2] {
            net.apply(i, resources(1)).unwrap();
            net.drain(|_, _, m| m);
            assert_eq!(net.status(i), Status::Critical, "{policy:?}: node {i} fits");
            net.apply(i, Event::Release).unwrap();
            net.drain(|_, _, m| m);
        }
        assert_eq!(net.status(0), Status::Waiting, "3 > capacity 1: excused");
    }
}

/// With three copies read by majority, the finding's corruption (a token's second count copy
/// corrupted to 1) loses nothing at all.
#[test]
fn finding_4_one_corrupted_count_copy_loses_nothing() {
    let mut net = prio_line(3, Policy::Explicit);
    net.apply(1, resources(1)).unwrap();
    net.drain(|_, _, m| match m {
        prioritized::Message::Token {
            available: Resources([a, _, c]),
            lost,
            priority,
            height,
            fence,
        } => prioritized::Message::Token {
            available: Resources([a, 1, c]),
            lost,
            priority,
            height,
            fence,
        },
        m => m,
    });
    assert_eq!(net.status(1), Status::Critical);
    assert_eq!(net.nodes[1].available(), Some(2));
    assert_eq!(net.nodes[1].capacity(), Some(3));
}

#[test]
fn finding_6_hand_built_holders_must_name_their_tokens_and_a_duplicate_is_suspect() {
    let settings = reverse_link::Settings::new(2).with_forwarding(true);
    let holder = |id: u32, other: u32| {
        reverse_link::Config::new(
            NodeId(id),
            settings,
            1,
            h(0, i64::from(id), id),
            vec![h(0, i64::from(other), other)],
        )
    };
    for id in [0, 1] {
        assert!(matches!(
            reverse_link::Node::new(holder(id, 1 - id)),
            Err(Error::InvalidConfig { reason, .. }) if reason.contains("ids")
        ));
    }
    // Named the same on purpose: the first transfer shows it, as a suspect second token.
    let nodes: Vec<_> = [0, 1]
        .map(|id| reverse_link::Node::new(holder(id, 1 - id).with_first_token(0)).unwrap())
        .into();
    let mut net = Wires::new(nodes);
    net.apply(0, Event::Request(CsRequest::ONE)).unwrap();
    net.apply(0, Event::Release).unwrap();
    // KRLF forwards the idle token to node 1, which holds token 0 already.
    net.drain(|_, _, m| m);
    assert_eq!(net.anomalies, [(NodeId(1), Anomaly::Unexpected)]);
    assert_eq!(
        reverse_link::Node::anomaly_severity(Anomaly::Unexpected),
        Severity::Suspect
    );
}
