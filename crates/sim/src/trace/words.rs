//! Events and messages in plain words for the viewer: "node 3 receives TOKEN from node 1
//! (lane 0, fence value 12)", "node 2 asks for the critical section", "link 4–7 fails".
//! A message's text starts with its kind in capitals (the page colours messages by it); check
//! words are cut to their first 4 hex digits.

use alloc::format;
use alloc::string::String;

use manet_mutex::token::{Height, Sealed};
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, Event};
use manet_mutex::{Fence, FenceCopies};

use super::Visible;

/// A check word, shortened: its first 4 hex digits and an ellipsis.
pub fn check(word: u64) -> String {
    format!("{:04x}…", word >> 48)
}

/// A priority as `level.rank` (a higher level is more urgent; among equal levels, a smaller
/// rank).
pub fn priority(p: &manet_mutex::queue::Priority) -> String {
    format!("{}.{}", p.level, p.rank)
}

/// A height as the page draws it: `(h1, h2, id)`.
pub fn height(h: Height) -> String {
    format!("({}, {}, {})", h.h1, h.h2, h.id.0)
}

fn sealed(s: Sealed) -> String {
    format!("height {}, check {}", height(s.height), check(s.check))
}

fn fence(f: Fence) -> String {
    format!("lane {} fence value {}", f.lane, f.value)
}

/// Three fence copies: the one they agree on, or all three if they disagree.
fn copies(c: FenceCopies) -> String {
    match c.read() {
        Some(f) if c.0.iter().all(|&x| x == f) => fence(f),
        Some(f) => format!("{} (one copy differs)", fence(f)),
        None => format!(
            "fence copies disagree: {}, {}, {}",
            c.0[0].value, c.0[1].value, c.0[2].value
        ),
    }
}

/// The highest fence a permission message's sender has seen.
fn seen_fence(c: FenceCopies) -> String {
    match c.read() {
        Some(f) => format!("has seen fence value {}", f.value),
        None => copies(c),
    }
}

fn three(v: [u32; 3]) -> String {
    if v[0] == v[1] && v[1] == v[2] {
        v[0].to_string()
    } else {
        format!("{}/{}/{}", v[0], v[1], v[2])
    }
}

fn ts(t: manet_mutex::permission::Timestamp) -> String {
    format!("timestamp ({}, {})", t.clock, t.id.0)
}

/// `event` handed to `node`, in words (messages by [`Visible::message_text`]).
pub fn event<P: Visible>(node: u32, event: &Event<P::Message>) -> String {
    match event {
        Event::Request(r) if r.resources == 1 && r.priority == 0 => {
            format!("node {node} asks for the critical section")
        }
        Event::Request(r) => format!(
            "node {node} asks for the critical section ({} resources, priority {})",
            r.resources, r.priority
        ),
        Event::Release => format!("node {node} leaves the critical section"),
        Event::Receive { from, msg } => {
            let text = P::message_text(msg);
            match text.split_once(' ') {
                Some((kind, rest)) => {
                    format!("node {node} receives {kind} from node {} {rest}", from.0)
                }
                None => format!("node {node} receives {text} from node {}", from.0),
            }
        }
        Event::LinkUp(p) => format!(
            "link {}–{} forms (told to node {node})",
            node.min(p.0),
            node.max(p.0)
        ),
        Event::LinkDown(p) => format!(
            "link {}–{} fails (told to node {node})",
            node.min(p.0),
            node.max(p.0)
        ),
        Event::Timeout(t) => format!("node {node}: timer {} expires", t.0),
        Event::Doze => format!("node {node} dozes"),
        Event::Wake => format!("node {node} wakes from doze"),
        Event::Disconnect => format!("node {node} disconnects"),
        Event::Reconnect => format!("node {node} reconnects"),
        Event::Cancel => format!("node {node} withdraws its request"),
        Event::Suspect(p) => format!("node {node} suspects node {} crashed", p.0),
        Event::Trust(p) => format!("node {node} trusts node {} again", p.0),
        Event::Refused { fence: f, newest } => format!(
            "the resource refuses node {node}'s entry with {} (it admitted value {})",
            fence(*f),
            newest.value
        ),
        other => format!("node {node} ← {other:?}"),
    }
}

/// A KRL / KRLF message.
pub fn reverse_link(msg: &reverse_link::Message) -> String {
    use reverse_link::Message as M;
    match msg {
        M::Request(s) => format!("REQUEST ({})", sealed(*s)),
        M::Token(s, c) => format!("TOKEN ({}; {})", copies(*c), sealed(*s)),
        M::LinkInfo(s) => format!("LINKINFO ({})", sealed(*s)),
        M::Probe(s) => format!("PROBE ({})", sealed(*s)),
        M::TokenAck(s, n) => format!("TOKENACK ({n} tokens received; {})", sealed(*s)),
        M::Beacon(s, c, hops) => format!("BEACON ({}, {hops} hops; {})", copies(*c), sealed(*s)),
        M::Claim(s, lane, g) => format!(
            "CLAIM (token {lane}, generation {}; {})",
            three(*g),
            sealed(*s)
        ),
        M::Promise(s, lane, b, voter) => format!(
            "PROMISE (node {voter} promises token {lane} ballot {}; {})",
            three(*b),
            sealed(*s)
        ),
        other => format!("{other:?}"),
    }
}

/// A prioritized h-out-of-k message.
pub fn prioritized(msg: &prioritized::Message) -> String {
    use prioritized::Message as M;
    match msg {
        M::Token {
            available,
            lost,
            priority: p,
            height: h,
            fence: f,
        } => format!(
            "TOKEN ({} free, {} lost, priority {}; {}; {})",
            three(available.0),
            three(lost.0),
            priority(p),
            copies(*f),
            sealed(*h)
        ),
        M::Request {
            priority: p,
            height: h,
        } => format!("REQUEST (priority {}; {})", priority(p), sealed(*h)),
        M::Update { priority: p } => format!("UPDATE (priority {})", priority(p)),
        M::Release {
            resources,
            lost,
            height: h,
            generation,
        } => format!(
            "RELEASE ({} resources, {} lost, generation {}; {})",
            three(resources.0),
            three(lost.0),
            three(*generation),
            sealed(*h)
        ),
        M::Link { height: h } => format!("LINK ({})", sealed(*h)),
        M::Probe { height: h } => format!("PROBE ({})", sealed(*h)),
        M::TokenAck { height: h, tokens } => {
            format!("TOKENACK ({tokens} tokens received; {})", sealed(*h))
        }
        M::Beacon {
            fence: f,
            hops,
            height: h,
        } => format!("BEACON ({}, {hops} hops; {})", copies(*f), sealed(*h)),
        M::Claim {
            lane,
            generation,
            height: h,
        } => format!(
            "CLAIM (token {lane}, generation {}; {})",
            three(*generation),
            sealed(*h)
        ),
        M::Promise {
            lane,
            ballot,
            voter,
            height: h,
        } => format!(
            "PROMISE (node {voter} promises token {lane} ballot {}; {})",
            three(*ballot),
            sealed(*h)
        ),
        other => format!("{other:?}"),
    }
}

fn announcement(kind: &str, a: &look_ahead::Announcement) -> String {
    format!(
        "{kind} ({}, has seen epoch {}{}; {}; check {})",
        ts(a.ts),
        a.seen,
        if a.absent {
            ", counts the receiver absent"
        } else {
            ""
        },
        seen_fence(a.fence),
        check(a.check)
    )
}

/// A look-ahead message.
pub fn look_ahead(msg: &look_ahead::Message) -> String {
    use look_ahead::Message as M;
    match msg {
        M::Request {
            ts: t,
            seq,
            epoch,
            check: c,
            fence: f,
        } => format!(
            "REQUEST (request {seq}, {}, epoch {epoch}; {}; check {})",
            ts(*t),
            seen_fence(*f),
            check(*c)
        ),
        M::Reply {
            ts: t,
            seq,
            epoch,
            seen,
            check: c,
            fence: f,
        } => format!(
            "REPLY (grants request {seq}, {}, epoch {epoch}, has seen epoch {seen}; {}; check {})",
            ts(*t),
            seen_fence(*f),
            check(*c)
        ),
        M::Doze(a) => announcement("DOZE", a),
        M::Disconnect(a) => announcement("DISCONNECT", a),
        M::Reconnect(a) => announcement("RECONNECT", a),
        other => format!("{other:?}"),
    }
}

/// A Ricart–Agrawala message.
pub fn ricart_agrawala(msg: &ricart_agrawala::Message) -> String {
    use ricart_agrawala::Message as M;
    match msg {
        M::Request {
            ts: t,
            seq,
            check: c,
            fence: f,
        } => format!(
            "REQUEST (request {seq}, {}; {}; check {})",
            ts(*t),
            seen_fence(*f),
            check(*c)
        ),
        M::Reply {
            ts: t,
            seq,
            check: c,
            fence: f,
        } => format!(
            "REPLY (grants request {seq}, {}; {}; check {})",
            ts(*t),
            seen_fence(*f),
            check(*c)
        ),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use manet_mutex::NodeId;

    #[test]
    fn events_and_messages_read_as_words_with_short_check_words() {
        let token = reverse_link::Message::Token(
            Sealed::new(Height {
                h1: 0,
                h2: 2,
                id: NodeId(1),
            }),
            FenceCopies::new(Fence::new(0, 12)),
        );
        let text = event::<reverse_link::Node>(
            3,
            &Event::Receive {
                from: NodeId(1),
                msg: token,
            },
        );
        assert!(
            text.starts_with(
                "node 3 receives TOKEN from node 1 (lane 0 fence value 12; height (0, 2, 1), check "
            ),
            "{text}"
        );
        // The check word cut to 4 hex digits: no long numbers.
        assert!(
            text.split(|c: char| !c.is_ascii_hexdigit())
                .all(|run| run.len() <= 4),
            "{text}"
        );
        assert_eq!(
            event::<reverse_link::Node>(2, &Event::Request(manet_mutex::CsRequest::ONE)),
            "node 2 asks for the critical section"
        );
        assert_eq!(
            event::<reverse_link::Node>(7, &Event::LinkDown(NodeId(4))),
            "link 4–7 fails (told to node 7)"
        );
        let reply = ricart_agrawala::Message::reply(
            manet_mutex::permission::Timestamp {
                clock: 5,
                id: NodeId(2),
            },
            1,
            3,
        );
        let text = ricart_agrawala(&reply);
        assert!(
            text.starts_with(
                "REPLY (grants request 1, timestamp (5, 2); has seen fence value 3; check "
            ),
            "{text}"
        );
    }
}
