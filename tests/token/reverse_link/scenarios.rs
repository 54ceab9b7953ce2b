//! Replays of the KRL paper's worked examples (section 4, figures 2–5). The figures themselves
//! are missing, so each topology and each initial height is chosen to agree with every
//! statement of the prose, and the test asserts the states the prose describes at each step.
//! `check_safety` runs after every single event.

use super::net::{configs, enter, h, send, Net};
use super::unit::{enter_with, fence};
use manet_mutex::reverse_link::{self, Config, Message, Node, Settings};
use manet_mutex::token::Height;
use manet_mutex::{Action, NodeId, Protocol, Status};
use Message::{LinkInfo, Request, Token};

// ---------------------------------------------------------------- figures 2 and 3

/// The five-node network of figures 2 and 3, `k = 2`, holders 0 and 1. Initial heights are
/// chosen so that 0 < 3 < 1 < 2 < 4: 2 and 3 ask 0 (their lowest neighbour), 4 asks 1 (lower
/// than 2), and 2 has two outgoing links (to 0 and 3), so that losing 3 leaves it "one outgoing
/// link" as the figure 3 prose says. Node 1's only neighbour is 4 (it "senses no incoming
/// links" in 2(e) from 4's LinkInfo alone).
const FIG2_EDGES: [(u32, u32); 5] = [(0, 2), (0, 3), (2, 3), (2, 4), (1, 4)];

fn fig2_heights() -> [Height; 5] {
    [h(0, 0, 0), h(1, 1, 1), h(1, 2, 2), h(1, 0, 3), h(2, 0, 4)]
}

/// Figure 2(a) (= 3(a)): 0 and 1 are in the critical section; 3 then 2 asked 0 (the prose
/// has 0 hand its token to 3 first, so 3's request was received first); 4 asked 1.
fn fig2_a() -> Net {
    let mut net = Net::new(configs(&fig2_heights(), &FIG2_EDGES, &[0, 1], false));
    assert_eq!(net.request(0), vec![enter()]);
    assert_eq!(net.request(1), vec![enter_with(1, 1)]);
    assert_eq!(net.request(3), vec![send(0, Request(h(1, 0, 3).into()))]);
    assert_eq!(net.request(2), vec![send(0, Request(h(1, 2, 2).into()))]);
    assert_eq!(net.request(4), vec![send(1, Request(h(2, 0, 4).into()))]);
    net.deliver_link(3, 0);
    net.deliver_link(2, 0);
    net.deliver_link(4, 1);
    assert_eq!(net.queue(0), vec![3, 2]);
    assert_eq!(net.queue(1), vec![4]);
    for i in [2, 3, 4] {
        assert_eq!(net.queue(i), vec![i], "n{i} enqueued itself");
        assert_eq!(net.n(i).status(), Status::Waiting);
    }
    assert_eq!((net.next(2), net.next(3), net.next(4)), (0, 0, 1));
    assert_eq!((net.next(0), net.next(1)), (0, 1));
    net
}

#[test]
fn figure_2_static_run_with_two_tokens() {
    let mut net = fig2_a();

    // (b) 1 sends its token to 4, then requests and asks 4 (its lowest neighbour now).
    assert_eq!(
        net.release(1),
        vec![send(4, Token(h(1, 1, 1).into(), fence(1, 1)))]
    );
    assert_eq!(net.request(1), vec![send(4, Request(h(1, 1, 1).into()))]);
    // 0 sends its token to 3 and follows it with a request on behalf of 2.
    assert_eq!(
        net.release(0),
        vec![
            send(3, Token(h(0, 0, 0).into(), fence(0, 1))),
            send(3, Request(h(0, 0, 0).into()))
        ]
    );
    // 4 and 3 lower their heights just below the sender's and enter.
    let (_, a) = net.deliver(1, 4);
    assert_eq!(
        a,
        vec![
            send(2, LinkInfo(h(1, 0, 4).into())),
            send(1, Message::token_ack(h(1, 0, 4), 1)),
            enter_with(1, 2)
        ]
    );
    // 3's other neighbour, 2, was above it and stays above: it is not told (paper, R9).
    let (_, a) = net.deliver(0, 3);
    assert_eq!(
        a,
        vec![
            send(0, Message::token_ack(h(0, -1, 3), 1)),
            enter_with(0, 2)
        ]
    );
    net.deliver_all();
    assert_eq!(net.height(3), h(0, -1, 3));
    assert_eq!(net.height(4), h(1, 0, 4));
    // The links 0-3 and 1-4 now point towards 3 and 4.
    assert!(net.height(3) < net.height(0) && net.height(4) < net.height(1));
    assert_eq!(net.queue(1), vec![1]);
    assert_eq!(net.queue(4), vec![1], "1 is enqueued on Q4");
    assert_eq!(net.queue(3), vec![0], "0 is enqueued on Q3");
    assert_eq!(net.queue(0), vec![2]);
    assert_eq!((net.next(0), net.next(3)), (3, 3));
    assert_eq!((net.next(1), net.next(4)), (4, 4));
    assert_eq!(net.n(3).status(), Status::Critical);
    assert_eq!(net.n(4).status(), Status::Critical);
    assert_eq!((net.n(0).tokens(), net.n(1).tokens()), (0, 0));

    // (c) 4 releases and returns the token to 1; 3 releases and returns its token to 0,
    // which passes it on to 2.
    assert_eq!(
        net.release(4),
        vec![send(1, Token(h(1, 0, 4).into(), fence(1, 2)))]
    );
    let (_, a) = net.deliver(4, 1);
    assert_eq!(
        a,
        vec![
            send(4, Message::token_ack(h(1, -1, 1), 1)),
            enter_with(1, 3)
        ]
    );
    assert_eq!(
        net.release(3),
        vec![send(0, Token(h(0, -1, 3).into(), fence(0, 2)))]
    );
    let (_, a) = net.deliver(3, 0);
    assert_eq!(
        a,
        vec![
            send(3, Message::token_ack(h(0, -2, 0), 1)),
            send(2, Token(h(0, -2, 0).into(), fence(0, 2)))
        ]
    );
    net.deliver_all();
    assert_eq!(net.n(2).status(), Status::Critical);
    assert_eq!(net.height(2), h(0, -3, 2));
    assert_eq!(net.release(1), vec![]);
    assert_eq!(net.release(2), vec![]);
    net.deliver_all();
    for i in 0..5 {
        assert_eq!(net.queue(i), Vec::<u32>::new(), "no pending requests");
    }
    assert_eq!(
        (0..5).map(|i| net.n(i).tokens()).collect::<Vec<_>>(),
        vec![0, 1, 1, 0, 0]
    );

    // (d) 4 requests; its lowest neighbour is now 2.
    assert_eq!(net.request(4), vec![send(2, Request(h(1, 0, 4).into()))]);
    assert_eq!(net.next(4), 2);

    // (e) 2 sends its token; 4 lowers its height, tells 1, and enters.
    let (_, a) = net.deliver(4, 2);
    assert_eq!(a, vec![send(4, Token(h(0, -3, 2).into(), fence(0, 3)))]);
    let (_, a) = net.deliver(2, 4);
    assert_eq!(
        a,
        vec![
            send(1, LinkInfo(h(0, -4, 4).into())),
            send(2, Message::token_ack(h(0, -4, 4), 1)),
            enter_with(0, 4)
        ]
    );

    // (f) 1, a token holder with no incoming link, lowers itself below 4.
    let (_, a) = net.deliver(4, 1);
    assert_eq!(a, vec![send(4, LinkInfo(h(-1, -1, 1).into()))]);
    assert!(net.height(1) < net.height(4));
    assert_eq!(net.n(1).tokens(), 1);

    net.release(4);
    net.deliver_all();
    net.quiescent();
    // "In a static network, no node will have to raise its height."
    assert_eq!(net.nodes.iter().map(Node::raises).sum::<u64>(), 0);
}

#[test]
fn figure_3_dynamic_run_link_failure_raise_and_reroute() {
    let mut net = fig2_a();

    // (b) 3 moves: a link to 1 forms and its links to 2 and 0 fail.
    let (a1, a3) = net.link_up(1, 3);
    assert_eq!(a1, vec![send(3, LinkInfo(h(1, 1, 1).into()))]);
    assert_eq!(a3, vec![send(1, LinkInfo(h(1, 0, 3).into()))]);
    net.deliver_all();
    assert!(net.n(3).neighbors().is_member(NodeId(1)));
    let (a2, a3) = net.link_down(2, 3);
    assert_eq!(a2, vec![], "2 still has an outgoing link, to next = 0");
    assert_eq!(a3, vec![], "3 still has 0 below it");
    assert_eq!(net.next(2), 0);
    let (a0, a3) = net.link_down(0, 3);
    assert_eq!(a0, vec![]);
    assert_eq!(net.queue(0), vec![2], "0 dropped 3 from its queue");

    // (c) 3 has no outgoing link left: it raises above 1 and asks 1.
    assert_eq!(
        a3,
        vec![
            send(1, LinkInfo(h(2, 0, 3).into())),
            send(1, Request(h(2, 0, 3).into()))
        ]
    );
    assert_eq!(net.height(3), h(2, 0, 3));
    assert_eq!(net.next(3), 1);
    assert_eq!(net.n(3).raises(), 1);
    net.deliver_all();
    assert_eq!(net.queue(1), vec![4, 3]);

    // (d) 0 sends its token to 2.
    assert_eq!(
        net.release(0),
        vec![send(2, Token(h(0, 0, 0).into(), fence(0, 1)))]
    );
    net.deliver_all();
    assert_eq!(net.n(2).status(), Status::Critical);
    assert_eq!(net.height(2), h(0, -1, 2));

    // (e) 1 serves 4 (asking it back on behalf of 3); 4 returns the token to 1, which
    // sends it on to 3.
    assert_eq!(
        net.release(1),
        vec![
            send(4, Token(h(1, 1, 1).into(), fence(1, 1))),
            send(4, Request(h(1, 1, 1).into()))
        ]
    );
    net.deliver_all();
    assert_eq!(net.n(4).status(), Status::Critical);
    assert_eq!(net.queue(4), vec![1]);
    assert_eq!(
        net.release(4),
        vec![send(1, Token(h(1, 0, 4).into(), fence(1, 2)))]
    );
    let (_, a) = net.deliver(4, 1);
    assert_eq!(
        a,
        vec![
            send(4, Message::token_ack(h(1, -1, 1), 1)),
            send(3, Token(h(1, -1, 1).into(), fence(1, 2)))
        ]
    );
    net.deliver_all();
    assert_eq!(net.n(3).status(), Status::Critical);
    assert_eq!(net.height(3), h(1, -2, 3));
    assert_eq!(net.n(3).tokens(), 1);

    net.release(2);
    net.release(3);
    net.deliver_all();
    net.quiescent();
}

// ---------------------------------------------------------------- figures 4 and 5

/// Seven nodes, holders 3 and 5 (`k = 2`): a ring 3-0-2-1-3 on the left, and 4, 5, 6 on the
/// right, joined through 2-4. Heights are hop distances to the nearest holder, so 4 and 6 both
/// have 5 as their lowest neighbour.
const FIG4_EDGES: [(u32, u32); 8] = [
    (3, 0),
    (3, 1),
    (0, 2),
    (1, 2),
    (2, 4),
    (4, 5),
    (5, 6),
    (4, 6),
];

fn fig4(fwd: bool) -> Net {
    let configs = reverse_link::network(
        7,
        &ids(&FIG4_EDGES),
        &[NodeId(3), NodeId(5)],
        Settings::new(2).with_forwarding(fwd),
    )
    .expect("valid network");
    Net::new(configs)
}

fn ids(edges: &[(u32, u32)]) -> Vec<(NodeId, NodeId)> {
    edges.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect()
}

#[test]
fn figure_4_krl_leaves_a_token_idle_while_others_wait() {
    let mut net = fig4(false);
    assert_eq!(net.request(3), vec![enter()]);
    assert_eq!(net.release(3), vec![]);
    assert_eq!(net.request(5), vec![enter_with(1, 1)]);
    assert_eq!(net.request(6), vec![send(5, Request(h(1, 0, 6).into()))]);
    assert_eq!(net.request(4), vec![send(5, Request(h(1, 0, 4).into()))]);
    net.deliver_link(6, 5);
    net.deliver_all();
    assert_eq!(net.queue(5), vec![6, 4]);
    // Quiet: 3 holds an idle token in its remainder section while 4 and 6 wait.
    assert_eq!(net.n(3).tokens(), 1);
    assert_eq!(net.n(3).status(), Status::Remainder);
    assert_eq!(net.queue(3), Vec::<u32>::new());
    assert_eq!(net.n(4).status(), Status::Waiting);
    assert_eq!(net.n(6).status(), Status::Waiting);
    assert!(net.channels.is_empty());

    // They take turns with 5's token.
    assert_eq!(
        net.release(5),
        vec![
            send(6, Token(h(0, 0, 5).into(), fence(1, 1))),
            send(6, Request(h(0, 0, 5).into()))
        ]
    );
    net.deliver_all();
    assert_eq!(net.n(6).status(), Status::Critical);
    assert_eq!(net.n(4).status(), Status::Waiting);
    net.release(6);
    net.deliver_all();
    assert_eq!(net.n(4).status(), Status::Critical);
    assert_eq!(net.n(3).tokens(), 1, "3's token never moved");
    net.release(4);
    net.deliver_all();
    net.quiescent();
}

#[test]
fn figure_5_krlf_forwards_the_idle_token_and_marks_links_visited() {
    let mut net = fig4(true);
    // (a) 3 holds a token and nobody near it wants the critical section.
    assert_eq!(net.request(3), vec![enter()]);
    // 3 releases: the token goes to its lowest unvisited neighbour, 0.
    assert_eq!(
        net.release(3),
        vec![send(0, Token(h(0, 0, 3).into(), fence(0, 1)))]
    );
    assert_eq!(net.visited(3), vec![0]);
    // (b) it travels 0 → 2 → 1 → 3, each link marked at both ends.
    let hops = [(3, 0, 2), (0, 2, 1), (2, 1, 3)];
    for (from, at, to) in hops {
        let (msg, actions) = net.deliver(from, at);
        assert!(msg.is_token(), "{msg:?}");
        let sent: Vec<u32> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, msg: Token(..) } => Some(to.0),
                _ => None,
            })
            .collect();
        assert_eq!(
            sent,
            vec![to],
            "n{at} forwards to its lowest unvisited neighbour"
        );
        assert!(
            net.visited(at).contains(&from),
            "n{at} marks the link it came over"
        );
        assert!(
            net.visited(at).contains(&to),
            "n{at} marks the link it went over"
        );
        assert_eq!(net.n(at).tokens(), 0);
        net.deliver_all_but_tokens();
        assert_eq!(net.tokens_in_flight(), vec![(at, to)]);
    }
    assert_eq!(net.visited(0), vec![2, 3]);
    assert_eq!(net.visited(2), vec![0, 1]);
    assert_eq!(net.visited(1), vec![2, 3]);
    // Back at 3 with an empty queue and every link visited: the marks are cleared and the
    // forwarding starts over, towards 3's lowest neighbour (1, which just had the token).
    let (_, actions) = net.deliver(1, 3);
    assert_eq!(
        actions,
        vec![
            send(0, LinkInfo(h(0, -4, 3).into())),
            send(1, Message::token_ack(h(0, -4, 3), 1)),
            send(1, Token(h(0, -4, 3).into(), fence(0, 1)))
        ]
    );
    assert_eq!(net.visited(3), vec![1]);
    // 5's token was never used nor forwarded: it is still at 5.
    assert_eq!(net.n(5).tokens(), 1);
}

#[test]
fn figure_4_with_krlf_the_idle_token_reaches_a_waiting_node_before_5_releases() {
    let mut net = fig4(true);
    net.request(5);
    net.request(6);
    net.request(4);
    net.deliver_link(6, 5);
    net.deliver_all();
    assert_eq!(net.queue(5), vec![6, 4]);
    net.request(3);
    net.release(3);
    // 5 stays in the critical section; the forwarded token must find 4 or 6.
    let mut steps = 0;
    while net.n(4).status() == Status::Waiting && net.n(6).status() == Status::Waiting {
        if !net.step() {
            net.fail("nothing in flight while 4 and 6 wait".into());
        }
        steps += 1;
        if steps > 2_000 {
            net.fail("the forwarded token did not reach 4 or 6 in 2000 deliveries".into());
        }
    }
    assert_eq!(net.n(5).status(), Status::Critical);
}

// ---------------------------------------------------------------- beyond the figures

/// Two nodes, `k = 2`, both tokens at node 0, forwarding on.
fn pair_krlf() -> Net {
    let cfg = |id: u32, tokens: u32, own: Height, other: Height| {
        Config::new(
            NodeId(id),
            Settings::new(2).with_forwarding(true),
            tokens,
            own,
            vec![other],
        )
        .with_first_token(0)
    };
    Net::new(vec![
        cfg(0, 2, h(0, 0, 0), h(1, 0, 1)),
        cfg(1, 0, h(1, 0, 1), h(0, 0, 0)),
    ])
}

#[test]
fn krlf_two_unacknowledged_tokens_to_one_neighbour_cause_no_reversal_in_a_static_network() {
    let mut net = pair_krlf();
    assert_eq!(net.request(0), vec![enter()]);
    // Release forwards one idle token; 0 keeps the other and, seeing 1 below, lowers.
    assert_eq!(
        net.release(0),
        vec![
            send(1, Token(h(0, 0, 0).into(), fence(1, 0))),
            send(1, LinkInfo(h(-1, 0, 0).into()))
        ]
    );
    assert_eq!(net.request(0), vec![enter_with(0, 2)]);
    // Every link visited: the marks are cleared and the second token follows the first
    // before 1 has acknowledged either.
    assert_eq!(
        net.release(0),
        vec![send(1, Token(h(-1, 0, 0).into(), fence(0, 2)))]
    );
    assert_eq!(net.pending(0, 1).len(), 3);
    net.deliver_link(0, 1);
    assert_eq!(net.height(1), h(-1, -1, 1));
    // The ack of the first token reports a height 1 no longer has. Trusting it makes 0 think
    // 1 is above it; the paper's receivedLI (set only by the LinkInfo that matches the height
    // guessed for the *latest* token) would have ignored it.
    assert_eq!(net.pending(1, 0)[0], Message::token_ack(h(0, -1, 1), 1));
    net.deliver(1, 0);
    assert_eq!(
        net.nodes.iter().map(Node::raises).sum::<u64>(),
        0,
        "a node raised its height in a static network"
    );
    for _ in 0..200 {
        if !net.step() {
            break;
        }
        assert_eq!(
            net.nodes.iter().map(Node::raises).sum::<u64>(),
            0,
            "a node raised its height in a static network"
        );
    }
}

/// The paper (section 4.2): "In a static network, no node will have to raise its height."
fn static_runs_never_raise(forwarding: bool) {
    use manet_mutex::reverse_link::Settings;
    use manet_mutex_sim::token::{self, Config as SimConfig};
    use manet_mutex_sim::Params;
    use manet_mutex_sim::{Graph, Workload};
    use rand::SeedableRng;

    let mut raised = Vec::new();
    for seed in 0..40u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let n = 4 + (seed as usize % 9);
        let graph = Graph::random_connected(n, n + n / 2, &mut rng);
        let k = 1 + (seed as u32 % 3);
        let mut config = SimConfig::new(
            graph,
            Params::first_nodes(Settings::new(k).with_forwarding(forwarding), k),
            seed,
        );
        config.workload = Workload {
            lambda_req: 0.1,
            ..Workload::default()
        };
        config.duration = 200.0;
        let outcome = token::run::<Node>(config).unwrap_or_else(|v| panic!("{v}"));
        if outcome.metrics.raises > 0 {
            raised.push((seed, n, k, outcome.metrics.raises));
        }
    }
    assert_eq!(
        raised,
        vec![],
        "(seed, n, k, raises) of static runs that raised"
    );
}

#[test]
fn krl_static_runs_never_raise_a_height() {
    static_runs_never_raise(false);
}

#[test]
fn krlf_static_runs_never_raise_a_height() {
    static_runs_never_raise(true);
}
