//! The token algorithms (RL/KRL/KRLF, prioritized h-out-of-k): handlers, the papers' scenarios,
//! deviations, bad input, interleavings, properties and simulation; and the link session that
//! carries them over unreliable datagrams.

mod cancel;
mod prioritized;
mod reverse_link;
mod session;
mod timed;
