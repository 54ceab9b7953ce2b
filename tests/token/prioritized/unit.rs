//! Helpers for the single-node handler tests: small fixed neighbourhoods and shorthands for
//! events and actions.

use manet_mutex::prioritized::{Config, Message, Node, Policy, Resources, Settings};
use manet_mutex::queue::Priority;
use manet_mutex::token::Height;
use manet_mutex::{Action, Anomaly, CsRequest, Event, Fence, FenceCopies, Protocol};

pub use super::fixtures::n;

pub fn h(h1: i64, h2: i64, id: u32) -> Height {
    Height::new(h1, h2, n(id))
}

pub fn p(level: u64) -> Priority {
    Priority::new(level, 0)
}

pub const K: u32 = 5;

/// Node 1 at height (0,1) with neighbours 0 (below, at (0,0)) and 2, 3 (above).
pub fn node(id: u32, height: Height, neighbors: &[Height], holder: bool) -> Node {
    let settings = Settings::new(K, Policy::Explicit);
    Node::new(Config::new(
        n(id),
        settings,
        holder,
        height,
        neighbors.to_vec(),
    ))
    .unwrap()
}

/// A holder (node 1, lowest) with higher neighbours 2 and 3.
pub fn holder() -> Node {
    node(1, h(0, 0, 1), &[h(0, 1, 2), h(0, 2, 3)], true)
}

/// The holder after lending all 5 resources out and getting the token back with
/// `available` free, now waiting for `resources` at `priority` (height (0, -2, 1)).
pub fn waiting_holder(available: u32, resources: u32, priority: u32) -> Node {
    let mut a = holder();
    go(&mut a, req(5, 0));
    go(&mut a, request_msg(2, 0, h(0, 1, 2)));
    go(&mut a, Event::Release);
    let token = Message::Token {
        lost: Resources::new(0),
        available: Resources::new(available),
        priority: p(0),
        height: h(0, -1, 2).into(),
        fence: FenceCopies::default(),
    };
    go(&mut a, recv(2, token));
    go(&mut a, req(resources, priority));
    assert!(a.holds_token() && a.status() == manet_mutex::Status::Waiting);
    a
}

/// A non-holder (node 1) between node 0 below and nodes 2, 3 above.
pub fn middle() -> Node {
    node(1, h(0, 1, 1), &[h(0, 0, 0), h(0, 2, 2), h(0, 3, 3)], false)
}

pub fn go(node: &mut Node, ev: Event<Message>) -> Vec<Action<Message>> {
    node.handle(ev).unwrap().collect()
}

pub fn req(resources: u32, priority: u32) -> Event<Message> {
    Event::Request(CsRequest {
        resources,
        priority,
    })
}

pub fn recv(from: u32, msg: Message) -> Event<Message> {
    Event::Receive { from: n(from), msg }
}

pub fn request_msg(from: u32, level: u64, height: Height) -> Event<Message> {
    recv(
        from,
        Message::Request {
            priority: p(level),
            height: height.into(),
        },
    )
}

pub fn send(to: u32, msg: Message) -> Action<Message> {
    Action::Send { to: n(to), msg }
}

pub fn anomaly(from: u32, kind: Anomaly) -> Action<Message> {
    Action::Anomaly {
        from: n(from),
        kind,
    }
}

pub fn sends(actions: &[Action<Message>]) -> Vec<(u32, Message)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, msg } => Some((to.0, msg.clone())),
            _ => None,
        })
        .collect()
}

/// The `grant`-th entry of the token, with `resources` resources.
pub fn enter(resources: u32, grant: u64) -> Action<Message> {
    Action::EnterCritical {
        resources,
        fence: Fence::new(0, grant),
    }
}
