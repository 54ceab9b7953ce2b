//! What a KRL network agrees on ([`Settings`]), one node's initial state ([`Config`]), and
//! consistent configurations for a whole network ([`network`]).

use alloc::vec::Vec;

use crate::token::neighbors::initial_next;
use crate::token::{layout, Height, Promised, RaisePause, Recovery};
use crate::{Error, NodeId};

/// What every node of a network agrees on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Settings {
    /// Tokens in the system (`k ≥ 1`; `k = 1` is RL).
    pub k: u32,
    /// KRLF: forward idle tokens to the lowest unvisited neighbour.
    pub forwarding: bool,
    /// KRLF pacing: hold an idle token this long (in the embedder's time unit, the unit of
    /// [`crate::Action::SetTimer`]) before forwarding it, serving any request that arrives
    /// meanwhile. `None`, the paper's KRLF, forwards at once: over a fast transport idle tokens
    /// then circulate as fast as it carries them.
    pub idle_pause: Option<u64>,
    /// Recovery of lost tokens ([`Settings::with_recovery`]); `None` (the default) is the
    /// paper: a token lost with a crashed host or a breaking link is gone.
    pub recovery: Option<Recovery>,
    /// Pacing of height raises ([`Settings::with_raise_pause`]); `None` (the default) is the
    /// paper: a node raises as soon as it has no way down.
    pub raise_pause: Option<RaisePause>,
}

impl Settings {
    /// KRL with `k` tokens (RL for `k = 1`), without token forwarding.
    pub const fn new(k: u32) -> Self {
        Settings {
            k,
            forwarding: false,
            idle_pause: None,
            recovery: None,
            raise_pause: None,
        }
    }

    /// With token forwarding on (KRLF) or off.
    pub const fn with_forwarding(self, forwarding: bool) -> Self {
        Settings { forwarding, ..self }
    }

    /// KRLF holding each idle token `after` time units before forwarding it (see
    /// [`Settings::idle_pause`]); needs forwarding on and `after ≥ 1`.
    pub const fn with_idle_pause(self, after: u64) -> Self {
        Settings {
            idle_pause: Some(after),
            ..self
        }
    }

    /// With recovery of lost tokens: beacons, claims, regeneration and entry leases, on the
    /// bounds `recovery` states (the crate's [failure model](crate#failure-model)). Node ids
    /// must then be below 2^16 (a regenerated token's generation holds its maker's id).
    pub const fn with_recovery(self, recovery: Recovery) -> Self {
        Settings {
            recovery: Some(recovery),
            ..self
        }
    }

    /// With height raises paced by `pause`: where no token can be reached (a lost token's
    /// silence, a partition without one) partial reversal never ends, and unpaced it costs
    /// as many height announcements as the network carries ([`RaisePause`];
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
    /// This node.
    pub id: NodeId,
    /// What the network agrees on.
    pub settings: Settings,
    /// Tokens this node holds initially (`0..=k`).
    pub tokens: u32,
    /// The id of the first of them: the node holds tokens `first_token..first_token + tokens`
    /// (each token has an id in `0..k`, the lane of its fences; [`network`] numbers them).
    /// `None` until given ([`Config::with_first_token`]): a holder's configuration without it
    /// is refused, since two holders that both took a default id would hold the same token
    /// twice, and the network would lose one at their first transfer (R14).
    pub first_token: Option<u32>,
    /// Initial height; its `id` must be `id`.
    pub height: Height,
    /// The initial neighbours' heights (their ids identify them).
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
    /// Node `id` holding `tokens` tokens at `height`, next to neighbours at `neighbors`. A
    /// holder also needs the ids of its tokens ([`Config::with_first_token`]); [`network`]
    /// gives every holder its own.
    pub fn new(
        id: NodeId,
        settings: Settings,
        tokens: u32,
        height: Height,
        neighbors: Vec<Height>,
    ) -> Self {
        Config {
            id,
            settings,
            tokens,
            first_token: None,
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
    /// [`Config::restarted_after`] rules out every repeat. A restarted configuration with
    /// tokens is refused ([`Error::InvalidConfig`](crate::Error::InvalidConfig)): they live on
    /// elsewhere or are made again (F14).
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

    /// The node's tokens numbered from `first`: ids `first..first + tokens`. Every token of
    /// a network needs its own id in `0..k`.
    pub fn with_first_token(self, first: u32) -> Self {
        Config {
            first_token: Some(first),
            ..self
        }
    }

    /// The ids of the tokens the node holds initially (empty for a node without tokens).
    pub(super) fn token_ids(&self) -> core::ops::Range<u32> {
        let first = self.first_token.unwrap_or(0);
        first..first + self.tokens
    }

    /// The paper's preconditions; on success the initial `next`.
    pub(super) fn validate(&self) -> Result<Option<NodeId>, Error> {
        let bad = |reason| Error::InvalidConfig {
            node: self.id,
            reason,
        };
        if self.settings.k == 0 {
            return Err(bad("k must be at least 1"));
        }
        if self.tokens > self.settings.k {
            return Err(bad("a node cannot hold more than k tokens"));
        }
        if self.restarted && self.tokens > 0 {
            // Its initial tokens live on where they went, or are made again: a second copy
            // would have their generation and fences (F14).
            return Err(bad(
                "a restarted node holds no token (restart it with an empty configuration)",
            ));
        }
        match self.first_token {
            None if self.tokens > 0 => {
                return Err(bad(
                    "a holder needs the ids of its tokens (Config::with_first_token; network numbers them)",
                ))
            }
            Some(first) if first.saturating_add(self.tokens) > self.settings.k => {
                return Err(bad("token ids must be below k"));
            }
            _ => {}
        }
        match self.settings.idle_pause {
            Some(0) => return Err(bad("an idle pause must be at least 1")),
            Some(_) if !self.settings.forwarding => {
                return Err(bad("an idle pause needs token forwarding (KRLF)"));
            }
            _ => {}
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
        if promises.iter().any(|p| p.lane >= self.settings.k) {
            return Err(bad("a promise's token id must be below k"));
        }
        initial_next(self.id, self.height, &self.neighbors, self.tokens > 0).map_err(bad)
    }
}

/// Configurations for nodes `0..n` joined by the undirected `edges`, with one token at each
/// of `holders` (so `settings.k` must be `holders.len()`), heights laid out so that the DAG is
/// token oriented (see `docs/ALGORITHMS.md`, T10 and V1 for what is refused). The tokens get
/// the ids `0..k`, in node order.
///
/// An isolated node without a token is accepted: in a mobile network it waits for a link
/// (`LinkUp`), and its requests wait until then. An embedder whose links never change should
/// check that every node has an edge, or its isolated nodes wait for ever.
///
/// Errors: [`Error::InvalidNetwork`] when `k` is not the number of holders or there is none;
/// [`Error::InvalidConfig`] naming a node for an edge or holder outside `0..n`, a self-loop, a
/// component without a holder, or one whose every node holds a token.
pub fn network(
    n: u32,
    edges: &[(NodeId, NodeId)],
    holders: &[NodeId],
    settings: Settings,
) -> Result<Vec<Config>, Error> {
    if settings.k as usize != holders.len() {
        return Err(Error::InvalidNetwork {
            reason: "k must be the number of token holders",
        });
    }
    let sites = layout(n, edges, holders)?;
    let mut first = 0;
    Ok(sites
        .into_iter()
        .enumerate()
        .map(|(i, site)| {
            let tokens = u32::from(site.holder);
            let config = Config::new(
                NodeId(i as u32),
                settings,
                tokens,
                site.height,
                site.neighbors,
            )
            .with_first_token(first);
            first += tokens;
            config
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reverse_link::Node;
    use crate::Protocol;

    fn e(a: u32, b: u32) -> (NodeId, NodeId) {
        (NodeId(a), NodeId(b))
    }

    #[test]
    fn every_configuration_of_a_network_builds_a_node() {
        let edges = [e(0, 1), e(1, 2), e(2, 3), e(3, 4), e(4, 0), e(1, 3)];
        let holders = [NodeId(0), NodeId(3)];
        let configs = network(5, &edges, &holders, Settings::new(2)).unwrap();
        assert_eq!(configs.iter().map(|c| c.tokens).sum::<u32>(), 2);
        let ids: Vec<_> = configs
            .iter()
            .filter(|c| c.tokens > 0)
            .map(|c| c.first_token)
            .collect();
        assert_eq!(ids, [Some(0), Some(1)], "every token has its own id");
        for c in configs {
            assert!(Node::new(c).is_ok());
        }
        // Node 2 alone waits for a link.
        for c in network(3, &[e(0, 1)], &[NodeId(0)], Settings::new(1)).unwrap() {
            assert!(Node::new(c).is_ok());
        }
    }

    #[test]
    fn token_ids_must_be_below_k() {
        let config = |first| {
            network(1, &[], &[NodeId(0)], Settings::new(1)).unwrap()[0]
                .clone()
                .with_first_token(first)
        };
        assert!(Node::new(config(0)).is_ok());
        assert!(Node::new(config(1)).is_err());
        assert!(Node::new(config(u32::MAX)).is_err());
    }

    #[test]
    fn a_hand_built_holder_must_name_its_tokens() {
        let height = Height::new(0, 0, NodeId(0));
        let config = Config::new(NodeId(0), Settings::new(2), 1, height, Vec::new());
        assert!(matches!(
            Node::new(config.clone()),
            Err(Error::InvalidConfig { node: NodeId(0), reason }) if reason.contains("ids")
        ));
        assert!(Node::new(config.with_first_token(1)).is_ok());
        // A node without tokens needs no ids.
        assert!(Node::new(Config::new(
            NodeId(0),
            Settings::new(2),
            0,
            height,
            Vec::new()
        ))
        .is_ok());
    }

    #[test]
    fn k_must_match_the_holders() {
        // Wrong as a whole, not at node 0.
        assert_eq!(
            network(3, &[e(0, 1), e(1, 2)], &[NodeId(0)], Settings::new(2)),
            Err(Error::InvalidNetwork {
                reason: "k must be the number of token holders"
            })
        );
    }

    /// The message says what is wrong with the request, not with k.
    #[test]
    fn a_krl_request_is_for_one_token_whatever_k() {
        let configs = network(
            3,
            &[e(0, 1), e(1, 2)],
            &[NodeId(0), NodeId(2)],
            Settings::new(2),
        );
        let mut node = Node::new(configs.unwrap().remove(1)).unwrap();
        let refused = node
            .handle(crate::Event::Request(crate::CsRequest::resources(2)))
            .map(|actions| actions.count())
            .unwrap_err();
        assert_eq!(refused, Error::OneResourceOnly { requested: 2 });
        let message = refused.to_string();
        assert!(
            message.contains("exactly one") && !message.contains("k = "),
            "{message}"
        );
    }
}
