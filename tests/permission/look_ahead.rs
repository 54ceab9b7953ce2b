//! Look-ahead: handlers, modes, errors, scenarios, properties and the routed simulator.

mod errors;
mod handlers;
mod modes;
mod properties;
mod routed;
mod scenarios;
