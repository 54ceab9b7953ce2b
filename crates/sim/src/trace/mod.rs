//! Recorded runs and a self-contained HTML viewer for them (needs the `std` feature).
//!
//! A [`Recording`] is the initial state of a network and every event after it, each with the
//! visible state of the node that handled it ([`View`]), the messages it sent, the message it
//! received, the link changes and, if one failed, the invariant. It serializes to JSON lines
//! ([`Recording::to_json_lines`]; one [`Record`] per line) and turns into one HTML file with
//! no external assets ([`html::page`]): nodes placed by the topology (or the hosts'
//! positions), links drawn as arrows from the higher to the lower height as in the KRL paper's
//! figures, token holders shaded, queues and `next` pointers listed, messages in flight moving
//! along their links (drawn on top, tokens larger), a legend per algorithm family, events in
//! words ([`words`]), the end of the measured window marked ([`Record::Window`]; recordings
//! stop there unless [`crate::token::Config::record_all`]), step forward and back, jump, play.
//!
//! The token simulator records when [`crate::token::Config::record`] is set, and
//! `simulate --trace FILE.html` writes a page; the `trace` example turns a saved recording
//! (JSON lines) into a page.

pub mod html;
mod layout;
mod recorder;
mod tape;
mod view;
pub mod words;

pub use layout::spring_layout;
pub use recorder::Recorder;
pub use tape::Tape;
pub use view::{View, Visible};

use serde::{Deserialize, Serialize};

/// One line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Record {
    /// The network before the first event.
    Init {
        /// The algorithm's name.
        algorithm: String,
        /// Where to draw each node, in `[0, 1] × [0, 1]`.
        positions: Vec<(f64, f64)>,
        /// The links, each once.
        links: Vec<(u32, u32)>,
        /// Every node's visible state.
        views: Vec<View>,
        /// For hosts that move (the routed simulator): the transmission radius in the same
        /// units as `positions`; links are then every pair within it, at each step's
        /// positions, and `links` is empty.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        radius: Option<f64>,
    },
    /// One event handed to one node.
    Step {
        /// Its number, from 1.
        step: u64,
        /// Simulated time.
        time: f64,
        /// The node that handled it.
        node: u32,
        /// The event, as text.
        event: String,
        /// The message delivered by this event, if any (its number in a `Sent`).
        received: Option<u64>,
        /// The node's visible state after the event.
        view: View,
        /// The messages it sent.
        sent: Vec<Sent>,
        /// A link that formed (`true`) or failed with this event, if any.
        link: Option<(u32, u32, bool)>,
        /// Where the nodes are from this step on, if they moved (the routed simulator).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        positions: Option<Vec<(f64, f64)>>,
    },
    /// The measured window ended after step `step` (0: before any) at `time`: every request
    /// of the workload had been served. By default nothing after it is recorded (the token
    /// simulator's settling, [`crate::token::Config::record_all`]). Added with the viewer's
    /// legend (issue 26); recordings without it read as before.
    Window {
        /// The last step inside the window.
        step: u64,
        /// Simulated time when the window closed.
        time: f64,
    },
    /// A message dropped without delivery (loss, or a link that failed under it).
    Lost {
        /// Its number.
        message: u64,
        /// Simulated time.
        time: f64,
    },
    /// The invariant that failed, after the step that broke it.
    Violation {
        /// What failed.
        message: String,
    },
}

/// A message sent during a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sent {
    /// Its number, unique in the recording.
    pub id: u64,
    /// The destination.
    pub to: u32,
    /// The message, as text.
    pub msg: String,
}

/// A recorded run: its records in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recording {
    /// The records, starting with [`Record::Init`].
    pub records: Vec<Record>,
}

impl Recording {
    /// One JSON object per line.
    pub fn to_json_lines(&self) -> String {
        let mut out = String::new();
        for r in &self.records {
            // Serializing these plain types cannot fail.
            if let Ok(line) = serde_json::to_string(r) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out
    }

    /// Parse JSON lines (blank lines skipped); errors name the line.
    pub fn from_json_lines(text: &str) -> Result<Recording, String> {
        let mut records = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let r = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
            records.push(r);
        }
        match records.first() {
            Some(Record::Init { .. }) => Ok(Recording { records }),
            _ => Err("a recording starts with an `init` record".into()),
        }
    }

    /// The number of steps.
    pub fn steps(&self) -> usize {
        self.records
            .iter()
            .filter(|r| matches!(r, Record::Step { .. }))
            .count()
    }
}
