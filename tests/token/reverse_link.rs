//! RL/KRL/KRLF: handlers, the paper's scenarios, deviations, bad input and interleavings.

mod bad_input;
mod deviations;
mod handlers;
mod idle_pause;
mod interleavings;
mod link_handlers;
mod net;
mod properties;
mod recovery;
mod scenarios;
mod unit;
