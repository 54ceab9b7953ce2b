//! Acquire latency and entries per second of the lock with one OS process per node on
//! 127.0.0.1, for this crate's algorithms and, measured the same way, for etcd's v3 lock API
//! (a benchmark, not a test: `benches/loopback-vs-etcd.sh` runs both and starts the etcd
//! cluster; `docs/PERFORMANCE.md` has the results).
//!
//! ```text
//! cargo run --release -p manet-mutex-tokio --example loopback_bench -- \
//!     --algorithm krl|prioritized|look-ahead|ricart-agrawala|etcd \
//!     [--processes 5] [--entries 200] [--hold-ms 1] [--etcd HOST:PORT,HOST:PORT,...] \
//!     [--timeout-s 300] [--header]
//! ```
//!
//! The parent checks its flags, then starts `--processes` children (this program again,
//! `--child ID`). A child of ours runs one node ([`Node`]) on its own 127.0.0.1 port, told
//! every other child's port; an etcd child keeps one HTTP/1.1 connection to one member's
//! gRPC gateway (child `i` to member `i mod members`), grants itself a lease and locks with
//! `POST /v3/lock/lock` (name `loopback-bench`, its lease), unlocks with
//! `POST /v3/lock/unlock`. Each child says `ready`; one second later (discovery's hellos go
//! every 100 ms) the parent says `go` to all, and each child takes the lock `--entries`
//! times: the latency is from the request (`acquire()` called, or the lock request written)
//! to the guard (or the lock response read); it holds for `--hold-ms`
//! (`tokio::time::sleep`, at least that long; 0: not at all), then releases. The parent
//! measures the wall time from `go` to the last child's `done`, and entries per second as
//! all entries over it.
//!
//! The shared resource is a fence log: each holder appends `enter` after its grant and `exit`
//! before its release to one file opened `O_APPEND` (one `write` each, so the file's order
//! follows causality: an exit is written before the release that lets the next holder in).
//! The parent reads it back and fails the run if two holders were ever inside together, if a
//! fence did not increase in its lane (ours: the guard's fence; etcd: the lock response's
//! header revision, which each later holder's grant must follow), or if the count of entries
//! is not the expected one. From the log's own timestamps it computes entries per second a
//! second way (entries logged over the time from the first enter to the last exit) and the
//! mean hold.
//!
//! On any error or panic the parent kills and waits for every child; a child whose standard
//! input closes (its parent gone, however) exits at once, so none outlives the run.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use manet_mutex::codec::Wire;
use manet_mutex::driver::Algorithm;
use manet_mutex::{look_ahead, prioritized, reverse_link, ricart_agrawala, NodeId};
use manet_mutex_tokio::Node;

const USAGE: &str =
    "usage: loopback_bench --algorithm krl|prioritized|look-ahead|ricart-agrawala|etcd \
[--processes N (2..=32, default 5)] [--entries N (per process, default 200)] \
[--hold-ms MS (0..=1000, default 1)] [--etcd HOST:PORT,... (with --algorithm etcd)] \
[--timeout-s S (default 300)] [--header]";

/// How long a child waits for one grant before it gives up (and fails the run).
const ACQUIRE_PATIENCE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Krl,
    Prioritized,
    LookAhead,
    RicartAgrawala,
    Etcd,
}

impl Backend {
    fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "krl" => Backend::Krl,
            "prioritized" => Backend::Prioritized,
            "look-ahead" => Backend::LookAhead,
            "ricart-agrawala" => Backend::RicartAgrawala,
            "etcd" => Backend::Etcd,
            _ => return Err(format!("--algorithm: unknown {s:?}")),
        })
    }

    fn name(self) -> &'static str {
        match self {
            Backend::Krl => "krl",
            Backend::Prioritized => "prioritized",
            Backend::LookAhead => "look-ahead",
            Backend::RicartAgrawala => "ricart-agrawala",
            Backend::Etcd => "etcd",
        }
    }
}

#[derive(Debug, Clone)]
struct Args {
    backend: Backend,
    processes: u32,
    entries: u32,
    hold_ms: u64,
    etcd: Vec<SocketAddr>,
    timeout: Duration,
    header: bool,
    /// Child mode: this child's id, the nodes' ports, the fence log.
    child: Option<u32>,
    ports: Vec<u16>,
    log: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut backend = None;
    let mut a = Args {
        backend: Backend::Krl,
        processes: 5,
        entries: 200,
        hold_ms: 1,
        etcd: Vec::new(),
        timeout: Duration::from_secs(300),
        header: false,
        child: None,
        ports: Vec::new(),
        log: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag}: a value is missing"))
        };
        let number = |v: String| -> Result<u64, String> {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: {v:?} is not a whole number"))
        };
        match flag.as_str() {
            "--algorithm" => backend = Some(Backend::parse(&value()?)?),
            "--processes" => a.processes = u32::try_from(number(value()?)?).unwrap_or(0),
            "--entries" => a.entries = u32::try_from(number(value()?)?).unwrap_or(0),
            "--hold-ms" => a.hold_ms = number(value()?)?,
            "--timeout-s" => a.timeout = Duration::from_secs(number(value()?)?),
            "--etcd" => {
                a.etcd = value()?
                    .split(',')
                    .map(|s| {
                        s.parse::<SocketAddr>()
                            .map_err(|_| format!("--etcd: {s:?} is not HOST:PORT (an IP address)"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--header" => a.header = true,
            "--child" => a.child = Some(u32::try_from(number(value()?)?).unwrap_or(u32::MAX)),
            "--ports" => {
                a.ports = value()?
                    .split(',')
                    .map(|s| s.parse::<u16>().map_err(|_| format!("--ports: {s:?}")))
                    .collect::<Result<_, _>>()?
            }
            "--log" => a.log = Some(PathBuf::from(value()?)),
            "--help" | "-h" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    a.backend = backend.ok_or_else(|| format!("--algorithm is required\n{USAGE}"))?;
    if !(2..=32).contains(&a.processes) {
        return Err("--processes: from 2 to 32".into());
    }
    if a.entries == 0 || a.entries > 1_000_000 {
        return Err("--entries: from 1 to 1000000".into());
    }
    if a.hold_ms > 1000 {
        return Err("--hold-ms: at most 1000".into());
    }
    if a.timeout.is_zero() {
        return Err("--timeout-s: above 0".into());
    }
    match (a.backend, a.etcd.is_empty()) {
        (Backend::Etcd, true) => return Err("--algorithm etcd needs --etcd HOST:PORT,...".into()),
        (Backend::Etcd, false) | (_, true) => {}
        (_, false) => return Err("--etcd is for --algorithm etcd only".into()),
    }
    if let Some(id) = a.child {
        if id >= a.processes {
            return Err("--child: below --processes".into());
        }
        if a.backend != Backend::Etcd && a.ports.len() != a.processes as usize {
            return Err("--ports: one per process".into());
        }
        if a.log.is_none() {
            return Err("--log is required with --child".into());
        }
    } else if !a.ports.is_empty() || a.log.is_some() {
        return Err("--ports and --log are for children only".into());
    }
    Ok(a)
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("loopback_bench: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match args.child {
        Some(_) => child(&args),
        None => parent(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            match args.child {
                Some(id) => eprintln!("loopback_bench child {id}: {e}"),
                None => eprintln!("loopback_bench: {e}"),
            }
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------------------
// The parent.

/// The children: killed and waited for when dropped (an error, a panic), unless
/// [`Children::finish`] saw every one exit.
struct Children {
    children: Vec<Child>,
    stdins: Vec<ChildStdin>,
}

impl Children {
    fn say(&mut self, line: &str) -> Result<(), String> {
        for (i, stdin) in self.stdins.iter_mut().enumerate() {
            writeln!(stdin, "{line}")
                .and_then(|()| stdin.flush())
                .map_err(|e| format!("telling child {i} {line:?}: {e}"))?;
        }
        Ok(())
    }

    /// Waits until every child has exited, each successfully, within `patience`.
    fn finish(&mut self, patience: Duration) -> Result<(), String> {
        let deadline = Instant::now() + patience;
        for (i, child) in self.children.iter_mut().enumerate() {
            loop {
                match child.try_wait() {
                    Ok(Some(status)) if status.success() => break,
                    Ok(Some(status)) => return Err(format!("child {i} exited with {status}")),
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    Ok(None) => return Err(format!("child {i} did not exit after stop")),
                    Err(e) => return Err(format!("waiting for child {i}: {e}")),
                }
            }
        }
        Ok(())
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.stdins.clear(); // closed: a child still reading exits by itself
        for child in &mut self.children {
            if let Ok(None) = child.try_wait() {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// A line from a child, or the end of its output.
enum Said {
    Line(u32, String),
    End(u32),
}

fn parent(args: &Args) -> Result<(), String> {
    // Distinct ports, chosen by the kernel, then freed for the children to bind.
    let ports: Vec<u16> = if args.backend == Backend::Etcd {
        Vec::new()
    } else {
        let sockets = (0..args.processes)
            .map(|_| UdpSocket::bind("127.0.0.1:0"))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("choosing ports: {e}"))?;
        sockets
            .iter()
            .map(|s| s.local_addr().map(|a| a.port()))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("choosing ports: {e}"))?
    };
    let log = std::env::temp_dir().join(format!(
        "loopback-bench-{}-{}.log",
        std::process::id(),
        args.backend.name()
    ));
    std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let result = run_children(args, &ports, &log);
    let report = result.and_then(|(latencies, wall)| {
        let audit = check_log(&log, args)?;
        Ok((latencies, wall, audit))
    });
    let _ = std::fs::remove_file(&log);
    let (mut latencies, wall, audit) = report?;

    latencies.sort_unstable();
    let total = latencies.len() as f64;
    let ms = |us: u64| us as f64 / 1000.0;
    if args.header {
        println!(
            "| algorithm | processes | entries | hold (ms) | median (ms) | p99 (ms) | max (ms) \
             | entries/s | entries/s, log audit | mean hold in log (ms) |"
        );
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    }
    println!(
        "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.0} | {:.0} | {:.3} |",
        args.backend.name(),
        args.processes,
        latencies.len(),
        args.hold_ms,
        ms(percentile(&latencies, 50)),
        ms(percentile(&latencies, 99)),
        ms(*latencies.last().unwrap_or(&0)),
        total / wall.as_secs_f64(),
        audit.entries as f64 / audit.span.as_secs_f64(),
        audit.hold.as_secs_f64() * 1000.0 / audit.entries as f64,
    );
    Ok(())
}

/// Nearest rank: the smallest value with at least `p` percent of the values at or below it.
fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// Runs the children; every latency in microseconds, and the wall time from `go` to the last
/// `done`.
fn run_children(args: &Args, ports: &[u16], log: &Path) -> Result<(Vec<u64>, Duration), String> {
    let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let ports_arg = ports
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let etcd_arg = args
        .etcd
        .iter()
        .map(SocketAddr::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut children = Children {
        children: Vec::new(),
        stdins: Vec::new(),
    };
    let (tx, rx) = mpsc::channel();
    for id in 0..args.processes {
        let mut command = Command::new(&exe);
        command
            .args(["--child", &id.to_string()])
            .args(["--algorithm", args.backend.name()])
            .args(["--processes", &args.processes.to_string()])
            .args(["--entries", &args.entries.to_string()])
            .args(["--hold-ms", &args.hold_ms.to_string()])
            .arg("--log")
            .arg(log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if args.backend == Backend::Etcd {
            command.args(["--etcd", &etcd_arg]);
        } else {
            command.args(["--ports", &ports_arg]);
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("starting child {id}: {e}"))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        children.children.push(child);
        children.stdins.push(stdin);
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(line) => {
                        if tx.send(Said::Line(id, line)).is_err() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            let _ = tx.send(Said::End(id));
        });
    }
    drop(tx);
    let deadline = Instant::now() + args.timeout;
    let next = |what: &str| -> Result<(u32, String), String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Said::Line(id, line)) => Ok((id, line)),
            Ok(Said::End(id)) => Err(format!("child {id} ended while the parent awaited {what}")),
            Err(_) => Err(format!("timed out awaiting {what}")),
        }
    };

    let mut ready = 0;
    while ready < args.processes {
        match next("ready")? {
            (_, line) if line == "ready" => ready += 1,
            (id, line) => return Err(format!("child {id} said {line:?} before ready")),
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    let start = Instant::now();
    children.say("go")?;
    let mut latencies = Vec::with_capacity((args.processes * args.entries) as usize);
    let mut done = 0;
    while done < args.processes {
        let (id, line) = next("done")?;
        let mut words = line.split_ascii_whitespace();
        if words.next() != Some("done") {
            return Err(format!("child {id} said {line:?}"));
        }
        let before = latencies.len();
        for word in words {
            latencies.push(
                word.parse::<u64>()
                    .map_err(|_| format!("child {id}: latency {word:?}"))?,
            );
        }
        if latencies.len() - before != args.entries as usize {
            return Err(format!(
                "child {id} reported {} latencies, not {}",
                latencies.len() - before,
                args.entries
            ));
        }
        done += 1;
    }
    let wall = start.elapsed();
    children.say("stop")?;
    children.finish(Duration::from_secs(10))?;
    Ok((latencies, wall))
}

/// What the fence log says.
struct Audit {
    entries: u64,
    /// From the first enter to the last exit.
    span: Duration,
    /// Summed from each enter to its exit.
    hold: Duration,
}

/// Checks the fence log: never two holders inside, fences increasing in their lane, every
/// entry there.
fn check_log(log: &Path, args: &Args) -> Result<Audit, String> {
    let text = std::fs::read_to_string(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut inside: Option<(u32, u32, u64, u64)> = None; // holder, lane, fence, since (ns)
    let mut newest: HashMap<u32, u64> = HashMap::new();
    let mut entries = 0u64;
    let mut hold_ns = 0u64;
    let (mut first, mut last) = (None, 0u64);
    for (n, line) in text.lines().enumerate() {
        let bad = || format!("fence log line {}: {line:?}", n + 1);
        let w: Vec<&str> = line.split_ascii_whitespace().collect();
        let [kind, id, lane, fence, ns] = w[..] else {
            return Err(bad());
        };
        let id: u32 = id.parse().map_err(|_| bad())?;
        let lane: u32 = lane.parse().map_err(|_| bad())?;
        let fence: u64 = fence.parse().map_err(|_| bad())?;
        let ns: u64 = ns.parse().map_err(|_| bad())?;
        match kind {
            "enter" => {
                if let Some((holder, ..)) = inside {
                    return Err(format!(
                        "{}: child {id} entered while child {holder} was inside",
                        bad()
                    ));
                }
                if let Some(&prev) = newest.get(&lane) {
                    if fence <= prev {
                        return Err(format!(
                            "{}: fence {fence} not above {prev} in lane {lane}",
                            bad()
                        ));
                    }
                }
                newest.insert(lane, fence);
                inside = Some((id, lane, fence, ns));
                entries += 1;
                first.get_or_insert(ns);
            }
            "exit" => match inside.take() {
                Some((holder, l, f, since)) if (holder, l, f) == (id, lane, fence) => {
                    hold_ns += ns.saturating_sub(since);
                    last = ns;
                }
                _ => return Err(format!("{}: an exit without its enter", bad())),
            },
            _ => return Err(bad()),
        }
    }
    if inside.is_some() {
        return Err("fence log: the last holder never exited".into());
    }
    let expected = u64::from(args.processes) * u64::from(args.entries);
    if entries != expected {
        return Err(format!("fence log: {entries} entries, not {expected}"));
    }
    Ok(Audit {
        entries,
        span: Duration::from_nanos(last.saturating_sub(first.unwrap_or(last)).max(1)),
        hold: Duration::from_nanos(hold_ns),
    })
}

// ---------------------------------------------------------------------------------------
// A child.

/// The lock a child takes: a node of ours, or an etcd client.
enum Lock {
    Ours(Node),
    Etcd(Etcd),
}

fn child(args: &Args) -> Result<(), String> {
    let id = args.child.expect("child mode");
    let log = std::fs::OpenOptions::new()
        .append(true)
        .open(args.log.as_ref().expect("checked"))
        .map_err(|e| format!("fence log: {e}"))?;
    // Standard input: `go`, then `stop`; its end (the parent gone) ends this process.
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(line) => {
                    let _ = tx.send(line);
                }
                Err(_) => break,
            }
        }
        std::process::exit(3);
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    runtime.block_on(run_child(args, id, log, rx))
}

async fn run_child(
    args: &Args,
    id: u32,
    mut log: std::fs::File,
    mut commands: tokio::sync::mpsc::UnboundedReceiver<String>,
) -> Result<(), String> {
    let n = args.processes;
    let lock = match args.backend {
        Backend::Krl => {
            let configs =
                reverse_link::network(n, &[], &[NodeId(0)], reverse_link::Settings::new(1))
                    .map_err(|e| e.to_string())?;
            let core =
                reverse_link::Node::new(configs[id as usize].clone()).map_err(|e| e.to_string())?;
            Lock::Ours(spawn(core, args)?)
        }
        Backend::Prioritized => {
            let settings = prioritized::Settings::new(1, prioritized::Policy::Equal);
            let configs =
                prioritized::network(n, &[], &[NodeId(0)], settings).map_err(|e| e.to_string())?;
            let core =
                prioritized::Node::new(configs[id as usize].clone()).map_err(|e| e.to_string())?;
            Lock::Ours(spawn(core, args)?)
        }
        Backend::LookAhead => {
            let configs =
                look_ahead::network(look_ahead::Settings::new(n, 20)).map_err(|e| e.to_string())?;
            let core =
                look_ahead::Node::new(configs[id as usize].clone()).map_err(|e| e.to_string())?;
            Lock::Ours(spawn(core, args)?)
        }
        Backend::RicartAgrawala => {
            let configs = ricart_agrawala::network(ricart_agrawala::Settings::new(n, 20))
                .map_err(|e| e.to_string())?;
            let core =
                ricart_agrawala::Node::new(configs[id as usize]).map_err(|e| e.to_string())?;
            Lock::Ours(spawn(core, args)?)
        }
        Backend::Etcd => {
            let member = args.etcd[id as usize % args.etcd.len()];
            Lock::Etcd(Etcd::connect(member)?)
        }
    };
    say("ready")?;
    expect(&mut commands, "go").await?;

    let hold = Duration::from_millis(args.hold_ms);
    let mut latencies = Vec::with_capacity(args.entries as usize);
    for _ in 0..args.entries {
        let asked = Instant::now();
        match &lock {
            Lock::Ours(node) => {
                let guard = node
                    .acquire_timeout(ACQUIRE_PATIENCE)
                    .await
                    .map_err(|e| format!("acquire: {e}"))?;
                latencies.push(asked.elapsed().as_micros() as u64);
                let fence = guard.fence();
                record(&mut log, "enter", id, fence.lane, fence.value)?;
                if !hold.is_zero() {
                    tokio::time::sleep(hold).await;
                }
                record(&mut log, "exit", id, fence.lane, fence.value)?;
                drop(guard);
            }
            Lock::Etcd(etcd) => {
                let (key, revision) = etcd.lock()?;
                latencies.push(asked.elapsed().as_micros() as u64);
                record(&mut log, "enter", id, 0, revision)?;
                if !hold.is_zero() {
                    tokio::time::sleep(hold).await;
                }
                record(&mut log, "exit", id, 0, revision)?;
                etcd.unlock(&key)?;
            }
        }
    }
    let mut done = String::from("done");
    for l in &latencies {
        done.push(' ');
        done.push_str(&l.to_string());
    }
    say(&done)?;
    // A node answers the others' requests until every child is done.
    expect(&mut commands, "stop").await?;
    match lock {
        Lock::Ours(node) => node.shutdown().await,
        Lock::Etcd(etcd) => etcd.revoke()?,
    }
    Ok(())
}

fn spawn<P>(core: P, args: &Args) -> Result<Node, String>
where
    P: Algorithm + Send + 'static,
    P::Message: Wire + Send,
{
    let id = core.id();
    let addr = |i: usize| SocketAddr::from(([127, 0, 0, 1], args.ports[i]));
    Node::builder(core)
        .bind(addr(id.index()))
        .peers((0..args.processes).map(|i| (NodeId(i), addr(i as usize))))
        .spawn()
        .map_err(|e| format!("node {}: {e}", id.0))
}

fn say(line: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| format!("stdout: {e}"))
}

async fn expect(
    commands: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    word: &str,
) -> Result<(), String> {
    match commands.recv().await {
        Some(line) if line == word => Ok(()),
        Some(line) => Err(format!("expected {word:?}, got {line:?}")),
        None => Err(format!("standard input closed before {word:?}")),
    }
}

/// Appends one line to the fence log in one `write` (the file is `O_APPEND`).
fn record(
    log: &mut std::fs::File,
    kind: &str,
    id: u32,
    lane: u32,
    fence: u64,
) -> Result<(), String> {
    let ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let line = format!("{kind} {id} {lane} {fence} {ns}\n");
    log.write_all(line.as_bytes())
        .map_err(|e| format!("fence log: {e}"))
}

// ---------------------------------------------------------------------------------------
// etcd's v3 lock over its gRPC gateway (JSON over HTTP/1.1, one kept-alive connection).

/// The lock's name, `loopback-bench`, base64 as the gateway wants bytes.
const LOCK_NAME: &str = "bG9vcGJhY2stYmVuY2g=";

struct Etcd {
    conn: std::cell::RefCell<BufReader<TcpStream>>,
    host: String,
    lease: String,
}

impl Etcd {
    fn connect(member: SocketAddr) -> Result<Self, String> {
        let stream = TcpStream::connect(member).map_err(|e| format!("etcd {member}: {e}"))?;
        stream
            .set_nodelay(true)
            .map_err(|e| format!("etcd {member}: {e}"))?;
        stream
            .set_read_timeout(Some(ACQUIRE_PATIENCE))
            .map_err(|e| format!("etcd {member}: {e}"))?;
        let mut etcd = Etcd {
            conn: std::cell::RefCell::new(BufReader::new(stream)),
            host: member.to_string(),
            lease: String::new(),
        };
        // Long enough for any run: the lease is revoked at the end (or expires).
        let granted = etcd.post("/v3/lease/grant", r#"{"TTL":"600"}"#)?;
        etcd.lease = json_string(&granted, "ID")
            .ok_or_else(|| format!("lease grant: no ID in {granted}"))?
            .to_string();
        Ok(etcd)
    }

    /// Waits for the lock: the key that holds it and the revision of the response.
    fn lock(&self) -> Result<(String, u64), String> {
        let body = format!(r#"{{"name":"{LOCK_NAME}","lease":"{}"}}"#, self.lease);
        let reply = self.post("/v3/lock/lock", &body)?;
        let key = json_string(&reply, "key").ok_or_else(|| format!("lock: no key in {reply}"))?;
        let revision = json_string(&reply, "revision")
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| format!("lock: no revision in {reply}"))?;
        Ok((key.to_string(), revision))
    }

    fn unlock(&self, key: &str) -> Result<(), String> {
        self.post("/v3/lock/unlock", &format!(r#"{{"key":"{key}"}}"#))
            .map(drop)
    }

    fn revoke(&self) -> Result<(), String> {
        self.post("/v3/lease/revoke", &format!(r#"{{"ID":"{}"}}"#, self.lease))
            .map(drop)
    }

    /// One request on the kept-alive connection; the body of a 200 response.
    fn post(&self, path: &str, body: &str) -> Result<String, String> {
        let mut conn = self.conn.borrow_mut();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        let err = |e: std::io::Error| format!("etcd {path}: {e}");
        conn.get_mut().write_all(request.as_bytes()).map_err(err)?;
        let mut status = String::new();
        conn.read_line(&mut status).map_err(err)?;
        let code = status.split_ascii_whitespace().nth(1).unwrap_or("");
        let (mut length, mut chunked) = (None, false);
        loop {
            let mut header = String::new();
            conn.read_line(&mut header).map_err(err)?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                let value = value.trim();
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.parse::<usize>().ok();
                } else if name.eq_ignore_ascii_case("transfer-encoding")
                    && value.eq_ignore_ascii_case("chunked")
                {
                    chunked = true;
                }
            }
        }
        let mut bytes = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                conn.read_line(&mut size).map_err(err)?;
                let size = usize::from_str_radix(size.trim(), 16)
                    .map_err(|_| format!("etcd {path}: chunk size {size:?}"))?;
                let mut chunk = vec![0; size + 2]; // and its CRLF
                conn.read_exact(&mut chunk).map_err(err)?;
                if size == 0 {
                    break;
                }
                bytes.extend_from_slice(&chunk[..size]);
            }
        } else {
            let length = length.ok_or_else(|| format!("etcd {path}: no length"))?;
            bytes.resize(length, 0);
            conn.read_exact(&mut bytes).map_err(err)?;
        }
        let body = String::from_utf8_lossy(&bytes).into_owned();
        if code != "200" {
            return Err(format!("etcd {path}: {} {body}", status.trim_end()));
        }
        Ok(body)
    }
}

/// The string value of `"name":"..."` in a flat reading of `json` (the gateway's replies
/// quote 64-bit numbers too).
fn json_string<'a>(json: &'a str, name: &str) -> Option<&'a str> {
    let pattern = format!("\"{name}\":\"");
    let start = json.find(&pattern)? + pattern.len();
    let len = json[start..].find('"')?;
    Some(&json[start..start + len])
}
