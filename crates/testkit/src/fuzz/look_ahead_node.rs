//! Fuzz body: one look-ahead host fed arbitrary events directly — REQUESTs, REPLYs and
//! DOZE/DISCONNECT/RECONNECT announcements with any timestamp and epoch from any sender,
//! timeouts of timers it never set, mode changes in every mode and section. The rules checked
//! on every event are `node_input::drive`'s, with `perm_input::consistent` (the sets'
//! partition, a REPLY outstanding exactly while waiting) after each accepted one.
//!
//! Compiled into the `look_ahead_node` fuzz target (`fuzz/`) and run over seeded inputs by
//! `tests/faults/fuzz_look_ahead.rs`.

use arbitrary::Arbitrary;
use manet_mutex::look_ahead::{Announcement, Config, Message, Mode, Node, Settings};
use manet_mutex::{Event, Protocol, Status};

use super::node_input::{Local, Peer};
use super::perm_input::{drive_host, hosts_and_id, Stamp};

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Kind {
    Request,
    Reply,
    Doze,
    Disconnect,
    Reconnect,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum In {
    Local(Local),
    Receive {
        from: Peer,
        kind: Kind,
        ts: Stamp,
        /// The epoch of a REQUEST or REPLY, `seen` of an announcement.
        epoch: u64,
        /// The request number of a REQUEST or REPLY, `seen` of a REPLY.
        seq: u64,
        /// An announcement's `absent`.
        absent: bool,
        /// Whether an announcement carries its check word or a corrupted one.
        sealed: bool,
    },
}

impl In {
    fn event(self) -> Event<Message> {
        match self {
            In::Local(local) => local.event(),
            In::Receive {
                from,
                kind,
                ts,
                epoch,
                seq,
                absent,
                sealed,
            } => {
                let ts = ts.ts();
                // The fence comes from `seq`: the input layout is frozen for the corpora.
                let mut a = Announcement::new(ts, epoch, absent, seq);
                if !sealed {
                    a.check = a.check.wrapping_add(seq | 1);
                }
                let msg = match kind {
                    Kind::Request => Message::request(ts, seq, epoch, seq),
                    Kind::Reply => {
                        let mut reply = Message::reply(ts, seq, epoch, seq, seq);
                        if let Message::Reply { check, .. } = &mut reply {
                            if !sealed {
                                *check = check.wrapping_add(seq | 1);
                            }
                        }
                        reply
                    }
                    Kind::Doze => Message::Doze(a),
                    Kind::Disconnect => Message::Disconnect(a),
                    Kind::Reconnect => Message::Reconnect(a),
                };
                from.sends(msg)
            }
        }
    }
}

/// One look-ahead host: its configuration (possibly invalid) and its events.
#[derive(Debug, Arbitrary)]
pub struct Input {
    hosts: u8,
    id: Peer,
    retransmit_after: u8,
    /// `None`: the seeded matrix; `Some`: an explicit `Info_set` (possibly invalid).
    #[arbitrary(with = info_set)]
    info: Option<Vec<Peer>>,
    seed: u64,
    #[arbitrary(with = crate::fuzz::sized_vec)]
    events: Vec<In>,
}

fn info_set(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<Option<Vec<Peer>>> {
    Ok(if bool::arbitrary(u)? {
        Some(crate::fuzz::sized_vec(u)?)
    } else {
        None
    })
}

/// The application's misuse and mode changes the host's mode or section forbids.
fn misuse(node: &Node, event: &Event<Message>) -> bool {
    let (status, mode) = (node.status(), node.mode());
    let remainder = status == Status::Remainder;
    match event {
        Event::Request(r) => !remainder || r.resources != 1 || mode != Mode::Normal,
        Event::Release => status != Status::Critical,
        Event::Receive { .. } | Event::Timeout(_) => false,
        Event::Doze | Event::Disconnect => mode != Mode::Normal || !remainder,
        Event::Wake => mode != Mode::Dozing,
        Event::Reconnect => mode == Mode::Dozing || node.has_left(),
        // Leaving for good (L3): from the remainder section, once, in any mode.
        Event::Leave => !remainder || node.has_left(),
        _ => true,
    }
}

/// Build the node (an invalid configuration must be refused) and feed it the events.
pub fn run(input: &Input) {
    let (hosts, id) = hosts_and_id(input.hosts, input.id);
    let settings =
        Settings::new(hosts, u64::from(input.retransmit_after % 4)).with_seed(input.seed);
    let config = match &input.info {
        None => Config::new(id, settings),
        Some(info) => {
            Config::new(id, settings).with_info_set(info.iter().take(8).map(|p| p.id()).collect())
        }
    };
    let Ok(node) = Node::new(config) else {
        return;
    };
    drive_host(node, input.events.iter().map(|e| e.event()), misuse, hosts);
}
