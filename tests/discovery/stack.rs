//! Discovery feeding link sessions feeding KRL cores that start with no topology: the
//! neighbours are learnt by radio range, and a request far from the token is served.

use std::collections::VecDeque;

use manet_mutex::discovery::{Discovery, Settings};
use manet_mutex::reverse_link::{network, Message, Node, Settings as KrlSettings};
use manet_mutex::session::{Datagram, Session, SessionEvent, Settings as SessionSettings};
use manet_mutex::{Action, CsRequest, Event, NodeId, Protocol, Status};

struct Host {
    discovery: Discovery,
    session: Session<Message>,
    core: Node,
}

enum Packet {
    Hello(manet_mutex::discovery::Hello),
    Frame(Datagram<Message>),
}

#[test]
fn cores_with_no_topology_learn_their_neighbours_through_discovery_and_sessions() {
    // A line by radio range: 0 - 1 - 2 (0 and 2 out of range of each other).
    let in_range = |a: usize, b: usize| a.abs_diff(b) == 1;
    let configs = network(3, &[], &[NodeId(0)], KrlSettings::new(1)).unwrap();
    assert!(configs.iter().all(|c| c.neighbors.is_empty()));
    let mut hosts: Vec<Host> = configs
        .into_iter()
        .enumerate()
        .map(|(i, config)| Host {
            discovery: Discovery::new(NodeId(i as u32), Settings::DEFAULT.with_seed(5), 0).unwrap(),
            session: Session::new(NodeId(i as u32), SessionSettings::DEFAULT)
                .unwrap()
                .with_precious(Message::is_token),
            core: Node::new(config).unwrap(),
        })
        .collect();
    let mut entered = None;
    let mut requested = false;
    for now in 0..5000u64 {
        if now == 1000 {
            let actions: Vec<_> = hosts[2]
                .core
                .handle(Event::Request(CsRequest::ONE))
                .unwrap()
                .collect();
            for action in actions {
                if let Action::Send { to, msg } = action {
                    hosts[2].session.send(to, msg, now).unwrap();
                }
            }
            requested = true;
        }
        for h in hosts.iter_mut() {
            if h.discovery.poll_timeout() <= now {
                h.discovery.handle_timeout(now);
            }
            if h.session.poll_timeout().is_some_and(|t| t <= now) {
                h.session.handle_timeout(now);
            }
        }
        // Move everything until quiet (no delay on this radio).
        let mut air: VecDeque<(usize, usize, Packet)> = VecDeque::new();
        loop {
            for (i, h) in hosts.iter_mut().enumerate() {
                while let Some(event) = h.discovery.poll_event() {
                    event.apply(&mut h.session, now).unwrap();
                }
                while let Some(event) = h.session.poll_event() {
                    let SessionEvent::Core(event) = event else {
                        panic!("a loss on a lossless radio: {event:?}");
                    };
                    for action in h.core.handle(event).unwrap().collect::<Vec<_>>() {
                        match action {
                            Action::Send { to, msg } => h.session.send(to, msg, now).unwrap(),
                            Action::EnterCritical { .. } => entered = Some((i, now)),
                            _ => {}
                        }
                    }
                }
                while let Some(hello) = h.discovery.poll_transmit() {
                    for j in (0..3).filter(|&j| j != i && in_range(i, j)) {
                        air.push_back((i, j, Packet::Hello(hello)));
                    }
                }
                while let Some(t) = h.session.poll_transmit() {
                    let j = t.to.index();
                    if in_range(i, j) {
                        let from = NodeId(i as u32);
                        air.push_back((
                            i,
                            j,
                            Packet::Frame(Datagram {
                                from,
                                frame: t.frame,
                            }),
                        ));
                    }
                }
            }
            if air.is_empty() {
                break;
            }
            while let Some((_, to, packet)) = air.pop_front() {
                match packet {
                    Packet::Hello(hello) => hosts[to].discovery.handle_hello(now, &hello),
                    Packet::Frame(d) => hosts[to].session.handle_datagram(d, now),
                }
            }
        }
        if entered.is_some() {
            break;
        }
    }
    assert!(requested);
    let (at, when) = entered.expect("node 2 entered");
    assert_eq!(at, 2);
    assert!(when < 1500, "entered at {when}");
    assert_eq!(hosts[2].core.status(), Status::Critical);
    // Each learnt exactly its radio neighbours.
    let heard: Vec<Vec<NodeId>> = hosts
        .iter()
        .map(|h| h.discovery.neighbours().collect())
        .collect();
    assert_eq!(
        heard,
        [vec![NodeId(1)], vec![NodeId(0), NodeId(2)], vec![NodeId(1)]]
    );
}
