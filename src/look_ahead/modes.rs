//! Doze mode, voluntary disconnection and reconnection (section III-C-3).
//!
//! An announcing host moves every peer into its `Info_set` (it will ask everyone before its
//! next critical section) and sends each peer the announcement, stamped with a fresh Lamport
//! timestamp that becomes its `T_rec` and its epoch. Peers it knows to be disconnected are the
//! exception: they stay in its `Status_set`, and their copy says so (`absent`).
//!
//! A receiver *applies* an announcement, moving the announcer into its `Status_set` (and, for
//! DOZE and DISCONNECT, no longer waiting for its REPLY), when that cannot leave the two hosts
//! in each other's `Status_set`:
//! - never when the announcer counts the receiver as absent (then the receiver must ask it);
//! - always when the announcer had seen the receiver's own latest announcement (`seen`);
//! - otherwise the two announcements are concurrent, and only a DISCONNECT is applied, unless
//!   the receiver sent a concurrent DISCONNECT with a later timestamp. A host that has left
//!   must not be waited for; of two concurrent leavers one must ask the other (see V4 in
//!   `docs/ALGORITHMS.md` for why no rule can spare both).
//!
//! An announcement that is not applied puts the announcer in `Info_set`: it asks everyone, and
//! so do we.

use super::message::{Announcement, Message};
use super::node::{Mode, Node};
use super::sets::Relation;
use crate::{Action, Anomaly, Error, NodeId, Report, Status};

/// Which announcement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Doze,
    Disconnect,
    Reconnect,
}

impl Kind {
    fn message(self, a: Announcement) -> Message {
        match self {
            Kind::Doze => Message::Doze(a),
            Kind::Disconnect => Message::Disconnect(a),
            Kind::Reconnect => Message::Reconnect(a),
        }
    }

    /// The announcer is in its remainder section and asks everyone before entering again.
    fn leaves(self) -> bool {
        self != Kind::Reconnect
    }
}

impl Node {
    fn in_remainder(&self, event: &'static str) -> Result<(), Error> {
        match self.s.core.status {
            Status::Remainder => Ok(()),
            Status::Waiting => Err(Error::WrongMode {
                event,
                mode: "waiting for the critical section",
            }),
            _ => Err(Error::WrongMode {
                event,
                mode: "in the critical section",
            }),
        }
    }

    fn in_mode(&self, event: &'static str, allowed: &[Mode]) -> Result<(), Error> {
        if allowed.contains(&self.s.mode) {
            Ok(())
        } else {
            Err(Error::WrongMode {
                event,
                mode: self.s.mode.name(),
            })
        }
    }

    /// Move every peer that is not away (absent or excluded) into `Info_set`.
    fn ask_everyone_present(&mut self) {
        for peer in self.s.core.peers() {
            if !self.away(peer) {
                self.s.sets.set(peer, Relation::Info);
            }
        }
    }

    /// Stamp a new announcement, make it our epoch and ask everyone present from now on.
    fn announce(&mut self, kind: Kind) {
        let ts = self.s.core.stamp();
        self.s.t_rec = ts;
        if kind == Kind::Disconnect {
            self.s.departed = ts;
        }
        self.ask_everyone_present();
        let incarnation = self.s.core.incarnation;
        for peer in self.s.core.peers() {
            let (seen, away) = (self.s.peers[peer.index()].epoch, self.away(peer));
            let a = Announcement::new_in(ts, seen, away, self.s.core.fence_seen, incarnation);
            self.out.send(peer, kind.message(a));
        }
    }

    pub(super) fn doze(&mut self) -> Result<(), Error> {
        self.in_mode("Doze", &[Mode::Normal])?;
        self.in_remainder("Doze")?;
        self.announce(Kind::Doze);
        self.s.mode = Mode::Dozing;
        Ok(())
    }

    pub(super) fn wake(&mut self) -> Result<(), Error> {
        self.in_mode("Wake", &[Mode::Dozing])?;
        // Nothing to send: every peer present is in our Info_set since the DOZE.
        self.s.mode = Mode::Normal;
        Ok(())
    }

    pub(super) fn disconnect(&mut self) -> Result<(), Error> {
        self.in_mode("Disconnect", &[Mode::Normal])?;
        self.in_remainder("Disconnect")?;
        self.announce(Kind::Disconnect);
        self.s.mode = Mode::Disconnected;
        Ok(())
    }

    /// Leave for good (L3): a DISCONNECT (unless already disconnected, which told every host
    /// already), from a host awake or dozing in its remainder section, and the node never
    /// reconnects; reported as [`Report::Left`] at once.
    pub(super) fn leave(&mut self) -> Result<(), Error> {
        self.in_mode("Leave", &[Mode::Normal, Mode::Dozing, Mode::Disconnected])?;
        self.in_remainder("Leave")?;
        if self.s.mode != Mode::Disconnected {
            // A dozing host is in its remainder section with every peer in its Info_set: it
            // may announce as an awake one would.
            self.announce(Kind::Disconnect);
            self.s.mode = Mode::Disconnected;
        }
        self.s.core.left = true;
        self.out.push(Action::Report(Report::Left));
        Ok(())
    }

    /// Back after a voluntary disconnection, or (from `Normal`) after an accidental one, in any
    /// section. A waiting host restarts its permission collection under the new epoch: REPLYs
    /// to copies sent before the outage are stale from now on.
    pub(super) fn reconnect(&mut self) -> Result<(), Error> {
        self.in_mode("Reconnect", &[Mode::Normal, Mode::Disconnected])?;
        self.s.mode = Mode::Normal;
        self.restart();
        Ok(())
    }

    /// Announce a new epoch and, if waiting, ask again under it (postponed to the release if
    /// inside the critical section): a reconnect, or a resync.
    fn restart(&mut self) {
        if self.s.core.status == Status::Critical {
            // Receivers move us into their Status_set and would then enter without asking us,
            // which is only safe once we are out: announce on release.
            self.ask_everyone_present();
            self.s.reconnect_pending = true;
            return;
        }
        self.announce_reconnect();
        if self.s.core.status == Status::Waiting {
            if let Some(ticket) = self.s.core.renumber() {
                self.ask_info_set(ticket);
            }
        }
    }

    /// A peer's record of our epoch is `seen`, beyond anything we announced (a corrupted or
    /// forged value reached it): it takes our messages for old ones until we announce an
    /// epoch beyond it, so do that now, as a reconnect (A3). Only an awake, connected host can
    /// announce; a dozing one gets the same hint again when it next asks.
    pub(super) fn resync(&mut self, seen: u64) {
        if self.s.mode == Mode::Normal {
            // Out of reach, the clock moves `SKEW_LIMIT` towards it and the next REPLY asks
            // again: a few rounds at most for a record that one message pushed.
            self.s.core.clock.admit([seen]);
            self.restart();
        }
    }

    /// Broadcast a RECONNECT (now, or on release if it was postponed).
    pub(super) fn announce_reconnect(&mut self) {
        self.s.reconnect_pending = false;
        self.announce(Kind::Reconnect);
    }

    /// A DOZE, DISCONNECT or RECONNECT from `from`.
    pub(super) fn on_announce(&mut self, from: NodeId, kind: Kind, a: Announcement) {
        let incarnation = self.s.core.peer_incarnation(from);
        if !a.is_intact_in(incarnation)
            || !a.ts.names(from)
            || !self.s.core.clock.admit([a.ts.clock])
        {
            // Corrupted on the way (or impossible, or sealed by another incarnation of its
            // sender than the one known): dropped like a lost announcement.
            self.out.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        if a.ts.clock <= self.s.peers[from.index()].epoch {
            // Older than something we already got from this host: it no longer describes it.
            self.out.anomaly(from, Anomaly::Stale);
            return;
        }
        self.s.peers[from.index()].heard(a.ts.clock);
        self.heard(from);
        // A request it sent before announcing is superseded (it resends one if still waiting).
        self.s.core.deferred.remove(from);
        // `seen` beyond our own epoch: the sender's record of us was corrupted on the way.
        // Nothing can be concluded from it, so the announcement counts as concurrent, and we
        // announce beyond that record afterwards (A3).
        let ahead = a.seen > self.s.t_rec.clock;
        let concurrent = ahead || a.seen < self.s.t_rec.clock;
        // Our own DISCONNECT is concurrent with it unless it had seen that one (with `ahead`,
        // what it had seen is unknown: assume it had not).
        let departed_later = (ahead || self.s.departed.clock > a.seen) && self.s.departed > a.ts;
        // A peer that may still hold records of an earlier incarnation of ours: its `seen`
        // proves nothing (our epochs started again), so what it announces is applied only
        // where `seen` plays no part: a DISCONNECT, while we have not left ourselves (C5).
        let stale = self.s.peers[from.index()].may_know_an_old_us
            && (kind != Kind::Disconnect || self.s.departed.clock > 0);
        let applies =
            !a.absent && !stale && (!concurrent || (kind == Kind::Disconnect && !departed_later));
        if !applies {
            self.s.sets.set(from, Relation::Info);
        } else if self.s.settings.recovery.majority {
            // Majority mode counts grants: a host that dozes is still asked (it answers), and
            // one that leaves is excluded, so it does not count, and absent, so that only a
            // message of a later epoch, or an answer to a probe sent since, readmits it (C7,
            // C10).
            self.s.sets.set(from, Relation::Status);
            if kind == Kind::Disconnect {
                let open = self.s.core.open.map_or(0, |t| t.seq);
                let view = &mut self.s.peers[from.index()];
                view.absent = true;
                view.left_at = open;
                self.exclude(from);
            }
        } else {
            self.s.sets.set(from, Relation::Status);
            self.s.peers[from.index()].absent = kind == Kind::Disconnect;
            if kind.leaves() {
                // It is in its remainder section and will ask us before entering: its REPLY
                // is no longer needed.
                self.s.core.waits.resolve(from, &mut self.out);
                self.s.core.try_enter(&mut self.out);
            }
        }
        if ahead {
            self.resync(a.seen);
        }
    }
}
