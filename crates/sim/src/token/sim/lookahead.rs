//! The look-ahead for the cache. A large network's state does not fit in the cache and its
//! next events are spread over the network, so without it every event waits on a chain of
//! misses (node, then its table and links); results are the same either way. Two stages per
//! event, the second reading addresses the first brought in: the first when a message is sent
//! (in `Sim::send`), the second for the event after the next one in the queue's first lane
//! (the messages' lane, with a fixed-delay link model). The heap's earliest event (a request,
//! mostly) is known long before it is due: the first stage when it comes to the top, the
//! second one step later.

use super::{Sim, SimEvent};
use crate::link::LinkModel;
use crate::token::{Channels, TokenAlgorithm};
use manet_mutex::NodeId;

/// The first stage for `node`: its struct and where its link block is.
pub(super) fn first<P: TokenAlgorithm>(nodes: &[P], channels: &Channels<P::Message>, node: NodeId) {
    crate::prefetch::value(&nodes[node.index()]);
    channels.prefetch_block_of(node);
}

/// The second stage for `node`, once its struct is cached: its own out-of-line state
/// ([`TokenAlgorithm::prefetch`]) and its link block.
fn second<P: TokenAlgorithm>(nodes: &[P], channels: &Channels<P::Message>, node: NodeId) {
    nodes[node.index()].prefetch();
    channels.prefetch_block(node);
}

impl<P: TokenAlgorithm, L: LinkModel> Sim<P, L> {
    /// Ask for the memory of the events two ahead in the message lane and at the heap's top.
    pub(super) fn prefetch_upcoming(&mut self) {
        if !self.prefetching {
            return;
        }
        if let Some(node) = self.queue.lane_event(0, 1).and_then(SimEvent::node) {
            second(&self.nodes, &self.channels, node);
        }
        let top = self.queue.heap_top().and_then(SimEvent::node);
        if top != self.heap_top.0 {
            self.heap_top = (top, false);
            if let Some(node) = top {
                first(&self.nodes, &self.channels, node);
            }
        } else if let (Some(node), false) = self.heap_top {
            self.heap_top.1 = true;
            second(&self.nodes, &self.channels, node);
        }
    }
}
