//! # manet-mutex
//!
//! Sans-IO distributed mutual exclusion for mobile ad hoc networks (MANETs) and message-passing
//! systems. Each algorithm is a pure [`Protocol`] node: feed it [`Event`]s, carry out the
//! [`Action`]s it returns. Nodes do no I/O, read no clock, start no thread and use no global
//! randomness, so any runtime or transport can embed them.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

mod error;
mod event;
pub mod height;
pub mod look_ahead;
pub mod neighbors;
mod node;
pub mod permission;
pub mod queue;
pub mod ricart_agrawala;
#[cfg(feature = "std")]
pub mod sim;

pub use error::Error;
pub use event::{Action, Anomaly, CsRequest, Event, TimerId};
pub use node::{Actions, NodeId, Protocol, Status};
