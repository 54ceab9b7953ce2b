//! What a node tells the resource process, one text line per UDP datagram. Every report is
//! numbered per node and resent until the resource acknowledges it (`ack <seq>`), so the
//! resource sees each once and in order over any network; it answers `stop` once every node
//! reached its target.

use manet_mutex::NodeId;

/// A node's report to the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// `node` entered the critical section holding `resources` units, with the fence of its
    /// grant (`lane`, `value`).
    Enter {
        node: NodeId,
        seq: u64,
        resources: u32,
        lane: u32,
        value: u64,
    },
    /// `node` is about to leave: it releases only once this is acknowledged.
    Exit { node: NodeId, seq: u64 },
    /// `node` reached its target number of entries (it goes on serving its peers).
    Done { node: NodeId, seq: u64 },
}

impl Report {
    pub fn node(&self) -> NodeId {
        match *self {
            Report::Enter { node, .. } | Report::Exit { node, .. } | Report::Done { node, .. } => {
                node
            }
        }
    }

    pub fn seq(&self) -> u64 {
        match *self {
            Report::Enter { seq, .. } | Report::Exit { seq, .. } | Report::Done { seq, .. } => seq,
        }
    }

    pub fn line(&self) -> String {
        match *self {
            Report::Enter {
                node,
                seq,
                resources,
                lane,
                value,
            } => format!("enter {} {seq} {resources} {lane} {value}", node.0),
            Report::Exit { node, seq } => format!("exit {} {seq}", node.0),
            Report::Done { node, seq } => format!("done {} {seq}", node.0),
        }
    }

    /// The report in `line`, or `None` if it is none.
    pub fn parse(line: &str) -> Option<Report> {
        let mut words = line.split_ascii_whitespace();
        let kind = words.next()?;
        let mut num = || words.next()?.parse::<u64>().ok();
        let node = NodeId(u32::try_from(num()?).ok()?);
        let seq = num()?;
        let report = match kind {
            "enter" => Report::Enter {
                node,
                seq,
                resources: u32::try_from(num()?).ok()?,
                lane: u32::try_from(num()?).ok()?,
                value: num()?,
            },
            "exit" => Report::Exit { node, seq },
            "done" => Report::Done { node, seq },
            _ => return None,
        };
        words.next().is_none().then_some(report)
    }
}
