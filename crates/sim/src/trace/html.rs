//! The viewer: one HTML file with the recording inside it, no network access and no external
//! assets (the page's script and styles are inline; drawing is SVG).

use super::{Record, Recording};

const TEMPLATE: &str = include_str!("viewer.html");

/// The viewer page for `recording`. Open it in any browser; `#step=K` in the address opens it
/// at step `K`. The page marks what it draws for tests: each node is a `g.node` with
/// `data-id`, `data-tokens` and `data-status`, each link a `line.link` with `data-from` (the
/// higher end) and `data-to`, each message in flight a `circle.msg` (`circle.msg.token` for a
/// token) with `data-kind`, `data-from` and `data-to`, the legend `#legend` with
/// `data-family` (`token` or `permission`), and `body` has `data-step`. `#step=K&probe` also
/// marks each message with `data-on-top` (`1` if it is the topmost element at its centre).
pub fn page(recording: &Recording) -> String {
    let json = serde_json::to_string(&recording.records).unwrap_or_else(|_| "[]".into());
    // Inside a <script> element only "</" can end it early.
    let json = json.replace("</", "<\\/");
    let title = match recording.records.first() {
        Some(Record::Init {
            algorithm, views, ..
        }) => {
            format!(
                "{} nodes, {} steps, {}",
                views.len(),
                recording.steps(),
                algorithm
            )
        }
        _ => "empty".into(),
    };
    let title = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    TEMPLATE
        .replace("/*TITLE*/", &title)
        .replace("/*TRACE*/", &json)
}
