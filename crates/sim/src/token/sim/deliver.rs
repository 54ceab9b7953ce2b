//! Handing an event to a node and carrying out its actions.

use super::{lookahead, Sim, SimEvent};
use crate::link::{LinkModel, Transit};
use crate::token::TokenAlgorithm;
use crate::Failure;
use manet_mutex::{Action, Anomaly, Event, Fence, NodeId, Report, Status};

impl<P: TokenAlgorithm, L: LinkModel> Sim<P, L> {
    /// Feed `event` to `node` and carry out its actions, straight from the shared output
    /// buffer. `Err` from the node is a failure here: the simulator only issues events that
    /// are valid in the node's state.
    pub(super) fn deliver(
        &mut self,
        node: NodeId,
        event: Event<P::Message>,
    ) -> Result<(), Failure> {
        self.remember(node, &event);
        if let Some(r) = &mut self.recorder {
            r.begin_event::<P>(self.queue.now(), node.0, &event);
        }
        let handling = event.name();
        let was_busy = self.before_handling(node);
        let outcome = self.handle(node, event, handling);
        self.after_handling(node, was_busy);
        outcome.map_err(|m| self.failure(m))?;
        while let Some((node, fence, newest)) = self.refusals.pop() {
            self.deliver(node, Event::Refused { fence, newest })?;
        }
        Ok(())
    }

    /// Keep `event` among the last [`crate::token::Config::trace_len`] for a failure report.
    fn remember(&mut self, node: NodeId, event: &Event<P::Message>) {
        if self.config.trace_len == 0 {
            return;
        }
        if self.trace.len() == self.config.trace_len {
            self.trace.pop_front();
        }
        self.trace
            .push_back((self.queue.now(), node, event.clone()));
    }

    /// With checks on, take `node`'s tally out of the running sum until it has handled its
    /// event; whether it was waiting or in the critical section.
    fn before_handling(&mut self, node: NodeId) -> bool {
        let target = &self.nodes[node.index()];
        if self.config.check_every_step {
            self.tally -= target.tally();
            self.touched.push(node);
        }
        target.status() != Status::Remainder
    }

    /// Put `node`'s new tally back into the running sum, count it busy or not, record it.
    fn after_handling(&mut self, node: NodeId, was_busy: bool) {
        let target = &self.nodes[node.index()];
        if self.config.check_every_step {
            self.tally += target.tally();
        }
        let is_busy = target.status() != Status::Remainder;
        self.busy = self.busy + usize::from(is_busy) - usize::from(was_busy);
        if let Some(r) = &mut self.recorder {
            r.end_step(target.view());
        }
    }

    /// `node` handles `event` (a `handling` event) into the shared buffer, then its actions
    /// are carried out in order.
    fn handle(
        &mut self,
        node: NodeId,
        event: Event<P::Message>,
        handling: &str,
    ) -> Result<(), String> {
        // Out of `self` while the actions change it; its capacity comes back with it.
        let mut out = std::mem::take(&mut self.out);
        let outcome = match self.nodes[node.index()].handle_in(event, &mut out) {
            Err(e) => Err(format!("{node:?} rejected a valid event: {e}")),
            Ok(()) => out
                .drain(..)
                .try_for_each(|action| self.carry_out(node, action, handling)),
        };
        self.out = out;
        outcome
    }

    fn carry_out(
        &mut self,
        node: NodeId,
        action: Action<P::Message>,
        handling: &str,
    ) -> Result<(), String> {
        match action {
            Action::Send { to, msg } => self.send(node, to, msg),
            Action::EnterCritical { resources, fence } => self.enter(node, resources, fence),
            // Timer units are the simulator's time units.
            Action::SetTimer { timer, after } => {
                let incarnation = self.incarnation(node);
                let timeout = SimEvent::Timeout {
                    node,
                    timer,
                    incarnation,
                };
                self.queue.schedule(after as f64, timeout);
                Ok(())
            }
            // Not tracked: nodes ignore the expiry of a cancelled timer.
            Action::CancelTimer { .. } => Ok(()),
            Action::Anomaly { from, kind } => self.anomaly(node, from, kind, handling),
            Action::LeaseExpired { fence } => {
                self.metrics.recovery.lease_expired += 1;
                self.stop_acting(node, Some(fence))
            }
            Action::Report(Report::TokenRegenerated { fence }) => {
                self.metrics.recovery.regenerated += 1;
                self.regenerated(fence.lane);
                Ok(())
            }
            Action::Report(Report::TokenRenumbered { .. }) => {
                self.metrics.recovery.renumbered += 1;
                Ok(())
            }
            Action::Report(Report::TokenDestroyed { .. }) => {
                self.metrics.recovery.destroyed += 1;
                Ok(())
            }
            // Majority mode's promises: a restarted node here is never given them back (it
            // then never promises, F9), so there is nothing to store.
            Action::Persist { .. } => Ok(()),
            other => Err(format!(
                "{node:?} returned an action this simulator does not know: {other:?}"
            )),
        }
    }

    /// Put `msg` on the link `node → to` and schedule its arrival as the link model says.
    fn send(&mut self, node: NodeId, to: NodeId, msg: P::Message) -> Result<(), String> {
        // A link has an id in `channels` only while it is in the graph and up.
        let link = match self.channels.id(node, to) {
            Some(link) => link,
            None if self.graph.has(node, to) && self.up(node, to) => self.channels.open(node, to),
            // Down by a fault the sender has not heard of yet: the message is lost.
            None if self.graph.has(node, to) => {
                self.lost_in_sending(&msg);
                return Ok(());
            }
            None => return Err(format!("{node:?} sent {msg:?} to non-neighbour {to:?}")),
        };
        let now = self.queue.now();
        let Transit::Arrives { delay, hops } =
            self.config.link.transit(node, to, now, &mut self.rng)
        else {
            return Err(format!(
                "the link model did not deliver {msg:?} from {node:?} to {to:?}: \
                 token algorithms need every message delivered"
            ));
        };
        if self.measuring {
            self.metrics.messages += 1;
            self.metrics.hops += u64::from(hops);
        }
        if let Some(r) = &mut self.recorder {
            if !r.stopped() {
                let _ = r.send(to.0, P::message_text(&msg));
            }
        }
        if self.config.check_every_step {
            self.tally += P::message_tally(&self.config.params.settings, &msg);
        }
        self.channels.push_on(link, msg);
        if self.channels.total() > self.config.max_in_flight {
            return Err(format!(
                "message storm: more than {} messages in flight",
                self.config.max_in_flight
            ));
        }
        self.queue.schedule(delay, SimEvent::Deliver { link, to });
        if self.prefetching {
            lookahead::first(&self.nodes, &self.channels, to);
        }
        Ok(())
    }

    /// `node` enters the critical section: its fence must be admitted unless a newer
    /// generation of its token was (the fence rule, (a)), and it must be granted what it asked
    /// for.
    fn enter(&mut self, node: NodeId, resources: u32, fence: Fence) -> Result<(), String> {
        let lane = fence.lane as usize;
        if self.newest_generation.len() <= lane {
            self.newest_generation.resize(lane + 1, 0);
        }
        match self.fences.admit(fence) {
            Ok(()) => {
                self.metrics.recovery.admitted += 1;
                let newest = &mut self.newest_generation[lane];
                *newest = (*newest).max(fence.generation());
            }
            Err(highest) if fence.generation() < self.newest_generation[lane] => {
                self.metrics.recovery.refused_stale += 1;
                // Told back, as a real resource's refusal would be (F10).
                let newest = Fence::new(fence.lane, highest);
                self.refusals.push((node, fence, newest));
            }
            Err(highest) => {
                return Err(format!(
                    "{node:?} entered with {fence:?}, not above {highest} in its lane"
                ));
            }
        }
        self.fault_enter(node, fence)?;
        let Some((at, request)) = self.requested_at[node.index()].take() else {
            return Err(format!("{node:?} entered without a request"));
        };
        if resources != request.resources {
            return Err(format!(
                "{node:?} asked for {} resources but was granted {resources}",
                request.resources
            ));
        }
        let now = self.queue.now();
        self.metrics.entered(now - at, request);
        self.usage.change(&mut self.metrics, node, resources, now);
        let release = SimEvent::Release(node, self.incarnation(node));
        self.queue
            .schedule(self.config.workload.cs_duration, release);
        Ok(())
    }

    /// Count an anomaly; a suspect one fails a checked run, as this simulator injects no
    /// fault the token algorithms' contract excludes (mobility fails only idle links, its links
    /// deliver every message in order, and crashes and partitions lose messages only with the
    /// link that carried them, which recovery is built for).
    fn anomaly(
        &mut self,
        node: NodeId,
        from: NodeId,
        kind: Anomaly,
        handling: &str,
    ) -> Result<(), String> {
        let checked = self.config.check_every_step;
        self.metrics
            .anomalies
            .report::<P>(checked, node, from, kind, handling)
    }
}
