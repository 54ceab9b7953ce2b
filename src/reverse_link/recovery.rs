//! KRL/KRLF's part in the recovery of lost tokens (issue 23): how a node holds, destroys and
//! makes tokens again. The mechanism (beacons, claims, leases) is
//! [`Recover`](crate::token::recovery::Recover)'s; `docs/ALGORITHMS.md`, F2–F6, has the rules.

use super::{Message, Node};
use crate::token::height::{Height, Sealed};
use crate::token::recovery::{Recover, Watch};
use crate::{Action, Fence, FenceCopies, NodeId, Report, Status};

impl Recover for Node {
    fn node_id(&self) -> NodeId {
        self.id
    }

    fn lanes(&self) -> u32 {
        self.settings.k
    }

    fn status_now(&self) -> Status {
        self.status
    }

    fn watch(&mut self) -> Option<&mut Watch> {
        self.watch.as_mut()
    }

    fn held(&mut self, lane: u32) -> Option<&mut Fence> {
        self.held.iter_mut().find(|t| t.lane == lane)
    }

    fn destroy_older(&mut self, newer: Fence) -> bool {
        let Some(i) = self
            .held
            .iter()
            .position(|t| t.lane == newer.lane && t.generation() < newer.generation())
        else {
            return false;
        };
        // The token in use by the critical section is first in `held`: the node stays inside,
        // without it, until `Release` (F6).
        if i == 0 && self.in_use() {
            self.revoke();
        }
        let old = self.held.remove(i);
        self.outbox
            .push(Action::Report(Report::TokenDestroyed { fence: old }));
        true
    }

    fn token_gone(&mut self) {
        if !self.holds_token() {
            // `next` was this node; requests queued here must find the token elsewhere.
            self.links.next = None;
            self.reroute();
        }
    }

    fn adopt_regenerated(&mut self, token: Fence) {
        self.held.push(token);
        self.beacon(token.lane, None);
        self.use_new_token();
    }

    fn beacon_message(height: Sealed, fence: FenceCopies, hops: u16) -> Message {
        Message::Beacon(height, fence, hops)
    }

    fn claim_message(height: Sealed, lane: u32, generation: u32) -> Message {
        Message::Claim(height, lane, [generation; 3])
    }

    fn promise_message(height: Height, lane: u32, ballot: u32, voter: u32) -> Message {
        Message::promise(height, lane, ballot, voter)
    }
}

impl Node {
    /// Whether the first token held is in use by the node's critical section.
    pub(super) fn in_use(&self) -> bool {
        self.status == Status::Critical && !self.revoked()
    }

    /// Whether the node is in the critical section on a token that was destroyed under it
    /// (a newer generation arrived): it holds no token for the entry, and was told
    /// [`Action::LeaseExpired`].
    pub fn revoked(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.revoked)
    }
}
