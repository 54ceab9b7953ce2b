//! `mesh-node delay`: the user-space delay queue. This kernel has no `sch_netem`, so the harness
//! sends every outgoing mesh datagram of a namespace to a netfilter queue (an `iptables`
//! NFQUEUE rule, which nft's own `queue` statement needs a module for) and this process holds
//! each one for a delay drawn uniformly from `min..=max` ms before it lets it go. Verdicts are
//! given in the order the delays end, not the order of arrival, so datagrams sent close
//! together are reordered as on a radio with retries and contention.
//!
//! Nothing is dropped here (loss is nft's): at SIGTERM the held datagrams are let go at once,
//! and the rule's `--queue-bypass` lets traffic through whenever no process is bound. One
//! `DELAY` line of counters at the end.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nfq::{Message, Queue, Verdict};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Outcome;

/// Hold each datagram of netfilter queue `--queue` for `--min-ms..=--max-ms`.
#[derive(clap::Args)]
pub struct DelayArgs {
    /// The netfilter queue number the NFQUEUE rule names.
    #[arg(long, default_value_t = 0)]
    queue: u16,
    /// Shortest delay, ms.
    #[arg(long)]
    min_ms: u64,
    /// Longest delay, ms (at least --min-ms).
    #[arg(long)]
    max_ms: u64,
    /// Seed of the delays.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// What the queue did, for the `DELAY` line.
#[derive(Default)]
struct Counts {
    held: u64,
    /// Let go while a datagram that arrived before it was still held.
    reordered: u64,
    /// Sum of the delays drawn, ms.
    delay_ms: u64,
    most_held: usize,
}

pub fn check(args: &DelayArgs) -> Result<(), String> {
    if args.min_ms > args.max_ms {
        return Err(format!(
            "--min-ms {} is above --max-ms {}",
            args.min_ms, args.max_ms
        ));
    }
    Ok(())
}

/// Runs until `stop` is set, then lets every held datagram go.
pub fn run(args: &DelayArgs, stop: Arc<AtomicBool>) -> Outcome {
    let mut queue = Queue::open()?;
    queue.bind(args.queue)?;
    queue.set_nonblocking(true);
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    // Keyed by (release time, arrival number): the map's order is the release order, and the
    // arrival numbers still held tell whether a release overtakes an earlier arrival.
    let mut held: BTreeMap<(Instant, u64), Message> = BTreeMap::new();
    let mut arrivals: BTreeMap<u64, ()> = BTreeMap::new();
    let (mut next, mut c) = (0u64, Counts::default());
    while !stop.load(Ordering::Relaxed) {
        loop {
            match queue.recv() {
                Ok(mut msg) => {
                    let ms = rng.random_range(args.min_ms..=args.max_ms);
                    msg.set_verdict(Verdict::Accept);
                    held.insert((Instant::now() + Duration::from_millis(ms), next), msg);
                    arrivals.insert(next, ());
                    next += 1;
                    c.held += 1;
                    c.delay_ms += ms;
                    c.most_held = c.most_held.max(held.len());
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(e.into()),
            }
        }
        let now = Instant::now();
        while let Some(entry) = held.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((_, n), msg) = entry.remove_entry();
            if arrivals.keys().next() != Some(&n) {
                c.reordered += 1;
            }
            arrivals.remove(&n);
            queue.verdict(msg)?;
        }
        // The next release, or a millisecond to look for arrivals (the queue's socket cannot
        // be polled through this crate).
        let wait = held
            .keys()
            .next()
            .map_or(Duration::from_millis(1), |(at, _)| {
                at.saturating_duration_since(now)
            })
            .min(Duration::from_millis(1));
        std::thread::sleep(wait);
    }
    for (_, msg) in std::mem::take(&mut held) {
        queue.verdict(msg)?;
    }
    println!(
        "DELAY held={} reordered={} mean_ms={:.2} most_held={}",
        c.held,
        c.reordered,
        c.delay_ms as f64 / c.held.max(1) as f64,
        c.most_held
    );
    Ok(())
}
