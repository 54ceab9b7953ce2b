//! Turn a recorded run into one self-contained HTML page, or record the KRL paper's Figure 2
//! scenario and write its page.
//!
//! ```text
//! cargo run --example trace -- run.jsonl -o run.html     # a saved recording (JSON lines)
//! cargo run --example trace -- --figure2 -o fig2.html    # KRL paper, Figure 2, rebuilt
//! cargo run --example trace -- --figure2 --jsonl fig2.jsonl
//! ```
//!
//! Recordings come from `sim::token::Config::record` (`simulate --trace FILE.html` writes a
//! page directly), or from a failed run's `Failure::recording`.

use std::path::PathBuf;

use clap::Parser;
use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex::NodeId;
use manet_mutex_sim::token::{self, Config};
use manet_mutex_sim::trace::{html, Recording};
use manet_mutex_sim::{Graph, Params};

/// Write a recorded run as an HTML page.
#[derive(Debug, Parser)]
#[command(about)]
struct Args {
    /// A recording in JSON lines.
    input: Option<PathBuf>,
    /// Record the KRL paper's Figure 2 scenario instead.
    #[arg(long)]
    figure2: bool,
    /// The page to write.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Also write the recording as JSON lines.
    #[arg(long)]
    jsonl: Option<PathBuf>,
}

/// The KRL paper's Figure 2: five nodes, two tokens (at nodes 0 and 1), a static network.
/// Nodes 3, 2 and 4 ask first (3 and 2 reach node 0, 4 reaches node 1), so node 0 sends its
/// token to node 3 and follows it with a request on behalf of node 2, node 1 asks while its
/// token is with node 4, and everyone is served: the paper's parts (a)–(c). The figure's drawing is lost in the
/// available text; the links are those its description implies (2 and 3 next to 0, 4 next
/// to 1 and 3, 0 next to 1).
fn figure2() -> Result<Recording, String> {
    let edges: Vec<(NodeId, NodeId)> = [(0, 1), (0, 2), (0, 3), (1, 4), (3, 4)]
        .iter()
        .map(|&(a, b)| (NodeId(a), NodeId(b)))
        .collect();
    let graph = Graph::from_edges(5, &edges);
    let params = Params::new(Settings::new(2), vec![NodeId(0), NodeId(1)]);
    let mut config = Config::new(graph, params, 1);
    config.workload.lambda_req = 0.0;
    // The critical section lasts 3 message delays, so queues are visible for a while.
    config.workload.cs_duration = 3.0;
    config.duration = 20.0;
    config.script = vec![
        (0.1, NodeId(3)),
        (0.2, NodeId(2)),
        (0.3, NodeId(4)),
        (2.5, NodeId(1)),
    ];
    config.record = true;
    let outcome = token::run::<Node>(config).map_err(|v| v.to_string())?;
    outcome
        .recording
        .ok_or_else(|| "the run did not record".to_string())
}

fn main() {
    let args = Args::parse();
    let recording = if args.figure2 {
        figure2()
    } else if let Some(input) = &args.input {
        std::fs::read_to_string(input)
            .map_err(|e| format!("{}: {e}", input.display()))
            .and_then(|text| {
                Recording::from_json_lines(&text).map_err(|e| format!("{}: {e}", input.display()))
            })
    } else {
        Err("give a recording (JSON lines) or --figure2".into())
    };
    let recording = recording.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let write = |path: &PathBuf, text: String| {
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: {}: {e}", path.display());
            std::process::exit(1);
        }
        println!("{}", path.display());
    };
    if let Some(path) = &args.jsonl {
        write(path, recording.to_json_lines());
    }
    let out = args.out.unwrap_or_else(|| PathBuf::from("trace.html"));
    write(&out, html::page(&recording));
}
