//! The protected resource: `k` units that the nodes' critical sections hold. It takes the
//! nodes' reports in the order it receives them (a node leaves only once its exit is
//! acknowledged, so an entry that follows a release in the algorithm also follows it here) and
//! checks that no more than `k` units are ever held, that nobody enters twice or leaves
//! without entering, and, with `--check-fences`, every grant's fence.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc;
use std::time::Duration;

use clap::Args;
use manet_mutex::NodeId;

use crate::report::Report;
use crate::Outcome;

#[derive(Debug, Args)]
pub struct ResourceArgs {
    /// The address to receive the nodes' reports on.
    #[arg(long)]
    listen: SocketAddr,
    /// Units of the resource: 1 for the permission algorithms, k for KRL and prioritized.
    #[arg(long, default_value_t = 1)]
    k: u32,
    /// Nodes in the cluster: once each reported its target reached, the resource tells them
    /// to stop and prints its verdict.
    #[arg(long)]
    nodes: u32,
    /// Check every grant's fence: per lane, each value must exceed the last one seen.
    #[arg(long)]
    check_fences: bool,
    /// With --check-fences: holders of one lane may be inside together (prioritized
    /// h-out-of-k), so their reports can arrive out of grant order; each value must then be
    /// new in its lane instead (a repeated value is a duplicated grant).
    #[arg(long)]
    concurrent_grants: bool,
}

/// What the resource saw.
#[derive(Debug, Default)]
struct Checker {
    k: u32,
    check_fences: bool,
    concurrent_grants: bool,
    /// Units held by each node inside.
    inside: BTreeMap<NodeId, u32>,
    held: u64,
    max_held: u64,
    entries: u64,
    /// The highest fence value seen per lane.
    fences: BTreeMap<u32, u64>,
    /// Every fence seen, with --concurrent-grants.
    seen: BTreeSet<(u32, u64)>,
    /// The last report taken from each node, and where it reports from.
    last_seq: BTreeMap<NodeId, u64>,
    addrs: BTreeMap<NodeId, SocketAddr>,
    done: BTreeSet<NodeId>,
    violations: Vec<String>,
}

/// The fence rule of the protected resource: it keeps the highest value per lane and refuses
/// anything not above it (a stale holder, or a duplicated grant).
fn fence_ok(fences: &mut BTreeMap<u32, u64>, lane: u32, value: u64) -> bool {
    let last = fences.entry(lane).or_insert(0);
    let fresh = value > *last;
    if fresh {
        *last = value;
    }
    fresh
}

impl Checker {
    fn take(&mut self, report: Report) {
        match report {
            Report::Enter {
                node,
                resources,
                lane,
                value,
                ..
            } => {
                self.entries += 1;
                if self.check_fences && self.concurrent_grants {
                    if !self.seen.insert((lane, value)) {
                        self.violations
                            .push(format!("{node:?} entered with fence {lane}/{value} again"));
                    }
                } else if self.check_fences && !fence_ok(&mut self.fences, lane, value) {
                    self.violations.push(format!(
                        "{node:?} entered with fence {lane}/{value}, not above {}",
                        self.fences[&lane]
                    ));
                }
                if self.inside.insert(node, resources).is_some() {
                    self.violations
                        .push(format!("{node:?} entered while inside already"));
                }
                self.held += u64::from(resources);
                self.max_held = self.max_held.max(self.held);
                if self.held > u64::from(self.k) {
                    self.violations.push(format!(
                        "{} units held at once, only {} exist: {:?}",
                        self.held, self.k, self.inside
                    ));
                }
            }
            Report::Exit { node, .. } => match self.inside.remove(&node) {
                Some(units) => self.held -= u64::from(units),
                None => self
                    .violations
                    .push(format!("{node:?} left without having entered")),
            },
            Report::Done { node, .. } => {
                self.done.insert(node);
            }
        }
    }
}

pub fn run(args: ResourceArgs) -> Outcome {
    let socket = UdpSocket::bind(args.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    socket.set_read_timeout(Some(Duration::from_millis(50)))?;
    // A launcher stops the resource early with `quit` on standard input.
    let (quit_tx, quit) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            if line.is_ok_and(|l| l.trim() == "quit") {
                let _ = quit_tx.send(());
                return;
            }
        }
    });
    let mut c = Checker {
        k: args.k,
        check_fences: args.check_fences,
        concurrent_grants: args.concurrent_grants,
        ..Checker::default()
    };
    let mut buf = [0u8; 256];
    let mut garbage = 0u64;
    while c.done.len() < args.nodes as usize && quit.try_recv().is_err() {
        let (len, from) = match socket.recv_from(&mut buf) {
            Ok(got) => got,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => return Err(e.into()),
        };
        let report = std::str::from_utf8(&buf[..len])
            .ok()
            .and_then(Report::parse);
        // Reports naming no node of the cluster are garbage too.
        let Some(report) = report.filter(|r| r.node().0 < args.nodes) else {
            garbage += 1;
            continue;
        };
        let node = report.node();
        // Resent reports were taken already: acknowledge them again, take them once.
        if c.last_seq
            .get(&node)
            .is_none_or(|&last| report.seq() > last)
        {
            c.last_seq.insert(node, report.seq());
            c.addrs.insert(node, from);
            c.take(report);
        }
        socket.send_to(format!("ack {}", report.seq()).as_bytes(), from)?;
    }
    if c.done.len() == args.nodes as usize {
        for addr in c.addrs.values() {
            socket.send_to(b"stop", addr)?;
        }
    }
    for v in &c.violations {
        eprintln!("resource: VIOLATION {v}");
    }
    println!(
        "verdict {} entries={} max_held={} k={} done={} violations={} garbage={}",
        if c.violations.is_empty() {
            "ok"
        } else {
            "violated"
        },
        c.entries,
        c.max_held,
        c.k,
        c.done.len(),
        c.violations.len(),
        garbage
    );
    Ok(c.violations.is_empty())
}
