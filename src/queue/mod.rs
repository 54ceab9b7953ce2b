//! Request queues shared by the token algorithms.
//!
//! - [`FifoQueue`]: the KRL request queue (enqueue-if-absent, dequeue, delete).
//! - [`PriorityQueue`]: the prioritized h-out-of-k queue (highest [`Priority`] first, arrival
//!   order among equals, aging, priority raise, delete by item).

mod fifo;
mod priority;

pub use fifo::FifoQueue;
pub use priority::{Priority, PriorityQueue};
