//! RL/KRL/KRLF: handlers, the paper's scenarios, deviations, bad input and interleavings.

mod bad_input;
mod deviations;
mod faults;
mod handlers;
mod idle_pause;
mod interleavings;
mod link_handlers;
mod net;
mod properties;
mod raise_pause;
mod recovery;
mod scenarios;
mod unit;
