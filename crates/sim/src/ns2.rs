//! Node movement replayed from an ns-2 mobility file (the `setdest` format that ns-2's
//! `setdest` tool, ns-3's `Ns2MobilityHelper` and BonnMotion's ns-2 export write), and the
//! link changes a transmission radius derives from it.
//!
//! The format, one statement per line (`#` starts a comment; anything else is an error that
//! names its line):
//!
//! ```text
//! $node_(0) set X_ 150.0                          # initial position
//! $node_(0) set Y_ 93.5
//! $node_(0) set Z_ 0.0                            # accepted, ignored (the plane)
//! $ns_ at 2.0 "$node_(0) setdest 250.0 100.0 5.0" # from t = 2 s, head there at 5 m/s
//! $god_ set-dist 0 1 2                            # ns-2's routing oracle: skipped
//! $ns_ at 30.0 "$god_ set-dist 0 1 1"             # skipped too
//! ```
//!
//! As in ns-2, a `setdest` starts a straight move from wherever the node is at that time
//! (a later one replaces a move in progress) and the node stops on arrival; speed 0 stops it
//! where it is. Nodes are numbered `0..n` by the largest index mentioned; a node with no `X_`
//! or `Y_` starts at 0 on that axis, as in ns-2.

use std::fmt;

use super::waypoint::Point;
use super::Time;
use manet_mutex::NodeId;

/// A parse error: the 1-based line and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// The line, counting from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// One straight move: from `from` at `start`, towards `to` at `speed` (m/s), until `arrive`
/// (then standing at `to`), or until the node's next move starts.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Move {
    start: Time,
    from: Point,
    to: Point,
    arrive: Time,
}

impl Move {
    fn at(&self, t: Time) -> Point {
        if t >= self.arrive || self.arrive <= self.start {
            return if t >= self.arrive { self.to } else { self.from };
        }
        let f = ((t - self.start) / (self.arrive - self.start)).clamp(0.0, 1.0);
        (
            self.from.0 + f * (self.to.0 - self.from.0),
            self.from.1 + f * (self.to.1 - self.from.1),
        )
    }

    /// Velocity while moving (m/s per axis).
    fn velocity(&self) -> Point {
        let dt = self.arrive - self.start;
        if dt <= 0.0 {
            (0.0, 0.0)
        } else {
            (
                (self.to.0 - self.from.0) / dt,
                (self.to.1 - self.from.1) / dt,
            )
        }
    }
}

/// Every node's trajectory, replayed from an ns-2 mobility file.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Per node, its moves in time order (the first starts at 0 and stands still).
    moves: Vec<Vec<Move>>,
    /// Per node, whether the file gave its initial position (`set X_` or `set Y_`).
    placed: Vec<bool>,
}

/// A link change derived from a [`Trace`] and a transmission radius.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkChange {
    /// When.
    pub time: Time,
    /// The lower-numbered end.
    pub a: NodeId,
    /// The higher-numbered end.
    pub b: NodeId,
    /// Whether the link forms (`true`) or fails.
    pub up: bool,
}

impl fmt::Display for LinkChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.up { "up" } else { "down" };
        write!(f, "t={} {}-{} {what}", self.time, self.a.0, self.b.0)
    }
}

/// A trace as a simulation replays it ([`Trace::replay`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The links at time 0, joined into one connected network.
    pub initial: Vec<(NodeId, NodeId)>,
    /// The link changes in time order, starting with the failures of the joining links.
    pub changes: Vec<LinkChange>,
}

/// A statement of the file that matters for movement.
enum Statement {
    Set {
        node: usize,
        axis: u8,
        value: f64,
    },
    Setdest {
        at: Time,
        node: usize,
        to: Point,
        speed: f64,
    },
}

impl Trace {
    /// Parse an ns-2 mobility file.
    pub fn parse(text: &str) -> Result<Trace, ParseError> {
        let mut initial: Vec<Point> = Vec::new();
        let mut placed: Vec<bool> = Vec::new();
        // (time, file order, node, destination, speed)
        let mut setdests: Vec<(Time, usize, usize, Point, f64)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let err = |message: String| ParseError {
                line: i + 1,
                message,
            };
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let grow = |v: &mut Vec<Point>, node: usize| {
                if v.len() <= node {
                    v.resize(node + 1, (0.0, 0.0));
                }
            };
            match parse_statement(line).map_err(err)? {
                None => {}
                Some(Statement::Set { node, axis, value }) => {
                    grow(&mut initial, node);
                    if placed.len() <= node {
                        placed.resize(node + 1, false);
                    }
                    placed[node] |= matches!(axis, b'X' | b'Y');
                    match axis {
                        b'X' => initial[node].0 = value,
                        b'Y' => initial[node].1 = value,
                        _ => {}
                    }
                }
                Some(Statement::Setdest {
                    at,
                    node,
                    to,
                    speed,
                }) => {
                    grow(&mut initial, node);
                    setdests.push((at, i, node, to, speed));
                }
            }
        }
        setdests.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let mut moves: Vec<Vec<Move>> = initial
            .iter()
            .map(|&p| {
                vec![Move {
                    start: 0.0,
                    from: p,
                    to: p,
                    arrive: 0.0,
                }]
            })
            .collect();
        for (at, _, node, to, speed) in setdests {
            let list = &mut moves[node];
            let here = list.last().map_or((0.0, 0.0), |m| m.at(at));
            let d = ((to.0 - here.0).powi(2) + (to.1 - here.1).powi(2)).sqrt();
            let (to, arrive) = if speed > 0.0 {
                (to, at + d / speed)
            } else {
                (here, at)
            };
            list.push(Move {
                start: at,
                from: here,
                to,
                arrive,
            });
        }
        placed.resize(moves.len(), false);
        Ok(Trace { moves, placed })
    }

    /// The nodes the file gives no initial position (neither `X_` nor `Y_`): named only in a
    /// `setdest`, or not at all below a larger index. They start at (0, 0), as in ns-2, and
    /// a program should say so: a typo in an index silently makes the network larger.
    pub fn unplaced(&self) -> Vec<usize> {
        (0..self.nodes()).filter(|&i| !self.placed[i]).collect()
    }

    /// Whether any two nodes are ever within `radius` of each other.
    pub fn ever_linked(&self, radius: f64) -> bool {
        !self.links_at(0.0, radius).is_empty()
            || self.link_changes(radius, self.end()).iter().any(|c| c.up)
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.moves.len()
    }

    /// Node `node`'s position at time `t` (`(0, 0)` for a node outside the trace).
    pub fn position(&self, node: usize, t: Time) -> Point {
        let Some(list) = self.moves.get(node) else {
            return (0.0, 0.0);
        };
        let i = list.partition_point(|m| m.start <= t).max(1);
        list[i - 1].at(t)
    }

    /// Every node's position at time `t`.
    pub fn positions(&self, t: Time) -> Vec<Point> {
        (0..self.nodes()).map(|i| self.position(i, t)).collect()
    }

    /// The last time a node starts or stops moving.
    pub fn end(&self) -> Time {
        self.moves
            .iter()
            .flatten()
            .map(|m| m.arrive.max(m.start))
            .fold(0.0, f64::max)
    }

    /// The pairs within `radius` of each other at time `t`.
    pub fn links_at(&self, t: Time, radius: f64) -> Vec<(NodeId, NodeId)> {
        let pos = self.positions(t);
        let mut out = Vec::new();
        for a in 0..pos.len() {
            for b in a + 1..pos.len() {
                if dist2(pos[a], pos[b]) <= radius * radius {
                    out.push((NodeId(a as u32), NodeId(b as u32)));
                }
            }
        }
        out
    }

    /// What a simulation replays: the links at time 0 and the changes until `until`.
    ///
    /// Token algorithms start from a consistent state of a connected network (every
    /// component needs a token). If the trace's nodes start out of each other's range, the
    /// initial links also join the components, each by its closest pair of nodes (as
    /// Kruskal's algorithm would), and those joining links fail at time 0: the nodes set up
    /// while in contact and then moved apart, which the algorithms handle like any failure.
    pub fn replay(&self, radius: f64, until: Time) -> Replay {
        let mut initial = self.links_at(0.0, radius);
        let n = self.nodes();
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for &(a, b) in &initial {
            let (ra, rb) = (root(&mut parent, a.index()), root(&mut parent, b.index()));
            parent[ra] = rb;
        }
        let pos = self.positions(0.0);
        let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                pairs.push((dist2(pos[a], pos[b]), a, b));
            }
        }
        pairs.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut changes = Vec::new();
        for (_, a, b) in pairs {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra != rb {
                parent[ra] = rb;
                let (a, b) = (NodeId(a as u32), NodeId(b as u32));
                initial.push((a, b));
                changes.push(LinkChange {
                    time: 0.0,
                    a,
                    b,
                    up: false,
                });
            }
        }
        changes.extend(self.link_changes(radius, until));
        Replay { initial, changes }
    }

    /// Every time in `(0, until]` a pair of nodes comes within `radius` of each other (a link
    /// forms) or leaves it (the link fails), in time order: solved exactly on each stretch of
    /// time in which both nodes move in straight lines (the squared distance is then a
    /// quadratic in time). Touching the circle without crossing it changes nothing.
    pub fn link_changes(&self, radius: f64, until: Time) -> Vec<LinkChange> {
        let mut out = Vec::new();
        let r2 = radius * radius;
        for a in 0..self.nodes() {
            for b in a + 1..self.nodes() {
                let mut linked = dist2(self.position(a, 0.0), self.position(b, 0.0)) <= r2;
                // The instants either node changes course, within (0, until).
                let mut cuts: Vec<Time> = self.moves[a]
                    .iter()
                    .chain(&self.moves[b])
                    .flat_map(|m| [m.start, m.arrive])
                    .filter(|&t| t > 0.0 && t < until)
                    .collect();
                cuts.push(0.0);
                cuts.push(until);
                cuts.sort_by(f64::total_cmp);
                cuts.dedup();
                for w in cuts.windows(2) {
                    let (t0, t1) = (w[0], w[1]);
                    for t in self.crossings(a, b, t0, t1, r2) {
                        let inside =
                            dist2(self.position(a, t + 1e-9), self.position(b, t + 1e-9)) <= r2;
                        if inside != linked {
                            linked = inside;
                            out.push(LinkChange {
                                time: t,
                                a: NodeId(a as u32),
                                b: NodeId(b as u32),
                                up: inside,
                            });
                        }
                    }
                }
            }
        }
        out.sort_by(|x, y| x.time.total_cmp(&y.time).then((x.a, x.b).cmp(&(y.a, y.b))));
        out
    }

    /// The times in `(t0, t1]` at which the distance between `a` and `b` equals the radius,
    /// given that both move in straight lines (or stand) throughout `(t0, t1)`.
    fn crossings(&self, a: usize, b: usize, t0: Time, t1: Time, r2: f64) -> Vec<Time> {
        let mid = (t0 + t1) / 2.0;
        let (pa, pb) = (self.position(a, t0), self.position(b, t0));
        let va = self.velocity(a, mid);
        let vb = self.velocity(b, mid);
        let (dx, dy) = (pb.0 - pa.0, pb.1 - pa.1);
        let (ux, uy) = (vb.0 - va.0, vb.1 - va.1);
        // |d + u s|² = r² for s = t - t0: (u·u) s² + 2 (d·u) s + (d·d - r²) = 0.
        let qa = ux * ux + uy * uy;
        let qb = 2.0 * (dx * ux + dy * uy);
        let qc = dx * dx + dy * dy - r2;
        let mut roots = Vec::new();
        if qa > 0.0 {
            let disc = qb * qb - 4.0 * qa * qc;
            if disc > 0.0 {
                let sq = disc.sqrt();
                roots.push((-qb - sq) / (2.0 * qa));
                roots.push((-qb + sq) / (2.0 * qa));
            }
        }
        roots
            .into_iter()
            .map(|s| t0 + s)
            .filter(|&t| t > t0 && t <= t1)
            .collect()
    }

    /// Node `node`'s velocity at time `t`.
    fn velocity(&self, node: usize, t: Time) -> Point {
        let list = &self.moves[node];
        let i = list.partition_point(|m| m.start <= t).max(1);
        let m = &list[i - 1];
        if t < m.arrive {
            m.velocity()
        } else {
            (0.0, 0.0)
        }
    }
}

fn dist2(p: Point, q: Point) -> f64 {
    (p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)
}

/// One non-empty, comment-free line: a movement statement, `None` for one that does not
/// move anything (`$god_`, `Z_`), or what is wrong with it.
fn parse_statement(line: &str) -> Result<Option<Statement>, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        [god, ..] if god.starts_with("$god_") => Ok(None),
        [node, "set", axis, value] => {
            let node = node_index(node)?;
            let value = number(value, "coordinate")?;
            match *axis {
                "X_" => Ok(Some(Statement::Set { node, axis: b'X', value })),
                "Y_" => Ok(Some(Statement::Set { node, axis: b'Y', value })),
                "Z_" => Ok(None),
                other => Err(format!("unknown attribute `{other}` (expected X_, Y_ or Z_)")),
            }
        }
        ["$ns_", "at", time, rest @ ..] => {
            let at = number(time, "time")?;
            if at < 0.0 {
                return Err(format!("negative time {at}"));
            }
            let inner = rest.join(" ");
            let inner = inner
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .ok_or_else(|| "expected a quoted command after the time".to_string())?;
            let cmd: Vec<&str> = inner.split_whitespace().collect();
            match cmd.as_slice() {
                [god, ..] if god.starts_with("$god_") => Ok(None),
                [node, "setdest", x, y, speed] => {
                    let speed = number(speed, "speed")?;
                    if speed < 0.0 {
                        return Err(format!("negative speed {speed}"));
                    }
                    Ok(Some(Statement::Setdest {
                        at,
                        node: node_index(node)?,
                        to: (number(x, "x")?, number(y, "y")?),
                        speed,
                    }))
                }
                _ => Err(format!(
                    "expected \"$node_(i) setdest x y speed\", found \"{inner}\""
                )),
            }
        }
        _ => Err(format!(
            "expected `$node_(i) set X_|Y_|Z_ v` or `$ns_ at t \"$node_(i) setdest x y s\"`, found `{line}`"
        )),
    }
}

/// Nodes a trace may name: far more than any simulation here, few enough that a typo cannot
/// make the parser allocate gigabytes.
const MAX_NODES: usize = 1 << 20;

fn node_index(word: &str) -> Result<usize, String> {
    let i = word
        .strip_prefix("$node_(")
        .and_then(|s| s.strip_suffix(')'))
        .and_then(|s| s.parse::<usize>().ok())
        .ok_or_else(|| format!("expected `$node_(i)`, found `{word}`"))?;
    if i >= MAX_NODES {
        return Err(format!(
            "node index {i} is too large (at most {})",
            MAX_NODES - 1
        ));
    }
    Ok(i)
}

fn number(word: &str, what: &str) -> Result<f64, String> {
    word.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("bad {what} `{word}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
# two nodes 300 m apart; node 1 drives past node 0 and back out of range
$node_(0) set X_ 0.0
$node_(0) set Y_ 0.0
$node_(0) set Z_ 0.0
$node_(1) set X_ 300.0
$node_(1) set Y_ 0.0
$god_ set-dist 0 1 16777215
$ns_ at 10.0 "$node_(1) setdest 0.0 0.0 10.0"
$ns_ at 40.0 "$node_(1) setdest 0.0 300.0 10.0"
$ns_ at 40.0 "$god_ set-dist 0 1 1"
"#;

    #[test]
    fn positions_follow_setdest_from_where_the_node_is() {
        let t = Trace::parse(SMALL).unwrap();
        assert_eq!(t.nodes(), 2);
        assert_eq!(t.position(1, 5.0), (300.0, 0.0));
        assert_eq!(t.position(1, 20.0), (200.0, 0.0));
        // 300 m at 10 m/s takes 30 s: node 1 reaches (0, 0) as the next setdest starts.
        assert_eq!(t.position(1, 40.0), (0.0, 0.0));
        assert_eq!(t.position(1, 55.0), (0.0, 150.0));
        assert_eq!(t.position(1, 1e6), (0.0, 300.0));
        assert_eq!(t.end(), 70.0);
    }

    /// A node named only in a `setdest` (here a typo, 4 for 1) and the ones below it that
    /// are never named make the network larger: the trace says which have no position.
    #[test]
    fn nodes_without_a_position_are_listed() {
        assert!(Trace::parse(SMALL).unwrap().unplaced().is_empty());
        let typo = format!("{SMALL}\n$ns_ at 50.0 \"$node_(4) setdest 10.0 10.0 1.0\"");
        let t = Trace::parse(&typo).unwrap();
        assert_eq!((t.nodes(), t.unplaced()), (5, vec![2, 3, 4]));
    }

    #[test]
    fn a_radius_too_small_for_any_link_is_seen() {
        assert!(Trace::parse(SMALL).unwrap().ever_linked(200.0));
        let apart = "$node_(0) set X_ 0.0\n$node_(1) set X_ 300.0";
        let t = Trace::parse(apart).unwrap();
        assert!(t.ever_linked(300.0));
        assert!(!t.ever_linked(200.0));
    }

    /// Link changes with a 200 m radius, computed by hand: node 1 comes within 200 m at
    /// x = 200, i.e. t = 20; leaves at y = 200 on the way up, i.e. t = 60.
    #[test]
    fn link_changes_by_hand() {
        let t = Trace::parse(SMALL).unwrap();
        let changes = t.link_changes(200.0, 100.0);
        let got: Vec<(f64, bool)> = changes.iter().map(|c| (c.time, c.up)).collect();
        assert_eq!(got.len(), 2, "{changes:?}");
        assert!((got[0].0 - 20.0).abs() < 1e-9 && got[0].1);
        assert!((got[1].0 - 60.0).abs() < 1e-9 && !got[1].1);
        assert!(t.links_at(0.0, 200.0).is_empty());
        assert_eq!(t.links_at(30.0, 200.0), vec![(NodeId(0), NodeId(1))]);
        // Out of range at 0: joined for the set-up, and that link fails at once; then the
        // trace's own changes.
        let r = t.replay(200.0, 100.0);
        assert_eq!(r.initial, vec![(NodeId(0), NodeId(1))]);
        let got: Vec<(f64, bool)> = r.changes.iter().map(|c| (c.time, c.up)).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], (0.0, false));
        assert_eq!(&r.changes[1..], &changes[..]);
    }

    /// A later setdest interrupts a move in progress; speed 0 stops the node.
    #[test]
    fn a_new_destination_replaces_the_move_in_progress() {
        let text = "$node_(0) set X_ 0\n$node_(0) set Y_ 0\n\
                    $ns_ at 0 \"$node_(0) setdest 100 0 1\"\n\
                    $ns_ at 10 \"$node_(0) setdest 10 50 1\"\n\
                    $ns_ at 30 \"$node_(0) setdest 0 0 0\"\n";
        let t = Trace::parse(text).unwrap();
        assert_eq!(t.position(0, 10.0), (10.0, 0.0));
        assert_eq!(t.position(0, 20.0), (10.0, 10.0));
        assert_eq!(t.position(0, 35.0), (10.0, 20.0));
    }

    #[test]
    fn parse_errors_name_the_line() {
        let cases = [
            (
                "$node_(0) set X_ 1\n$node_(0) set W_ 2\n",
                2,
                "unknown attribute",
            ),
            ("\n\n$ns_ at x \"$node_(0) setdest 1 1 1\"", 3, "bad time"),
            (
                "$ns_ at 1 \"$node_(0) setdest 1 1 -1\"",
                1,
                "negative speed",
            ),
            ("$ns_ at 1 $node_(0) setdest 1 1 1", 1, "quoted"),
            ("$node_(a) set X_ 1", 1, "$node_(i)"),
            ("$node_(99999999) set X_ 1", 1, "too large"),
            ("set X_ 1", 1, "expected"),
            ("$node_(0) set X_ inf", 1, "bad coordinate"),
            ("$ns_ at 1 \"$node_(0) move 1 1 1\"", 1, "setdest"),
        ];
        for (text, line, needle) in cases {
            let e = Trace::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.message.contains(needle), "{text}: {e}");
        }
    }

    /// A random trace in the file format, with positions recomputed independently (fine time
    /// steps of each move, no shared code) and the link state rebuilt from the derived
    /// changes: at sample times away from any change, they agree.
    #[test]
    fn derived_link_changes_match_independently_computed_distances() {
        use rand::{Rng, SeedableRng};
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let n = rng.random_range(2..7usize);
            let mut text = String::new();
            let mut start = Vec::new();
            for i in 0..n {
                let p = (rng.random_range(0.0..500.0), rng.random_range(0.0..500.0));
                text += &format!("$node_({i}) set X_ {}\n$node_({i}) set Y_ {}\n", p.0, p.1);
                start.push(p);
            }
            // (time, node, x, y, speed), whole seconds so the stepping below lands on them.
            let mut cmds = Vec::new();
            for _ in 0..rng.random_range(0..12) {
                let c = (
                    f64::from(rng.random_range(0..100u32)),
                    rng.random_range(0..n),
                    rng.random_range(0.0..500.0),
                    rng.random_range(0.0..500.0),
                    rng.random_range(0.0..30.0f64).floor(),
                );
                text += &format!(
                    "$ns_ at {} \"$node_({}) setdest {} {} {}\"\n",
                    c.0, c.1, c.2, c.3, c.4
                );
                cmds.push(c);
            }
            let trace = Trace::parse(&text).unwrap();
            let radius = 200.0;
            let changes = trace.link_changes(radius, 150.0);
            // Independent positions: step time by dt, each node heading to its latest target.
            let dt = 1e-3;
            let mut pos = start.clone();
            let mut target: Vec<Option<(f64, f64, f64)>> = vec![None; n];
            let mut linked: std::collections::BTreeSet<(u32, u32)> = trace
                .links_at(0.0, radius)
                .into_iter()
                .map(|(a, b)| (a.0, b.0))
                .collect();
            let mut next_change = 0;
            let steps = (150.0 / dt) as u64;
            for step in 0..steps {
                let t = step as f64 * dt;
                for c in cmds.iter().filter(|c| (c.0 - t).abs() < dt / 2.0) {
                    target[c.1] = Some((c.2, c.3, c.4));
                }
                for i in 0..n {
                    if let Some((x, y, v)) = target[i] {
                        let (dx, dy) = (x - pos[i].0, y - pos[i].1);
                        let d = (dx * dx + dy * dy).sqrt();
                        if v == 0.0 || d <= v * dt {
                            pos[i] = if v == 0.0 { pos[i] } else { (x, y) };
                            target[i] = None;
                        } else {
                            pos[i] = (pos[i].0 + dx / d * v * dt, pos[i].1 + dy / d * v * dt);
                        }
                    }
                }
                let now = t + dt;
                while changes.get(next_change).is_some_and(|c| c.time <= now) {
                    let c = changes[next_change];
                    if c.up {
                        assert!(linked.insert((c.a.0, c.b.0)), "seed {seed}: {c} twice");
                    } else {
                        assert!(linked.remove(&(c.a.0, c.b.0)), "seed {seed}: {c} unlinked");
                    }
                    next_change += 1;
                }
                if step % 500 != 0 {
                    continue;
                }
                for a in 0..n {
                    for b in a + 1..n {
                        let d = dist2(pos[a], pos[b]).sqrt();
                        // Stepping error is at most 2 · 30 m/s · dt; skip near-boundary pairs.
                        if (d - radius).abs() < 0.5 {
                            continue;
                        }
                        let key = (a as u32, b as u32);
                        assert_eq!(
                            linked.contains(&key),
                            d < radius,
                            "seed {seed}, t = {now}: {a}-{b} at {d} m"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn comments_blank_lines_and_god_lines_are_skipped() {
        let t = Trace::parse("# only a comment\n\n   \n$god_ set-dist 0 1 2\n").unwrap();
        assert_eq!(t.nodes(), 0);
        assert!(t.link_changes(100.0, 10.0).is_empty());
    }
}
