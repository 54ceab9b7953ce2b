//! Consistent initial configurations for a whole network.

use alloc::vec::Vec;

use crate::{reverse_link, Error, NodeId};

use super::policy::{Config, Settings};

/// Initial configurations for nodes `0..n` on the undirected graph `edges`, with the token
/// (and `t = k`) at `holder`.
///
/// The heights are KRL's initial layout for a single token holder (hop distance to the
/// holder, see [`reverse_link::build`]), so every other node has a lower neighbour one hop
/// closer: the DAG is token oriented. Errors (`InvalidConfig`) for an out-of-range node, a
/// self-loop, a component without the token holder (its nodes could only wait; an isolated
/// node is accepted and waits for a link), or invalid settings: the same rules as
/// `reverse_link`.
pub fn build_network(
    n: u32,
    edges: &[(NodeId, NodeId)],
    holder: NodeId,
    settings: Settings,
) -> Result<Vec<Config>, Error> {
    let layout = reverse_link::build(n as usize, edges, &[holder], false)?;
    let configs: Vec<Config> = layout
        .into_iter()
        .map(|c| Config {
            id: c.id,
            settings,
            height: c.height,
            neighbors: c.neighbors,
            token_holder: c.tokens > 0,
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
    use crate::height::Height;
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
        assert_eq!(c[0].height, Height::new(2, 0, NodeId(0)));
        for cfg in &c {
            assert!(cfg.token_holder || cfg.neighbors.iter().any(|h| *h < cfg.height));
        }
    }

    #[test]
    fn rejects_bad_graphs_and_settings() {
        let s = Settings::new(2, Policy::Explicit);
        assert!(
            build_network(4, &[e(0, 1), e(2, 3)], NodeId(0), s).is_err(),
            "a component without the token"
        );
        assert!(
            build_network(3, &[e(0, 1)], NodeId(0), s).is_ok(),
            "an isolated node waits for a link"
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
