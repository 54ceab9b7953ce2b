//! Consistent initial configurations for a whole network.

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;

use super::Config;
use crate::height::Height;
use crate::{Error, NodeId};

/// Initial configurations for nodes `0..n` joined by the undirected `edges`, with one token at
/// each of `holders` (so `k = holders.len()`).
///
/// Heights are `(d, 0, id)` where `d` is the hop distance to the nearest holder: every node
/// that can reach a holder has a neighbour one hop closer, hence a downhill path to it, and
/// every holder with a non-holder neighbour has an incoming link. Nodes that cannot reach any
/// holder get `d = n` (they raise themselves once a link connects them).
pub fn build(
    n: usize,
    edges: &[(NodeId, NodeId)],
    holders: &[NodeId],
    forwarding: bool,
) -> Result<Vec<Config>, Error> {
    let invalid = |node, reason| Err(Error::InvalidConfig { node, reason });
    let k = holders.len() as u32;
    if k == 0 {
        return invalid(NodeId(0), "at least one token holder is needed");
    }
    let mut adjacency = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a.index() >= n || b.index() >= n {
            return invalid(a, "an edge names a node outside 0..n");
        }
        if a == b {
            return invalid(a, "self-loop edge");
        }
        if !adjacency[a.index()].contains(&b) {
            adjacency[a.index()].push(b);
            adjacency[b.index()].push(a);
        }
    }
    let mut dist = vec![usize::MAX; n];
    let mut frontier = VecDeque::new();
    for &holder in holders {
        if holder.index() >= n {
            return invalid(holder, "a token holder outside 0..n");
        }
        if dist[holder.index()] == 0 {
            return invalid(holder, "a node listed twice as token holder");
        }
        dist[holder.index()] = 0;
        frontier.push_back(holder);
    }
    while let Some(u) = frontier.pop_front() {
        for &v in &adjacency[u.index()] {
            if dist[v.index()] == usize::MAX {
                dist[v.index()] = dist[u.index()] + 1;
                frontier.push_back(v);
            }
        }
    }
    let height = |i: usize| {
        let d = if dist[i] == usize::MAX { n } else { dist[i] };
        Height::new(d as i64, 0, NodeId(i as u32))
    };
    (0..n)
        .map(|i| {
            let config = Config {
                id: NodeId(i as u32),
                k,
                tokens: u32::from(dist[i] == 0),
                height: height(i),
                neighbors: adjacency[i].iter().map(|v| height(v.index())).collect(),
                forwarding,
            };
            Ok(config)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(a: u32, b: u32) -> (NodeId, NodeId) {
        (NodeId(a), NodeId(b))
    }

    #[test]
    fn every_non_holder_has_a_lower_neighbour_and_holders_an_upper_one() {
        let edges = [e(0, 1), e(1, 2), e(2, 3), e(3, 4), e(4, 0), e(1, 3)];
        let configs = build(5, &edges, &[NodeId(0), NodeId(3)], false).unwrap();
        for c in &configs {
            assert_eq!(c.k, 2);
            if c.tokens == 0 {
                assert!(c.neighbors.iter().any(|h| *h < c.height), "{c:?}");
            } else {
                assert!(c.neighbors.iter().any(|h| *h > c.height), "{c:?}");
            }
        }
    }

    #[test]
    fn bad_networks_are_rejected() {
        assert!(build(3, &[e(0, 5)], &[NodeId(0)], false).is_err());
        assert!(build(3, &[e(1, 1)], &[NodeId(0)], false).is_err());
        assert!(build(3, &[e(0, 1)], &[], false).is_err());
        assert!(build(3, &[e(0, 1)], &[NodeId(0), NodeId(0)], false).is_err());
        assert!(build(3, &[e(0, 1)], &[NodeId(7)], false).is_err());
    }
}
