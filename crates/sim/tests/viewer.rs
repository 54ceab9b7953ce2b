//! The trace viewer in a real browser: a recorded simulation is rendered by headless Chromium
//! at a known step, and what the page draws there (which nodes hold tokens, their status,
//! which way each link points) is compared with the simulator's own state at that step.
//!
//! Needs `chromium` (Debian's package; `.ci/run` installs it). Without it the browser test
//! is skipped with a message, unless `MANET_MUTEX_REQUIRE_CHROMIUM=1` (set by `.ci/run`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use manet_mutex::reverse_link::{Node, Settings};
use manet_mutex::Protocol;
use manet_mutex_sim::token::{self, Config};
use manet_mutex_sim::trace::{html, Record, Recording, View};
use manet_mutex_sim::{Graph, Params};
use rand::SeedableRng;

/// Per node its tokens and status; and each link as (higher end, lower end).
type Drawing = (BTreeMap<u32, (u32, String)>, BTreeSet<(u32, u32)>);

/// KRLF on 12 nodes with link changes, recorded.
fn recorded_run() -> (Recording, Vec<Node>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let graph = Graph::random_connected(12, 24, &mut rng);
    let settings = Settings::new(3).with_forwarding(true);
    let mut config = Config::new(graph, Params::first_nodes(settings, 3), 4);
    config.workload.lambda_req = 0.1;
    config.lambda_mob = 0.05;
    config.duration = 60.0;
    config.record = true;
    // Through the settling after the window, so the last recorded state is the final one.
    config.record_all = true;
    let out = token::run::<Node>(config).expect("a correct run");
    (out.recording.expect("recorded"), out.nodes)
}

/// What the page should draw after `k` steps, computed from the records: per node its
/// tokens and status, and each link as (higher end, lower end).
fn expected(rec: &Recording, k: usize) -> Drawing {
    let Some(Record::Init { views, links, .. }) = rec.records.first() else {
        panic!("no init record")
    };
    let mut views: Vec<View> = views.clone();
    let mut links: BTreeSet<(u32, u32)> =
        links.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    let steps = rec.records.iter().filter_map(|r| match r {
        Record::Step {
            node, view, link, ..
        } => Some((node, view, link)),
        _ => None,
    });
    for (node, view, link) in steps.take(k) {
        views[*node as usize] = view.clone();
        if let Some((a, b, up)) = link {
            if *up {
                links.insert((*a, *b));
            } else {
                links.remove(&(*a, *b));
            }
        }
    }
    let nodes = views
        .iter()
        .enumerate()
        .map(|(i, v)| (i as u32, (v.tokens, v.status.clone())))
        .collect();
    let arrows = links
        .into_iter()
        .map(|(a, b)| {
            let (ha, hb) = (views[a as usize].height, views[b as usize].height);
            if ha > hb {
                (a, b)
            } else {
                (b, a)
            }
        })
        .collect();
    (nodes, arrows)
}

/// What the page drew: the same two things, read from the DOM, and the tokens it drew in
/// flight.
fn drawn(dom: &str) -> (Drawing, u32) {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let end = tag[start..].find('"')? + start;
        Some(tag[start..end].to_string())
    };
    let mut nodes = BTreeMap::new();
    let mut arrows = BTreeSet::new();
    let mut flying = 0;
    for tag in dom.split('<').map(|t| t.split('>').next().unwrap_or("")) {
        let class = attr(tag, "class").unwrap_or_default();
        let num = |name| attr(tag, name).and_then(|v| v.parse::<u32>().ok());
        if tag.starts_with("g ") && class.split(' ').any(|c| c == "node") {
            let (Some(id), Some(tokens), Some(status)) =
                (num("data-id"), num("data-tokens"), attr(tag, "data-status"))
            else {
                panic!("a node without its data: {tag}")
            };
            nodes.insert(id, (tokens, status));
        }
        if tag.starts_with("line ") && class == "link" {
            arrows.insert((num("data-from").unwrap(), num("data-to").unwrap()));
        }
        if tag.starts_with("circle ") && class == "msg token" {
            flying += 1;
        }
    }
    ((nodes, arrows), flying)
}

/// The browser, or `None` (the test skips, with a message) when none is installed; with
/// `MANET_MUTEX_REQUIRE_CHROMIUM` set a missing browser fails the test instead.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .map(PathBuf::from)
        .find(|p| {
            Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        assert!(
            std::env::var("MANET_MUTEX_REQUIRE_CHROMIUM").is_err(),
            "MANET_MUTEX_REQUIRE_CHROMIUM is set but no chromium was found"
        );
        eprintln!("skipped: no chromium (apt-get install chromium)");
    }
    found
}

/// `rec` as a page named `name` in the test's scratch folder.
fn write_page(name: &str, rec: &Recording) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join(name);
    std::fs::write(&page, html::page(rec)).unwrap();
    page
}

fn dump_dom(browser: &Path, page: &Path, step: usize) -> String {
    dump_dom_at(browser, page, &format!("step={step}"))
}

/// The page's DOM after it drew with `hash` as the address's fragment.
fn dump_dom_at(browser: &Path, page: &Path, hash: &str) -> String {
    let url = format!("file://{}#{hash}", page.display());
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg("--window-size=1400,1000")
        .arg(&url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 DOM")
}

#[test]
fn the_page_is_self_contained() {
    let (rec, _) = recorded_run();
    let page = html::page(&rec);
    // No external assets: the only URL is the SVG namespace.
    let urls = page.matches("http").count();
    assert_eq!(
        urls,
        page.matches("http://www.w3.org/2000/svg").count(),
        "an external URL"
    );
    assert!(!page.contains("<link") && !page.contains(" src="));
    // The recording survives JSON lines, exactly (floats included).
    let back = Recording::from_json_lines(&rec.to_json_lines()).unwrap();
    assert!(back == rec, "the recording changed through JSON lines");
}

#[test]
fn the_last_recorded_state_is_the_simulators_final_state() {
    let (rec, nodes) = recorded_run();
    let (views, _) = expected(&rec, rec.steps());
    for node in &nodes {
        let (tokens, status) = &views[&node.id().0];
        assert_eq!(*tokens, node.tokens(), "{:?}", node.id());
        assert_eq!(status, &format!("{:?}", node.status()).to_lowercase());
    }
}

#[test]
fn chromium_draws_the_simulators_state_at_a_step() {
    let Some(browser) = chromium() else {
        return;
    };
    let (rec, _) = recorded_run();
    assert!(rec.steps() > 300, "{} steps", rec.steps());
    let page = write_page("krlf.html", &rec);
    // A step past a checkpoint of the page (every 200 steps), and one with link changes before.
    for step in [0, 137, 251, rec.steps()] {
        let dom = dump_dom(&browser, &page, step);
        assert!(
            dom.contains(&format!("data-step=\"{step}\"")),
            "the page is not at step {step}"
        );
        let ((nodes, arrows), flying) = drawn(&dom);
        let (want_nodes, want_arrows) = expected(&rec, step);
        assert_eq!(nodes, want_nodes, "nodes at step {step}");
        assert_eq!(arrows, want_arrows, "links at step {step}");
        // Every one of the k = 3 tokens is drawn: held, or moving along a link.
        let held: u32 = nodes.values().map(|(t, _)| t).sum();
        assert_eq!(
            held + flying,
            3,
            "tokens drawn at step {step}: {held} held, {flying} moving"
        );
    }
}

/// A look-ahead run on the routed simulator, recorded: 8 hosts moving, 2% loss.
fn routed_run(record: bool) -> manet_mutex_sim::routed::Report {
    use manet_mutex_sim::routed::{run_algorithm, RoutedConfig};
    use manet_mutex_sim::Algorithm;
    let mut cfg = RoutedConfig::paper(8, 0.05, 1.0, 3);
    cfg.target_entries = 40;
    cfg.record = record;
    run_algorithm(Algorithm::LookAhead, &cfg).expect("a correct run")
}

/// Recording a routed run changes nothing in it, and the recording has the hosts moving and
/// the lost messages in it.
#[test]
fn a_recorded_routed_run_is_the_same_run_and_shows_movement_and_loss() {
    let plain = routed_run(false);
    let recorded = routed_run(true);
    assert_eq!(plain.metrics.waits, recorded.metrics.waits);
    assert_eq!(
        (plain.metrics.messages, plain.lost),
        (recorded.metrics.messages, recorded.lost)
    );
    let rec = recorded.recording.expect("recorded");
    let moves = rec
        .records
        .iter()
        .filter(|r| {
            matches!(
                r,
                Record::Step {
                    positions: Some(_),
                    ..
                }
            )
        })
        .count();
    let lost = rec
        .records
        .iter()
        .filter(|r| matches!(r, Record::Lost { .. }))
        .count();
    assert!(moves > 10, "{moves} position updates");
    assert!(
        lost > 0 && lost as u64 <= recorded.lost,
        "{lost} of {}",
        recorded.lost
    );
    let Some(Record::Init {
        radius: Some(r), ..
    }) = rec.records.first()
    else {
        panic!("no radius in the init record")
    };
    assert!(*r > 0.0 && *r < 1.0);
}

/// The routed page in Chromium: statuses as recorded, and a link for exactly the pairs of
/// hosts within the radius at that step's positions.
#[test]
fn chromium_draws_moving_hosts_and_their_radius_links() {
    let Some(browser) = chromium() else {
        return;
    };
    let rec = routed_run(true).recording.expect("recorded");
    let page = write_page("look_ahead.html", &rec);
    let Some(Record::Init {
        positions,
        radius: Some(radius),
        views,
        ..
    }) = rec.records.first()
    else {
        panic!("no init record")
    };
    let step = rec.steps() / 2;
    let (mut at, mut views) = (positions.clone(), views.clone());
    for r in &rec.records {
        if let Record::Step {
            step: s,
            node,
            view,
            positions,
            ..
        } = r
        {
            if *s as usize > step {
                break;
            }
            views[*node as usize] = view.clone();
            if let Some(p) = positions {
                at = p.clone();
            }
        }
    }
    let mut want_links = BTreeSet::new();
    for a in 0..at.len() {
        for b in a + 1..at.len() {
            let d2 = (at[a].0 - at[b].0).powi(2) + (at[a].1 - at[b].1).powi(2);
            if d2 <= radius * radius {
                want_links.insert((a as u32, b as u32));
            }
        }
    }
    let dom = dump_dom(&browser, &page, step);
    let ((nodes, links), _) = drawn(&dom);
    let links: BTreeSet<(u32, u32)> = links
        .into_iter()
        .map(|(a, b)| (a.min(b), a.max(b)))
        .collect();
    assert_eq!(links, want_links, "links at step {step}");
    for (i, v) in views.iter().enumerate() {
        assert_eq!(nodes[&(i as u32)].1, v.status, "host {i} at step {step}");
    }
}

/// The opening tags in `dom` of elements named `name` whose class list has `class`.
fn tags<'a>(dom: &'a str, name: &str, class: &str) -> Vec<&'a str> {
    dom.split('<')
        .map(|t| t.split('>').next().unwrap_or(""))
        .filter(|t| t.starts_with(&format!("{name} ")))
        .filter(|t| {
            t.split(" class=\"")
                .nth(1)
                .and_then(|c| c.split('"').next())
                .is_some_and(|c| c.split(' ').any(|x| x == class))
        })
        .collect()
}

fn attr_of(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = tag[start..].find('"')? + start;
    Some(tag[start..end].to_string())
}

/// The legend's part of the page's DOM.
fn legend(dom: &str) -> &str {
    let start = dom.find("<div id=\"legend\"").expect("a legend");
    let end = dom[start..]
        .find("<div id=\"window\"")
        .expect("the legend's end");
    &dom[start..start + end]
}

/// Per step `k` (0..=steps), the tokens in flight after it, as (from, to), from the records.
fn tokens_in_flight(rec: &Recording) -> Vec<Vec<(u32, u32)>> {
    let mut flying: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
    let mut out = vec![Vec::new()];
    for r in &rec.records {
        match r {
            Record::Step {
                node,
                received,
                sent,
                ..
            } => {
                if let Some(id) = received {
                    flying.remove(id);
                }
                for m in sent {
                    if m.msg.split(' ').next() == Some("TOKEN") {
                        flying.insert(m.id, (*node, m.to));
                    }
                }
                out.push(Vec::new());
            }
            Record::Lost { message, .. } => {
                flying.remove(message);
            }
            _ => {}
        }
        *out.last_mut().unwrap() = flying.values().copied().collect();
    }
    out
}

/// KRL on 30 nodes, k = 3, as in the report that tokens were hidden: recorded up to the end
/// of the measured window (the default).
fn krl30() -> Recording {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let graph = Graph::random_connected(30, 60, &mut rng);
    let mut config = Config::new(graph, Params::first_nodes(Settings::new(3), 3), 7);
    config.workload.lambda_req = 0.2;
    config.lambda_mob = 0.02;
    config.duration = 40.0;
    config.record = true;
    let out = token::run::<Node>(config).expect("a correct run");
    out.recording.expect("recorded")
}

/// Recording stops at the end of the measured window unless asked otherwise, and the window
/// is marked in the records and on the page.
#[test]
fn recordings_end_with_the_measured_window_unless_asked() {
    let rec = krl30();
    let window = rec.records.iter().find_map(|r| match r {
        Record::Window { step, .. } => Some(*step),
        _ => None,
    });
    assert_eq!(
        window,
        Some(rec.steps() as u64),
        "the window ends the recording"
    );
    let (all, _) = recorded_run();
    let Some(w) = all.records.iter().find_map(|r| match r {
        Record::Window { step, .. } => Some(*step),
        _ => None,
    }) else {
        panic!("no window record")
    };
    assert!(
        (w as usize) < all.steps(),
        "record_all goes on after the window"
    );
    assert!(html::page(&rec).contains("windowmark"));
}

/// At the busiest step of a 30-node KRL page (most tokens in flight), every token in flight
/// in the data has a token mark on the page, between the same two nodes, and each mark is the
/// topmost element at its centre (`document.elementFromPoint`, the page's `#probe` mode): no
/// circle, arrow, label or other message covers it. The legend is the token family's.
#[test]
fn chromium_draws_every_token_in_flight_on_top() {
    let Some(browser) = chromium() else {
        return;
    };
    let rec = krl30();
    let flying = tokens_in_flight(&rec);
    let (step, most) = flying
        .iter()
        .enumerate()
        .max_by_key(|(k, f)| (f.len(), usize::MAX - k))
        .map(|(k, f)| (k, f.clone()))
        .unwrap();
    assert!(
        most.len() >= 2,
        "a busy step: {} tokens in flight",
        most.len()
    );
    let page = write_page("krl30.html", &rec);
    // Every step with tokens in flight among the first few busy ones, and the busiest.
    let mut busy: Vec<usize> = (0..flying.len())
        .filter(|&k| !flying[k].is_empty())
        .step_by(97)
        .take(4)
        .collect();
    busy.push(step);
    for k in busy {
        let dom = dump_dom_at(&browser, &page, &format!("step={k}&probe"));
        assert!(
            dom.contains(&format!("data-step=\"{k}\"")),
            "not at step {k}"
        );
        let marks = tags(&dom, "circle", "token");
        let mut drawn: Vec<(u32, u32)> = marks
            .iter()
            .map(|t| {
                let n = |a| attr_of(t, a).and_then(|v| v.parse().ok()).unwrap();
                (n("data-from"), n("data-to"))
            })
            .collect();
        let mut want = flying[k].clone();
        drawn.sort_unstable();
        want.sort_unstable();
        assert_eq!(drawn, want, "tokens in flight at step {k}");
        for t in &marks {
            assert_eq!(
                attr_of(t, "data-on-top").as_deref(),
                Some("1"),
                "a token mark at step {k} is covered: {t}"
            );
        }
        // Other messages are on top too (only tokens may cover them).
        let covered = tags(&dom, "circle", "msg")
            .into_iter()
            .filter(|t| attr_of(t, "data-on-top").as_deref() != Some("1"))
            .count();
        assert_eq!(covered, 0, "messages covered at step {k}");
    }
    let dom = dump_dom(&browser, &page, step);
    let legend = legend(&dom);
    assert!(legend.contains("data-family=\"token\""), "token legend");
    for row in ["legend-token", "legend-height", "legend-queue"] {
        assert!(legend.contains(row), "the token legend explains {row}");
    }
}

/// A look-ahead page has the permission family's legend: no token row, REQUEST and REPLY
/// colours, and no "tokens" row in the node table; its events read as words.
#[test]
fn chromium_shows_the_permission_legend_on_a_look_ahead_page() {
    let Some(browser) = chromium() else {
        return;
    };
    let rec = routed_run(true).recording.expect("recorded");
    let page = write_page("look_ahead_legend.html", &rec);
    let dom = dump_dom(&browser, &page, rec.steps() / 2);
    let legend = legend(&dom);
    assert!(
        legend.contains("data-family=\"permission\""),
        "permission legend"
    );
    assert!(
        !legend.contains("legend-token"),
        "a token row on a look-ahead page"
    );
    assert!(
        !dom.contains("<td>tokens</td>"),
        "a tokens row on a look-ahead page"
    );
    assert!(legend.contains("REQUEST: a request for permission"));
    assert!(legend.contains("REPLY: permission granted"));
    let event = dom
        .split("<div id=\"event\">")
        .nth(1)
        .and_then(|e| e.split("</div>").next())
        .unwrap();
    assert!(
        event.starts_with("node ") || event.starts_with("link "),
        "{event}"
    );
    assert!(
        event
            .split(|c: char| !c.is_ascii_alphanumeric())
            .all(|w| w.len() < 12),
        "a long number in the event: {event}"
    );
}
