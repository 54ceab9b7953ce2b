//! Request priorities of the prioritized algorithm ([`Priority`]), and the token algorithms'
//! request queues, which are internal: the nodes show their queues through `queue()`.
//!
//! - `FifoQueue`: the KRL request queue (enqueue-if-absent, dequeue, delete).
//! - `PriorityQueue`: the prioritized h-out-of-k queue (highest [`Priority`] first, arrival
//!   order among equals, aging, priority raise, delete by item).

mod fifo;
mod priority;

pub(crate) use fifo::FifoQueue;
pub use priority::Priority;
pub(crate) use priority::PriorityQueue;
