//! How a message gets from its sender to its receiver: the simulators' link models.
//!
//! A [`LinkModel`] answers, for each message sent, what becomes of it ([`Transit`]): it
//! arrives after some delay over some hops, it is lost, or it waits at its sender for a route.
//! The simulators carry the answer out, so a new way for messages to travel is a new model,
//! not an edit of a simulator's delivery code.
//!
//! The models the simulators use:
//!
//! - [`FixedDelay`], the token simulator's (the KRL paper's model): every message crosses one
//!   link and arrives a fixed delay after it was sent, never lost.
//! - The routed simulator's (built from [`crate::routed::RoutedConfig`]): a message takes the
//!   shortest path between the hosts' positions at send time (random waypoints or a replayed
//!   ns-2 trace), one hop delay per hop; it is lost with probability `loss`, or when either
//!   host is down or away; with no path it is dropped or parked
//!   ([`crate::routed::Unreachable`]). That model is also the network's reachability state
//!   (host failures, disconnections), which the routed simulator changes as it runs, so it is
//!   built in rather than a parameter.
//!
//! **FIFO per link.** The token algorithms need each directed link to deliver in the order
//! sent, and the token simulator guarantees it whatever the model: it keeps each link's
//! messages in one FIFO ([`crate::Channels`]) and every delivery takes the oldest, so the
//! model's delays decide *when* deliveries happen and the FIFO decides *which* message each
//! one brings. With [`FixedDelay`] each message arrives exactly its delay after it was sent.
//! The token simulator needs every message delivered: a model that loses or parks one is a
//! configuration error there. The routed simulator delivers each message at its own time, so
//! messages between two hosts overtake each other when routes change; the permission
//! algorithms do not need FIFO.
//!
//! **A new model** implements [`LinkModel`] (and [`Clone`] and [`Debug`], as the configuration
//! does) and goes into the token simulator with
//! [`crate::token::Config::with_link`]. It may draw from the simulation's RNG (the draws are
//! part of the run, so a run stays a function of its seed); it should give
//! [`LinkModel::fixed_delay`] when every message takes the same delay, which lets the event
//! queue keep them in a FIFO lane instead of its heap (faster, same order).

use rand::RngCore;

use crate::Time;
use manet_mutex::NodeId;

/// What becomes of one message handed to a [`LinkModel`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Transit {
    /// It arrives `delay` time units from now, having crossed `hops` links.
    Arrives {
        /// Time units until it arrives (at least 0).
        delay: Time,
        /// Links it crosses.
        hops: u32,
    },
    /// It is lost: after crossing `hops` links of the route it found, or, with `None`, at its
    /// sender (no route, or an end down or away).
    Lost {
        /// The hops of its route, if it found one.
        hops: Option<u32>,
    },
    /// No route now: the sender keeps it and hands it to the model again `retry` time units
    /// from now.
    Parked {
        /// Time units until the next attempt.
        retry: Time,
    },
}

/// How messages travel (see the [module](self) for the models and the FIFO property).
pub trait LinkModel {
    /// What becomes of a message sent from `from` to `to` at `now`. `rng` is the simulation's:
    /// a model that draws from it makes its draws part of the run.
    fn transit(&mut self, from: NodeId, to: NodeId, now: Time, rng: &mut dyn RngCore) -> Transit;

    /// The delay every message takes, if it is always the same (then the event queue keeps
    /// deliveries in a FIFO lane, and the token simulator re-checks a busy link every such
    /// delay); `None` otherwise.
    fn fixed_delay(&self) -> Option<Time> {
        None
    }
}

/// Every message crosses one link and arrives `delay` time units after it was sent: the KRL
/// paper's links, and the token simulator's default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedDelay {
    /// Time units from sending to arrival.
    pub delay: Time,
}

impl LinkModel for FixedDelay {
    #[inline]
    fn transit(&mut self, _: NodeId, _: NodeId, _: Time, _: &mut dyn RngCore) -> Transit {
        Transit::Arrives {
            delay: self.delay,
            hops: 1,
        }
    }

    fn fixed_delay(&self) -> Option<Time> {
        Some(self.delay)
    }
}
