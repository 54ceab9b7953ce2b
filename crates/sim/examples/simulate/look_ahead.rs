//! Look-ahead beside Ricart–Agrawala: the look-ahead paper's section V (MPCS and HPCS against
//! the number of hosts; load level, load pattern, host failures, mobility).

use manet_mutex_sim::experiment::{mean_extra, Row};
use manet_mutex_sim::routed::{run_algorithm, sweep_with, LoadPattern, RoutedConfig, SweepConfig};
use manet_mutex_sim::Algorithm;

use super::{ci, progress, Args};

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
    cfg.trace = args.trace.clone().map(|t| (t, args.radius));
    cfg
}

/// The first configuration of the grid (look-ahead, uniform load, no failures), recorded
/// for the viewer (`--trace`).
pub fn record(args: &Args) -> Result<super::Recorded, String> {
    let cfg = config(args);
    let hosts = cfg.hosts.first().copied().unwrap_or(20);
    let lambda = cfg.lambdas.first().copied().unwrap_or(1e-3);
    let mobility = cfg.mobility.first().copied().unwrap_or(1.0);
    let mut run = RoutedConfig::paper(hosts, lambda, mobility, 1);
    run.target_entries = cfg.target_entries;
    run.max_time = 4.0 * cfg.target_entries as f64 / (f64::from(hosts.max(1)) * lambda);
    if let Some((trace, radius)) = &cfg.trace {
        run.trace = Some(trace.clone());
        run.mobility.radius = *radius;
    }
    run.record = true;
    match run_algorithm(Algorithm::LookAhead, &run) {
        Ok(report) => Ok((report.recording.ok_or("the run did not record")?, None)),
        Err(mut failure) => match failure.recording.take() {
            Some(r) => Ok((*r, Some(failure.to_string()))),
            None => Err(failure.to_string()),
        },
    }
}

pub fn run(args: &Args) -> (Vec<Row>, f64) {
    let started = std::time::Instant::now();
    let cfg = config(args);
    let runs = cfg.seeds.len()
        * cfg.failures.len()
        * cfg.mobility.len()
        * cfg.loads.len()
        * cfg.lambdas.len()
        * cfg.hosts.len()
        * cfg.algorithms.len();
    let bar = progress(runs);
    let rows = sweep_with(&cfg, super::threads(args), || bar.inc(1));
    bar.finish();
    match rows {
        Ok(rows) => (rows, started.elapsed().as_secs_f64()),
        Err(failure) => {
            eprintln!("{failure}");
            std::process::exit(1);
        }
    }
}

pub fn print_table(args: &Args, rows: &[Row]) {
    let cfg = config(args);
    println!(
        "Look-ahead paper, section V: messages (MPCS) and hops (HPCS) per CS entry against the \
         number of hosts;\n{} entries per run, mean of {}; LA = look-ahead, RA = Ricart–Agrawala; \
         mobility = fraction of time hosts move\n",
        cfg.target_entries,
        super::seeds(cfg.seeds.len() as u64)
    );
    for (metric, pick) in [
        (
            "MPCS",
            (|s| s.messages_per_cs) as fn(&manet_mutex_sim::Summary) -> f64,
        ),
        ("HPCS", |s| s.hops_per_cs),
    ] {
        print_header(
            &format!(
                "{:<5} {:>7} {:<9} {:<5} {:>5}",
                metric, "lambda", "load", "fail", "mob"
            ),
            &cfg.hosts,
        );
        for &failures in &cfg.failures {
            for &mobility in &cfg.mobility {
                for &load in &cfg.loads {
                    for &lambda in &cfg.lambdas {
                        for &algorithm in &cfg.algorithms {
                            let short = match algorithm {
                                Algorithm::LookAhead => "LA",
                                _ => "RA",
                            };
                            let mut line = format!(
                                "{short:<5} {lambda:>7.0e} {:<9} {:<5} {:>5}",
                                load.name(),
                                failures,
                                mob_name(&cfg, mobility)
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
                                line += " ";
                                line += &ci(rows, at, |r| Some(pick(&r.summary)), 13, 2);
                            }
                            println!("{line}");
                        }
                    }
                }
            }
        }
        println!();
    }
    print_hops_per_message(&cfg, rows);
}

/// Fig. 4: hops per message that reached its host, against mobility (look-ahead, uniform load,
/// no failures, mean over the loads and seeds).
fn print_hops_per_message(cfg: &SweepConfig, rows: &[Row]) {
    println!("Hops per routed message (Fig. 4), look-ahead, uniform load, no failures");
    print_header(&format!("{:>5}", "mob"), &cfg.hosts);
    for &mobility in &cfg.mobility {
        let mut line = format!("{:>5}", mob_name(cfg, mobility));
        for h in &cfg.hosts {
            let matching: Vec<&Row> = rows
                .iter()
                .filter(|r| {
                    r.algorithm == Algorithm::LookAhead.name()
                        && r.at(&[
                            ("hosts", h.to_string()),
                            ("load_pattern", LoadPattern::Uniform.name().into()),
                            ("failures", "false".into()),
                            ("mobility", mobility.to_string()),
                        ])
                })
                .collect();
            let v = mean_extra(&matching, "hops_per_routed_message").unwrap_or(f64::NAN);
            line += &format!(" {v:>13.2}");
        }
        println!("{line}");
    }
    println!();
}

/// How a table names a mobility level (the fraction of time hosts move), or `trace`.
fn mob_name(cfg: &SweepConfig, mobility: f64) -> String {
    if cfg.trace.is_some() {
        "trace".into()
    } else {
        mobility.to_string()
    }
}

/// A table header: the row labels, one column per host count, and a rule under it.
fn print_header(labels: &str, hosts: &[u32]) {
    let mut header = labels.to_string();
    for h in hosts {
        header += &format!(" {:>13}", format!("n={h}"));
    }
    println!("{header}");
    println!("{}", "-".repeat(header.len()));
}
