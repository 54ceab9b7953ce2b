//! What the recovery tests share: one way to build either algorithm's hosts with the recovery
//! settings, and small helpers over actions.

use manet_mutex::{look_ahead, ricart_agrawala, Action, Error, Fence, NodeId, Report, TimerId};
use manet_mutex_testkit::{PermNet, PermissionHarness};

/// The recovery settings of a test network (all off by default, as in the papers).
#[derive(Debug, Clone, Copy, Default)]
pub struct Knobs {
    pub lease: Option<u64>,
    pub exclusion: Option<u32>,
    pub majority: bool,
}

impl Knobs {
    pub fn lease(self, after: u64) -> Self {
        Knobs {
            lease: Some(after),
            ..self
        }
    }

    pub fn exclusion(self, m: u32) -> Self {
        Knobs {
            exclusion: Some(m),
            ..self
        }
    }

    pub fn majority(self) -> Self {
        Knobs {
            majority: true,
            ..self
        }
    }
}

/// A permission algorithm the recovery tests run: hosts built with `Knobs`, and a restarted
/// host.
pub trait Algo: PermissionHarness + Clone + std::fmt::Debug {
    const NAME: &'static str;

    /// Host `id` of `n`, retransmitting after `retransmit`, incarnation `incarnation`, or
    /// the configuration's error. For look-ahead, every host starts asking every other (an
    /// explicit `Info_set` of all peers, as a restarted host has), so that the tests see the
    /// same REQUESTs in both algorithms at first.
    fn try_host(
        id: u32,
        n: u32,
        retransmit: u64,
        knobs: Knobs,
        incarnation: u32,
    ) -> Result<Self, Error>;

    /// [`Algo::try_host`], which must succeed.
    fn host(id: u32, n: u32, retransmit: u64, knobs: Knobs, incarnation: u32) -> Self {
        Self::try_host(id, n, retransmit, knobs, incarnation).unwrap()
    }

    /// Hosts `0..n` as the algorithm's `network` makes them (look-ahead: the seeded sets of
    /// Fig. 1 from `seed`).
    fn seeded(n: u32, retransmit: u64, knobs: Knobs, seed: u64) -> Vec<Self>;

    /// The peers it excludes.
    fn excluded_peers(&self) -> Vec<NodeId>;
    /// The peers whose REPLY it awaits.
    fn outstanding_peers(&self) -> Vec<NodeId>;
    /// The excluded peers it probes.
    fn probed_peers(&self) -> Vec<NodeId>;
    /// Whether majority mode lets it in.
    fn quorum(&self) -> bool;

    /// Hosts `0..n`.
    fn hosts(n: u32, retransmit: u64, knobs: Knobs) -> Vec<Self> {
        (0..n)
            .map(|i| Self::host(i, n, retransmit, knobs, 0))
            .collect()
    }

    /// A message that is a REQUEST.
    fn is_request(msg: &Self::Message) -> bool;

    /// The request number of a REQUEST.
    fn request_seq(msg: &Self::Message) -> Option<u64>;
}

impl Algo for ricart_agrawala::Node {
    const NAME: &'static str = "ricart_agrawala";

    fn try_host(
        id: u32,
        n: u32,
        retransmit: u64,
        knobs: Knobs,
        incarnation: u32,
    ) -> Result<Self, Error> {
        let mut s = ricart_agrawala::Settings::new(n, retransmit).with_majority(knobs.majority);
        if let Some(l) = knobs.lease {
            s = s.with_lease(l);
        }
        if let Some(m) = knobs.exclusion {
            s = s.with_exclusion(m);
        }
        let config = ricart_agrawala::Config::new(NodeId(id), s).with_incarnation(incarnation);
        ricart_agrawala::Node::new(config)
    }

    fn seeded(n: u32, retransmit: u64, knobs: Knobs, _seed: u64) -> Vec<Self> {
        Self::hosts(n, retransmit, knobs)
    }

    fn excluded_peers(&self) -> Vec<NodeId> {
        self.excluded().collect()
    }

    fn outstanding_peers(&self) -> Vec<NodeId> {
        self.outstanding().collect()
    }

    fn probed_peers(&self) -> Vec<NodeId> {
        self.probed().collect()
    }

    fn quorum(&self) -> bool {
        self.has_quorum()
    }

    fn is_request(msg: &ricart_agrawala::Message) -> bool {
        matches!(msg, ricart_agrawala::Message::Request { .. })
    }

    fn request_seq(msg: &ricart_agrawala::Message) -> Option<u64> {
        match msg {
            ricart_agrawala::Message::Request { seq, .. } => Some(*seq),
            _ => None,
        }
    }
}

impl Algo for look_ahead::Node {
    const NAME: &'static str = "look_ahead";

    fn try_host(
        id: u32,
        n: u32,
        retransmit: u64,
        knobs: Knobs,
        incarnation: u32,
    ) -> Result<Self, Error> {
        let mut s = look_ahead::Settings::new(n, retransmit).with_majority(knobs.majority);
        if let Some(l) = knobs.lease {
            s = s.with_lease(l);
        }
        if let Some(m) = knobs.exclusion {
            s = s.with_exclusion(m);
        }
        let info = (0..n).filter(|&p| p != id).map(NodeId).collect();
        let s = s.with_seed(0);
        let config = look_ahead::Config::new(NodeId(id), s)
            .with_info_set(info)
            .with_incarnation(incarnation);
        look_ahead::Node::new(config)
    }

    fn seeded(n: u32, retransmit: u64, knobs: Knobs, seed: u64) -> Vec<Self> {
        let mut s = look_ahead::Settings::new(n, retransmit)
            .with_seed(seed)
            .with_majority(knobs.majority);
        if let Some(l) = knobs.lease {
            s = s.with_lease(l);
        }
        if let Some(m) = knobs.exclusion {
            s = s.with_exclusion(m);
        }
        look_ahead::network(s)
            .unwrap()
            .into_iter()
            .map(|c| look_ahead::Node::new(c).unwrap())
            .collect()
    }

    fn excluded_peers(&self) -> Vec<NodeId> {
        self.excluded().collect()
    }

    fn outstanding_peers(&self) -> Vec<NodeId> {
        self.outstanding().collect()
    }

    fn probed_peers(&self) -> Vec<NodeId> {
        self.probed().collect()
    }

    fn quorum(&self) -> bool {
        self.has_quorum()
    }

    fn is_request(msg: &look_ahead::Message) -> bool {
        matches!(msg, look_ahead::Message::Request { .. })
    }

    fn request_seq(msg: &look_ahead::Message) -> Option<u64> {
        match msg {
            look_ahead::Message::Request { seq, .. } => Some(*seq),
            _ => None,
        }
    }
}

/// The `Report`s among `actions`.
pub fn reports<M>(actions: &[Action<M>]) -> Vec<Report> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Report(r) => Some(*r),
            _ => None,
        })
        .collect()
}

/// The peers sent a message among `actions`.
pub fn sent_to<M>(actions: &[Action<M>]) -> Vec<NodeId> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, .. } => Some(*to),
            _ => None,
        })
        .collect()
}

/// The timers set among `actions`, with their delays.
pub fn timers_set<M>(actions: &[Action<M>]) -> Vec<(TimerId, u64)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::SetTimer { timer, after } => Some((*timer, *after)),
            _ => None,
        })
        .collect()
}

/// The fence of the entry among `actions`, if one.
pub fn entered<M>(actions: &[Action<M>]) -> Option<Fence> {
    actions.iter().find_map(|a| match a {
        Action::EnterCritical { fence, .. } => Some(*fence),
        _ => None,
    })
}

/// Feed `event` to `node`, which must accept it; its actions.
pub fn feed<A: Algo>(
    node: &mut A,
    event: manet_mutex::Event<A::Message>,
) -> Vec<Action<A::Message>> {
    node.handle(event).expect("accepted").collect()
}

/// Entries per host in `net` so far.
pub fn entries_of<A: Algo>(net: &PermNet<A>, host: u32) -> usize {
    net.entries
        .iter()
        .filter(|(h, _)| *h == NodeId(host))
        .count()
}

/// Run `net` (with its perfect detector catching up every round, if it has one): deliver everything, release every host inside, and,
/// when nothing is left to deliver, fire every armed timer; `rounds` times at most. Hosts in
/// `requesters` request again whenever they are back in the remainder section, until each
/// entered `target` times. Returns the entries made.
pub fn run_rounds<A: Algo>(
    net: &mut PermNet<A>,
    requesters: &[u32],
    target: usize,
    rounds: usize,
) -> usize {
    use manet_mutex::Status;
    let before = net.entries.len();
    for _ in 0..rounds {
        for &h in requesters {
            let id = NodeId(h);
            if net.live(id) && net.status(id) == Status::Remainder && entries_of(net, h) < target {
                net.request(id);
            }
        }
        for h in net.live_hosts() {
            if net.status(h) == Status::Critical {
                net.release(h);
            }
        }
        if net.detector {
            // A perfect detector suspects a crashed host again after its late message.
            net.detect_all();
        }
        let deliverable = net.deliverable();
        if deliverable.is_empty() {
            for (host, timer) in net.armed() {
                net.fire(host, timer);
            }
        } else {
            for &i in deliverable.iter().rev() {
                net.deliver(i);
            }
        }
        if requesters.iter().all(|&h| entries_of(net, h) >= target) {
            break;
        }
    }
    net.entries.len() - before
}
