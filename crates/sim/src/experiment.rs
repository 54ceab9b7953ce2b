//! Running many seeded simulations side by side and reporting them as tables or CSV.

use std::fmt::Write as _;

use super::Summary;

/// One run's result in a sweep: its coordinates and its summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Algorithm name (e.g. `KRL`, `KRLF`).
    pub algorithm: String,
    /// Named coordinates of the run (e.g. `("connectivity", "0.2")`), in column order.
    pub params: Vec<(&'static str, String)>,
    /// The run's seed.
    pub seed: u64,
    /// What it measured.
    pub summary: Summary,
    /// Algorithm-specific measurements (e.g. `("utilization", "0.41")`), printed after the
    /// summary columns.
    pub extra: Vec<(&'static str, String)>,
}

impl Row {
    /// Whether every `(name, value)` coordinate of `coords` has that value in this row.
    pub fn at(&self, coords: &[(&str, String)]) -> bool {
        coords
            .iter()
            .all(|(name, value)| self.param(name) == Some(value.as_str()))
    }

    /// The value of coordinate `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Run `job` on every item using up to `threads` OS threads, keeping the input order.
/// Each job is independent and seeded, so the results do not depend on `threads`.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    job: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = job(item);
                slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results.into_iter().flatten().collect()
}

/// The summary columns every CSV row ends with. All are functions of the run's configuration
/// and seed (the simulator's speed is not a column), so a CSV is reproducible.
pub const SUMMARY_COLUMNS: &str = "cs_entries,mean_wait,p99_wait,max_wait,messages_per_cs,hops_per_cs,raises_per_link_change,events";

/// Rows as CSV with a header: `algorithm`, the coordinates, `seed`, [`SUMMARY_COLUMNS`], then
/// the extra measurements.
pub fn to_csv(rows: &[Row]) -> String {
    let mut out = String::new();
    let Some(first) = rows.first() else {
        return out;
    };
    out.push_str("algorithm");
    for (name, _) in &first.params {
        out.push(',');
        out.push_str(name);
    }
    let _ = write!(out, ",seed,{SUMMARY_COLUMNS}");
    for (name, _) in &first.extra {
        out.push(',');
        out.push_str(name);
    }
    out.push('\n');
    for r in rows {
        out.push_str(&r.algorithm);
        for (_, v) in &r.params {
            out.push(',');
            out.push_str(v);
        }
        let s = &r.summary;
        let _ = write!(
            out,
            ",{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{}",
            r.seed,
            s.cs_entries,
            s.mean_wait,
            s.p99_wait,
            s.max_wait,
            s.messages_per_cs,
            s.hops_per_cs,
            s.raises_per_link_change,
            s.events
        );
        for (_, v) in &r.extra {
            out.push(',');
            out.push_str(v);
        }
        out.push('\n');
    }
    out
}

/// The mean over `rows` of the extra column `name` (rows without it, or whose value is not a
/// number, are skipped), or `None` if there is none.
pub fn mean_extra(rows: &[&Row], name: &str) -> Option<f64> {
    let xs: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.extra.iter().find(|(n, _)| *n == name))
        .filter_map(|(_, v)| v.parse().ok())
        .collect();
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The mean of `metric` over the rows that match `filter` (the paper's "average of averages"
/// over seeds), or `None` if none match.
pub fn mean_of(
    rows: &[Row],
    filter: impl Fn(&Row) -> bool,
    metric: impl Fn(&Summary) -> f64,
) -> Option<f64> {
    let xs: Vec<f64> = rows
        .iter()
        .filter(|r| filter(r))
        .map(|r| metric(&r.summary))
        .collect();
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_order() {
        let xs: Vec<u64> = (0..100).collect();
        assert_eq!(
            parallel_map(&xs, 3, |x| x * 2),
            xs.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
    }

    #[test]
    fn csv_has_header_and_one_line_per_row() {
        let row = Row {
            algorithm: "KRL".into(),
            params: vec![("nodes", "30".into())],
            seed: 7,
            summary: Summary {
                cs_entries: 3,
                ..Summary::default()
            },
            extra: vec![("utilization", "0.5".into())],
        };
        let csv = to_csv(&[row.clone(), row.clone()]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("algorithm,nodes,seed,cs_entries,mean_wait"));
        assert!(lines[0].ends_with(",utilization"));
        assert!(lines[1].starts_with("KRL,30,7,3,"));
        assert!(lines[1].ends_with(",0.5"));
        assert_eq!(row.param("nodes"), Some("30"));
        assert!(row.at(&[("nodes", "30".into())]));
        assert!(!row.at(&[("nodes", "30".into()), ("k", "3".into())]));
        assert_eq!(
            mean_of(&[row], |_| true, |s| s.cs_entries as f64),
            Some(3.0)
        );
    }

    #[test]
    fn mean_extra_skips_rows_without_a_number() {
        let row = |extra: Vec<(&'static str, String)>| Row {
            algorithm: "LA".into(),
            params: Vec::new(),
            seed: 1,
            summary: Summary::default(),
            extra,
        };
        let rows = [
            row(vec![("hops", "1.5".into())]),
            row(vec![("hops", "2.5".into())]),
            row(vec![("hops", "n/a".into())]),
            row(Vec::new()),
        ];
        let refs: Vec<&Row> = rows.iter().collect();
        assert_eq!(mean_extra(&refs, "hops"), Some(2.0));
        assert_eq!(mean_extra(&refs, "other"), None);
    }
}
