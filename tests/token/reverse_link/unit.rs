//! Fixtures for the single-node reverse_link handler tests.
//!
//! - `waiter()`: node 5 at (1,0,5) without a token (k = 2); neighbour 1 at (0,0,1) is below it,
//!   neighbours 2 at (2,0,2) and 3 at (3,0,3) are above it.
//! - `holder(t)`: node 0 at (0,0,0) holding `t` of k = 2 tokens; neighbours 2 at (1,0,2) and
//!   3 at (1,0,3) are above it.

pub use manet_mutex::reverse_link::{Config, Message, Node, Settings};
pub use manet_mutex::token::Height;
pub use manet_mutex::token::Neighbor;
pub use manet_mutex::{
    Action, Anomaly, CsRequest, Event, Fence, FenceCopies, NodeId, Protocol, Status,
};

pub fn h(h1: i64, h2: i64, id: u32) -> Height {
    Height::new(h1, h2, NodeId(id))
}

pub fn node(id: u32, k: u32, tokens: u32, height: Height, nbrs: &[Height], fwd: bool) -> Node {
    Node::new(
        Config::new(
            NodeId(id),
            Settings::new(k).with_forwarding(fwd),
            tokens,
            height,
            nbrs.to_vec(),
        )
        .with_first_token(0),
    )
    .expect("valid config")
}

pub fn waiter() -> Node {
    node(
        5,
        2,
        0,
        h(1, 0, 5),
        &[h(0, 0, 1), h(2, 0, 2), h(3, 0, 3)],
        false,
    )
}

pub fn holder(tokens: u32) -> Node {
    node(0, 2, tokens, h(0, 0, 0), &[h(1, 0, 2), h(1, 0, 3)], false)
}

pub fn run(node: &mut Node, event: Event<Message>) -> Vec<Action<Message>> {
    node.handle(event).expect("a valid event").collect()
}

pub fn recv(from: u32, msg: Message) -> Event<Message> {
    Event::Receive {
        from: NodeId(from),
        msg,
    }
}

pub fn request() -> Event<Message> {
    Event::Request(CsRequest::ONE)
}

pub fn send(to: u32, msg: Message) -> Action<Message> {
    Action::Send {
        to: NodeId(to),
        msg,
    }
}

/// The first entry with token 0.
pub fn enter() -> Action<Message> {
    enter_with(0, 1)
}

/// An entry with token `id`, the `value`-th made with it.
pub fn enter_with(id: u32, value: u64) -> Action<Message> {
    Action::EnterCritical {
        resources: 1,
        fence: Fence::new(id, value),
    }
}

/// Token `id` with the fence of its `value`-th entry, as a TOKEN carries it.
pub fn fence(id: u32, value: u64) -> FenceCopies {
    Fence::new(id, value).into()
}

/// Token 0 before any entry: what a fixture's first token carries.
pub const T0: FenceCopies = FenceCopies::new(Fence::new(0, 0));

pub fn anomaly(from: u32, kind: Anomaly) -> Action<Message> {
    Action::Anomaly {
        from: NodeId(from),
        kind,
    }
}

pub fn queue(node: &Node) -> Vec<u32> {
    node.queue().map(|id| id.0).collect()
}

pub fn entry(node: &Node, id: u32) -> Neighbor {
    node.neighbors()
        .get(NodeId(id))
        .cloned()
        .unwrap_or_else(|| panic!("n{id} is not in the neighbour table"))
}

pub fn view(node: &Node, id: u32) -> Height {
    entry(node, id).height()
}

pub fn visited(node: &Node) -> Vec<u32> {
    node.neighbors()
        .members()
        .filter(|n| n.visited())
        .map(|n| n.id().0)
        .collect()
}

pub use Message::{LinkInfo, Request, Token};
