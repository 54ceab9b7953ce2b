//! Request queues shared by the token algorithms.
//!
//! - [`FifoQueue`]: the KRL request queue (enqueue-if-absent, dequeue, delete).

mod fifo;

pub use fifo::FifoQueue;
