//! Neighbour discovery (`manet_mutex::discovery`): scenarios on a simulated radio channel, the
//! hello frame against arbitrary bytes, and properties over random loss and delay schedules
//! that check the module's stated guarantees.

mod net;
mod properties;
mod scenarios;
mod wire;
