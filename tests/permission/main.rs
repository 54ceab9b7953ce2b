//! The permission algorithms (look-ahead, Ricart–Agrawala): handlers, modes, errors, scenarios,
//! properties and the routed simulator.

mod fixtures;
mod leave;
mod look_ahead;
mod recovery;
mod ricart_agrawala;
mod withdraw;
