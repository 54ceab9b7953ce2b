//! Link changes: the paper's random ones, replayed ones, and the joins that reconnect the
//! network for the drain. Both ends of a link hear of its change at the same instant.

use manet_mutex::{Event, NodeId};

use super::{exp_sample, Sim, SimEvent};
use crate::link::LinkModel;
use crate::token::TokenAlgorithm;
use crate::Failure;

impl<P: TokenAlgorithm, L: LinkModel> Sim<P, L> {
    /// A random link change, and the next one scheduled.
    pub(super) fn mobility(&mut self) -> Result<(), Failure> {
        self.change_a_link()?;
        if let Some(dt) = exp_sample(self.config.lambda_mob, &mut self.rng) {
            self.queue.schedule(dt, SimEvent::Mobility);
        }
        Ok(())
    }

    /// The paper's mobility step: drop a random idle link whose loss keeps the graph
    /// connected, and form a random new one (so the link count, hence connectivity, is
    /// unchanged). If no link can go, nothing changes.
    fn change_a_link(&mut self) -> Result<(), Failure> {
        let channels = &self.channels;
        let how = self.config.link_pick;
        let Some(i) =
            self.graph
                .pick_removable(how, &mut self.rng, self.config.keep_connected, |a, b| {
                    channels.idle(a, b)
                })
        else {
            return Ok(());
        };
        let (a, b) = self.graph.remove_edge(i, how);
        self.channels.forget(a, b);
        let (c, d) = self.graph.pick_absent(&mut self.rng).unwrap_or((a, b));
        self.graph.add(c, d);
        self.metrics.link_changes += 2;
        self.link_down(a, b)?;
        self.link_up(c, d)?;
        self.reshaped();
        Ok(())
    }

    /// The radio link `a`–`b`, idle, failed: both ends hear of it if it was up for them (a
    /// crashed host or a standing partition had taken it down already otherwise).
    fn link_down(&mut self, a: NodeId, b: NodeId) -> Result<(), Failure> {
        if !self.up(a, b) {
            return Ok(());
        }
        self.deliver(a, Event::LinkDown(b))?;
        self.deliver(b, Event::LinkDown(a))
    }

    /// The radio link `a`–`b` formed: both ends hear of it if it is up for them (it comes up
    /// for them when a crashed end restarts or the partition ends, otherwise).
    fn link_up(&mut self, a: NodeId, b: NodeId) -> Result<(), Failure> {
        if !self.up(a, b) {
            return Ok(());
        }
        self.deliver(a, Event::LinkUp(b))?;
        self.deliver(b, Event::LinkUp(a))
    }

    /// The next change of [`crate::token::Config::replay`], and the one after scheduled.
    pub(super) fn replay(&mut self) -> Result<(), Failure> {
        let c = self.config.replay[self.next_replay];
        self.next_replay += 1;
        if let Some(next) = self.config.replay.get(self.next_replay) {
            let dt = (next.time - self.queue.now()).max(0.0);
            self.queue.schedule(dt, SimEvent::Replay);
        }
        if c.up {
            self.replayed_up(c.a, c.b)
        } else if self.graph.has(c.a, c.b) {
            self.pending_down.insert((c.a, c.b));
            self.replayed_down(c.a, c.b)
        } else {
            Ok(())
        }
    }

    /// A replayed formation of link `a`–`b` (it cancels a failure still waiting).
    fn replayed_up(&mut self, a: NodeId, b: NodeId) -> Result<(), Failure> {
        self.pending_down.remove(&(a, b));
        if !self.graph.add(a, b) {
            return Ok(());
        }
        self.metrics.link_changes += 2;
        self.link_up(a, b)?;
        self.reshaped();
        Ok(())
    }

    /// A replayed failure that was waiting for its link to be idle, if it still is due.
    pub(super) fn retry_down(&mut self, a: NodeId, b: NodeId) -> Result<(), Failure> {
        if self.loading && self.pending_down.contains(&(a, b)) {
            self.replayed_down(a, b)?;
        }
        Ok(())
    }

    /// A replayed failure of link `a`–`b`: now if nothing is in flight on it, else retried
    /// one message delay later (a time unit, for a link model without a fixed delay).
    fn replayed_down(&mut self, a: NodeId, b: NodeId) -> Result<(), Failure> {
        if !self.channels.idle(a, b) {
            let retry = self.config.link.fixed_delay().unwrap_or(1.0);
            self.queue.schedule(retry, SimEvent::RetryDown(a, b));
            return Ok(());
        }
        self.pending_down.remove(&(a, b));
        self.graph.remove(a, b);
        self.channels.forget(a, b);
        self.metrics.link_changes += 2;
        self.link_down(a, b)?;
        self.reshaped();
        Ok(())
    }

    /// The end of the load phase: no more requests or link changes, and random links until
    /// the graph is connected again, so the drain can serve everyone.
    pub(super) fn end_load(&mut self) -> Result<(), Failure> {
        self.loading = false;
        self.pending_down.clear();
        while let Some((a, b)) = self.graph.pick_bridge_to_join(&mut self.rng) {
            self.graph.add(a, b);
            self.metrics.link_changes += 1;
            self.link_up(a, b)?;
        }
        self.reshaped();
        Ok(())
    }
}
