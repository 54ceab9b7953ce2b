//! The corrupt operation's kind changes and frame flips (`manet_mutex_testkit::corrupt`, issue
//! 21): which kinds each algorithm's messages change into (computed through the codec, pinned
//! here for typical messages), what a kind change can never do (make or consume a token or a
//! RELEASE; pass a check word), and that a flip of 1 to 4 bits of a real frame never decodes.

use std::collections::BTreeSet;
use std::fmt::Debug;

use manet_mutex::codec::{encode, Wire, CHECK_LEN};
use manet_mutex::look_ahead::Announcement;
use manet_mutex::permission::Timestamp;
use manet_mutex::prioritized::Resources;
use manet_mutex::queue::Priority;
use manet_mutex::token::height::{Height, Sealed};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, Fence, NodeId};
use manet_mutex_testkit::corrupt::{kinds_of, Corruptible, Corruption, Flip, Outcome};
use manet_mutex_testkit::strategy::cases;
use manet_mutex_testkit::TokenHarness;
use proptest::prelude::*;

use crate::codec::{
    look_ahead_message, prioritized_message, reverse_link_message, ricart_agrawala_message,
};

/// The variant's name: its `Debug` form up to the first `(`, ` ` or `{`.
fn kind<M: Debug>(msg: &M) -> String {
    let text = format!("{msg:?}");
    let end = text.find(['(', ' ', '{']).unwrap_or(text.len());
    text[..end].to_string()
}

/// `msg`'s kind and the kinds it changes into: `"Request -> LinkInfo, Probe"`.
fn row<M: Wire + Debug>(msg: &M) -> String {
    let into: Vec<String> = kinds_of(msg).iter().map(kind).collect();
    let into = if into.is_empty() {
        "(none)".to_string()
    } else {
        into.join(", ")
    };
    format!("{} -> {into}", kind(msg))
}

fn table<M: Wire + Debug>(msgs: &[M]) -> Vec<String> {
    msgs.iter().map(row).collect()
}

const H: Height = Height::new(0, -1, NodeId(1));

fn fence() -> manet_mutex::FenceCopies {
    Fence::new(0, 3).into()
}

fn ts() -> Timestamp {
    Timestamp {
        clock: 2,
        id: NodeId(1),
    }
}

fn reverse_link_messages() -> Vec<reverse_link::Message> {
    use reverse_link::Message;
    let s = Sealed::new(H);
    vec![
        Message::Request(s),
        Message::Token(s, fence()),
        Message::LinkInfo(s),
        Message::Probe(s),
        Message::token_ack(H, 1),
        Message::Beacon(s, fence(), 3),
        Message::Claim(s, 1, [0x0002_0004; 3]),
        Message::promise(H, 1, 0x0002_0004, 3),
    ]
}

fn prioritized_messages() -> Vec<prioritized::Message> {
    use prioritized::Message;
    let height = Sealed::new(H);
    let priority = Priority::new(1, 0);
    vec![
        Message::Token {
            available: Resources::new(1),
            lost: Resources::new(0),
            priority,
            height,
            fence: fence(),
        },
        Message::Request { priority, height },
        Message::Update { priority },
        Message::Release {
            resources: Resources::new(1),
            lost: Resources::new(0),
            height,
            generation: [0; 3],
        },
        Message::Link { height },
        Message::Probe { height },
        Message::TokenAck {
            height: Sealed::bound(H, 1),
            tokens: 1,
        },
        Message::Beacon {
            fence: fence(),
            hops: 3,
            height,
        },
        Message::Claim {
            lane: 0,
            generation: [0x0002_0004; 3],
            height,
        },
        Message::promise(H, 0, 0x0002_0004, 3),
    ]
}

/// Look-ahead's messages with epoch `epoch` (a REQUEST's or REPLY's fifth field, which an
/// announcement reads as its `absent` flag: only 0 and 1 decode).
fn look_ahead_messages(epoch: u64) -> Vec<look_ahead::Message> {
    use look_ahead::Message;
    let a = |absent| Announcement::new(ts(), 1, absent, 3);
    vec![
        Message::request(ts(), 1, epoch, 3),
        Message::reply(ts(), 1, epoch, 1, 3),
        Message::Doze(a(false)),
        Message::Disconnect(a(true)),
        Message::Reconnect(a(false)),
    ]
}

fn ricart_agrawala_messages() -> Vec<ricart_agrawala::Message> {
    use ricart_agrawala::Message;
    vec![Message::request(ts(), 1, 3), Message::reply(ts(), 1, 3)]
}

/// The kind changes of typical messages (small heights, counts, clocks and fences), computed
/// through the codec, pinned: a change to a message type's layout or to the codec shows here.
#[test]
fn the_kind_changes_of_every_algorithm_are_pinned() {
    let tables = [
        ("reverse_link", table(&reverse_link_messages())),
        ("prioritized", table(&prioritized_messages())),
        ("look_ahead (epoch 1)", table(&look_ahead_messages(1))),
        ("look_ahead (epoch 2)", table(&look_ahead_messages(2))),
        ("ricart_agrawala", table(&ricart_agrawala_messages())),
    ];
    for (algorithm, rows) in &tables {
        println!("{algorithm}:");
        for row in rows {
            println!("  {row}");
        }
    }
    let pinned: [(&str, &[&str]); 5] = [
        (
            "reverse_link",
            &[
                "Request -> LinkInfo, Probe",
                "Token -> (none)",
                "LinkInfo -> Request, Probe",
                "Probe -> Request, LinkInfo",
                "TokenAck -> (none)",
                "Beacon -> (none)",
                "Claim -> (none)",
                "Promise -> (none)",
            ],
        ),
        (
            "prioritized",
            &[
                "Token -> (none)",
                "Request -> (none)",
                "Update -> (none)",
                "Release -> (none)",
                "Link -> Probe",
                "Probe -> Link",
                "TokenAck -> (none)",
                "Beacon -> (none)",
                "Claim -> (none)",
                "Promise -> (none)",
            ],
        ),
        (
            "look_ahead (epoch 1)",
            &[
                "Request -> Doze, Disconnect, Reconnect",
                "Reply -> (none)",
                "Doze -> Request, Disconnect, Reconnect",
                "Disconnect -> Request, Doze, Reconnect",
                "Reconnect -> Request, Doze, Disconnect",
            ],
        ),
        (
            "look_ahead (epoch 2)",
            &[
                "Request -> (none)",
                "Reply -> (none)",
                "Doze -> Request, Disconnect, Reconnect",
                "Disconnect -> Request, Doze, Reconnect",
                "Reconnect -> Request, Doze, Disconnect",
            ],
        ),
        ("ricart_agrawala", &["Request -> Reply", "Reply -> Request"]),
    ];
    for ((algorithm, rows), (name, want)) in tables.iter().zip(pinned) {
        assert_eq!(*algorithm, name);
        assert_eq!(rows, want, "{algorithm}");
    }
}

/// Every kind change is the message's frame with another variant index and its frame check
/// recomputed: the body differs in its first byte only, and the kind differs.
fn is_the_body_with_another_index<M: Wire + Debug>(msg: &M) -> Result<(), TestCaseError> {
    let frame = encode(msg);
    let body = &frame[2..frame.len() - CHECK_LEN];
    let mut indices = BTreeSet::new();
    for other in kinds_of(msg) {
        let changed = encode(&other);
        prop_assert_eq!(&changed[2..changed.len() - CHECK_LEN], body, "{:?}", other);
        prop_assert_ne!(changed[1], frame[1]);
        prop_assert_ne!(kind(&other), kind(msg));
        prop_assert!(indices.insert(changed[1]), "two kind changes to one index");
    }
    Ok(())
}

/// A flip of 1 to 4 bits of the real frame never decodes (the frame check detects up to 5):
/// the receiver's codec drops it and the message is as it was.
fn every_flip_is_dropped<M: Corruptible>(msg: &M, flip: Flip) -> Result<(), TestCaseError> {
    let len = encode(msg).len();
    let positions = flip.positions(len);
    prop_assert_eq!(positions.len(), flip.count());
    prop_assert_eq!(
        positions.iter().collect::<BTreeSet<_>>().len(),
        flip.count()
    );
    prop_assert!(positions.iter().all(|&p| p < len * 8));
    let mut flipped = msg.clone();
    let outcome = flipped.corrupt_as(Corruption::Flip(flip));
    prop_assert!(matches!(outcome, Outcome::Dropped(_)), "{:?}", outcome);
    prop_assert_eq!(&flipped, msg);
    Ok(())
}

fn any_flip() -> impl Strategy<Value = Flip> {
    (any::<u8>(), any::<[u16; 4]>()).prop_map(|(n, at)| Flip { n, at })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2048)))]

    #[test]
    fn kind_changes_are_the_frame_with_another_variant_index(
        a in reverse_link_message(),
        b in prioritized_message(),
        c in look_ahead_message(),
        d in ricart_agrawala_message(),
    ) {
        is_the_body_with_another_index(&a)?;
        is_the_body_with_another_index(&b)?;
        is_the_body_with_another_index(&c)?;
        is_the_body_with_another_index(&d)?;
    }

    /// A TOKEN or RELEASE (the prioritized messages that carry resources) and a KRL TOKEN
    /// decode as no other kind, and no other kind decodes as one: a kind change never makes
    /// or destroys a token or resources. (So `TokenHarness::lost` of a kind change is 0; the
    /// harness computes it all the same.)
    #[test]
    fn no_kind_change_makes_or_destroys_a_token_or_resources(
        a in reverse_link_message(),
        b in prioritized_message(),
    ) {
        let krl = kinds_of(&a);
        if a.is_token() {
            prop_assert!(krl.is_empty(), "{:?} -> {:?}", a, krl);
        }
        prop_assert!(krl.iter().all(|k| !k.is_token()), "{:?} -> {:?}", a, krl);
        let carries = |m: &prioritized::Message| {
            matches!(m, prioritized::Message::Token { .. } | prioritized::Message::Release { .. })
        };
        let changed = kinds_of(&b);
        if carries(&b) {
            prop_assert!(changed.is_empty(), "{:?} -> {:?}", b, changed);
        }
        prop_assert!(!changed.iter().any(carries), "{:?} -> {:?}", b, changed);
    }

    /// A message whose check words hold, changed into a kind that has a check word, fails it
    /// (the kind tags, W2): its receiver treats it as corrupted.
    #[test]
    fn a_kind_change_fails_the_check_word(
        a in reverse_link_message(),
        b in prioritized_message(),
        c in look_ahead_message(),
        d in ricart_agrawala_message(),
    ) {
        if a.is_intact() {
            for k in kinds_of(&a) {
                prop_assert!(!k.is_intact(), "{:?} -> {:?}", a, k);
            }
        }
        if b.is_intact() {
            for k in kinds_of(&b) {
                let unchecked = matches!(k, prioritized::Message::Update { .. });
                prop_assert!(unchecked || !k.is_intact(), "{:?} -> {:?}", b, k);
            }
        }
        if look_ahead_intact(&c) != Some(false) {
            for k in kinds_of(&c) {
                prop_assert!(look_ahead_intact(&k) != Some(true), "{:?} -> {:?}", c, k);
            }
        }
        if ricart_agrawala_intact(&d) != Some(false) {
            for k in kinds_of(&d) {
                prop_assert!(ricart_agrawala_intact(&k) != Some(true), "{:?} -> {:?}", d, k);
            }
        }
    }

    #[test]
    fn no_flip_of_one_to_four_bits_of_a_frame_decodes(
        a in reverse_link_message(),
        b in prioritized_message(),
        c in look_ahead_message(),
        d in ricart_agrawala_message(),
        flip in any_flip(),
    ) {
        every_flip_is_dropped(&a, flip)?;
        every_flip_is_dropped(&b, flip)?;
        every_flip_is_dropped(&c, flip)?;
        every_flip_is_dropped(&d, flip)?;
    }
}

/// Whether a look-ahead message's check word holds (`None`: a kind added later, without one).
fn look_ahead_intact(msg: &look_ahead::Message) -> Option<bool> {
    use look_ahead::Message;
    match *msg {
        Message::Request {
            ts,
            seq,
            epoch,
            check,
            ..
        } => Some(check == Message::request_check(ts, seq, epoch)),
        Message::Reply {
            ts,
            seq,
            epoch,
            check,
            ..
        } => Some(check == Message::reply_check(ts, seq, epoch)),
        Message::Doze(a) | Message::Disconnect(a) | Message::Reconnect(a) => Some(a.is_intact()),
        _ => None,
    }
}

/// Whether a Ricart–Agrawala message's check word holds (`None`: a kind added later, without
/// one).
fn ricart_agrawala_intact(msg: &ricart_agrawala::Message) -> Option<bool> {
    use ricart_agrawala::Message;
    match *msg {
        Message::Request { ts, seq, check, .. } => Some(check == Message::request_check(ts, seq)),
        Message::Reply { ts, seq, check, .. } => Some(check == Message::reply_check(ts, seq)),
        _ => None,
    }
}

// ---- Findings of the kind changes (issue 21; `docs/ALGORITHMS.md`, W3). Each test asserts
// what the threat model requires; each failed before R13's answer to a doubtful message.

/// Two nodes, `k = 1`, the token at node 0: node 1 asks and gets the token, and its TOKENACK is
/// corrupted (a field, so it fails its check word). Node 0 asks again with a PROBE (R13), and
/// that PROBE's kind is changed into its `kind`-th other kind (`kinds_of`). Then node 1 leaves
/// the critical section. Returns the network at that point, after the deliveries in flight.
fn ack_question_changed<P: TokenHarness>(
    settings: P::Settings,
    kind: usize,
) -> manet_mutex_testkit::TokenNet<P> {
    use manet_mutex_testkit::corrupt::Value;
    let (n0, n1) = (NodeId(0), NodeId(1));
    let mut net =
        manet_mutex_testkit::TokenNet::<P>::with_edges(2, &[(n0, n1)], &[n0], settings).unwrap();
    net.request(n1, manet_mutex::CsRequest::ONE);
    assert!(net.deliver(n1, n0), "node 1's REQUEST");
    assert!(net.deliver(n0, n1), "the TOKEN");
    assert!(net.node(n1).holds_token());
    assert!(net.corrupt(n1, n0, 0, 0, Value::Up), "the TOKENACK's h1");
    assert!(net.deliver(n1, n0), "the corrupted TOKENACK");
    assert!(
        format!("{:?}", net.pending(n0, n1)).contains("Probe"),
        "node 0 asks again: {:?}",
        net.pending(n0, n1)
    );
    let outcome = net.corrupt_as(n0, n1, 0, Corruption::Kind(kind));
    assert_eq!(outcome, Outcome::Changed);
    net.note(|| "the PROBE's kind changed".into());
    while net.deliver_oldest().is_some() {}
    net.release(n1);
    while net.deliver_oldest().is_some() {}
    net
}

/// Finding K1 (KRL): the PROBE changed into a LINKINFO fails its check word at node 1. It was
/// dropped unanswered, so node 0 kept waiting for the acknowledgement of the token it sent (at
/// quiescence `check_settled` failed: `unacked: 1`) and dropped every REQUEST of node 1 as
/// `Stale` until a keepalive. Now node 1 answers what it cannot read from a node that sent it
/// tokens (R13, `Links::doubt`), and the handshake settles.
#[test]
fn finding_k1_krl_an_ack_question_changed_into_a_linkinfo_is_answered() {
    let net = ack_question_changed::<reverse_link::Node>(reverse_link::Settings::new(1), 1);
    net.drain(64).unwrap();
}

/// Finding K1 (KRL), the PROBE changed into a REQUEST: node 1 queues it as node 0's request
/// (a REQUEST whose height is impossible is still taken as a request, on the view it had:
/// dropping it could lose one) and, leaving the critical section, sends its token to node 0,
/// which never asked. The question went unanswered, and `check_settled` failed at
/// quiescence; now node 1 answers it (R13) and the handshakes settle.
#[test]
fn finding_k1_krl_an_ack_question_changed_into_a_request_is_answered() {
    let net = ack_question_changed::<reverse_link::Node>(reverse_link::Settings::new(1), 0);
    net.drain(64).unwrap();
}

/// Finding K1 (prioritized): the PROBE changed into a LINK was dropped by node 1 and never
/// answered, and node 0 kept waiting for the acknowledgement of its TOKEN; now it is answered
/// (R13).
#[test]
fn finding_k1_prioritized_an_ack_question_changed_into_a_link_is_answered() {
    let settings = prioritized::Settings::new(1, prioritized::Policy::Equal);
    let net = ack_question_changed::<prioritized::Node>(settings, 0);
    net.drain(64).unwrap();
}

/// Finding V12 (KRL; `docs/ALGORITHMS.md`, V12). Two nodes, `k = 1`, the token idle at node 0:
/// node 1 asks, and its REQUEST's kind is changed into its `kind`-th other kind (a LINKINFO or
/// a PROBE: the layouts are the same). Its check word fails at node 0, which cannot tell it
/// was a request; node 1 waits on node 0 while node 0 queues nothing. Returns the network
/// after every delivery, with no keepalive.
fn request_changed(kind: usize) -> manet_mutex_testkit::TokenNet<reverse_link::Node> {
    let (n0, n1) = (NodeId(0), NodeId(1));
    let settings = reverse_link::Settings::new(1);
    let mut net = manet_mutex_testkit::TokenNet::<reverse_link::Node>::with_edges(
        2,
        &[(n0, n1)],
        &[n0],
        settings,
    )
    .unwrap();
    net.request(n1, manet_mutex::CsRequest::ONE);
    assert!(matches!(
        net.pending(n1, n0)[..],
        [reverse_link::Message::Request(_)]
    ));
    assert_eq!(
        net.corrupt_as(n1, n0, 0, Corruption::Kind(kind)),
        Outcome::Changed
    );
    net.note(|| "the REQUEST's kind changed".into());
    while net.deliver_oldest().is_some() {}
    net
}

/// Finding V12: a REQUEST changed into a LINKINFO or a PROBE was lost, and its sender waited
/// until a keepalive (`LinkUp` of a link that is up) made it ask again. Now a height message
/// that fails its check word from a member of `N` is answered with a PROBE, which makes a
/// waiting node whose `next` sent it ask again (T1): node 1 enters with no keepalive.
#[test]
fn finding_v12_krl_a_request_changed_into_a_height_message_is_asked_for_again() {
    for kind in [0, 1] {
        let net = request_changed(kind);
        assert_eq!(
            net.status(NodeId(1)),
            manet_mutex::Status::Critical,
            "kind change {kind}: node 1 is served without a keepalive\n{}",
            net.trace_text()
        );
        net.drain(64).unwrap();
    }
}

/// Finding V12 as the adversarial property test found it (shrunk by hand): a line 0 – 1 – 2,
/// `k = 1`, the token idle at node 0. Node 2's LINKINFO (a keepalive's) is changed into a
/// REQUEST: its check word fails, and node 1 queues it on the view it had (a REQUEST whose
/// height alone is impossible is kept, threat model rule 1), so node 1 queues node 2, which
/// never asked, and forwards a REQUEST to node 0. That REQUEST's kind is changed into a
/// LINKINFO or a PROBE, and node 0 drops it. Nobody waits, so no drain starves and no
/// keepalive comes: at quiescence node 1 still queued node 2 (`settled-idle`). Now node 0's
/// PROBE makes node 1 ask again, the token goes to node 2 (which keeps it) and the queues
/// empty.
#[test]
fn finding_v12_krl_a_queued_request_is_asked_for_again_when_the_forwarded_one_changes_kind() {
    let (n0, n1, n2) = (NodeId(0), NodeId(1), NodeId(2));
    for kind in [0, 1] {
        let settings = reverse_link::Settings::new(1);
        let mut net = manet_mutex_testkit::TokenNet::<reverse_link::Node>::with_edges(
            3,
            &[(n0, n1), (n1, n2)],
            &[n0],
            settings,
        )
        .unwrap();
        net.apply_valid(n2, manet_mutex::Event::LinkUp(n1));
        assert!(matches!(
            net.pending(n2, n1)[..],
            [reverse_link::Message::LinkInfo(_)]
        ));
        assert_eq!(
            net.corrupt_as(n2, n1, 0, Corruption::Kind(0)),
            Outcome::Changed
        );
        assert!(matches!(
            net.pending(n2, n1)[..],
            [reverse_link::Message::Request(_)]
        ));
        assert!(net.deliver(n2, n1));
        assert_eq!(
            net.node(n1).queue().collect::<Vec<_>>(),
            [n2],
            "the phantom entry"
        );
        assert!(matches!(
            net.pending(n1, n0)[..],
            [reverse_link::Message::Request(_)]
        ));
        assert_eq!(
            net.corrupt_as(n1, n0, 0, Corruption::Kind(kind)),
            Outcome::Changed
        );
        net.note(|| "the forwarded REQUEST's kind changed".into());
        net.drain(64)
            .unwrap_or_else(|v| panic!("kind change {kind}: {v}"));
    }
}
