//! Undirected graphs for the neighbour-link network: generation, connectivity and the KRL
//! paper's mobility step.

use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;

use manet_mutex::NodeId;

/// How the mobility step picks the link that fails: uniformly among the links that may go,
/// either way; they differ in the random draws and the cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LinkPick {
    /// All edges in a uniformly shuffled order, the first that may go: the draws of the KRL
    /// paper's model, from which the README's mobility results come. Linear in the edges per
    /// pick (a draw per edge), and the edge list keeps its insertion order (a removal moves
    /// the edges after it).
    #[default]
    Shuffled,
    /// Uniformly random edges, drawn until one may go: expected constant time when most links
    /// may go, as in a large network. After [`LinkPick::SAMPLED_TRIES`] draws that all fail
    /// it falls back to [`LinkPick::Shuffled`], so it finds a link whenever one exists. A
    /// removed edge's place goes to the last edge, so the edge order is not the insertion
    /// order and the runs differ from `Shuffled`'s.
    Sampled,
}

impl LinkPick {
    /// Draws [`LinkPick::Sampled`] makes before it falls back to a shuffle.
    pub const SAMPLED_TRIES: usize = 64;
}

/// An undirected simple graph on nodes `0..n`, as sorted adjacency lists (memory and
/// neighbour queries linear in the edges, not in `n²`) plus an edge list in insertion order
/// for uniform sampling.
///
/// Once [`Graph::track_connectivity`] has run, whether the graph is connected is known and
/// kept up to date locally: adding an edge keeps a connected graph connected, and removing
/// `a`–`b` from a connected graph keeps it connected exactly when `a` and `b` are still linked
/// ([`Graph::linked_without`], a search of their neighbourhoods), so the mobility step does not
/// search the whole graph while it stays connected.
#[derive(Debug, Clone)]
pub struct Graph {
    n: usize,
    /// The neighbours of each node, ascending.
    adjacent: Vec<Vec<NodeId>>,
    edges: Vec<(NodeId, NodeId)>,
    /// Whether the graph is connected, if known.
    connected: Option<bool>,
}

impl PartialEq for Graph {
    /// The same nodes and edges, the edges in the same order (the cache does not count).
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n && self.adjacent == other.adjacent && self.edges == other.edges
    }
}

impl Eq for Graph {}

impl Graph {
    /// A graph with no edges.
    pub fn empty(n: usize) -> Self {
        Graph {
            n,
            adjacent: vec![Vec::new(); n],
            edges: Vec::new(),
            connected: None,
        }
    }

    /// A graph with the given edges (duplicates and self-loops ignored; ids must be `< n`).
    pub fn from_edges(n: usize, edges: &[(NodeId, NodeId)]) -> Self {
        let mut g = Graph::empty(n);
        for &(a, b) in edges {
            g.add(a, b);
        }
        g
    }

    /// A uniformly random spanning tree plus random extra edges up to `m` edges in all
    /// (clamped to `n - 1 ..= n (n - 1) / 2`): connected by construction.
    pub fn random_connected(n: usize, m: usize, rng: &mut impl Rng) -> Self {
        let mut g = Graph::empty(n);
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        for i in 1..n {
            let parent = order[rng.random_range(0..i)];
            g.add(NodeId(order[i]), NodeId(parent));
        }
        let target = m.clamp(n.saturating_sub(1), n * n.saturating_sub(1) / 2);
        while g.edges.len() < target {
            let a = rng.random_range(0..n as u32);
            let b = rng.random_range(0..n as u32);
            g.add(NodeId(a), NodeId(b));
        }
        g
    }

    /// A random geometric graph, the unit-disk model of a MANET: `n` nodes placed uniformly
    /// at random in the unit square, each linked to every node within a radius chosen so
    /// that the expected degree is `degree` (the square's edges counted), then made connected
    /// by linking each component other than the largest to the node nearest to it outside
    /// it, until one is left. Deterministic per `rng` state.
    ///
    /// Nodes are numbered along a Hilbert curve through a grid of cells at least the radius
    /// wide (in a cell, in the order they were placed), so a node's neighbours, all in its
    /// own cell or the eight around it, mostly have ids close to its own: a simulator's
    /// per-node state for a neighbourhood then lies close together in memory. (No numbering
    /// does that for a sparse random graph, whose neighbours are spread over the whole
    /// network.)
    pub fn random_geometric(n: usize, degree: f64, rng: &mut impl Rng) -> Self {
        let points: Vec<(f64, f64)> = (0..n)
            .map(|_| (rng.random::<f64>(), rng.random::<f64>()))
            .collect();
        let radius = geometric_radius(n, degree);
        // Cells at least `radius` wide, `side` of them along each side of the square.
        let side = ((1.0 / radius).floor() as usize).clamp(1, 1 << 15);
        let cell = |(x, y): (f64, f64)| {
            let c = |v: f64| ((v * side as f64) as usize).min(side - 1);
            (c(x), c(y))
        };
        let order = side.next_power_of_two();
        let mut by_curve: Vec<(u64, usize)> = points
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let (cx, cy) = cell(p);
                (hilbert_index(order, cx, cy), i)
            })
            .collect();
        by_curve.sort_unstable();
        let points: Vec<(f64, f64)> = by_curve.iter().map(|&(_, i)| points[i]).collect();
        // The nodes of each cell, now a run of consecutive ids.
        let mut cells: Vec<Vec<u32>> = vec![Vec::new(); side * side];
        for (i, &p) in points.iter().enumerate() {
            let (cx, cy) = cell(p);
            cells[cy * side + cx].push(i as u32);
        }
        let mut g = Graph::empty(n);
        for (a, &p) in points.iter().enumerate() {
            let (cx, cy) = cell(p);
            for y in cy.saturating_sub(1)..=(cy + 1).min(side - 1) {
                for x in cx.saturating_sub(1)..=(cx + 1).min(side - 1) {
                    for &b in &cells[y * side + x] {
                        if (b as usize) > a && distance2(p, points[b as usize]) <= radius * radius {
                            g.add(NodeId(a as u32), NodeId(b));
                        }
                    }
                }
            }
        }
        loop {
            let component = g.components();
            let count = component.iter().max().map_or(0, |&c| c + 1);
            if count <= 1 {
                return g;
            }
            let mut size = vec![0usize; count];
            for &c in &component {
                size[c] += 1;
            }
            let largest = (0..count)
                .max_by_key(|&c| (size[c], usize::MAX - c))
                .unwrap_or(0);
            for c in (0..count).filter(|&c| c != largest) {
                // The closest pair between this component and the rest (in its state before
                // this round's links).
                let mut nearest: Option<(f64, usize, usize)> = None;
                for a in (0..n).filter(|&a| component[a] == c) {
                    for b in (0..n).filter(|&b| component[b] != c) {
                        let d = distance2(points[a], points[b]);
                        if nearest.is_none_or(|(best, _, _)| d < best) {
                            nearest = Some((d, a, b));
                        }
                    }
                }
                if let Some((_, a, b)) = nearest {
                    g.add(NodeId(a as u32), NodeId(b as u32));
                }
            }
        }
    }

    /// Each node's connected component, numbered from 0 in order of their smallest node.
    fn components(&self) -> Vec<usize> {
        let mut component = vec![usize::MAX; self.n];
        let mut count = 0;
        let mut stack = Vec::new();
        for start in 0..self.n {
            if component[start] != usize::MAX {
                continue;
            }
            component[start] = count;
            stack.push(NodeId(start as u32));
            while let Some(u) = stack.pop() {
                for v in self.neighbors(u) {
                    if component[v.index()] == usize::MAX {
                        component[v.index()] = count;
                        stack.push(v);
                    }
                }
            }
            count += 1;
        }
        component
    }

    /// Number of nodes.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The edges, each once, in insertion order.
    pub fn edges(&self) -> &[(NodeId, NodeId)] {
        &self.edges
    }

    /// Whether `a` and `b` are linked (a binary search of `a`'s adjacency list: the lists are
    /// symmetric, and the simulator asks about a sender, whose list is already in cache).
    pub fn has(&self, a: NodeId, b: NodeId) -> bool {
        b.index() < self.n
            && self
                .adjacent
                .get(a.index())
                .is_some_and(|la| la.binary_search(&b).is_ok())
    }

    /// Link `a` and `b`. Returns whether the edge is new.
    pub fn add(&mut self, a: NodeId, b: NodeId) -> bool {
        if a == b || a.index() >= self.n || b.index() >= self.n {
            return false;
        }
        let Err(i) = self.adjacent[a.index()].binary_search(&b) else {
            return false;
        };
        self.adjacent[a.index()].insert(i, b);
        let list = &mut self.adjacent[b.index()];
        let j = list.binary_search(&a).unwrap_or_else(|j| j);
        list.insert(j, a);
        self.edges.push((a, b));
        if self.connected == Some(false) {
            // It may have joined two components.
            self.connected = None;
        }
        true
    }

    /// Unlink `a` and `b`. Returns whether the edge existed. Linear in the number of edges:
    /// the edge list keeps its insertion order, which fixes what the random picks return.
    pub fn remove(&mut self, a: NodeId, b: NodeId) -> bool {
        match self
            .edges
            .iter()
            .position(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
        {
            Some(i) => {
                self.remove_edge(i, LinkPick::Shuffled);
                true
            }
            None => false,
        }
    }

    /// Remove the edge at position `i` of [`Graph::edges`] and return it. For
    /// [`LinkPick::Shuffled`] the edge list keeps its insertion order (linear in the edges:
    /// the order fixes what that pick draws); for [`LinkPick::Sampled`] the last edge takes
    /// its place (constant time, plus the two adjacency lists). Panics if `i` is out of range.
    pub fn remove_edge(&mut self, i: usize, how: LinkPick) -> (NodeId, NodeId) {
        let (a, b) = match how {
            LinkPick::Shuffled => self.edges.remove(i),
            LinkPick::Sampled => self.edges.swap_remove(i),
        };
        for (x, y) in [(a, b), (b, a)] {
            let list = &mut self.adjacent[x.index()];
            if let Ok(j) = list.binary_search(&y) {
                list.remove(j);
            }
        }
        if self.connected == Some(true) {
            self.connected = Some(self.linked_without(a, b));
        }
        (a, b)
    }

    /// The neighbours of `a`, ascending.
    pub fn neighbors(&self, a: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.adjacent
            .get(a.index())
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
    }

    /// How many neighbours `a` has.
    pub fn degree(&self, a: NodeId) -> usize {
        self.adjacent.get(a.index()).map_or(0, Vec::len)
    }

    /// Whether every node can reach every other, ignoring the edge `skip` if given.
    pub fn is_connected_without(&self, skip: Option<(NodeId, NodeId)>) -> bool {
        if self.n == 0 {
            return true;
        }
        let skipped =
            |a: NodeId, b: NodeId| skip.is_some_and(|(x, y)| (a, b) == (x, y) || (a, b) == (y, x));
        let mut seen = vec![false; self.n];
        let mut stack = vec![NodeId(0)];
        seen[0] = true;
        while let Some(u) = stack.pop() {
            for v in self.neighbors(u) {
                if !seen[v.index()] && !skipped(u, v) {
                    seen[v.index()] = true;
                    stack.push(v);
                }
            }
        }
        seen.into_iter().all(|s| s)
    }

    /// Whether the graph is connected (known without a search after
    /// [`Graph::track_connectivity`], until an edge joins two components).
    pub fn is_connected(&self) -> bool {
        self.connected
            .unwrap_or_else(|| self.is_connected_without(None))
    }

    /// Find out whether the graph is connected, and from now on keep that up to date as edges
    /// come and go (see [`Graph`]).
    pub fn track_connectivity(&mut self) {
        self.connected = Some(self.is_connected_without(None));
    }

    /// The nodes reachable from `from`, as a membership vector.
    fn reachable(&self, from: NodeId) -> Vec<bool> {
        let mut seen = vec![false; self.n];
        let mut stack = vec![from];
        seen[from.index()] = true;
        while let Some(u) = stack.pop() {
            for v in self.neighbors(u) {
                if !seen[v.index()] {
                    seen[v.index()] = true;
                    stack.push(v);
                }
            }
        }
        seen
    }

    /// A random new link joining the component of node 0 to another component, or `None` if
    /// the graph is connected.
    pub fn pick_bridge_to_join(&self, rng: &mut impl Rng) -> Option<(NodeId, NodeId)> {
        if self.n == 0 {
            return None;
        }
        let seen = self.reachable(NodeId(0));
        let inside: Vec<u32> = (0..self.n as u32).filter(|&i| seen[i as usize]).collect();
        let outside: Vec<u32> = (0..self.n as u32).filter(|&i| !seen[i as usize]).collect();
        let a = *inside.choose(rng)?;
        let b = *outside.choose(rng)?;
        Some((NodeId(a.min(b)), NodeId(a.max(b))))
    }

    /// Fraction of the possible links present.
    pub fn connectivity(&self) -> f64 {
        let possible = self.n * self.n.saturating_sub(1) / 2;
        if possible == 0 {
            0.0
        } else {
            self.edges.len() as f64 / possible as f64
        }
    }

    /// The position in [`Graph::edges`] of a random edge for which `removable` holds (e.g.
    /// nothing in flight on it) and, if `keep_connected`, whose removal keeps the graph
    /// connected; `None` if there is none. Either way the pick is uniform over the edges that
    /// may go; `how` decides the random draws (see [`LinkPick`]).
    ///
    /// Whether removing `(a, b)` keeps the graph connected is decided without a search of the
    /// whole graph: the graph minus `(a, b)` is connected exactly when the graph is connected
    /// (checked once) and `b` can still reach `a` (a search from both ends that stops when
    /// they meet, so it visits only the neighbourhoods of `a` and `b` when they lie on a short
    /// cycle).
    pub fn pick_removable(
        &self,
        how: LinkPick,
        rng: &mut impl Rng,
        keep_connected: bool,
        mut removable: impl FnMut(NodeId, NodeId) -> bool,
    ) -> Option<usize> {
        let mut connected = None;
        let mut may_go = |i: usize| {
            let (a, b) = self.edges[i];
            removable(a, b)
                && (!keep_connected
                    || (*connected.get_or_insert_with(|| self.is_connected())
                        && self.linked_without(a, b)))
        };
        if how == LinkPick::Sampled && !self.edges.is_empty() {
            for _ in 0..LinkPick::SAMPLED_TRIES {
                let i = rng.random_range(0..self.edges.len());
                if may_go(i) {
                    return Some(i);
                }
            }
        }
        // A shuffle of the positions draws what a shuffle of the edges would (the draws
        // depend only on the length), so the paper's picks are unchanged.
        let mut order: Vec<u32> = (0..self.edges.len() as u32).collect();
        order.shuffle(rng);
        order.into_iter().map(|i| i as usize).find(|&i| may_go(i))
    }

    /// Whether `a` and `b` are joined by a path that does not use the edge `a`–`b`: two
    /// breadth-first searches, one from each end, growing the smaller frontier a level at a
    /// time until they meet or one runs out.
    pub fn linked_without(&self, a: NodeId, b: NodeId) -> bool {
        use std::collections::HashSet;
        if a == b {
            return true;
        }
        let skipped = |u: NodeId, v: NodeId| (u, v) == (a, b) || (u, v) == (b, a);
        let mut seen = [HashSet::from([a]), HashSet::from([b])];
        let mut frontier = [vec![a], vec![b]];
        let mut next = Vec::new();
        loop {
            let side = usize::from(frontier[1].len() < frontier[0].len());
            if frontier[side].is_empty() {
                return false;
            }
            next.clear();
            for &u in &frontier[side] {
                for v in self.neighbors(u) {
                    if skipped(u, v) || !seen[side].insert(v) {
                        continue;
                    }
                    if seen[1 - side].contains(&v) {
                        return true;
                    }
                    next.push(v);
                }
            }
            std::mem::swap(&mut frontier[side], &mut next);
        }
    }

    /// A random pair of distinct, unlinked nodes.
    pub fn pick_absent(&self, rng: &mut impl Rng) -> Option<(NodeId, NodeId)> {
        let possible = self.n * self.n.saturating_sub(1) / 2;
        if self.edges.len() >= possible {
            return None;
        }
        loop {
            let a = NodeId(rng.random_range(0..self.n as u32));
            let b = NodeId(rng.random_range(0..self.n as u32));
            if a != b && !self.has(a, b) {
                return Some((a.min(b), a.max(b)));
            }
        }
    }
}

/// The squared distance between two points.
fn distance2(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    dx * dx + dy * dy
}

/// The radius at which `n` nodes uniform in the unit square have `degree` neighbours each on
/// average: the probability that two such nodes are within `r` is
/// `π r² − 8 r³ / 3 + r⁴ / 2` (for `r ≤ 1`, the square's edges counted), solved for
/// `degree / (n − 1)` by bisection.
fn geometric_radius(n: usize, degree: f64) -> f64 {
    let target = (degree / n.saturating_sub(1).max(1) as f64).clamp(0.0, 1.0);
    let linked = |r: f64| std::f64::consts::PI * r * r - 8.0 * r * r * r / 3.0 + r.powi(4) / 2.0;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if linked(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi.max(f64::MIN_POSITIVE)
}

/// The position of cell `(x, y)` along the Hilbert curve through an `order × order` grid
/// (`order` a power of two).
fn hilbert_index(order: usize, mut x: usize, mut y: usize) -> u64 {
    let mut d = 0u64;
    let mut s = order / 2;
    while s > 0 {
        let rx = usize::from(x & s > 0);
        let ry = usize::from(y & s > 0);
        d += (s * s) as u64 * ((3 * rx) ^ ry) as u64;
        // Rotate the quadrant so the curve inside it runs the right way.
        if ry == 0 {
            if rx == 1 {
                x = s - 1 - (x & (s - 1));
                y = s - 1 - (y & (s - 1));
            }
            std::mem::swap(&mut x, &mut y);
        }
        x &= s - 1;
        y &= s - 1;
        s /= 2;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn random_graphs_are_connected_with_the_requested_edge_count() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for (n, m) in [(2, 1), (5, 4), (30, 87), (30, 348), (6, 100)] {
            let g = Graph::random_connected(n, m, &mut rng);
            assert!(g.is_connected());
            assert_eq!(g.edges().len(), m.min(n * (n - 1) / 2));
        }
    }

    #[test]
    fn geometric_graphs_are_connected_with_about_the_requested_degree() {
        for (n, seed) in [(1, 1), (2, 2), (50, 3), (2_000, 4), (20_000, 5)] {
            let g = Graph::random_geometric(n, 10.0, &mut ChaCha8Rng::seed_from_u64(seed));
            assert_eq!(g.n(), n);
            assert!(g.is_connected(), "n = {n}");
            if n >= 2_000 {
                let mean = 2.0 * g.edges().len() as f64 / n as f64;
                assert!((9.5..10.5).contains(&mean), "n = {n}: mean degree {mean}");
            }
        }
        // Deterministic per seed.
        let again = |seed| Graph::random_geometric(500, 10.0, &mut ChaCha8Rng::seed_from_u64(seed));
        assert_eq!(again(9), again(9));
        assert_ne!(again(9), again(10));
        // A sparse one has several components, joined.
        let sparse = Graph::random_geometric(300, 1.5, &mut ChaCha8Rng::seed_from_u64(6));
        assert!(sparse.is_connected());
    }

    #[test]
    fn geometric_neighbours_have_nearby_ids_random_ones_do_not() {
        let n = 20_000;
        let median_gap = |g: &Graph| {
            let mut gaps: Vec<u32> = g.edges().iter().map(|(a, b)| a.0.abs_diff(b.0)).collect();
            gaps.sort_unstable();
            gaps[gaps.len() / 2]
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let geometric = median_gap(&Graph::random_geometric(n, 10.0, &mut rng));
        let random = median_gap(&Graph::random_connected(n, 5 * n, &mut rng));
        // About a cell's worth of nodes (3 to 4 here) against about a third of the network.
        assert!(geometric < 100, "geometric: {geometric}");
        assert!(random > n as u32 / 5, "random: {random}");
    }

    #[test]
    fn the_hilbert_curve_visits_every_cell_once_moving_one_step_at_a_time() {
        for order in [1, 2, 4, 8, 32] {
            let mut at = vec![None; order * order];
            for x in 0..order {
                for y in 0..order {
                    let d = hilbert_index(order, x, y) as usize;
                    assert!(at[d].is_none(), "cell {d} twice");
                    at[d] = Some((x, y));
                }
            }
            let path: Vec<(usize, usize)> = at.into_iter().map(Option::unwrap).collect();
            for w in path.windows(2) {
                assert_eq!(
                    w[0].0.abs_diff(w[1].0) + w[0].1.abs_diff(w[1].1),
                    1,
                    "{w:?}"
                );
            }
        }
    }

    #[test]
    fn bridges_are_never_picked_for_removal() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // A path: every edge is a bridge.
        let path = Graph::from_edges(3, &[(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))]);
        for how in [LinkPick::Shuffled, LinkPick::Sampled] {
            assert_eq!(path.pick_removable(how, &mut rng, true, |_, _| true), None);
        }
        let i = path
            .pick_removable(LinkPick::Shuffled, &mut rng, false, |_, _| true)
            .unwrap();
        let mut split = path.clone();
        split.remove_edge(i, LinkPick::Shuffled);
        assert!(!split.is_connected());
        let (c, d) = split.pick_bridge_to_join(&mut rng).unwrap();
        split.add(c, d);
        assert!(split.is_connected());
        assert_eq!(split.pick_bridge_to_join(&mut rng), None);
        let mut tri = path.clone();
        tri.add(NodeId(0), NodeId(2));
        let i = tri
            .pick_removable(LinkPick::Sampled, &mut rng, true, |_, _| true)
            .unwrap();
        let (a, b) = tri.edges()[i];
        assert!(tri.remove(a, b));
        assert!(tri.is_connected());
        assert_eq!(tri.pick_absent(&mut rng), Some((a.min(b), a.max(b))));
    }

    /// Both picks find an edge exactly when one may go, and pick only such edges; the sampled
    /// pick is uniform over them (a triangle with a pendant edge: the pendant is a bridge,
    /// one triangle edge is busy, so two edges may go, each half the time).
    #[test]
    fn both_picks_choose_uniformly_among_the_edges_that_may_go() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for round in 0..200 {
            let n = 2 + round % 9;
            let g = Graph::random_connected(n, rng.random_range(n - 1..=n * (n - 1) / 2), &mut rng);
            let busy: Vec<bool> = (0..g.edges().len()).map(|_| rng.random_bool(0.5)).collect();
            let idle = |a: NodeId, b: NodeId| {
                let i = g.edges().iter().position(|&e| e == (a, b)).unwrap();
                !busy[i]
            };
            let may_go: Vec<usize> = (0..g.edges().len())
                .filter(|&i| {
                    let (a, b) = g.edges()[i];
                    idle(a, b) && g.is_connected_without(Some((a, b)))
                })
                .collect();
            for how in [LinkPick::Shuffled, LinkPick::Sampled] {
                match g.pick_removable(how, &mut rng, true, idle) {
                    Some(i) => assert!(may_go.contains(&i), "{how:?} picked {i} of {may_go:?}"),
                    None => assert!(may_go.is_empty(), "{how:?} found none of {may_go:?}"),
                }
            }
        }
        let (x, y, z, w) = (NodeId(0), NodeId(1), NodeId(2), NodeId(3));
        let g = Graph::from_edges(4, &[(x, y), (y, z), (x, z), (z, w)]);
        let mut counts = [0u32; 4];
        for _ in 0..4000 {
            let i = g
                .pick_removable(LinkPick::Sampled, &mut rng, true, |a, b| (a, b) != (y, z))
                .unwrap();
            counts[i] += 1;
        }
        assert_eq!((counts[1], counts[3]), (0, 0), "{counts:?}");
        // Binomial(4000, 1/2): standard deviation 31.6; 150 is beyond 4.7 of them.
        assert!(counts[0].abs_diff(2000) < 150, "{counts:?}");
    }

    #[test]
    fn removing_an_edge_by_position_keeps_the_lists_consistent() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for how in [LinkPick::Shuffled, LinkPick::Sampled] {
            let mut g = Graph::random_connected(12, 30, &mut rng);
            g.track_connectivity();
            while !g.edges().is_empty() {
                let i = rng.random_range(0..g.edges().len());
                let before = g.edges().to_vec();
                let (a, b) = g.remove_edge(i, how);
                assert_eq!(before[i], (a, b));
                assert!(!g.has(a, b) && !g.has(b, a));
                let mut left = before.clone();
                left.remove(i);
                let mut now = g.edges().to_vec();
                if how == LinkPick::Shuffled {
                    assert_eq!(now, left);
                }
                left.sort();
                now.sort();
                assert_eq!(now, left);
                let listed: usize = (0..12).map(|v| g.degree(NodeId(v))).sum();
                assert_eq!(listed, 2 * g.edges().len());
                assert_eq!(g.is_connected(), g.is_connected_without(None));
            }
        }
    }

    #[test]
    fn the_local_bridge_test_agrees_with_a_whole_graph_search() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for round in 0..60 {
            let n = 2 + round % 13;
            // Sparse random edges: connected or not, with and without bridges.
            let mut g = Graph::empty(n);
            for _ in 0..rng.random_range(0..2 * n) {
                let a = NodeId(rng.random_range(0..n as u32));
                let b = NodeId(rng.random_range(0..n as u32));
                g.add(a, b);
            }
            for &(a, b) in g.edges() {
                assert_eq!(
                    g.is_connected_without(Some((a, b))),
                    g.is_connected() && g.linked_without(a, b),
                    "{g:?} without {a:?}-{b:?}"
                );
                assert!(g.has(a, b) && g.has(b, a));
            }
            let listed: usize = (0..n as u32).map(|i| g.degree(NodeId(i))).sum();
            assert_eq!(listed, 2 * g.edges().len());
            // The tracked connectivity follows removals and additions.
            g.track_connectivity();
            for _ in 0..3 * n {
                let a = NodeId(rng.random_range(0..n as u32));
                let b = NodeId(rng.random_range(0..n as u32));
                if rng.random_bool(0.5) {
                    g.remove(a, b);
                } else {
                    g.add(a, b);
                }
                assert_eq!(g.is_connected(), g.is_connected_without(None), "{g:?}");
            }
        }
    }
}
