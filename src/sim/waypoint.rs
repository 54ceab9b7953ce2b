//! The random-waypoint mobility model of the look-ahead paper (Table 1), and the unit-disk
//! topology it induces.
//!
//! Each host repeatedly picks a uniform destination in a square territory, travels there in a
//! straight line at a constant speed, then pauses. Positions are computed exactly at any query
//! time, so the simulator only does work when a message is sent.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Time;

/// Mean distance between two uniform points of the unit square: the mean leg length of the
/// random-waypoint model divided by the side.
const MEAN_LEG_PER_SIDE: f64 = 0.521_405;

/// Parameters of the mobility model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WaypointConfig {
    /// Side of the square territory, in metres.
    pub side: f64,
    /// Speed while moving, in metres per second.
    pub speed: f64,
    /// Pause at each waypoint, in seconds.
    pub pause: f64,
    /// Transmission radius, in metres: two hosts closer than this share a link.
    pub radius: f64,
}

impl WaypointConfig {
    /// The paper's setting for `hosts` hosts: territory 313 m for 4 hosts up to 700 m for 20
    /// (constant density), 20 m/s, radius 200 m, and the pause that makes hosts move during
    /// `moving_fraction` (in `(0, 1]`) of the time on average.
    pub fn paper(hosts: u32, moving_fraction: f64) -> Self {
        let side = 700.0 * (f64::from(hosts.max(1)) / 20.0).sqrt();
        let speed = 20.0;
        let travel = MEAN_LEG_PER_SIDE * side / speed;
        let f = moving_fraction.clamp(1e-3, 1.0);
        WaypointConfig {
            side,
            speed,
            pause: travel * (1.0 - f) / f,
            radius: 200.0,
        }
    }
}

/// A point in the territory.
pub type Point = (f64, f64);

#[derive(Debug, Clone, Copy)]
struct Leg {
    from: Point,
    to: Point,
    depart: Time,
    arrive: Time,
    /// When the pause at `to` ends and the next leg departs.
    pause_until: Time,
}

impl Leg {
    fn at(&self, t: Time) -> Point {
        if t >= self.arrive || self.arrive <= self.depart {
            return self.to;
        }
        let f = ((t - self.depart) / (self.arrive - self.depart)).clamp(0.0, 1.0);
        (
            self.from.0 + f * (self.to.0 - self.from.0),
            self.from.1 + f * (self.to.1 - self.from.1),
        )
    }
}

/// The hosts' trajectories.
#[derive(Debug, Clone)]
pub struct Waypoint {
    cfg: WaypointConfig,
    legs: Vec<Leg>,
    rng: ChaCha8Rng,
}

impl Waypoint {
    /// `hosts` hosts at uniform random positions, each starting somewhere in its first pause so
    /// that the hosts do not move in lockstep.
    pub fn new(hosts: u32, cfg: WaypointConfig, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let legs = (0..hosts)
            .map(|_| {
                let p = random_point(&mut rng, cfg.side);
                let pause_until = rng.random::<f64>() * cfg.pause;
                Leg {
                    from: p,
                    to: p,
                    depart: 0.0,
                    arrive: 0.0,
                    pause_until,
                }
            })
            .collect();
        Waypoint { cfg, legs, rng }
    }

    /// The configuration.
    pub fn config(&self) -> WaypointConfig {
        self.cfg
    }

    /// Every host's position at time `t` (queries must not go back in time).
    pub fn positions(&mut self, t: Time) -> Vec<Point> {
        let cfg = self.cfg;
        for leg in &mut self.legs {
            while t > leg.pause_until {
                let from = leg.to;
                let to = random_point(&mut self.rng, cfg.side);
                let depart = leg.pause_until;
                let d = ((to.0 - from.0).powi(2) + (to.1 - from.1).powi(2)).sqrt();
                let arrive = depart + d / cfg.speed.max(1e-9);
                // A zero pause still advances time, by the travel of a non-empty leg; the
                // epsilon guards the degenerate `from == to` draw.
                let pause_until = arrive + cfg.pause.max(1e-6);
                *leg = Leg {
                    from,
                    to,
                    depart,
                    arrive,
                    pause_until,
                };
            }
        }
        self.legs.iter().map(|l| l.at(t)).collect()
    }
}

fn random_point(rng: &mut ChaCha8Rng, side: f64) -> Point {
    (rng.random::<f64>() * side, rng.random::<f64>() * side)
}

/// Hop counts from `src` to every host over the unit-disk graph of `pos` with `radius`,
/// routing only through hosts with `up[h]`; `None` for unreachable hosts (and for every host
/// if `src` is down).
pub fn hop_counts(pos: &[Point], radius: f64, up: &[bool], src: usize) -> Vec<Option<u32>> {
    let n = pos.len();
    let mut dist = vec![None; n];
    if !up.get(src).copied().unwrap_or(false) {
        return dist;
    }
    let r2 = radius * radius;
    dist[src] = Some(0);
    let mut queue = VecDeque::from([src]);
    while let Some(u) = queue.pop_front() {
        let du = dist[u].unwrap_or(0);
        for v in 0..n {
            if dist[v].is_none() && up[v] {
                let d2 = (pos[u].0 - pos[v].0).powi(2) + (pos[u].1 - pos[v].1).powi(2);
                if d2 <= r2 {
                    dist[v] = Some(du + 1);
                    queue.push_back(v);
                }
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_territories_match_table_1() {
        let sides: Vec<u32> = [4, 8, 12, 16, 20]
            .iter()
            .map(|&n| WaypointConfig::paper(n, 1.0).side.round() as u32)
            .collect();
        assert_eq!(sides, vec![313, 443, 542, 626, 700]);
        assert_eq!(WaypointConfig::paper(20, 1.0).pause, 0.0);
    }

    #[test]
    fn moving_fraction_is_roughly_respected() {
        let cfg = WaypointConfig::paper(8, 0.5);
        let mut w = Waypoint::new(8, cfg, 7);
        let (mut moving, mut samples) = (0u32, 0u32);
        let mut last = w.positions(0.0);
        for step in 1..20_000 {
            let now = w.positions(f64::from(step));
            for (a, b) in last.iter().zip(&now) {
                samples += 1;
                if a != b {
                    moving += 1;
                }
            }
            last = now;
        }
        let f = f64::from(moving) / f64::from(samples);
        assert!((0.4..0.6).contains(&f), "moving fraction {f}");
    }

    #[test]
    fn hop_counts_follow_the_unit_disk_graph() {
        let pos = [(0.0, 0.0), (150.0, 0.0), (300.0, 0.0), (900.0, 0.0)];
        let d = hop_counts(&pos, 200.0, &[true; 4], 0);
        assert_eq!(d, vec![Some(0), Some(1), Some(2), None]);
        let d = hop_counts(&pos, 200.0, &[true, false, true, true], 0);
        assert_eq!(d, vec![Some(0), None, None, None]);
    }
}
