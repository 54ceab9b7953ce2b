//! The sans-IO driver (`manet_mutex::driver`): whole networks of drivers over a lossy,
//! duplicating, reordering channel (every request served, fences increasing), the driver's
//! wire format (pinned bytes, round trips, arbitrary bytes), and bad input (forged floods,
//! corrupted frames: counted, dropped, bounded memory).

mod auth;
mod bounds;
mod crash;
mod net;
mod runs;
mod wire;
