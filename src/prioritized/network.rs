//! Consistent initial configurations for a whole network.

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;

use crate::height::Height;
use crate::{Error, NodeId};

use super::policy::{Config, Settings};

/// Initial configurations for nodes `0..n` on the undirected graph `edges`, with the token
/// (and `t = k`) at `holder`.
///
/// Heights are `(0, d, id)` with `d` the hop distance to `holder`, so every other node has a
/// lower neighbour one hop closer: the DAG is token oriented. Errors (`InvalidConfig`, naming
/// the holder or the offending node) for an out-of-range node, a self-loop, a disconnected
/// graph, or invalid settings.
pub fn build_network(
    n: u32,
    edges: &[(NodeId, NodeId)],
    holder: NodeId,
    settings: Settings,
) -> Result<Vec<Config>, Error> {
    let fail = |node, reason| Err(Error::InvalidConfig { node, reason });
    if holder.0 >= n {
        return fail(holder, "token holder is not one of the n nodes");
    }
    let mut adj: Vec<Vec<NodeId>> = vec![Vec::new(); n as usize];
    for &(a, b) in edges {
        if a.0 >= n || b.0 >= n {
            return fail(
                if a.0 >= n { a } else { b },
                "edge names a node outside 0..n",
            );
        }
        if a == b {
            return fail(a, "self-loop");
        }
        if !adj[a.index()].contains(&b) {
            adj[a.index()].push(b);
            adj[b.index()].push(a);
        }
    }
    let mut dist: Vec<Option<i64>> = vec![None; n as usize];
    dist[holder.index()] = Some(0);
    let mut frontier = VecDeque::from([holder]);
    while let Some(u) = frontier.pop_front() {
        let d = dist[u.index()].unwrap_or(0) + 1;
        for &v in &adj[u.index()] {
            if dist[v.index()].is_none() {
                dist[v.index()] = Some(d);
                frontier.push_back(v);
            }
        }
    }
    let Some(dist) = dist.into_iter().collect::<Option<Vec<i64>>>() else {
        return fail(holder, "graph is not connected");
    };
    let heights: Vec<Height> = (0..n)
        .zip(dist)
        .map(|(i, d)| Height::new(0, d, NodeId(i)))
        .collect();
    let configs: Vec<Config> = (0..n)
        .map(|i| Config {
            id: NodeId(i),
            settings,
            height: heights[i as usize],
            neighbors: adj[i as usize].iter().map(|v| heights[v.index()]).collect(),
            token_holder: NodeId(i) == holder,
        })
        .collect();
    for c in &configs {
        c.validate()?;
    }
    Ok(configs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prioritized::Policy;

    fn e(a: u32, b: u32) -> (NodeId, NodeId) {
        (NodeId(a), NodeId(b))
    }

    #[test]
    fn heights_point_every_node_towards_the_holder() {
        let s = Settings::new(3, Policy::Equal);
        let c = build_network(4, &[e(0, 1), e(1, 2), e(2, 3), e(3, 0)], NodeId(2), s).unwrap();
        assert!(c[2].token_holder && !c[0].token_holder);
        assert_eq!(c[2].height, Height::new(0, 0, NodeId(2)));
        assert_eq!(c[0].height, Height::new(0, 2, NodeId(0)));
        for cfg in &c {
            assert!(cfg.token_holder || cfg.neighbors.iter().any(|h| *h < cfg.height));
        }
    }

    #[test]
    fn rejects_bad_graphs_and_settings() {
        let s = Settings::new(2, Policy::Explicit);
        assert!(
            build_network(3, &[e(0, 1)], NodeId(0), s).is_err(),
            "disconnected"
        );
        assert!(
            build_network(2, &[e(0, 0), e(0, 1)], NodeId(0), s).is_err(),
            "self-loop"
        );
        assert!(
            build_network(2, &[e(0, 5)], NodeId(0), s).is_err(),
            "out of range"
        );
        assert!(
            build_network(2, &[e(0, 1)], NodeId(2), s).is_err(),
            "holder out of range"
        );
        let zero_k = Settings::new(0, Policy::Explicit);
        assert!(build_network(2, &[e(0, 1)], NodeId(0), zero_k).is_err());
        let no_aging = Settings { aging_step: 0, ..s };
        assert!(build_network(2, &[e(0, 1)], NodeId(0), no_aging).is_err());
        assert_eq!(build_network(1, &[], NodeId(0), s).unwrap().len(), 1);
    }
}
