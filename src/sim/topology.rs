//! Undirected graphs for the neighbour-link network: generation, connectivity and the KRL
//! paper's mobility step.

use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;

use crate::NodeId;

/// An undirected simple graph on nodes `0..n`, as an adjacency matrix (the simulated networks
/// are small) plus an edge list for uniform sampling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    n: usize,
    adjacent: Vec<bool>,
    edges: Vec<(NodeId, NodeId)>,
}

impl Graph {
    /// A graph with no edges.
    pub fn empty(n: usize) -> Self {
        Graph {
            n,
            adjacent: vec![false; n * n],
            edges: Vec::new(),
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

    /// Number of nodes.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The edges, each once, in insertion order.
    pub fn edges(&self) -> &[(NodeId, NodeId)] {
        &self.edges
    }

    /// Whether `a` and `b` are linked.
    pub fn has(&self, a: NodeId, b: NodeId) -> bool {
        a.index() < self.n && b.index() < self.n && self.adjacent[a.index() * self.n + b.index()]
    }

    /// Link `a` and `b`. Returns whether the edge is new.
    pub fn add(&mut self, a: NodeId, b: NodeId) -> bool {
        if a == b || self.has(a, b) || a.index() >= self.n || b.index() >= self.n {
            return false;
        }
        self.set(a, b, true);
        self.edges.push((a, b));
        true
    }

    /// Unlink `a` and `b`. Returns whether the edge existed.
    pub fn remove(&mut self, a: NodeId, b: NodeId) -> bool {
        if !self.has(a, b) {
            return false;
        }
        self.set(a, b, false);
        self.edges
            .retain(|&(x, y)| !((x, y) == (a, b) || (x, y) == (b, a)));
        true
    }

    fn set(&mut self, a: NodeId, b: NodeId, on: bool) {
        self.adjacent[a.index() * self.n + b.index()] = on;
        self.adjacent[b.index() * self.n + a.index()] = on;
    }

    /// The neighbours of `a`, ascending.
    pub fn neighbors(&self, a: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.n as u32)
            .map(NodeId)
            .filter(move |&b| self.has(a, b))
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

    /// Whether the graph is connected.
    pub fn is_connected(&self) -> bool {
        self.is_connected_without(None)
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

    /// A random edge for which `removable` holds (e.g. nothing in flight on it) and, if
    /// `keep_connected`, whose removal keeps the graph connected.
    pub fn pick_removable(
        &self,
        rng: &mut impl Rng,
        keep_connected: bool,
        mut removable: impl FnMut(NodeId, NodeId) -> bool,
    ) -> Option<(NodeId, NodeId)> {
        let mut candidates = self.edges.clone();
        candidates.shuffle(rng);
        candidates.into_iter().find(|&(a, b)| {
            removable(a, b) && (!keep_connected || self.is_connected_without(Some((a, b))))
        })
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
    fn bridges_are_never_picked_for_removal() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // A path: every edge is a bridge.
        let path = Graph::from_edges(3, &[(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))]);
        assert_eq!(path.pick_removable(&mut rng, true, |_, _| true), None);
        let (a, b) = path.pick_removable(&mut rng, false, |_, _| true).unwrap();
        let mut split = path.clone();
        split.remove(a, b);
        assert!(!split.is_connected());
        let (c, d) = split.pick_bridge_to_join(&mut rng).unwrap();
        split.add(c, d);
        assert!(split.is_connected());
        assert_eq!(split.pick_bridge_to_join(&mut rng), None);
        let mut tri = path.clone();
        tri.add(NodeId(0), NodeId(2));
        let (a, b) = tri.pick_removable(&mut rng, true, |_, _| true).unwrap();
        assert!(tri.remove(a, b));
        assert!(tri.is_connected());
        assert_eq!(tri.pick_absent(&mut rng), Some((a.min(b), a.max(b))));
    }
}
