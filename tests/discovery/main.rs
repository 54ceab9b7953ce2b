//! Neighbour discovery (`manet_mutex::discovery`): scenarios on a simulated radio channel, the
//! hello frame against arbitrary bytes, properties over random loss and delay schedules that
//! check the module's stated guarantees, and the whole stack (discovery, sessions, KRL cores
//! with no topology at start).

mod net;
mod properties;
mod scenarios;
mod stack;
mod wire;
