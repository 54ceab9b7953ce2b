//! The initial heights of a token network, shared by both token algorithms' `network`.

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;

use super::Height;
use crate::{Error, NodeId};

/// One node's place in the initial layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    /// The node's height.
    pub(crate) height: Height,
    /// Its neighbours' heights.
    pub(crate) neighbors: Vec<Height>,
    /// Whether it holds a token.
    pub(crate) holder: bool,
}

/// Heights for nodes `0..n` joined by the undirected `edges`, with one token at each of
/// `holders`.
///
/// Heights are `(d, 0, id)` where `d` is the hop distance to the nearest holder: every node
/// that can reach a holder has a neighbour one hop closer, hence a downhill path to it. A
/// component without a holder is refused (its nodes could only wait, and a node without a
/// token and without a lower neighbour is refused by both algorithms), but an isolated node
/// without a token is accepted with `d = n`: it waits for a link. A holder whose nearest
/// non-holder is `e` hops away (through holders) gets `(0, 1 - e, id)`, so every holder has a
/// higher neighbour, as the KRL paper requires.
///
/// A connected group of two or more nodes that all hold tokens is refused: its highest holder
/// cannot have a higher neighbour, and such holders lower below each other forever.
pub(crate) fn layout(
    n: u32,
    edges: &[(NodeId, NodeId)],
    holders: &[NodeId],
) -> Result<Vec<Site>, Error> {
    let n = n as usize;
    let invalid = |node, reason| Err(Error::InvalidConfig { node, reason });
    if holders.is_empty() {
        return Err(Error::InvalidNetwork {
            reason: "at least one token holder is needed",
        });
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
    if let Some(i) = (0..n).find(|&i| dist[i] == usize::MAX && !adjacency[i].is_empty()) {
        return invalid(
            NodeId(i as u32),
            "a component without a token holder: its nodes could only wait",
        );
    }
    // The paper requires every holder to start with a higher neighbour, or holders that see
    // only lower neighbours lower themselves below each other forever. A holder `e` steps
    // (through holders) from the nearest non-holder sits `e - 1` below in `h2`: it then has a
    // higher neighbour, either that non-holder (`h1 >= 1`) or a holder one step closer.
    let mut to_free = vec![usize::MAX; n];
    for i in (0..n).filter(|&i| dist[i] != 0) {
        to_free[i] = 0;
        frontier.push_back(NodeId(i as u32));
    }
    while let Some(u) = frontier.pop_front() {
        for &v in &adjacency[u.index()] {
            if to_free[v.index()] == usize::MAX {
                to_free[v.index()] = to_free[u.index()] + 1;
                frontier.push_back(v);
            }
        }
    }
    if let Some(i) = (0..n).find(|&i| to_free[i] == usize::MAX && !adjacency[i].is_empty()) {
        return invalid(
            NodeId(i as u32),
            "every node of this component holds a token: its highest holder can have no higher neighbour",
        );
    }
    let height = |i: usize| {
        let d = if dist[i] == usize::MAX { n } else { dist[i] };
        let below = if d == 0 {
            to_free[i].saturating_sub(1)
        } else {
            0
        };
        Height::new(d as i64, -(below as i64), NodeId(i as u32))
    };
    Ok((0..n)
        .map(|i| Site {
            height: height(i),
            neighbors: adjacency[i].iter().map(|v| height(v.index())).collect(),
            holder: dist[i] == 0,
        })
        .collect())
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
        let sites = layout(5, &edges, &[NodeId(0), NodeId(3)]).unwrap();
        assert_eq!(sites.iter().filter(|s| s.holder).count(), 2);
        for s in &sites {
            if s.holder {
                assert!(s.neighbors.iter().any(|h| *h > s.height), "{s:?}");
            } else {
                assert!(s.neighbors.iter().any(|h| *h < s.height), "{s:?}");
            }
        }
    }

    /// The paper's precondition: every holder starts with a higher neighbour. A holder whose
    /// neighbours all hold tokens must sit below one of them that has a higher neighbour.
    #[test]
    fn every_holder_gets_a_higher_neighbour() {
        // Line 0-1-2 with tokens at 1 and 2: node 2 sees only node 1.
        let sites = layout(3, &[e(0, 1), e(1, 2)], &[NodeId(1), NodeId(2)]).unwrap();
        for s in sites.iter().filter(|s| s.holder) {
            assert!(s.neighbors.iter().any(|h| *h > s.height), "{s:?}");
        }
    }

    /// Found by `tests/models/reverse_link.rs` (see `docs/ALGORITHMS.md`, V1): when every node
    /// of a component holds a token, the highest one has no higher neighbour, and holders in
    /// that state lower themselves below each other forever.
    #[test]
    fn a_component_where_every_node_holds_a_token_is_rejected() {
        assert!(layout(2, &[e(0, 1)], &[NodeId(0), NodeId(1)]).is_err());
        // A node that is alone with its token has no neighbour to lower below: accepted.
        assert!(layout(3, &[e(1, 2)], &[NodeId(0), NodeId(1)]).is_ok());
    }

    #[test]
    fn bad_networks_are_rejected() {
        assert!(layout(3, &[e(0, 5)], &[NodeId(0)]).is_err());
        assert!(layout(3, &[e(1, 1)], &[NodeId(0)]).is_err());
        assert!(layout(3, &[e(0, 1)], &[]).is_err());
        assert!(layout(3, &[e(0, 1)], &[NodeId(0), NodeId(0)]).is_err());
        assert!(layout(3, &[e(0, 1)], &[NodeId(7)]).is_err());
    }

    #[test]
    fn a_component_without_a_holder_is_refused_and_an_isolated_node_accepted() {
        // 2–3 cannot reach the token at 0: they could only wait.
        let refused = layout(4, &[e(0, 1), e(2, 3)], &[NodeId(0)]);
        assert!(matches!(refused, Err(Error::InvalidConfig { node, .. }) if node == NodeId(2)));
        // Node 2 alone waits for a link.
        let sites = layout(3, &[e(0, 1)], &[NodeId(0)]).unwrap();
        assert!(sites[2].neighbors.is_empty() && !sites[2].holder);
    }
}
