//! A minimal driving loop: three KRL nodes on a line, one token, reliable FIFO links modelled
//! by a queue. A real embedder replaces the queue with its transport and link layer.

use std::collections::VecDeque;

use manet_mutex::reverse_link::{network, Message, Node, Settings};
use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol};

fn main() -> Result<(), manet_mutex::Error> {
    let edges = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
    let mut nodes = network(3, &edges, &[NodeId(0)], Settings::new(1))?
        .into_iter()
        .map(Node::new)
        .collect::<Result<Vec<_>, _>>()?;
    let mut wire: VecDeque<(NodeId, NodeId, Message)> = VecDeque::new();

    // Node 2, two hops from the token, asks for the critical section.
    let mut pending = vec![(NodeId(2), Event::Request(CsRequest::ONE))];
    while let Some((at, event)) = pending.pop().or_else(|| {
        wire.pop_front()
            .map(|(from, to, msg)| (to, Event::Receive { from, msg }))
    }) {
        for action in nodes[at.index()].handle(event)? {
            match action {
                Action::Send { to, msg } => wire.push_back((at, to, msg)),
                Action::EnterCritical { fence, .. } => {
                    // A protected resource would refuse anything not above this fence.
                    println!("{at:?} enters the critical section with {fence:?}");
                    pending.push((at, Event::Release));
                }
                _ => {}
            }
        }
    }
    println!(
        "token now at {:?}",
        nodes.iter().find(|n| n.holds_token()).map(Node::id)
    );
    Ok(())
}
