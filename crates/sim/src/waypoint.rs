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

/// "No route" in a [`RouteCache`] tree.
const NO_ROUTE: u32 = u32::MAX;

/// Hop counts over the unit-disk graph of the hosts' positions at one instant, as
/// [`hop_counts`] computes them, but cached: the positions (and a uniform grid of them) once per
/// distinct instant, and per source a breadth-first search that runs only as far as the
/// destinations asked so far need, resumed by later queries, until the instant or the set of
/// live hosts changes.
///
/// The grid's cells are at least `radius` wide, so a host's neighbours lie in its own cell or
/// the eight around it, and a search step costs the hosts in nine cells instead of all `n`.
/// The distance test is the same expression as in [`hop_counts`], and breadth-first hop
/// counts do not depend on the order in which a host's neighbours are visited, so the counts
/// are the same.
#[derive(Debug, Clone, Default)]
pub struct RouteCache {
    /// The instant the positions are for.
    at: Option<Time>,
    /// The generation of the live set the trees are for.
    generation: u64,
    pos: Vec<Point>,
    grid: Grid,
    /// Per source, the index of its tree in `trees` (or `NO_ROUTE`).
    tree_of: Vec<u32>,
    /// The trees, reused across instants; the first `used` are current.
    trees: Vec<Tree>,
    used: usize,
}

/// A breadth-first search from one source, possibly not finished.
#[derive(Debug, Clone, Default)]
struct Tree {
    src: usize,
    dist: Vec<u32>,
    queue: Vec<u32>,
    head: usize,
}

/// Hosts bucketed by square cells of the territory (a counting sort by cell).
#[derive(Debug, Clone, Default)]
struct Grid {
    origin: Point,
    /// Cell side (`0` with a single cell).
    cell: f64,
    cols: usize,
    rows: usize,
    /// Each host's cell.
    cell_of: Vec<u32>,
    /// Hosts of cell `c` are `members[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    members: Vec<u32>,
}

impl Grid {
    fn build(&mut self, pos: &[Point], radius: f64) {
        let n = pos.len();
        let (mut lo, mut hi) = (
            (f64::INFINITY, f64::INFINITY),
            (f64::NEG_INFINITY, f64::NEG_INFINITY),
        );
        for p in pos {
            lo = (lo.0.min(p.0), lo.1.min(p.1));
            hi = (hi.0.max(p.0), hi.1.max(p.1));
        }
        // A margin over `radius` absorbs rounding in the cell arithmetic; a coarser grid (at
        // most about 4 cells per host) is just as correct, only slower per cell.
        let span = (hi.0 - lo.0).max(hi.1 - lo.1);
        let mut cell = radius * (1.0 + 1e-6);
        let most = 4.0 * n as f64 + 16.0;
        if (span / cell + 1.0).powi(2) > most {
            cell = span / (most.sqrt() - 1.0);
        }
        if n == 0 || !(cell.is_finite() && cell > 0.0 && span.is_finite()) {
            (self.cell, self.cols, self.rows) = (0.0, 1, 1);
        } else {
            self.cell = cell;
            self.cols = (span / cell) as usize + 1;
            self.rows = self.cols;
        }
        self.origin = lo;
        let cells = self.cols * self.rows;
        self.start.clear();
        self.start.resize(cells + 1, 0);
        self.cell_of.clear();
        for p in pos {
            let (cx, cy) = self.coords(*p);
            let c = (cy * self.cols + cx) as u32;
            self.cell_of.push(c);
            self.start[c as usize + 1] += 1;
        }
        for c in 0..cells {
            self.start[c + 1] += self.start[c];
        }
        self.members.clear();
        self.members.resize(n, 0);
        let mut fill: Vec<u32> = self.start[..cells].to_vec();
        for (h, &c) in self.cell_of.iter().enumerate() {
            self.members[fill[c as usize] as usize] = h as u32;
            fill[c as usize] += 1;
        }
    }

    fn coords(&self, p: Point) -> (usize, usize) {
        if self.cell == 0.0 {
            return (0, 0);
        }
        let f = |v: f64, o: f64, max: usize| (((v - o) / self.cell) as usize).min(max - 1);
        (
            f(p.0, self.origin.0, self.cols),
            f(p.1, self.origin.1, self.rows),
        )
    }
}

impl Tree {
    /// Search on until `dst`'s hop count is known or the search is done.
    fn reach(
        &mut self,
        dst: usize,
        pos: &[Point],
        grid: &Grid,
        r2: f64,
        live: &impl Fn(usize) -> bool,
    ) -> Option<u32> {
        while self.dist[dst] == NO_ROUTE && self.head < self.queue.len() {
            let u = self.queue[self.head] as usize;
            self.head += 1;
            let du = self.dist[u];
            let c = grid.cell_of[u] as usize;
            let (cx, cy) = (c % grid.cols, c / grid.cols);
            for y in cy.saturating_sub(1)..(cy + 2).min(grid.rows) {
                let row = y * grid.cols;
                let first = grid.start[row + cx.saturating_sub(1)] as usize;
                let last = grid.start[row + (cx + 2).min(grid.cols)] as usize;
                for &v in &grid.members[first..last] {
                    let v = v as usize;
                    if self.dist[v] == NO_ROUTE && live(v) {
                        let d2 = (pos[u].0 - pos[v].0).powi(2) + (pos[u].1 - pos[v].1).powi(2);
                        if d2 <= r2 {
                            self.dist[v] = du + 1;
                            self.queue.push(v as u32);
                        }
                    }
                }
            }
        }
        Some(self.dist[dst]).filter(|&d| d != NO_ROUTE)
    }
}

impl RouteCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The last positions computed, and the instant they are for.
    pub fn positions(&self) -> Option<(Time, &[Point])> {
        self.at.map(|t| (t, self.pos.as_slice()))
    }

    /// The hop count from `src` to `dst` at time `t` over the unit-disk graph with `radius`,
    /// routing only through hosts `h` with `live(h)` (`None` if there is no route or `src` is
    /// not live): `hop_counts(&positions(), radius, live, src)[dst]`.
    ///
    /// `positions` is called only when `t` differs from the previous query's time. `generation`
    /// must change whenever `live` may answer differently than at the previous query.
    #[allow(clippy::too_many_arguments)]
    pub fn hops(
        &mut self,
        t: Time,
        positions: impl FnOnce() -> Vec<Point>,
        radius: f64,
        generation: u64,
        live: impl Fn(usize) -> bool,
        src: usize,
        dst: usize,
    ) -> Option<u32> {
        if self.at != Some(t) {
            self.pos = positions();
            self.grid.build(&self.pos, radius);
            self.at = Some(t);
            self.clear_trees();
        } else if self.generation != generation {
            self.clear_trees();
        }
        self.generation = generation;
        let n = self.pos.len();
        if src >= n || dst >= n {
            return None;
        }
        if self.tree_of.len() != n {
            self.tree_of = vec![NO_ROUTE; n];
        }
        if self.tree_of[src] == NO_ROUTE {
            if self.used == self.trees.len() {
                self.trees.push(Tree::default());
            }
            let tree = &mut self.trees[self.used];
            tree.src = src;
            tree.dist.clear();
            tree.dist.resize(n, NO_ROUTE);
            tree.queue.clear();
            tree.head = 0;
            if live(src) {
                tree.dist[src] = 0;
                tree.queue.push(src as u32);
            }
            self.tree_of[src] = self.used as u32;
            self.used += 1;
        }
        let tree = &mut self.trees[self.tree_of[src] as usize];
        tree.reach(dst, &self.pos, &self.grid, radius * radius, &live)
    }

    fn clear_trees(&mut self) {
        for tree in &self.trees[..self.used] {
            if let Some(slot) = self.tree_of.get_mut(tree.src) {
                *slot = NO_ROUTE;
            }
        }
        self.used = 0;
    }
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

    #[test]
    fn the_route_cache_agrees_with_hop_counts() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for round in 0..40 {
            let n = 1 + round * 7;
            let side = 100.0 + 50.0 * f64::from(round as u32);
            let radius = if round % 5 == 0 { 1e9 } else { 60.0 };
            let mut cache = RouteCache::new();
            for step in 0..4 {
                let pos: Vec<Point> = (0..n).map(|_| random_point(&mut rng, side)).collect();
                let live: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < 0.9).collect();
                for src in 0..n {
                    let want = hop_counts(&pos, radius, &live, src);
                    for dst in (0..n).rev() {
                        let got = cache.hops(
                            step as f64,
                            || pos.clone(),
                            radius,
                            step,
                            |h| live[h],
                            src,
                            dst,
                        );
                        assert_eq!(got, want[dst], "n {n} step {step} {src} -> {dst}");
                    }
                }
            }
        }
    }
}
