//! Steady-state handle does not allocate: a counting global allocator.

mod counting;
mod reverse_link;
mod session;
mod steady_state;
