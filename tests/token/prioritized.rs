//! Prioritized h-out-of-k: handlers, scenarios, properties and simulation.

mod fixtures;
mod handlers;
mod link_handlers;
mod properties;
mod recovery;
mod scenarios;
mod simulation;
mod unit;
