//! Steady-state handle does not allocate, nor do the wire codec's decoder and neighbour
//! discovery: a counting global allocator.

mod codec;
mod counting;
mod discovery;
mod reverse_link;
mod session;
mod steady_state;
