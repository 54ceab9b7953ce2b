//! Fuzz body: one Ricart–Agrawala host fed arbitrary events directly — REQUESTs and REPLYs with
//! any timestamp from any sender (strangers, itself), stale and duplicate REPLYs, timeouts of
//! timers it never set, events in the wrong state or unsupported. The rules checked on every
//! event are `node_input::drive`'s, with `perm_input::consistent` after each accepted one.
//!
//! Compiled into the `ricart_agrawala_node` fuzz target (`fuzz/`) and run over seeded inputs
//! by `tests/faults/fuzz_ricart_agrawala.rs`.

use arbitrary::Arbitrary;
use manet_mutex::ricart_agrawala::{Config, Message, Node, Settings};
use manet_mutex::{Event, Protocol, Status};

use super::node_input::{Local, Peer};
use super::perm_input::{drive_host, hosts_and_id, Stamp};

#[derive(Debug, Clone, Copy, Arbitrary)]
enum In {
    Local(Local),
    Request { from: Peer, ts: Stamp, seq: u64 },
    Reply { from: Peer, ts: Stamp, seq: u64 },
}

impl In {
    fn event(self) -> Event<Message> {
        match self {
            In::Local(local) => local.event(),
            // The fence comes from `seq`: the input layout is frozen for the corpora.
            In::Request { from, ts, seq } => from.sends(Message::request(ts.ts(), seq, seq)),
            In::Reply { from, ts, seq } => from.sends(Message::reply(ts.ts(), seq, seq)),
        }
    }
}

/// One Ricart–Agrawala host: its configuration (possibly invalid) and its events.
#[derive(Debug, Arbitrary)]
pub struct Input {
    hosts: u8,
    id: Peer,
    retransmit_after: u8,
    #[arbitrary(with = crate::fuzz::sized_vec)]
    events: Vec<In>,
}

/// Only the application's misuse is an error; Ricart–Agrawala has no host modes or links.
/// A host that left takes no request (L1).
fn misuse(node: &Node, event: &Event<Message>) -> bool {
    match event {
        Event::Request(r) => {
            node.status() != Status::Remainder || r.resources != 1 || node.has_left()
        }
        Event::Release => node.status() != Status::Critical,
        Event::Receive { .. } | Event::Timeout(_) => false,
        // Leaving for good (L2): from the remainder section, once.
        Event::Leave => node.status() != Status::Remainder || node.has_left(),
        _ => true,
    }
}

/// Build the node (an invalid configuration must be refused) and feed it the events.
pub fn run(input: &Input) {
    let (hosts, id) = hosts_and_id(input.hosts, input.id);
    // A timeout of 0 sometimes, which the configuration check must refuse.
    let settings = Settings::new(hosts, u64::from(input.retransmit_after % 4));
    let config = Config::new(id, settings);
    let Ok(node) = Node::new(config) else {
        return;
    };
    drive_host(node, input.events.iter().map(|e| e.event()), misuse, hosts);
}
