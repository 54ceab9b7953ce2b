//! Look-ahead beside Ricart–Agrawala: the look-ahead paper's section V (MPCS and HPCS against
//! the number of hosts; load level, load pattern, host failures, mobility).

use manet_mutex::sim::experiment::{mean_of, Row};
use manet_mutex::sim::routed::{sweep, SweepConfig};

use super::Args;

fn config(args: &Args) -> SweepConfig {
    let mut cfg = SweepConfig {
        seeds: (1..=args.seeds.max(1)).collect(),
        target_entries: args.entries,
        ..SweepConfig::default()
    };
    if let Some(hosts) = &args.hosts {
        cfg.hosts = hosts.clone();
    }
    if let Some(load) = &args.load {
        cfg.lambdas = load.clone();
    }
    if let Some(mobility) = &args.mobility {
        cfg.mobility = mobility.clone();
    }
    cfg
}

pub fn run(args: &Args) -> (Vec<Row>, f64) {
    let started = std::time::Instant::now();
    match sweep(&config(args), super::threads(args)) {
        Ok(rows) => (rows, started.elapsed().as_secs_f64()),
        Err(violation) => {
            eprintln!("{violation}");
            std::process::exit(1);
        }
    }
}

pub fn print_table(args: &Args, rows: &[Row]) {
    let cfg = config(args);
    println!(
        "Look-ahead paper, section V: messages (MPCS) and hops (HPCS) per CS entry against the \
         number of hosts;\n{} entries per run, mean of {} seeds; LA = look-ahead, RA = Ricart–Agrawala; \
         mobility = fraction of time hosts move\n",
        cfg.target_entries,
        cfg.seeds.len()
    );
    for (metric, pick) in [
        (
            "MPCS",
            (|s| s.messages_per_cs) as fn(&manet_mutex::sim::Summary) -> f64,
        ),
        ("HPCS", |s| s.hops_per_cs),
    ] {
        let mut header = format!(
            "{:<5} {:>7} {:<9} {:<5} {:>4}",
            metric, "lambda", "load", "fail", "mob"
        );
        for h in &cfg.hosts {
            header += &format!(" {:>7}", format!("n={h}"));
        }
        println!("{header}");
        println!("{}", "-".repeat(header.len()));
        for &failures in &cfg.failures {
            for &mobility in &cfg.mobility {
                for &load in &cfg.loads {
                    for &lambda in &cfg.lambdas {
                        for &algorithm in &cfg.algorithms {
                            let short = if algorithm.name() == "look_ahead" {
                                "LA"
                            } else {
                                "RA"
                            };
                            let mut line = format!(
                                "{short:<5} {lambda:>7.0e} {:<9} {:<5} {mobility:>4}",
                                load.name(),
                                failures
                            );
                            for h in &cfg.hosts {
                                let at = |r: &Row| {
                                    r.algorithm == algorithm.name()
                                        && r.at(&[
                                            ("hosts", h.to_string()),
                                            ("lambda", lambda.to_string()),
                                            ("load_pattern", load.name().into()),
                                            ("failures", failures.to_string()),
                                            ("mobility", mobility.to_string()),
                                        ])
                                };
                                let v = mean_of(rows, at, pick).unwrap_or(f64::NAN);
                                line += &format!(" {v:>7.2}");
                            }
                            println!("{line}");
                        }
                    }
                }
            }
        }
        println!();
    }
}
