//! What a node tells the resource process, one text line per UDP datagram. Every report is
//! numbered per node incarnation and resent until the resource acknowledges it (`ack <seq>`),
//! so the resource sees each once and in order over any network; it answers `stop` once every
//! node reached its target.
//!
//! Every report names the node's *incarnation* (0 for the process first started, one more for
//! each restart after a crash): the launcher tells the resource which incarnation it killed,
//! and the resource drops whatever that incarnation sent that it had not taken yet (a dead
//! process's last datagrams may still be on their way).

use manet_mutex::NodeId;

/// A node's report to the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// `node` entered the critical section holding `resources` units, with the fence of its
    /// grant (`lane`, `value`).
    Enter {
        node: NodeId,
        incarnation: u32,
        seq: u64,
        resources: u32,
        lane: u32,
        value: u64,
    },
    /// `node` is about to leave: it releases only once this is acknowledged.
    Exit {
        node: NodeId,
        incarnation: u32,
        seq: u64,
    },
    /// The lease of `node`'s entry under (`lane`, `value`) ended while it was inside: it has
    /// stopped acting on the resource (the entry ended early), and releases once this is
    /// acknowledged, without an `Exit`.
    Expired {
        node: NodeId,
        incarnation: u32,
        seq: u64,
        lane: u32,
        value: u64,
    },
    /// `node` reached its target number of entries (it goes on serving its peers).
    Done {
        node: NodeId,
        incarnation: u32,
        seq: u64,
    },
}

impl Report {
    pub fn node(&self) -> NodeId {
        match *self {
            Report::Enter { node, .. }
            | Report::Exit { node, .. }
            | Report::Expired { node, .. }
            | Report::Done { node, .. } => node,
        }
    }

    pub fn incarnation(&self) -> u32 {
        match *self {
            Report::Enter { incarnation, .. }
            | Report::Exit { incarnation, .. }
            | Report::Expired { incarnation, .. }
            | Report::Done { incarnation, .. } => incarnation,
        }
    }

    pub fn seq(&self) -> u64 {
        match *self {
            Report::Enter { seq, .. }
            | Report::Exit { seq, .. }
            | Report::Expired { seq, .. }
            | Report::Done { seq, .. } => seq,
        }
    }

    pub fn line(&self) -> String {
        let (node, incarnation, seq) = (self.node().0, self.incarnation(), self.seq());
        match *self {
            Report::Enter {
                resources,
                lane,
                value,
                ..
            } => format!("enter {node} {incarnation} {seq} {resources} {lane} {value}"),
            Report::Exit { .. } => format!("exit {node} {incarnation} {seq}"),
            Report::Expired { lane, value, .. } => {
                format!("expired {node} {incarnation} {seq} {lane} {value}")
            }
            Report::Done { .. } => format!("done {node} {incarnation} {seq}"),
        }
    }

    /// The report in `line`, or `None` if it is none.
    pub fn parse(line: &str) -> Option<Report> {
        let mut words = line.split_ascii_whitespace();
        let kind = words.next()?;
        let mut num = || words.next()?.parse::<u64>().ok();
        let node = NodeId(u32::try_from(num()?).ok()?);
        let incarnation = u32::try_from(num()?).ok()?;
        let seq = num()?;
        let report = match kind {
            "enter" => Report::Enter {
                node,
                incarnation,
                seq,
                resources: u32::try_from(num()?).ok()?,
                lane: u32::try_from(num()?).ok()?,
                value: num()?,
            },
            "exit" => Report::Exit {
                node,
                incarnation,
                seq,
            },
            "expired" => Report::Expired {
                node,
                incarnation,
                seq,
                lane: u32::try_from(num()?).ok()?,
                value: num()?,
            },
            "done" => Report::Done {
                node,
                incarnation,
                seq,
            },
            _ => return None,
        };
        words.next().is_none().then_some(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_report_reads_back_and_nothing_else_does() {
        let (node, incarnation) = (NodeId(3), 2);
        for report in [
            Report::Enter {
                node,
                incarnation,
                seq: 7,
                resources: 2,
                lane: 1,
                value: (5 << 32) | 9,
            },
            Report::Exit {
                node,
                incarnation,
                seq: 8,
            },
            Report::Expired {
                node,
                incarnation,
                seq: 9,
                lane: 0,
                value: 4,
            },
            Report::Done {
                node,
                incarnation,
                seq: 10,
            },
        ] {
            assert_eq!(Report::parse(&report.line()), Some(report));
            assert_eq!(Report::parse(&format!("{} 1", report.line())), None);
        }
        for garbage in [
            "",
            "exit",
            "exit 1 0",
            "exit x 0 1",
            "stay 1 0 1",
            "done -1 0 1",
        ] {
            assert_eq!(Report::parse(garbage), None, "{garbage:?}");
        }
    }
}
