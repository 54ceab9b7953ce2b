//! Progress of long work on stderr, as plain lines: `simulate: 12/40 runs, 8 s`.
//!
//! The programs (`simulate`, `--figures`, `scale`, the cluster launcher) print such a line
//! every [`Progress::EVERY`] of wall time while they work, from a thread of its own, so a
//! single long run shows it is alive too (`simulate: 0/1 runs, 6 s`); a run shorter than
//! that prints nothing. They are plain lines so that a run with stderr redirected to a file
//! (`2>log`, CI) shows them; `simulate` draws a bar instead when stderr is a terminal.
//!
//! `MANET_MUTEX_PROGRESS=every` prints a line for every step instead, whatever the time (for
//! tests: the output then does not depend on the machine's speed);
//! `MANET_MUTEX_PROGRESS=off` prints none.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// When lines are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pace {
    /// One every [`Progress::EVERY`] while the work lasts.
    Timed,
    /// One per step (`MANET_MUTEX_PROGRESS=every`).
    Every,
    /// None (`MANET_MUTEX_PROGRESS=off`).
    Off,
}

impl Pace {
    fn from_env() -> Pace {
        match std::env::var("MANET_MUTEX_PROGRESS").as_deref() {
            Ok("every") => Pace::Every,
            Ok("off") => Pace::Off,
            _ => Pace::Timed,
        }
    }
}

#[derive(Debug)]
struct Count {
    label: String,
    unit: &'static str,
    total: u64,
    done: AtomicU64,
    started: Instant,
}

impl Count {
    fn print(&self) {
        let secs = self.started.elapsed().as_secs();
        eprintln!(
            "{}",
            line(
                &self.label,
                self.done.load(Ordering::Relaxed),
                self.total,
                self.unit,
                secs
            )
        );
    }
}

/// The text of a progress line.
fn line(label: &str, done: u64, total: u64, unit: &str, secs: u64) -> String {
    format!("{label}: {done}/{total} {unit}, {secs} s")
}

/// A count of done steps out of a total, printed on stderr as it goes (see the module page).
/// Worker threads share it (`&Progress` is `Sync`); dropping it (or [`finish`](Self::finish))
/// stops the lines.
#[derive(Debug)]
pub struct Progress {
    count: Arc<Count>,
    pace: Pace,
    /// Stops the ticker thread when sent to or dropped.
    stop: Mutex<Option<Sender<()>>>,
    ticker: Mutex<Option<JoinHandle<()>>>,
}

impl Progress {
    /// The wall time between two lines.
    pub const EVERY: Duration = Duration::from_secs(2);

    /// Progress of `total` steps called `unit` (`"runs"`), in lines starting with `label:`.
    pub fn new(label: impl Into<String>, total: u64, unit: &'static str) -> Progress {
        let count = Arc::new(Count {
            label: label.into(),
            unit,
            total,
            done: AtomicU64::new(0),
            started: Instant::now(),
        });
        let pace = Pace::from_env();
        let (stop, ticker) = if pace == Pace::Timed {
            let (tx, rx) = mpsc::channel::<()>();
            let c = Arc::clone(&count);
            let handle = std::thread::spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(Self::EVERY) {
                    c.print();
                }
            });
            (Some(tx), Some(handle))
        } else {
            (None, None)
        };
        Progress {
            count,
            pace,
            stop: Mutex::new(stop),
            ticker: Mutex::new(ticker),
        }
    }

    /// Whether the environment asks for a line per step (`MANET_MUTEX_PROGRESS=every`).
    pub fn forced() -> bool {
        Pace::from_env() == Pace::Every
    }

    /// Whether the environment turns the lines off (`MANET_MUTEX_PROGRESS=off`).
    pub fn off() -> bool {
        Pace::from_env() == Pace::Off
    }

    /// `n` more steps are done.
    pub fn inc(&self, n: u64) {
        self.count.done.fetch_add(n, Ordering::Relaxed);
        if self.pace == Pace::Every {
            self.count.print();
        }
    }

    /// Steps done so far.
    pub fn done(&self) -> u64 {
        self.count.done.load(Ordering::Relaxed)
    }

    /// A line saying `what` (the step now starting, say) with the time so far, unless
    /// lines are off.
    pub fn note(&self, what: &str) {
        if self.pace != Pace::Off {
            let secs = self.count.started.elapsed().as_secs();
            eprintln!("{}: {what}, {secs} s", self.count.label);
        }
    }

    /// Stop the lines (waits for the ticker thread to end).
    pub fn finish(&self) {
        drop(self.stop.lock().unwrap_or_else(|e| e.into_inner()).take());
        if let Some(handle) = self.ticker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = handle.join();
        }
    }

    /// The line printed after `done` steps at `secs` seconds.
    pub fn line(&self, done: u64, secs: u64) -> String {
        line(
            &self.count.label,
            done,
            self.count.total,
            self.count.unit,
            secs,
        )
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_count_the_total_and_the_time() {
        let p = Progress::new("simulate", 40, "runs");
        assert_eq!(p.line(12, 8), "simulate: 12/40 runs, 8 s");
    }

    #[test]
    fn steps_are_counted_from_every_thread() {
        let p = Progress::new("t", 8, "runs");
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    p.inc(1);
                    p.inc(1);
                });
            }
        });
        assert_eq!(p.done(), 8);
        p.finish();
        p.finish();
    }
}
