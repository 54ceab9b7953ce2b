//! The protected resource: `k` units that the nodes' critical sections hold. It takes the
//! nodes' reports in the order it receives them (a node leaves only once its exit is
//! acknowledged, so an entry that follows a release in the algorithm also follows it here) and
//! checks that no more than `k` units are ever held, that nobody enters twice or leaves
//! without entering, and, with `--check-fences`, every grant's fence.
//!
//! Fences are checked as a fenced resource would ([`Fences`]: per lane, a value above every one
//! admitted). Recovery makes tokens again under a new *generation*, the high half of the fence
//! value, so two kinds of refusal differ: a grant of an older generation than one admitted is
//! a *stale grant* (a token from before a regeneration, after a crash or a partition), which
//! the resource refuses as it must and counts (`refused_stale`); any other refusal is a
//! violation. A holder still inside when a later generation of its token is admitted is fenced
//! off (`superseded`): only acting holders count against `k`. The launcher names each process
//! it kills (`crashed <node> <incarnation>` or, not to be restarted, `gone ...`, on standard
//! input): the killed holder's units are free from then on, and its reports still on the way
//! are dropped. An entry whose lease ended (`expired`) ends there, without an exit.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc;
use std::time::Duration;

use clap::Args;
use manet_mutex::fence::Fences;
use manet_mutex::{Fence, NodeId};

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
    /// Check every grant's fence: per lane, each value must exceed the last one admitted
    /// (one of an older generation is refused as stale and counted, not a violation).
    #[arg(long)]
    check_fences: bool,
    /// With --check-fences: holders of one lane may be inside together (prioritized
    /// h-out-of-k), so their reports can arrive out of grant order; each value must then be
    /// new in its lane instead (a repeated value is a duplicated grant).
    #[arg(long)]
    concurrent_grants: bool,
    /// The nodes run a permission algorithm (look-ahead, Ricart–Agrawala): a fence refused
    /// because a host killed since was admitted one at or above it is the documented cost of
    /// several crashes (`docs/ALGORITHMS.md`, C6), counted as `refused_after_crash`, not a
    /// violation.
    #[arg(long)]
    permission: bool,
    /// Started by a launcher: quit when standard input closes (the launcher ended, however
    /// it ended), so that the resource never outlives its run.
    #[arg(long)]
    supervised: bool,
}

/// What the resource saw.
#[derive(Debug, Default)]
struct Checker {
    k: u32,
    check_fences: bool,
    concurrent_grants: bool,
    /// The entry of each node inside.
    inside: BTreeMap<NodeId, Holding>,
    /// Units held by the holders still acting (not fenced off by a newer grant).
    held: u64,
    max_held: u64,
    entries: u64,
    /// The highest fence value admitted per lane.
    fences: Fences,
    /// Every fence seen, and the newest generation per lane, with --concurrent-grants.
    seen: BTreeSet<(u32, u64)>,
    generations: BTreeMap<u32, u32>,
    /// Entries refused because a later generation of their token was admitted already: a
    /// grant of a token from before a regeneration (expected after a crash or a partition,
    /// and harmless: the resource refused it).
    refused_stale: u64,
    /// Holders fenced off while inside: a grant of a later generation of their token was
    /// admitted (the older holder can act no more).
    superseded: u64,
    /// Permission algorithms: entries refused because a host killed since was admitted a
    /// fence at or above theirs (C6: after several crashes, a dead host may have heard of a
    /// generation no live host knows).
    refused_after_crash: u64,
    /// Who was admitted the highest fence of each lane (node, incarnation).
    admitted_by: BTreeMap<u32, (NodeId, u32)>,
    /// Permission algorithms: refusals after a crash are counted, not violations (C6).
    permission: bool,
    /// Entries whose lease ended while inside (the node stopped acting and left early).
    expired: u64,
    /// Nodes killed while inside (their units are free from the kill on).
    crashed_inside: u64,
    /// Reports of an incarnation the launcher killed, dropped.
    from_dead: u64,
    /// The current incarnation of each node, its last report taken, where it reports from.
    incarnation: BTreeMap<NodeId, u32>,
    last_seq: BTreeMap<NodeId, u64>,
    addrs: BTreeMap<NodeId, SocketAddr>,
    /// The highest incarnation of each node the launcher killed.
    dead: BTreeMap<NodeId, u32>,
    done: BTreeSet<NodeId>,
    violations: Vec<String>,
}

/// One node's entry, as the resource holds it.
#[derive(Debug, Clone, Copy)]
struct Holding {
    units: u32,
    fence: Fence,
    /// Whether the resource admitted the grant and no later grant of its token fenced it off:
    /// only acting holders count against `k`.
    acting: bool,
}

impl Checker {
    /// The fence rule of the protected resource ([`Fences`]): per lane, a value above every one
    /// admitted. A refused fence of an older generation than the lane's newest is a stale
    /// grant, refused as it must be; any other refusal is a violation. Whether the entry acts.
    fn admit(&mut self, node: NodeId, incarnation: u32, fence: Fence) -> bool {
        match self.fences.admit(fence) {
            Ok(()) => {
                self.admitted_by.insert(fence.lane, (node, incarnation));
                // The lane's other holders: one of an older generation is fenced off from now
                // on; one of the same generation holds the same token at once.
                let others: Vec<NodeId> = self
                    .inside
                    .iter()
                    .filter(|(_, h)| h.acting && h.fence.lane == fence.lane)
                    .map(|(&n, _)| n)
                    .collect();
                for other in others {
                    let h = self.inside.get_mut(&other).expect("listed");
                    if h.fence.generation() < fence.generation() {
                        h.acting = false;
                        self.held -= u64::from(h.units);
                        self.superseded += 1;
                    } else {
                        self.violations.push(format!(
                            "{node:?} entered with fence {}/{:#x} while {other:?} holds {:#x} of \
                             the same generation",
                            fence.lane, fence.value, h.fence.value
                        ));
                    }
                }
                true
            }
            Err(highest) if fence.generation() < (highest >> 32) as u32 => {
                self.refused_stale += 1;
                false
            }
            Err(highest) => {
                let (by, by_incarnation) = self.admitted_by[&fence.lane];
                let dead = self.dead.get(&by).is_some_and(|&d| by_incarnation <= d);
                if dead && self.permission {
                    // C6: a permission host that crashed may have heard of a generation no live
                    // host knows; the next entry can then be at or below its fence, and the
                    // resource refuses that entry (it costs the entry, never the fence rule).
                    self.refused_after_crash += 1;
                } else {
                    self.violations.push(format!(
                        "{node:?} (incarnation {incarnation}) entered with fence {}/{:#x}, not \
                         above {highest:#x} (admitted for {by:?}, incarnation {by_incarnation}{})",
                        fence.lane,
                        fence.value,
                        if dead { ", killed since" } else { "" }
                    ));
                }
                false
            }
        }
    }

    /// The fence rule when a lane's holders may be inside together (prioritized: one token
    /// grants every unit, and grants can be reported out of order): a fence of an older
    /// generation than the lane's newest is a stale grant, refused and counted; a value seen
    /// before is a duplicated grant, a violation; a newer generation fences off every holder
    /// of an older one. Whether the entry acts.
    fn admit_concurrent(&mut self, node: NodeId, fence: Fence) -> bool {
        let newest = self.generations.entry(fence.lane).or_insert(0);
        if fence.generation() < *newest {
            self.refused_stale += 1;
            return false;
        }
        if !self.seen.insert((fence.lane, fence.value)) {
            self.violations.push(format!(
                "{node:?} entered with fence {}/{:#x} again",
                fence.lane, fence.value
            ));
        }
        if fence.generation() > *newest {
            *newest = fence.generation();
            for h in self.inside.values_mut() {
                if h.acting
                    && h.fence.lane == fence.lane
                    && h.fence.generation() < fence.generation()
                {
                    h.acting = false;
                    self.held -= u64::from(h.units);
                    self.superseded += 1;
                }
            }
        }
        true
    }

    /// `node` is no longer inside: its units are free.
    fn leave(&mut self, node: NodeId) -> Option<Holding> {
        let h = self.inside.remove(&node)?;
        if h.acting {
            self.held -= u64::from(h.units);
        }
        Some(h)
    }

    fn take(&mut self, report: Report) {
        match report {
            Report::Enter {
                node,
                incarnation,
                resources,
                lane,
                value,
                ..
            } => {
                self.entries += 1;
                let fence = Fence::new(lane, value);
                let acting = if self.check_fences && self.concurrent_grants {
                    self.admit_concurrent(node, fence)
                } else if self.check_fences {
                    self.admit(node, incarnation, fence)
                } else {
                    true
                };
                let holding = Holding {
                    units: resources,
                    fence,
                    acting,
                };
                if self.inside.insert(node, holding).is_some() {
                    self.violations
                        .push(format!("{node:?} entered while inside already"));
                }
                if acting {
                    self.held += u64::from(resources);
                }
                self.max_held = self.max_held.max(self.held);
                if self.held > u64::from(self.k) {
                    self.violations.push(format!(
                        "{} units held at once, only {} exist: {:?}",
                        self.held, self.k, self.inside
                    ));
                }
            }
            Report::Exit { node, .. } => {
                if self.leave(node).is_none() {
                    self.violations
                        .push(format!("{node:?} left without having entered"));
                }
            }
            Report::Expired {
                node, lane, value, ..
            } => match self.leave(node) {
                Some(h) if h.fence == Fence::new(lane, value) => self.expired += 1,
                _ => self.violations.push(format!(
                    "{node:?} reported the lease of {lane}/{value:#x} ended, not being inside \
                     under it"
                )),
            },
            Report::Done { node, .. } => {
                self.done.insert(node);
            }
        }
    }

    /// A report from `from`: taken if it is the next of its node's current incarnation (a new
    /// incarnation starts over), dropped if its incarnation was killed. Whether to acknowledge.
    fn receive(&mut self, report: Report, from: SocketAddr) -> bool {
        let (node, incarnation) = (report.node(), report.incarnation());
        if self.dead.get(&node).is_some_and(|&d| incarnation <= d) {
            self.from_dead += 1;
            return false;
        }
        match self.incarnation.get(&node) {
            Some(&current) if incarnation < current => return false,
            Some(&current) if incarnation == current => {}
            _ => {
                self.incarnation.insert(node, incarnation);
                self.last_seq.remove(&node);
            }
        }
        // Resent reports were taken already: acknowledge them again, take them once.
        if self
            .last_seq
            .get(&node)
            .is_none_or(|&last| report.seq() > last)
        {
            self.last_seq.insert(node, report.seq());
            self.addrs.insert(node, from);
            self.take(report);
        }
        true
    }

    /// The launcher's word: incarnation `incarnation` of `node` was killed (`kill -9`), and
    /// comes back under a later one unless `gone`. Its units are free from now on, and nothing
    /// it sent is taken any more; a node gone for good counts as done.
    fn crashed(&mut self, node: NodeId, incarnation: u32, gone: bool) {
        let dead = self.dead.entry(node).or_insert(incarnation);
        *dead = (*dead).max(incarnation);
        if self
            .incarnation
            .get(&node)
            .is_some_and(|&i| i <= incarnation)
            && self.leave(node).is_some()
        {
            self.crashed_inside += 1;
        }
        if gone {
            self.done.insert(node);
        } else {
            self.done.remove(&node);
        }
    }
}

/// What the launcher says on standard input.
enum Control {
    Quit,
    /// `crashed <node> <incarnation>` (restarted later) or `gone <node> <incarnation>`.
    Crashed {
        node: NodeId,
        incarnation: u32,
        gone: bool,
    },
}

fn parse_control(line: &str) -> Option<Control> {
    let mut words = line.split_whitespace();
    let word = words.next()?;
    if word == "quit" {
        return Some(Control::Quit);
    }
    let node = NodeId(words.next()?.parse().ok()?);
    let incarnation = words.next()?.parse().ok()?;
    match word {
        "crashed" | "gone" => Some(Control::Crashed {
            node,
            incarnation,
            gone: word == "gone",
        }),
        _ => None,
    }
}

pub fn run(args: ResourceArgs) -> Outcome {
    let socket = UdpSocket::bind(args.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    socket.set_read_timeout(Some(Duration::from_millis(20)))?;
    // A launcher stops the resource early with `quit` on standard input, and names the
    // nodes it kills.
    let (control_tx, control) = mpsc::channel();
    let supervised = args.supervised;
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match parse_control(&line) {
                Some(c) => {
                    if control_tx.send(c).is_err() {
                        return;
                    }
                }
                None => eprintln!("resource: unknown control line {line:?}"),
            }
        }
        if supervised {
            let _ = control_tx.send(Control::Quit);
        }
    });
    let mut c = Checker {
        k: args.k,
        check_fences: args.check_fences,
        concurrent_grants: args.concurrent_grants,
        permission: args.permission,
        ..Checker::default()
    };
    let mut buf = [0u8; 256];
    let mut garbage = 0u64;
    let mut quit = false;
    while c.done.len() < args.nodes as usize && !quit {
        while let Ok(line) = control.try_recv() {
            match line {
                Control::Quit => quit = true,
                Control::Crashed {
                    node,
                    incarnation,
                    gone,
                } => c.crashed(node, incarnation, gone),
            }
        }
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
        if c.receive(report, from) {
            let ack = format!("ack {} {}", report.incarnation(), report.seq());
            socket.send_to(ack.as_bytes(), from)?;
        }
    }
    if c.done.len() == args.nodes as usize {
        for (node, addr) in &c.addrs {
            if !c.dead.contains_key(node) || c.incarnation.get(node) > c.dead.get(node) {
                socket.send_to(b"stop", addr)?;
            }
        }
    }
    for v in &c.violations {
        eprintln!("resource: VIOLATION {v}");
    }
    println!(
        "verdict {} entries={} max_held={} k={} done={} violations={} refused_stale={} \
         refused_after_crash={} superseded={} lease_expired={} crashed_inside={} from_dead={} \
         garbage={}",
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
        c.refused_stale,
        c.refused_after_crash,
        c.superseded,
        c.expired,
        c.crashed_inside,
        c.from_dead,
        garbage
    );
    Ok(c.violations.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enter(node: u32, lane: u32, generation: u32, count: u32) -> Report {
        Report::Enter {
            node: NodeId(node),
            incarnation: 0,
            seq: 0,
            resources: 1,
            lane,
            value: Fence::first_of(lane, generation).value + u64::from(count),
        }
    }

    fn exit(node: u32) -> Report {
        Report::Exit {
            node: NodeId(node),
            incarnation: 0,
            seq: 0,
        }
    }

    fn checker(k: u32) -> Checker {
        Checker {
            k,
            check_fences: true,
            ..Checker::default()
        }
    }

    #[test]
    fn a_stale_generation_is_refused_and_counted_anything_else_refused_is_a_violation() {
        let mut c = checker(1);
        for r in [enter(0, 0, 0, 1), exit(0), enter(1, 0, 3, 1), exit(1)] {
            c.take(r);
        }
        c.take(enter(2, 0, 0, 2));
        c.take(exit(2));
        assert_eq!((c.refused_stale, c.violations.len()), (1, 0));
        c.take(enter(2, 0, 3, 1));
        assert_eq!(
            c.violations.len(),
            1,
            "the same generation, not above: a violation"
        );
    }

    #[test]
    fn a_newer_generation_fences_off_an_older_holder_and_the_same_one_is_a_violation() {
        let mut c = checker(1);
        c.take(enter(0, 0, 0, 1));
        c.take(enter(1, 0, 2, 1));
        assert_eq!((c.superseded, c.held, c.violations.len()), (1, 1, 0));
        c.take(exit(0));
        c.take(exit(1));
        assert_eq!(c.held, 0);
        c.take(enter(0, 0, 2, 2));
        c.take(enter(1, 0, 2, 3));
        assert!(!c.violations.is_empty(), "two holders of one token at once");
    }

    #[test]
    fn concurrent_holders_share_a_generation_and_a_newer_one_fences_the_older_off() {
        let mut c = Checker {
            concurrent_grants: true,
            ..checker(3)
        };
        c.take(enter(0, 0, 0, 1));
        c.take(enter(1, 0, 0, 2));
        assert_eq!((c.held, c.violations.len()), (2, 0));
        c.take(enter(2, 0, 5, 1));
        assert_eq!((c.held, c.superseded), (1, 2));
        c.take(exit(0));
        c.take(enter(0, 0, 0, 3));
        assert_eq!((c.refused_stale, c.held), (1, 1));
        c.take(exit(1));
        c.take(enter(1, 0, 5, 1));
        assert_eq!(c.violations.len(), 1, "a grant seen before");
    }

    #[test]
    fn a_permission_entry_at_a_killed_hosts_fence_is_refused_and_counted_not_a_violation() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        for permission in [true, false] {
            let mut c = Checker {
                permission,
                ..checker(1)
            };
            assert!(c.receive(enter(0, 0, 6, 0), addr));
            c.crashed(NodeId(0), 0, false);
            // The next entrant never heard of generation 6: it takes it too (C6).
            c.take(enter(1, 0, 6, 0));
            let expected = if permission { (1, 0) } else { (0, 1) };
            assert_eq!((c.refused_after_crash, c.violations.len()), expected);
            // The same refusal with the fence's holder alive is a violation either way.
            c.take(exit(1));
            c.take(enter(2, 0, 7, 0));
            c.take(exit(2));
            c.take(enter(3, 0, 7, 0));
            assert_eq!(c.violations.len(), expected.1 + 1);
        }
    }

    #[test]
    fn a_killed_incarnation_frees_its_units_and_its_late_reports_are_dropped() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut c = checker(1);
        assert!(c.receive(enter(0, 0, 0, 1), addr));
        c.crashed(NodeId(0), 0, false);
        assert_eq!((c.crashed_inside, c.held), (1, 0));
        assert!(
            !c.receive(exit(0), addr),
            "the dead incarnation's last datagram"
        );
        let restarted = Report::Enter {
            node: NodeId(0),
            incarnation: 1,
            seq: 1,
            resources: 1,
            lane: 0,
            value: Fence::first_of(0, 1 << 16).value + 1,
        };
        assert!(c.receive(restarted, addr));
        assert_eq!((c.held, c.violations.len(), c.from_dead), (1, 0, 1));
    }
}
