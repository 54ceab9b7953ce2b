//! The routed simulator's link model ([`crate::link`]): where the hosts are, which of them
//! can be reached, and what becomes of a message between two of them.

use rand::{Rng, RngCore};

use super::{RoutedConfig, Unreachable};
use crate::link::{LinkModel, Transit};
use crate::waypoint::{Point, RouteCache, Waypoint};
use crate::Time;
use manet_mutex::NodeId;

/// Where the hosts are: the random-waypoint model, or an ns-2 trace replayed.
enum Mobility {
    Waypoint(Box<Waypoint>),
    Trace(std::sync::Arc<crate::ns2::Trace>),
}

impl Mobility {
    fn positions(&mut self, t: Time) -> Vec<Point> {
        match self {
            Mobility::Waypoint(w) => w.positions(t),
            Mobility::Trace(trace) => trace.positions(t),
        }
    }
}

/// Shortest paths over the hosts' positions at send time (unit-disk links of the configured
/// radius, through live hosts only), `hop_delay` per hop, lost with probability `loss`;
/// with no path, dropped or parked as [`Unreachable`] says. Messages are delivered at their
/// own times, so they overtake each other: not FIFO.
pub(super) struct Network {
    mobility: Mobility,
    /// Routes at the current instant (see [`RouteCache`]).
    routes: RouteCache,
    radius: f64,
    hop_delay: f64,
    loss: f64,
    unreachable: Unreachable,
    /// Per host: not failed.
    up: Vec<bool>,
    /// Per host: disconnected on purpose (look-ahead).
    away: Vec<bool>,
    /// Changes whenever `up` or `away` does, so cached routes know when to go.
    generation: u64,
    /// In the drain: no loss, and over a replayed trace a host out of reach is reached in one
    /// hop (see [`RoutedConfig::trace`]).
    draining: bool,
}

impl Network {
    /// The network of `cfg` at time 0, every host up and present.
    pub(super) fn new(cfg: &RoutedConfig) -> Self {
        let n = cfg.hosts as usize;
        Network {
            mobility: match &cfg.trace {
                Some(trace) => Mobility::Trace(trace.clone()),
                None => Mobility::Waypoint(Box::new(Waypoint::new(
                    cfg.hosts,
                    cfg.mobility,
                    cfg.seed ^ 0x05EE_D0F0_B11E,
                ))),
            },
            routes: RouteCache::new(),
            radius: cfg.mobility.radius,
            hop_delay: cfg.hop_delay,
            loss: cfg.loss,
            unreachable: cfg.unreachable,
            up: vec![true; n],
            away: vec![false; n],
            generation: 0,
            draining: false,
        }
    }

    /// Where the hosts are at `t` (computed afresh: the routes' positions are not touched).
    pub(super) fn positions(&mut self, t: Time) -> Vec<Point> {
        self.mobility.positions(t)
    }

    /// The positions routing computed last, and their instant.
    pub(super) fn routed_positions(&self) -> Option<(Time, &[Point])> {
        self.routes.positions()
    }

    /// Whether host `h` has not failed.
    pub(super) fn is_up(&self, h: NodeId) -> bool {
        self.up[h.index()]
    }

    /// Whether host `h` disconnected on purpose.
    pub(super) fn is_away(&self, h: NodeId) -> bool {
        self.away[h.index()]
    }

    /// Whether messages can reach host `h` (or leave it).
    pub(super) fn reachable(&self, h: NodeId) -> bool {
        self.is_up(h) && !self.is_away(h)
    }

    /// Host `h` fails (`false`) or recovers.
    pub(super) fn set_up(&mut self, h: NodeId, up: bool) {
        self.up[h.index()] = up;
        self.generation += 1;
    }

    /// Host `h` disconnects on purpose (`true`) or comes back.
    pub(super) fn set_away(&mut self, h: NodeId, away: bool) {
        self.away[h.index()] = away;
        self.generation += 1;
    }

    /// The drain begins: no more loss, and partitions of a replayed trace heal.
    pub(super) fn drain(&mut self) {
        self.draining = true;
        self.loss = 0.0;
    }

    /// Hops from `from` to `to` now, through live hosts.
    fn hops(&mut self, now: Time, from: NodeId, to: NodeId) -> Option<u32> {
        // Positions at most once per instant (so the waypoint model draws exactly as when
        // they were computed per message), routes per source and instant.
        let (up, away, mobility) = (&self.up, &self.away, &mut self.mobility);
        let hops = self.routes.hops(
            now,
            || mobility.positions(now),
            self.radius,
            self.generation,
            |i| up[i] && !away[i],
            from.index(),
            to.index(),
        );
        // A replayed trace ends, and a partition it ends in would last for ever: the drain
        // reaches such hosts in one hop.
        let healed = self.draining && matches!(self.mobility, Mobility::Trace(_));
        hops.or(healed.then_some(1))
    }
}

impl LinkModel for Network {
    fn transit(&mut self, from: NodeId, to: NodeId, now: Time, rng: &mut dyn RngCore) -> Transit {
        if to.index() >= self.up.len() || !self.reachable(from) {
            return Transit::Lost { hops: None };
        }
        let Some(hops) = self.hops(now, from, to) else {
            return match self.unreachable {
                Unreachable::Park { retry } => Transit::Parked {
                    retry: retry.max(1e-3),
                },
                Unreachable::Drop => Transit::Lost { hops: None },
            };
        };
        if rng.random::<f64>() < self.loss {
            return Transit::Lost { hops: Some(hops) };
        }
        Transit::Arrives {
            delay: f64::from(hops) * self.hop_delay,
            hops,
        }
    }
}
