//! Steady-state handle does not allocate, nor does the wire codec's decoder: a counting global
//! allocator.

mod codec;
mod counting;
mod reverse_link;
mod session;
mod steady_state;
