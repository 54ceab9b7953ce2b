//! What a network agrees on ([`Settings`]), one node's initial state ([`Config`]), and
//! consistent configurations for a whole network ([`network`]).

use alloc::vec::Vec;

use super::Policy;
use crate::token::neighbors::initial_next;
use crate::token::{layout, Height, Promised, RaisePause, Recovery};
use crate::{Error, NodeId};

/// What every node of a network agrees on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Settings {
    /// Number of identical resources, `k ≥ 1`.
    pub k: u32,
    /// How priorities are derived.
    pub policy: Policy,
    /// How much `aging(Q)` raises every queued priority, `≥ 1` (0 would allow starvation).
    pub aging_step: u64,
    /// Recovery of a lost token and of units held by crashed hosts
    /// ([`Settings::with_recovery`]); `None` (the default) is the paper.
    pub recovery: Option<Recovery>,
    /// Pacing of height raises ([`Settings::with_raise_pause`]); `None` (the default) is the
    /// paper: a node raises as soon as it has no way down.
    pub raise_pause: Option<RaisePause>,
}

impl Settings {
    /// `k` resources under `policy`, aging step 1.
    pub const fn new(k: u32, policy: Policy) -> Self {
        Settings {
            k,
            policy,
            aging_step: 1,
            recovery: None,
            raise_pause: None,
        }
    }

    /// With aging step `aging_step`.
    pub const fn with_aging_step(self, aging_step: u64) -> Self {
        Settings { aging_step, ..self }
    }

    /// With recovery: the token's beacons, claims and regeneration as KRL's, entry leases,
    /// and a holder that waited out every lease of its token's generation without a grant
    /// starts a new generation with all `k` units free (`docs/ALGORITHMS.md`, F7). Node ids
    /// must then be below 2^16.
    pub const fn with_recovery(self, recovery: Recovery) -> Self {
        Settings {
            recovery: Some(recovery),
            ..self
        }
    }

    /// With height raises paced by `pause`, as KRL's
    /// ([`reverse_link::Settings::with_raise_pause`](crate::reverse_link::Settings::with_raise_pause);
    /// `docs/ALGORITHMS.md`, R15). Needs the embedder's timers.
    pub const fn with_raise_pause(self, pause: RaisePause) -> Self {
        Settings {
            raise_pause: Some(pause),
            ..self
        }
    }
}

/// One node's initial state. [`network`] produces consistent ones for a whole network.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The node's id.
    pub id: NodeId,
    /// What the network agrees on.
    pub settings: Settings,
    /// Whether this node holds the token (with `t = k`) initially.
    pub holder: bool,
    /// The node's initial height; its `id` must be the node's.
    pub height: Height,
    /// The initial neighbours' heights (the node's view equals the truth initially).
    pub neighbors: Vec<Height>,
    /// The node restarted with empty state ([`Config::restarted`]): with recovery it makes no
    /// token again until it has heard of each token id once, since a generation it made
    /// before it crashed (its id and a round it no longer knows) may still exist (F4).
    pub restarted: bool,
    /// The promises the node made before it restarted, as stored from its
    /// [`Action::Persist`](crate::Action::Persist) actions ([`Config::with_promises`]); `None`:
    /// not given. A restarted node in majority mode without them never promises (F9).
    pub promises: Option<Vec<Promised>>,
    /// The highest round of every generation the node made before it restarted, kept by the
    /// embedder ([`Config::restarted_after`]): it makes only later rounds.
    pub made_up_to: Option<u16>,
}

impl Config {
    /// Node `id`, holding the token if `holder`, at `height`, next to neighbours at
    /// `neighbors`.
    pub fn new(
        id: NodeId,
        settings: Settings,
        holder: bool,
        height: Height,
        neighbors: Vec<Height>,
    ) -> Self {
        Config {
            id,
            settings,
            holder,
            height,
            neighbors,
            restarted: false,
            promises: None,
            made_up_to: None,
        }
    }

    /// The node's promises of before (majority mode, [`Recovery::with_majority`]): the last
    /// [`Action::Persist`](crate::Action::Persist) per token id that the embedder stored. A
    /// restarted node given them promises again, above them; one not given them never
    /// promises, which costs liveness only (F9).
    pub fn with_promises(self, promises: Vec<Promised>) -> Self {
        Config {
            promises: Some(promises),
            ..self
        }
    }

    /// A node that restarted with empty state (no token, heights and neighbours learned
    /// anew): with recovery it claims no token id lost until it has heard of that id once,
    /// so a generation it made before its crash is not made again while it lives on (F4);
    /// [`Config::restarted_after`] rules out every repeat. A restarted holder's configuration
    /// is refused ([`Error::InvalidConfig`](crate::Error::InvalidConfig)): the token lives on
    /// elsewhere or is made again (F14).
    pub fn restarted(self) -> Self {
        Config {
            restarted: true,
            ..self
        }
    }

    /// A node that restarted with empty state, whose embedder kept the highest round of the
    /// generations it made before (the high 16 bits of [`Fence::generation`](crate::Fence::generation)
    /// in its `TokenRegenerated` and `TokenRenumbered` reports; 0 if none). It makes only
    /// later rounds, so it never makes a generation twice, and may claim a token lost at
    /// once. Without it ([`Config::restarted`]) a generation the node made, then lost with
    /// its maker's crash while an older one lived on, can be made again; the protected
    /// resource then refuses its fences and [`Event::Refused`](crate::Event::Refused) moves it
    /// on (F4, F10).
    pub fn restarted_after(self, made_up_to: u16) -> Self {
        Config {
            restarted: true,
            made_up_to: Some(made_up_to),
            ..self
        }
    }

    /// Check the paper's preconditions; on success return the initial `next` (the node itself
    /// for the token holder, else its lowest neighbour; `None` for an isolated node).
    pub(crate) fn validate(&self) -> Result<Option<NodeId>, Error> {
        let bad = |reason| Error::InvalidConfig {
            node: self.id,
            reason,
        };
        if self.settings.k == 0 {
            return Err(bad("k must be at least 1"));
        }
        if self.restarted && self.holder {
            // The token lives on where it went, or is made again: a second copy would have its
            // generation and fences (F14).
            return Err(bad(
                "a restarted node holds no token (restart it with an empty configuration)",
            ));
        }
        if self.settings.aging_step == 0 {
            return Err(bad("aging step must be at least 1, or requests can starve"));
        }
        if let Some(pause) = self.settings.raise_pause {
            pause.validate().map_err(bad)?;
        }
        if let Some(recovery) = self.settings.recovery {
            recovery.validate().map_err(bad)?;
            if self.id.0 > 0xffff {
                return Err(bad("recovery needs node ids below 65,536"));
            }
            if recovery
                .majority
                .is_some_and(|members| self.id.0 >= members)
            {
                return Err(bad(
                    "in majority mode node ids must be below the membership's size",
                ));
            }
        }
        let promises = self.promises.as_deref().unwrap_or_default();
        if promises.iter().any(|p| p.lane >= 1) {
            return Err(bad("a promise's token id must be below k"));
        }
        initial_next(self.id, self.height, &self.neighbors, self.holder).map_err(bad)
    }
}

/// Configurations for nodes `0..n` on the undirected graph `edges`, with the token (and
/// `t = k`) at the one node of `holders`.
///
/// The heights are the token algorithms' shared initial layout (hop distance to the holder),
/// so every other node has a lower neighbour one hop closer: the DAG is token oriented. Errors:
/// `InvalidNetwork` for other than one holder; `InvalidConfig` for an out-of-range node, a self-loop, a component
/// without the token holder (its nodes could only wait; an isolated node is accepted and
/// waits for a link), or invalid settings: the same rules as `reverse_link::network`.
pub fn network(
    n: u32,
    edges: &[(NodeId, NodeId)],
    holders: &[NodeId],
    settings: Settings,
) -> Result<Vec<Config>, Error> {
    if holders.len() != 1 {
        return Err(Error::InvalidNetwork {
            reason: "the prioritized algorithm has exactly one token holder",
        });
    }
    let configs: Vec<Config> = layout(n, edges, holders)?
        .into_iter()
        .enumerate()
        .map(|(i, site)| {
            Config::new(
                NodeId(i as u32),
                settings,
                site.holder,
                site.height,
                site.neighbors,
            )
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

    fn e(a: u32, b: u32) -> (NodeId, NodeId) {
        (NodeId(a), NodeId(b))
    }

    fn at(node: u32) -> [NodeId; 1] {
        [NodeId(node)]
    }

    #[test]
    fn heights_point_every_node_towards_the_holder() {
        let s = Settings::new(3, Policy::Equal);
        let c = network(4, &[e(0, 1), e(1, 2), e(2, 3), e(3, 0)], &at(2), s).unwrap();
        assert!(c[2].holder && !c[0].holder);
        assert_eq!(c[2].height, Height::new(0, 0, NodeId(2)));
        assert_eq!(c[0].height, Height::new(2, 0, NodeId(0)));
        for cfg in &c {
            assert!(cfg.holder || cfg.neighbors.iter().any(|h| *h < cfg.height));
        }
    }

    #[test]
    fn rejects_bad_graphs_and_settings() {
        let s = Settings::new(2, Policy::Explicit);
        let two = [NodeId(0), NodeId(1)];
        assert!(network(2, &[e(0, 1)], &two, s).is_err(), "two holders");
        assert!(network(2, &[e(0, 1)], &[], s).is_err(), "no holder");
        assert!(
            network(4, &[e(0, 1), e(2, 3)], &at(0), s).is_err(),
            "a component without the token"
        );
        assert!(
            network(3, &[e(0, 1)], &at(0), s).is_ok(),
            "an isolated node waits for a link"
        );
        assert!(
            network(2, &[e(0, 0), e(0, 1)], &at(0), s).is_err(),
            "self-loop"
        );
        assert!(network(2, &[e(0, 5)], &at(0), s).is_err(), "out of range");
        assert!(
            network(2, &[e(0, 1)], &at(2), s).is_err(),
            "holder out of range"
        );
        let zero_k = Settings::new(0, Policy::Explicit);
        assert!(network(2, &[e(0, 1)], &at(0), zero_k).is_err());
        assert!(network(2, &[e(0, 1)], &at(0), s.with_aging_step(0)).is_err());
        assert_eq!(network(1, &[], &at(0), s).unwrap().len(), 1);
    }
}
