//! Doze mode, voluntary disconnection and reconnection (section III-C-3).
//!
//! An announcing host moves every peer into its `Info_set` (it will ask everyone before its
//! next critical section) and broadcasts the announcement stamped with a fresh Lamport
//! timestamp, which becomes its `T_rec` and its epoch. A receiver moves the announcer into its
//! `Status_set` only if the announcement is newer than everything it has seen from the
//! announcer and than its own last announcement (`T_rec` comparison): of two hosts that
//! announce concurrently, only the later one ends up in the other's `Status_set`, so the two
//! never both wait to be asked.

use super::message::Msg;
use super::node::{Mode, Node};
use super::sets::Relation;
use crate::permission::Timestamp;
use crate::{Anomaly, Error, NodeId, Status};

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

    /// Stamp a new announcement, make it our epoch and ask everyone from now on.
    fn announce(&mut self, make: fn(Timestamp) -> Msg) {
        let ts = self.s.core.stamp();
        self.s.t_rec = ts;
        self.s.sets.all_info();
        for peer in self.s.core.peers() {
            self.out.send(peer, make(ts));
        }
    }

    pub(super) fn doze(&mut self) -> Result<(), Error> {
        self.in_mode("Doze", &[Mode::Normal])?;
        self.in_remainder("Doze")?;
        self.announce(|ts| Msg::Doze { ts });
        self.s.mode = Mode::Dozing;
        Ok(())
    }

    pub(super) fn wake(&mut self) -> Result<(), Error> {
        self.in_mode("Wake", &[Mode::Dozing])?;
        // Nothing to send: every peer is in our Info_set since the DOZE.
        self.s.mode = Mode::Normal;
        Ok(())
    }

    pub(super) fn disconnect(&mut self) -> Result<(), Error> {
        self.in_mode("Disconnect", &[Mode::Normal])?;
        self.in_remainder("Disconnect")?;
        self.announce(|ts| Msg::Disconnect { ts });
        self.s.mode = Mode::Disconnected;
        Ok(())
    }

    /// Back after a voluntary disconnection, or (from `Normal`) after an accidental one, in any
    /// section. A waiting host restarts its permission collection under the new epoch: REPLYs
    /// to copies sent before the outage are stale from now on.
    pub(super) fn reconnect(&mut self) -> Result<(), Error> {
        self.in_mode("Reconnect", &[Mode::Normal, Mode::Disconnected])?;
        self.s.mode = Mode::Normal;
        if self.s.core.status == Status::Critical {
            // Receivers move us into their Status_set and would then enter without asking us,
            // which is only safe once we are out: announce on release.
            self.s.sets.all_info();
            self.s.reconnect_pending = true;
            return Ok(());
        }
        self.announce_reconnect();
        if let (Status::Waiting, Some(ts)) = (self.s.core.status, self.s.core.ts_req) {
            for peer in self.s.core.peers() {
                self.ask(peer, ts);
            }
        }
        Ok(())
    }

    /// Broadcast a RECONNECT (now, or on release if it was postponed).
    pub(super) fn announce_reconnect(&mut self) {
        self.s.reconnect_pending = false;
        self.announce(|ts| Msg::Reconnect { ts });
    }

    /// A DOZE or DISCONNECT (`leaves`) or a RECONNECT from `from`.
    pub(super) fn on_announce(&mut self, from: NodeId, ts: Timestamp, leaves: bool) {
        if ts.id != from {
            self.out.anomaly(from, Anomaly::OutOfRange);
            return;
        }
        self.s.core.clock.observe(ts.clock);
        let seen = &mut self.s.peer_epoch[from.index()];
        if ts.clock <= *seen {
            // Older than something we already got from this host: it no longer describes it.
            self.out.anomaly(from, Anomaly::Stale);
            return;
        }
        *seen = ts.clock;
        if self.s.t_rec >= ts {
            // We announced later: the announcer will move us into its Status_set, so it must
            // stay in our Info_set, and any REPLY we wait for from it is still needed.
            return;
        }
        self.s.sets.set(from, Relation::Status);
        // A request it sent before announcing is superseded (it resends one if still waiting).
        self.s.core.deferred.remove(from);
        if leaves {
            // It is in its remainder section and will ask us before entering: its REPLY is no
            // longer needed.
            self.s.core.waits.resolve(from, &mut self.out);
            self.s.core.try_enter(&mut self.out);
        }
    }
}
