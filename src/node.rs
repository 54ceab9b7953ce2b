//! The node trait every algorithm implements, and the shared output buffer.

use alloc::vec::Vec;
use core::fmt;

use crate::{Action, Anomaly, CsRequest, Error, Event, Severity};

/// A node identifier, unique in the system. Also the tie-breaking component of heights and
/// timestamps.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeId(pub u32);

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl NodeId {
    /// The id as an index into per-node arrays.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where the node's application is: the papers' three sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// Not interested in the critical section (REMAINDER / NCS).
    Remainder,
    /// Waiting to enter (WAITING / TRYING).
    Waiting,
    /// Inside the critical section (CRITICAL / CS).
    Critical,
}

/// A sans-IO protocol node: feed it [`Event`]s, carry out the [`Action`]s it returns.
///
/// `handle` is deterministic: the same state and event always give the same actions. It never
/// panics on peer input; local misuse returns `Err` and leaves the node unchanged.
pub trait Protocol {
    /// The protocol's message type.
    type Message: Clone + fmt::Debug + PartialEq + Eq;

    /// This node's id.
    fn id(&self) -> NodeId;

    /// The application's current section.
    fn status(&self) -> Status;

    /// Process one event and return the actions to carry out, in order.
    ///
    /// The returned iterator borrows the node's internal output buffer, so steady-state
    /// handling does not allocate. Unconsumed actions are discarded when it is dropped.
    ///
    /// While the result lives the node stays borrowed: it cannot be inspected while the
    /// actions are carried out, nor in the `Err` arm of a `match` on the result. Where that
    /// matters, use [`Protocol::handle_into`].
    fn handle(&mut self, event: Event<Self::Message>) -> Result<Actions<'_, Self::Message>, Error>;

    /// Process one event like [`Protocol::handle`], appending the actions to `out`, in order,
    /// instead of returning them.
    ///
    /// Nothing stays borrowed when it returns, so the caller can inspect the node in an `Err`
    /// arm, while carrying out the actions, or feed it again before they are all done. On
    /// `Err` nothing is appended and the node is unchanged, as with `handle`. It allocates
    /// only if `out` does: a `Vec` kept between calls (drained, not dropped) stops growing
    /// once it holds the largest burst, as the node's own buffer does.
    ///
    /// ```
    /// use manet_mutex::reverse_link::{network, Node, Settings};
    /// use manet_mutex::{Action, CsRequest, Error, Event, NodeId, Protocol, Status};
    ///
    /// let configs = network(2, &[(NodeId(0), NodeId(1))], &[NodeId(0)], Settings::new(1))?;
    /// let mut node = Node::new(configs[0].clone())?;
    /// let mut out = Vec::new();
    /// match node.handle_into(Event::Release, &mut out) {
    ///     // The node is free here: `out` holds the actions, not a borrow of the node.
    ///     Err(Error::NotInCritical(status)) => assert_eq!(status, node.status()),
    ///     other => panic!("{other:?}"),
    /// }
    /// assert!(out.is_empty());
    ///
    /// node.handle_into(Event::Request(CsRequest::ONE), &mut out)?;
    /// for action in out.drain(..) {
    ///     if let Action::EnterCritical { .. } = action {
    ///         assert_eq!(node.status(), Status::Critical); // inspected mid-way
    ///     }
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    fn handle_into<E>(&mut self, event: Event<Self::Message>, out: &mut E) -> Result<(), Error>
    where
        Self: Sized,
        E: Extend<Action<Self::Message>>,
    {
        out.extend(self.handle(event)?);
        Ok(())
    }

    /// Process one event like [`Protocol::handle_into`], appending its actions to `out`.
    ///
    /// When `out` is empty the crate's nodes use it as their output buffer for the call
    /// instead of their own, so a driver that keeps one `Vec` for many nodes keeps the
    /// capacity of one burst in all, not one per node (the token simulator does this: at
    /// 100,000 nodes the nodes' own buffers held about 680 bytes each). Like `handle_into` it
    /// appends nothing on `Err` and allocates only if `out` must grow. The provided method
    /// is `handle_into`.
    fn handle_in(
        &mut self,
        event: Event<Self::Message>,
        out: &mut Vec<Action<Self::Message>>,
    ) -> Result<(), Error>
    where
        Self: Sized,
    {
        self.handle_into(event, out)
    }

    /// How this algorithm reads an [`Action::Anomaly`] of kind `kind`: harmless
    /// [`Severity::Noise`] that runs within its contract produce, or [`Severity::Suspect`],
    /// which they never do. [`Anomaly`]'s variants give the reasons per algorithm; the
    /// crate's [driving contract](crate#anomalies) tables them.
    ///
    /// An associated function, not a method, so that it can be called while
    /// [`Protocol::handle`]'s actions still borrow the node: `Node::anomaly_severity(kind)`.
    /// The provided classification (for implementations outside this crate) takes only
    /// [`Anomaly::Stale`] and [`Anomaly::RedundantLinkEvent`] for noise, what holds in every
    /// algorithm here; the crate's four node types refine it.
    ///
    /// ```
    /// use manet_mutex::{look_ahead, reverse_link, Anomaly, Protocol, Severity};
    ///
    /// // A message from a peer whose link this node has not seen yet: normal for a token node.
    /// let kind = Anomaly::UnknownPeer;
    /// assert_eq!(reverse_link::Node::anomaly_severity(kind), Severity::Noise);
    /// // Every host may message every host: a sender outside the system is a driver bug.
    /// assert_eq!(look_ahead::Node::anomaly_severity(kind), Severity::Suspect);
    /// ```
    fn anomaly_severity(kind: Anomaly) -> Severity
    where
        Self: Sized,
    {
        match kind {
            Anomaly::Stale | Anomaly::RedundantLinkEvent => Severity::Noise,
            _ => Severity::Suspect,
        }
    }
}

/// The checks every node makes of the application's events, before anything else and in one
/// order for all four algorithms (the crate's [driving contract](crate#events-by-state)): the
/// section first (`Request` in `Remainder`, `Release` in `Critical`, `Cancel` in `Waiting`),
/// then a `Request`'s resources, which must be `1..=k` for prioritized (`k: Some(k)`) and
/// exactly one for the others (`None`). Other events pass; a look-ahead node checks its mode
/// after this.
pub(crate) fn check_local<M>(
    event: &Event<M>,
    status: Status,
    k: Option<u32>,
) -> Result<(), Error> {
    let requested = match *event {
        Event::Request(_) if status != Status::Remainder => {
            return Err(Error::AlreadyRequested(status))
        }
        Event::Request(CsRequest { resources, .. }) => resources,
        Event::Release if status != Status::Critical => return Err(Error::NotInCritical(status)),
        Event::Cancel if status != Status::Waiting => return Err(Error::NotWaiting(status)),
        _ => return Ok(()),
    };
    match k {
        Some(k) if !(1..=k).contains(&requested) => Err(Error::InvalidResources { requested, k }),
        None if requested != 1 => Err(Error::OneResourceOnly { requested }),
        _ => Ok(()),
    }
}

/// The actions produced by one call to [`Protocol::handle`], in the order they must be carried
/// out.
#[must_use = "actions must be carried out for the protocol to make progress"]
pub struct Actions<'a, M>(alloc::vec::Drain<'a, Action<M>>);

impl<M> Iterator for Actions<'_, M> {
    type Item = Action<M>;
    fn next(&mut self) -> Option<Action<M>> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<M> ExactSizeIterator for Actions<'_, M> {}

impl<M: fmt::Debug> fmt::Debug for Actions<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.as_slice()).finish()
    }
}

/// A node's reusable output buffer. Its capacity survives between calls, so once it has grown
/// to the largest burst a node produces, `handle` stops allocating. It is no part of the node's
/// state, so any two compare equal: the nodes derive `PartialEq` and compare by state.
#[derive(Debug, Clone)]
pub(crate) struct Outbox<M>(Vec<Action<M>>);

// Empty between calls (`handle` drains it, `handle_in` hands it back empty): nothing to compare.
impl<M> PartialEq for Outbox<M> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<M> Eq for Outbox<M> {}

impl<M> Default for Outbox<M> {
    fn default() -> Self {
        Outbox(Vec::new())
    }
}

/// A node whose handlers buffer their actions in an [`Outbox`]: [`Protocol::handle`] and
/// [`Protocol::handle_in`] of the crate's nodes are [`handle`] and [`handle_in`] over it.
pub(crate) trait Buffered: Protocol {
    /// The node's output buffer.
    fn outbox(&mut self) -> &mut Outbox<Self::Message>;

    /// Handle `event`, leaving its actions in the (empty) outbox; on `Err` none are left and
    /// the node is unchanged.
    fn step(&mut self, event: Event<Self::Message>) -> Result<(), Error>;
}

/// [`Protocol::handle`] and [`Protocol::handle_in`] of a [`Buffered`] node whose message type
/// is `$msg`, for its `impl Protocol` block.
macro_rules! buffered_handlers {
    ($msg:ty) => {
        #[inline]
        fn handle(
            &mut self,
            event: $crate::Event<$msg>,
        ) -> Result<$crate::node::Actions<'_, $msg>, $crate::Error> {
            $crate::node::handle(self, event)
        }

        #[inline]
        fn handle_in(
            &mut self,
            event: $crate::Event<$msg>,
            out: &mut alloc::vec::Vec<$crate::Action<$msg>>,
        ) -> Result<(), $crate::Error> {
            $crate::node::handle_in(self, event, out)
        }
    };
}
pub(crate) use buffered_handlers;

/// [`Protocol::handle`] of a [`Buffered`] node.
#[inline]
pub(crate) fn handle<N: Buffered>(
    node: &mut N,
    event: Event<N::Message>,
) -> Result<Actions<'_, N::Message>, Error> {
    node.step(event)?;
    Ok(node.outbox().drain())
}

/// [`Protocol::handle_in`] of a [`Buffered`] node: an empty `out` is swapped in as the
/// node's buffer for the call, so the actions are left in it and the node's own buffer never
/// grows.
#[inline]
pub(crate) fn handle_in<N: Buffered>(
    node: &mut N,
    event: Event<N::Message>,
    out: &mut Vec<Action<N::Message>>,
) -> Result<(), Error> {
    if !out.is_empty() {
        out.extend(handle(node, event)?);
        return Ok(());
    }
    core::mem::swap(&mut node.outbox().0, out);
    let outcome = node.step(event);
    core::mem::swap(&mut node.outbox().0, out);
    outcome
}

impl<M> Outbox<M> {
    pub(crate) fn push(&mut self, action: Action<M>) {
        self.0.push(action);
    }

    pub(crate) fn send(&mut self, to: crate::NodeId, msg: M) {
        self.0.push(Action::Send { to, msg });
    }

    pub(crate) fn anomaly(&mut self, from: crate::NodeId, kind: crate::Anomaly) {
        self.0.push(Action::Anomaly { from, kind });
    }

    /// Hand the buffered actions to the caller.
    pub(crate) fn drain(&mut self) -> Actions<'_, M> {
        Actions(self.0.drain(..))
    }

    /// Forget actions buffered by a handler that then failed, so `Err` leaves nothing behind.
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// The outcome of one handler: on `Err`, whatever it buffered is forgotten (local
    /// handlers validate before they mutate, so an `Err` leaves the node as it was).
    pub(crate) fn settle(&mut self, outcome: Result<(), crate::Error>) -> Result<(), crate::Error> {
        if outcome.is_err() {
            self.clear();
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use crate::ricart_agrawala::{network, Message, Node, Settings};
    use crate::{Action, CsRequest, Error, Event, NodeId, Protocol, Status};

    fn pair() -> (Node, Node) {
        let mut configs = network(Settings::new(2, 5)).unwrap().into_iter();
        let mut node = || Node::new(configs.next().unwrap()).unwrap();
        (node(), node())
    }

    /// `handle_into` and `handle_in` give what `handle` gives, after what the buffer holds
    /// (`handle_in` lends an empty one to the node); on `Err` they leave buffer and node as
    /// they were, and the node is free to inspect right there; the node's own buffer is in
    /// place again afterwards (a later `handle` still works).
    #[test]
    fn handle_into_and_handle_in_give_what_handle_gives() {
        type Via = fn(&mut Node, Event<Message>, &mut Vec<Action<Message>>) -> Result<(), Error>;
        let (a, _) = pair();
        let mut via_handle = a.clone();
        let expected: Vec<_> = via_handle
            .handle(Event::Request(CsRequest::ONE))
            .unwrap()
            .collect();
        let marker = Action::EnterCritical {
            resources: 7,
            fence: crate::Fence::new(0, 7),
        };
        let into: Via = |n, e, out| n.handle_into(e, out);
        let lent: Via = |n, e, out| n.handle_in(e, out);
        for via in [into, lent] {
            for held in [Vec::new(), vec![marker.clone()]] {
                let mut node = a.clone();
                let mut out = held.clone();
                via(&mut node, Event::Request(CsRequest::ONE), &mut out).unwrap();
                assert_eq!(out[..held.len()], held[..], "appended, not replaced");
                assert_eq!(out[held.len()..], expected[..]);
                assert_eq!(node, via_handle);

                let (before, mut out) = (node.clone(), held.clone());
                let refused = via(&mut node, Event::Request(CsRequest::ONE), &mut out);
                assert_eq!(refused, Err(Error::AlreadyRequested(Status::Waiting)));
                assert_eq!(
                    (node.status(), &node, out),
                    (Status::Waiting, &before, held)
                );
                let release = node.handle(Event::Release).err();
                assert_eq!(release, Some(Error::NotInCritical(Status::Waiting)));
            }
        }
    }

    /// Every node's refusals, as the four algorithms check the application's events in one
    /// order (section, then resources, then mode; `docs/ALGORITHMS.md`, D1): a `Request` that
    /// is both out of its section and for a bad number of resources is refused for its section,
    /// one that only asks for a bad number for that, and `Release` and `Cancel` out of their
    /// sections alike. An `Err` changes nothing.
    fn refusals<P: Protocol + Clone + PartialEq + core::fmt::Debug>(
        idle: P,
        waiting: P,
        inside: P,
    ) -> Vec<(Status, Result<(), Error>)> {
        let bad = |resources| Event::Request(CsRequest::resources(resources));
        let mut seen = Vec::new();
        for node in [idle, waiting, inside] {
            for event in [bad(0), bad(u32::MAX), Event::Release, Event::Cancel] {
                let mut after = node.clone();
                let outcome = after.handle_into(event, &mut Vec::new());
                if outcome.is_err() {
                    assert_eq!(after, node, "an Err changed the node");
                }
                seen.push((node.status(), outcome));
            }
        }
        seen
    }

    /// `node` after the application asked for one resource (accepted).
    fn requested<P: Protocol>(mut node: P) -> P {
        let event = Event::Request(CsRequest::ONE);
        node.handle_into(event, &mut Vec::new()).unwrap();
        node
    }

    #[test]
    fn every_algorithm_refuses_a_doubly_bad_request_alike() {
        use crate::{look_ahead, prioritized, reverse_link, ricart_agrawala};
        let k = 1;
        let line = [(NodeId(0), NodeId(1))];

        let krl = reverse_link::network(2, &line, &[NodeId(0)], reverse_link::Settings::new(k));
        let krl: Vec<_> = krl
            .unwrap()
            .into_iter()
            .map(|c| reverse_link::Node::new(c).unwrap())
            .collect();
        let krl = refusals(
            krl[0].clone(),
            requested(krl[1].clone()),
            requested(krl[0].clone()),
        );

        let policy = prioritized::Policy::Explicit;
        let prio = prioritized::network(
            2,
            &line,
            &[NodeId(0)],
            prioritized::Settings::new(k, policy),
        );
        let prio: Vec<_> = prio
            .unwrap()
            .into_iter()
            .map(|c| prioritized::Node::new(c).unwrap())
            .collect();
        let prio = refusals(
            prio[0].clone(),
            requested(prio[1].clone()),
            requested(prio[0].clone()),
        );

        let la = |info: &[u32]| {
            let settings = look_ahead::Settings::new(2, 5);
            let info = info.iter().map(|&i| NodeId(i)).collect();
            look_ahead::Node::new(look_ahead::Config::new(NodeId(0), settings).with_info_set(info))
                .unwrap()
        };
        let la = refusals(la(&[]), requested(la(&[1])), requested(la(&[])));

        let ra = |hosts| {
            let settings = ricart_agrawala::Settings::new(hosts, 5);
            Node::new(ricart_agrawala::Config::new(NodeId(0), settings)).unwrap()
        };
        let ra = refusals(ra(2), requested(ra(2)), requested(ra(1)));

        use Status::{Critical, Remainder, Waiting};
        // Prioritized requests are for 1..=k; the others' for exactly one.
        let expected = |invalid: &dyn Fn(u32) -> Result<(), Error>| {
            [
                (Remainder, invalid(0)),
                (Remainder, invalid(u32::MAX)),
                (Remainder, Err(Error::NotInCritical(Remainder))),
                (Remainder, Err(Error::NotWaiting(Remainder))),
                (Waiting, Err(Error::AlreadyRequested(Waiting))),
                (Waiting, Err(Error::AlreadyRequested(Waiting))),
                (Waiting, Err(Error::NotInCritical(Waiting))),
                (Waiting, Ok(())),
                (Critical, Err(Error::AlreadyRequested(Critical))),
                (Critical, Err(Error::AlreadyRequested(Critical))),
                (Critical, Ok(())),
                (Critical, Err(Error::NotWaiting(Critical))),
            ]
        };
        let one = expected(&|requested| Err(Error::OneResourceOnly { requested }));
        let of_k = expected(&|requested| Err(Error::InvalidResources { requested, k }));
        for (name, seen, expected) in [
            ("KRL", krl, &one),
            ("prioritized", prio, &of_k),
            ("look-ahead", la, &one),
            ("RA", ra, &one),
        ] {
            assert_eq!(&seen, expected, "{name}");
        }
    }

    #[test]
    fn handle_into_leaves_the_node_free_while_actions_are_carried_out() {
        let (mut a, mut b) = pair();
        let mut out: Vec<Action<Message>> = Vec::new();
        a.handle_into(Event::Request(CsRequest::ONE), &mut out)
            .unwrap();
        let mut replies = Vec::new();
        for action in out.drain(..) {
            if let Action::Send { to, msg } = action {
                assert_eq!((to, a.status()), (NodeId(1), Status::Waiting));
                let from = NodeId(0);
                b.handle_into(Event::Receive { from, msg }, &mut replies)
                    .unwrap();
            }
        }
        for action in replies {
            if let Action::Send { msg, .. } = action {
                let from = NodeId(1);
                a.handle_into(Event::Receive { from, msg }, &mut out)
                    .unwrap();
            }
        }
        assert_eq!(a.status(), Status::Critical);
        assert!(out.contains(&Action::EnterCritical {
            resources: 1,
            fence: crate::Fence::new(0, 1),
        }));
    }
}
