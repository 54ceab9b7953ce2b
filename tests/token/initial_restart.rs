//! Issue 34, break 6: a host restarted with its initial configuration holds a second copy of
//! a token, with the generation and fences of the live one (`docs/ALGORITHMS.md` F14). The
//! copy moves to a generation of its own at the first beacon of the other, whose holder's
//! token is then destroyed; a configuration marked restarted with tokens is refused; and a
//! refusal of a fence admitted already (`newest == fence`) moves the generation on.

use manet_mutex::reverse_link::{self, network, Node};
use manet_mutex::token::Height;
use manet_mutex::{prioritized, Action, CsRequest, Error, Event, Fence, NodeId, Protocol, Report};

use crate::timed::{recovery, Algo, Net};

/// Line 0–1–2, the token at 0; node 1 asks and is served, so the token rests at 1; node 0
/// crashes and comes back with its `network` configuration (the token, generation 0).
fn restart_with_the_initial_configuration<A: Algo>(settings: A::Settings)
where
    A::Message: Clone + std::fmt::Debug,
{
    let edges = [(0, 1), (1, 2)];
    let mut net = Net::<A>::new(3, &edges, &[0], settings);
    net.wanting.insert(1);
    net.run(100);
    assert_eq!(
        net.nodes[1].as_ref().unwrap().tokens(),
        1,
        "the token moved"
    );
    net.crash(0);
    net.run(net.now + 10);
    let ids: Vec<_> = edges.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect();
    let initial = A::build(3, &ids, &[NodeId(0)], settings);
    net.nodes[0] = initial.into_iter().next();
    net.join(0, 1);
    assert_eq!(net.tokens(), 2, "two copies of generation 0");
    // Within a beacon gap of the live token's holder, the copy hears a beacon above its own
    // fence: it moves to a generation of its own, whose beacons destroy the other.
    net.run(net.now + recovery().silence());
    assert_eq!(net.tokens(), 1, "one token left");
    assert_eq!(
        (
            net.counts.renumbered,
            net.counts.destroyed,
            net.counts.regenerated
        ),
        (1, 1, 0)
    );
    // And every requester is served, each fence admitted (the driver checks (a) and (b)).
    for _ in 0..3 {
        net.serve_all(5_000);
    }
    assert_eq!(net.tokens(), 1);
}

#[test]
fn a_host_restarted_with_its_initial_tokens_leaves_one_token_krl() {
    let settings = reverse_link::Settings::new(1).with_recovery(recovery());
    restart_with_the_initial_configuration::<reverse_link::Node>(settings);
}

#[test]
fn a_host_restarted_with_its_initial_tokens_leaves_one_token_prioritized() {
    let settings =
        prioritized::Settings::new(1, prioritized::Policy::Equal).with_recovery(recovery());
    restart_with_the_initial_configuration::<prioritized::Node>(settings);
}

#[test]
fn a_restarted_configuration_with_tokens_is_refused() {
    let edges = [(NodeId(0), NodeId(1))];
    let krl = reverse_link::Settings::new(1).with_recovery(recovery());
    let holder = network(2, &edges, &[NodeId(0)], krl).unwrap()[0].clone();
    for config in [holder.clone().restarted(), holder.restarted_after(3)] {
        assert!(matches!(
            Node::new(config),
            Err(Error::InvalidConfig { node: NodeId(0), reason }) if reason.contains("restarted")
        ));
    }
    let prio = prioritized::Settings::new(1, prioritized::Policy::Equal).with_recovery(recovery());
    let holder = prioritized::network(2, &edges, &[NodeId(0)], prio).unwrap()[0].clone();
    assert!(matches!(
        prioritized::Node::new(holder.restarted()),
        Err(Error::InvalidConfig { node: NodeId(0), reason }) if reason.contains("restarted")
    ));
    // Without tokens a restart is what it was.
    let empty = reverse_link::Config::new(NodeId(1), krl, 0, Height::new(0, 0, NodeId(1)), vec![]);
    assert!(Node::new(empty.restarted()).is_ok());
}

/// `Fences::admit` answers a fence admitted already with that fence: a second copy of the
/// generation issued it. The refusal moves the token held here to a generation above.
#[test]
fn a_refusal_of_a_fence_admitted_already_moves_the_token_on() {
    let settings = reverse_link::Settings::new(1).with_recovery(recovery());
    let config = reverse_link::Config::new(
        NodeId(3),
        settings,
        1,
        Height::new(0, 0, NodeId(3)),
        vec![Height::new(1, 0, NodeId(1))],
    )
    .with_first_token(0);
    let mut node = Node::new(config).unwrap();
    let fence = node
        .handle(Event::Request(CsRequest::ONE))
        .unwrap()
        .find_map(|a| match a {
            Action::EnterCritical { fence, .. } => Some(fence),
            _ => None,
        })
        .unwrap();
    let mut fences = manet_mutex::fence::Fences::new();
    fences.admit(fence).unwrap();
    let highest = fences.admit(fence).expect_err("admitted already");
    let newest = Fence::new(fence.lane, highest);
    assert_eq!(newest, fence);
    let moved: Vec<_> = node
        .handle(Event::Refused { fence, newest })
        .unwrap()
        .filter_map(|a| match a {
            Action::Report(Report::TokenRenumbered { fence }) => Some(fence),
            _ => None,
        })
        .collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert!(moved[0].generation() > fence.generation());
    assert!(fences.admit(moved[0]).is_ok(), "the next entry is admitted");
}
