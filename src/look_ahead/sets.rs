//! `Info_set` / `Status_set` and their seeded initialisation (the paper's Fig. 1).

use alloc::vec::Vec;

use crate::NodeId;

/// Where a peer sits in a node's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Relation {
    /// In `Info_set`: the node sends its REQUESTs to this peer.
    Info,
    /// In `Status_set`: this peer sends its REQUESTs to the node.
    Status,
}

/// A node's partition of the other hosts into `Info_set` and `Status_set`.
///
/// One slot per host, so the two sets partition the other hosts by construction; the own slot
/// is never read or written through the public API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sets {
    me: NodeId,
    rel: Vec<Relation>,
}

impl Sets {
    /// Sets of host `me` in an `n`-host system, with `info` in `Info_set` and all other peers
    /// in `Status_set`. Out-of-range ids and `me` in `info` are ignored (the caller validates).
    pub(crate) fn from_info(me: NodeId, n: u32, info: impl IntoIterator<Item = NodeId>) -> Self {
        let mut rel = alloc::vec![Relation::Status; n as usize];
        for peer in info {
            if peer != me {
                if let Some(slot) = rel.get_mut(peer.index()) {
                    *slot = Relation::Info;
                }
            }
        }
        Sets { me, rel }
    }

    /// The relation of `peer`, `None` for an unknown host or the node itself.
    pub fn get(&self, peer: NodeId) -> Option<Relation> {
        if peer == self.me {
            return None;
        }
        self.rel.get(peer.index()).copied()
    }

    /// Put `peer` in the given set (no-op for an unknown host or the node itself).
    pub(crate) fn set(&mut self, peer: NodeId, to: Relation) {
        if peer != self.me {
            if let Some(slot) = self.rel.get_mut(peer.index()) {
                *slot = to;
            }
        }
    }

    fn members(&self, which: Relation) -> impl Iterator<Item = NodeId> + '_ {
        let me = self.me;
        (0..self.rel.len() as u32)
            .map(NodeId)
            .filter(move |&p| p != me)
            .filter(move |p| self.rel[p.index()] == which)
    }

    /// `Info_set`, in id order.
    pub fn info(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.members(Relation::Info)
    }

    /// `Status_set`, in id order.
    pub fn status(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.members(Relation::Status)
    }
}

/// One step of splitmix64: a tiny, well-mixed generator, enough to draw the initial matrix
/// deterministically without `std` or a global RNG.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Entry `m[i][j]` (for `i < j`) of the seeded upper-triangular matrix `M_u` of Fig. 1.
///
/// Each entry depends only on `(seed, i, j)`, so every host computes its own row from the
/// shared seed without the initiator broadcasting the matrix.
fn upper(seed: u64, i: u32, j: u32) -> bool {
    let pair = (u64::from(i) << 32) | u64::from(j);
    splitmix64(seed ^ splitmix64(pair)) & 1 == 1
}

/// Host `i`'s row of the full matrix: `m[i][j]` for `i < j`, `1 − m[j][i]` below the diagonal.
/// `false` (0) puts `j` in `Info_set_i`, `true` (1) in `Status_set_i`.
fn entry(seed: u64, i: u32, j: u32) -> bool {
    if i < j {
        upper(seed, i, j)
    } else {
        !upper(seed, j, i)
    }
}

/// The initial `Info_set` of host `me` in an `n`-host system, drawn from `seed` (Fig. 1).
///
/// For every pair exactly one of the two hosts has the other in its `Info_set`, so the sets
/// of all hosts satisfy section III-B's requirements.
// Hidden: the workspace's tests use it; not stable API (nodes show their sets).
#[doc(hidden)]
pub fn initial_info_set(n: u32, seed: u64, me: NodeId) -> Vec<NodeId> {
    (0..n)
        .filter(|&j| j != me.0 && !entry(seed, me.0, j))
        .map(NodeId)
        .collect()
}

/// The initial `Info_set` of every host of an `n`-host system, indexed by host id.
// Hidden: the workspace's tests use it; not stable API (nodes show their sets).
#[doc(hidden)]
pub fn initial_sets(n: u32, seed: u64) -> Vec<Vec<NodeId>> {
    (0..n)
        .map(|i| initial_info_set(n, seed, NodeId(i)))
        .collect()
}
