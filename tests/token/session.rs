//! The link session (`manet_mutex::session`): every handler, the token cores over an
//! unreliable datagram network, and arbitrary frames.

mod handlers;
mod network;
