//! Reproduce section V of the look-ahead paper: messages (MPCS) and hops (HPCS) per
//! critical-section entry against the number of hosts, for look-ahead beside Ricart–Agrawala.
//!
//! `cargo run --release --example look_ahead_sweep [-- --csv] [--seeds N] [--entries N]`

use std::time::Instant;

use manet_mutex::sim::routed::{sweep, Row, SweepConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let csv = args.iter().any(|a| a == "--csv");
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let mut cfg = SweepConfig::default();
    if let Some(n) = value("--seeds") {
        cfg.seeds = (1..=n.max(1)).collect();
    }
    if let Some(n) = value("--entries") {
        cfg.target_entries = n.max(1);
    }
    let started = Instant::now();
    let rows = match sweep(&cfg) {
        Ok(rows) => rows,
        Err(v) => {
            eprintln!("invariant violation:\n{v}");
            std::process::exit(1);
        }
    };
    if csv {
        println!("{}", Row::CSV_HEADER);
        for r in &rows {
            println!("{}", r.csv());
        }
    } else {
        println!(
            "{:<16} {:>5} {:>7} {:<9} {:<5} {:>4} {:>7} {:>9} {:>9} {:>7} {:>7}",
            "algorithm",
            "hosts",
            "lambda",
            "load",
            "fail",
            "mob",
            "entries",
            "mean_wait",
            "p99_wait",
            "MPCS",
            "HPCS"
        );
        for r in &rows {
            println!(
                "{:<16} {:>5} {:>7.0e} {:<9} {:<5} {:>4} {:>7} {:>9.3} {:>9.3} {:>7.2} {:>7.2}",
                r.algorithm,
                r.hosts,
                r.lambda,
                r.load_pattern,
                r.failures,
                r.mobility,
                r.cs_entries,
                r.mean_wait,
                r.p99_wait,
                r.messages_per_cs,
                r.hops_per_cs
            );
        }
    }
    eprintln!(
        "{} runs in {:.1} s",
        rows.len(),
        started.elapsed().as_secs_f64()
    );
}
