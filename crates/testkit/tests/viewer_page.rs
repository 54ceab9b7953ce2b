//! A test-kit driver's failure message names a trace-viewer page of the whole run. (It was in
//! `manet-mutex-sim`'s viewer tests; it is here so that the simulator does not need the test
//! kit as a dev-dependency, which its examples would then build.)

use std::path::PathBuf;

use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex::NodeId;

/// A hand-driven network's failure message names a viewer page with the whole run in it.
#[test]
fn a_drivers_failure_message_names_a_page_of_the_run() {
    use manet_mutex::CsRequest;
    use manet_mutex_testkit::{PermNet, TokenNet};
    let line = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
    let mut net = TokenNet::<Node>::with_edges(3, &line, &[NodeId(0)], Settings::new(1)).unwrap();
    net.request(NodeId(2), CsRequest::ONE);
    net.run(100).unwrap();
    let text = net.trace_text();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("viewer (").and_then(|l| l.split_once("): ")))
        .map(|(_, p)| PathBuf::from(p))
        .unwrap_or_else(|| panic!("no page named in:\n{text}"));
    let page = std::fs::read_to_string(&path).unwrap();
    // Events in plain words (the viewer's `trace::words`), states as data.
    assert!(
        page.contains("node 2 asks for the critical section")
            && page.contains("\"status\":\"critical\""),
        "{}",
        path.display()
    );

    let mut perm = PermNet::<manet_mutex::ricart_agrawala::Node>::new(3, 1)
        .unwrap()
        .checked();
    perm.apply_valid(NodeId(1), manet_mutex::Event::Request(CsRequest::ONE));
    assert!(perm.trace_text().contains("viewer (1 steps): "));
}
