//! The token cores over link sessions on an unreliable datagram network.

use manet_mutex::reverse_link;
use manet_mutex::session::Settings;
use manet_mutex::sim::{Graph, Params};
use manet_mutex::testkit::datagram::{run_schedule, SessionOp, Weather};
use manet_mutex::testkit::SessionNet;
use manet_mutex::{CsRequest, NodeId};

fn settings() -> Settings {
    Settings::new(8, 96, 4).with_keepalive(24)
}

#[test]
fn smoke() {
    let graph = Graph::from_edges(3, &[(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))]);
    let params = Params::new(reverse_link::Settings::new(1), vec![NodeId(0)]);
    let weather = Weather {
        loss: 200,
        duplicate: 100,
        max_delay: 5,
    };
    let net =
        SessionNet::<reverse_link::Node>::new(graph, &params, settings(), weather, 7).unwrap();
    let ops = [
        SessionOp::Request(2, ()),
        SessionOp::Wait(50),
        SessionOp::Request(1, ()),
        SessionOp::Flap {
            link: 0,
            ticks: 200,
            direction: 0,
        },
        SessionOp::Request(0, ()),
        SessionOp::Wait(200),
        SessionOp::Close {
            link: 1,
            lower: true,
        },
        SessionOp::Request(2, ()),
    ];
    let report = run_schedule(net, &ops, |()| CsRequest::ONE, 20_000);
    println!("{report:#?}");
}
