//! RL, KRL and KRLF: k-mutual exclusion by token passing on a token-oriented DAG
//! (Walter, Cao, Mohanty, POMC 2001; with `k = 1` it is the RL algorithm of Walter, Welch and
//! Vaidya).
//!
//! `k` tokens move over the physical links. Every node keeps a [height](crate::height) and
//! links point downhill; requests travel downhill to a token holder, tokens travel back along
//! the request chain. When a link failure leaves a non-holder with no way down, it raises
//! itself by partial reversal; a holder with no way up lowers itself. With
//! [`Config::forwarding`] (KRLF) an idle token is passed on to the lowest unvisited neighbour
//! instead of waiting where it is.
//!
//! Delivery contract: reliable FIFO links between neighbours; `LinkDown` is reported only when
//! nothing is in flight on the link, and `LinkUp`/`LinkDown` reach both ends.

mod build;
pub mod invariants;
mod message;
mod node;
#[cfg(feature = "std")]
mod simulate;

pub use build::build;
pub use message::Message;
pub use node::{Config, Node};
#[cfg(feature = "std")]
pub use simulate::Params;
