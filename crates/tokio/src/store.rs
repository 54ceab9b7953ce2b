//! The node's durable state: one small file in a directory of its own, replaced atomically.
//!
//! What a restart needs to be safe (`docs/ALGORITHMS.md` C5, F4, F9, F13, D6): the node's
//! incarnation (its request numbers, fences and link epochs start above every earlier one's),
//! the highest round of the token generations it made, and its majority-mode promises.
//!
//! **Format** (text, so an operator can read it): a header line, `key value` lines, and a
//! last line `check` with the CRC-32C of every byte before it:
//!
//! ```text
//! manet-mutex state 1
//! node 3
//! algorithm reverse-link
//! incarnation 97330012
//! made-up-to 2
//! generation 0
//! promise 0 131075
//! check 5d1c0a7e
//! ```
//!
//! **Writes** go to `state.new`, which is flushed to the disk (`fsync`), renamed over `state`,
//! and the directory flushed: a crash at any point leaves either the old file or the new one,
//! never a mix (`a_crash_between_write_and_rename_keeps_the_old_state`, and the kill -9 test).
//! A few lines over `std::fs` rather than a crate: the state is a few hundred bytes written a
//! handful of times per run, and the one subtle step (flushing the directory after the
//! rename) is easy to check here and absent from the small atomic-write crates.
//!
//! **One process per directory**: the store holds an exclusive lock on `lock` in the directory
//! while the node runs (the operating system drops it when the process dies, `kill -9`
//! included), so a second process started with the same state directory is refused
//! ([`StoreError::Locked`]) instead of running as a second copy of the node.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use manet_mutex::token::Promised;
use manet_mutex::NodeId;

/// The state file's name in the directory.
const FILE: &str = "state";
/// Where a new state is written before it replaces the old.
const TEMP: &str = "state.new";
/// The file whose lock says a process runs the node.
const LOCK: &str = "lock";
/// The first line: the format and its version.
const HEADER: &str = "manet-mutex state 1";
/// 2024-01-01T00:00:00Z in seconds since the Unix epoch: the clock floor's origin.
const CLOCK_ORIGIN: u64 = 1_704_067_200;
/// The most promises a state may hold (one per token id; k is a u32 but no network needs more).
const MAX_PROMISES: usize = 4096;

/// Why the state directory could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Reading, writing or flushing failed.
    #[error("state directory {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// Another process runs a node from this directory.
    #[error("state directory {0} is in use by another process (two copies of one node would break the lock)")]
    Locked(PathBuf),
    /// The directory holds the state of another node.
    #[error("state directory {path} belongs to node {found}, not node {expected}")]
    OtherNode {
        /// The directory.
        path: PathBuf,
        /// The node the state names.
        found: u32,
        /// The node being started.
        expected: u32,
    },
    /// The directory holds the state of another algorithm.
    #[error("state directory {path} belongs to algorithm {found}, not {expected}")]
    OtherAlgorithm {
        /// The directory.
        path: PathBuf,
        /// The algorithm the state names.
        found: String,
        /// The algorithm being started.
        expected: &'static str,
    },
    /// No incarnation is left above the stored one (2^32 restarts).
    #[error("state directory {0}: no incarnation left above the stored one")]
    Exhausted(PathBuf),
}

/// What a node keeps across restarts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Saved {
    /// The incarnation the node runs (or last ran) as.
    pub incarnation: u32,
    /// The highest round of the token generations the node made (token algorithms).
    pub made_up_to: u16,
    /// The highest fence generation the node entered under (permission algorithms, whose
    /// fences a restarted node numbers from its incarnation: the next incarnation is above
    /// it, C6).
    pub generation: u32,
    /// The node's last promise per token id (token algorithms in majority mode).
    pub promises: Vec<Promised>,
}

/// How the node starts, read from its state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Start {
    /// No state file: the node's first start. A node whose whole directory was lost cannot be
    /// told from one; its incarnation still starts above every earlier one (the clock floor),
    /// and a token algorithm's initial token copy is moved on by the first beacon of the live
    /// one (F14).
    First,
    /// The state the node's last run stored: a restart.
    Restart(Saved),
    /// A state file that fails its check or cannot be parsed: the state is lost, and the node
    /// takes the empty-state path (no token, no promise, a fresh incarnation). An operator
    /// who replaces a node's disk while its network runs creates an empty `state` file to
    /// say so.
    Lost,
}

/// The node's durable state, open and locked for one process.
#[derive(Debug)]
pub(crate) struct Store {
    dir: PathBuf,
    node: NodeId,
    algorithm: &'static str,
    /// Whether the node's fences start at its incarnation's generation ([`Store::entered`]).
    numbers_fences: bool,
    saved: Saved,
    /// Held for the lock: dropped (and the lock with it) when the node's task ends.
    _lock: File,
}

impl Store {
    /// Opens (creating it if needed) and locks `dir` for node `node` of `algorithm`, reads how
    /// the node starts, and stores the incarnation of this run before returning: above the
    /// stored one and at least the seconds since 2024 (so a node whose state was lost still
    /// starts above every earlier incarnation, if its clock did not go back).
    pub(crate) fn open(
        dir: &Path,
        node: NodeId,
        algorithm: &'static str,
        numbers_fences: bool,
    ) -> Result<(Store, Start), StoreError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        fs::create_dir_all(dir).map_err(io(dir))?;
        let lock_path = dir.join(LOCK);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(StoreError::Locked(dir.to_path_buf())),
            Err(TryLockError::Error(e)) => return Err(io(&lock_path)(e)),
        }
        let path = dir.join(FILE);
        let start = match fs::read(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Start::First,
            Err(e) => return Err(io(&path)(e)),
            Ok(bytes) => match parse(&bytes) {
                Some((found, _, _)) if found != node => {
                    return Err(StoreError::OtherNode {
                        path: dir.to_path_buf(),
                        found: found.0,
                        expected: node.0,
                    })
                }
                Some((_, found, _)) if found != algorithm => {
                    return Err(StoreError::OtherAlgorithm {
                        path: dir.to_path_buf(),
                        found,
                        expected: algorithm,
                    })
                }
                Some((_, _, saved)) => Start::Restart(saved),
                None => Start::Lost,
            },
        };
        let floor = clock_floor();
        let incarnation = match &start {
            // Above the generations it entered under too: a permission host's fences start
            // at its incarnation's generation, which must be above its last entry's.
            Start::Restart(saved) => saved
                .incarnation
                .max(saved.generation)
                .checked_add(1)
                .ok_or_else(|| StoreError::Exhausted(dir.to_path_buf()))?
                .max(floor),
            Start::First | Start::Lost => floor.max(1),
        };
        let saved = match &start {
            Start::Restart(saved) => Saved {
                incarnation,
                ..saved.clone()
            },
            Start::First | Start::Lost => Saved {
                incarnation,
                ..Saved::default()
            },
        };
        let store = Store {
            dir: dir.to_path_buf(),
            node,
            algorithm,
            numbers_fences,
            saved,
            _lock: lock,
        };
        store.save()?;
        Ok((store, start))
    }

    /// The state of this run.
    pub(crate) fn saved(&self) -> &Saved {
        &self.saved
    }

    /// Stores `promised`, replacing the earlier promise for its token id.
    pub(crate) fn promise(&mut self, promised: Promised) -> Result<(), StoreError> {
        match self
            .saved
            .promises
            .iter_mut()
            .find(|p| p.lane == promised.lane)
        {
            Some(p) if *p == promised => return Ok(()),
            Some(p) => *p = promised,
            None => self.saved.promises.push(promised),
        }
        self.save()
    }

    /// Stores that the node made a generation of round `round` (if above the stored one).
    pub(crate) fn made(&mut self, round: u16) -> Result<(), StoreError> {
        if round <= self.saved.made_up_to {
            return Ok(());
        }
        self.saved.made_up_to = round;
        self.save()
    }

    /// Stores that the node entered under a fence of `generation` (if above the stored one).
    pub(crate) fn entered(&mut self, generation: u32) -> Result<(), StoreError> {
        if !self.numbers_fences || generation <= self.saved.generation {
            return Ok(());
        }
        self.saved.generation = generation;
        self.save()
    }

    /// Writes the state: to the temporary file, flushed, renamed over the state file, and the
    /// directory flushed.
    fn save(&self) -> Result<(), StoreError> {
        let temp = self.dir.join(TEMP);
        let path = self.dir.join(FILE);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        write_temp(&temp, &render(self.node, self.algorithm, &self.saved)).map_err(io(&temp))?;
        fs::rename(&temp, &path).map_err(io(&path))?;
        sync_dir(&self.dir).map_err(io(&self.dir))
    }
}

/// Writes `text` to `path` and flushes it to the disk.
fn write_temp(path: &Path, text: &str) -> io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

/// Flushes a directory's entries (the rename) to the disk, where the system allows it.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        // Directories cannot be opened as files here; the rename is as durable as the
        // system makes it.
        let _ = dir;
        Ok(())
    }
}

/// Seconds since 2024-01-01, saturated to a `u32` (0 before then).
fn clock_floor() -> u32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    u32::try_from(secs.saturating_sub(CLOCK_ORIGIN)).unwrap_or(u32::MAX)
}

/// The CRC-32C of the state's text.
fn check(text: &[u8]) -> u32 {
    crc::Crc::<u32>::new(&crc::CRC_32_ISCSI).checksum(text)
}

/// The state file's text.
fn render(node: NodeId, algorithm: &str, saved: &Saved) -> String {
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(text, "{HEADER}");
    let _ = writeln!(text, "node {}", node.0);
    let _ = writeln!(text, "algorithm {algorithm}");
    let _ = writeln!(text, "incarnation {}", saved.incarnation);
    let _ = writeln!(text, "made-up-to {}", saved.made_up_to);
    let _ = writeln!(text, "generation {}", saved.generation);
    for p in &saved.promises {
        let _ = writeln!(text, "promise {} {}", p.lane, p.ballot);
    }
    let check = check(text.as_bytes());
    let _ = writeln!(text, "check {check:08x}");
    text
}

/// The node, algorithm and state a file holds, or `None` if it fails its check or its format.
fn parse(bytes: &[u8]) -> Option<(NodeId, String, Saved)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let body_end = text.trim_end_matches('\n').rfind('\n')? + 1;
    let (body, last) = text.split_at(body_end);
    // Exactly as written: no other spelling of the word passes.
    if last != format!("check {:08x}\n", check(body.as_bytes())) {
        return None;
    }
    let mut lines = body.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let mut field = |key: &str| lines.next()?.strip_prefix(key)?.strip_prefix(' ');
    let node = NodeId(field("node")?.parse().ok()?);
    let algorithm = field("algorithm")?.to_owned();
    let incarnation = field("incarnation")?.parse().ok()?;
    let made_up_to = field("made-up-to")?.parse().ok()?;
    let generation = field("generation")?.parse().ok()?;
    let mut promises = Vec::new();
    for line in lines {
        let mut words = line.strip_prefix("promise ")?.split(' ');
        let lane = words.next()?.parse().ok()?;
        let ballot = words.next()?.parse().ok()?;
        if words.next().is_some() || promises.len() == MAX_PROMISES {
            return None;
        }
        promises.push(Promised::new(lane, ballot));
    }
    Some((
        node,
        algorithm,
        Saved {
            incarnation,
            made_up_to,
            generation,
            promises,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("manet-mutex-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_state_round_trips_and_any_changed_byte_reads_as_lost() {
        let saved = Saved {
            incarnation: 97_330_012,
            made_up_to: 2,
            generation: 97_330_015,
            promises: vec![Promised::new(0, 131_075), Promised::new(3, 7)],
        };
        let text = render(NodeId(3), "reverse-link", &saved);
        assert_eq!(
            parse(text.as_bytes()),
            Some((NodeId(3), "reverse-link".to_owned(), saved))
        );
        let bytes = text.as_bytes();
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut bad = bytes.to_vec();
                bad[i] ^= 1 << bit;
                assert_eq!(parse(&bad), None, "byte {i} bit {bit}");
            }
        }
        for len in 0..bytes.len() - 1 {
            assert_eq!(parse(&bytes[..len]), None, "truncated to {len}");
        }
    }

    /// A generation well above incarnation `first`.
    fn second_floor(first: u32) -> u32 {
        first + 1_000
    }

    #[test]
    fn first_start_restart_and_lost_state() {
        let d = dir("lives");
        let (store, start) = Store::open(&d, NodeId(1), "ricart-agrawala", true).unwrap();
        assert_eq!(start, Start::First);
        let first = store.saved().incarnation;
        assert!(first >= clock_floor().saturating_sub(5), "{first}");
        drop(store);
        let (mut store, start) = Store::open(&d, NodeId(1), "ricart-agrawala", true).unwrap();
        let Start::Restart(before) = start else {
            panic!("{start:?}")
        };
        assert_eq!(before.incarnation, first);
        assert!(store.saved().incarnation > first);
        store.made(4).unwrap();
        store.promise(Promised::new(0, 9)).unwrap();
        store.promise(Promised::new(0, 11)).unwrap();
        store.made(2).unwrap();
        // A generation entered under, far above: the next incarnation goes above it (C6).
        store.entered(second_floor(first)).unwrap();
        let second = store.saved().incarnation;
        drop(store);
        let (store, start) = Store::open(&d, NodeId(1), "ricart-agrawala", true).unwrap();
        assert!(store.saved().incarnation > second_floor(first));
        assert_eq!(
            start,
            Start::Restart(Saved {
                incarnation: second,
                made_up_to: 4,
                generation: second_floor(first),
                promises: vec![Promised::new(0, 11)],
            })
        );
        drop(store);
        // An operator says the state is lost: an empty file.
        fs::write(d.join(FILE), b"").unwrap();
        let (store, start) = Store::open(&d, NodeId(1), "ricart-agrawala", true).unwrap();
        assert_eq!(start, Start::Lost);
        assert!(store.saved().incarnation >= clock_floor().saturating_sub(5));
        assert_eq!(store.saved().promises, []);
        drop(store);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_second_process_another_node_or_another_algorithm_is_refused() {
        let d = dir("misuse");
        let (store, _) = Store::open(&d, NodeId(2), "prioritized", false).unwrap();
        let before = fs::read(d.join(FILE)).unwrap();
        assert!(matches!(
            Store::open(&d, NodeId(2), "prioritized", false),
            Err(StoreError::Locked(_))
        ));
        drop(store);
        let before_misuse = fs::read(d.join(FILE)).unwrap();
        assert_eq!(before, before_misuse);
        assert!(matches!(
            Store::open(&d, NodeId(3), "prioritized", false),
            Err(StoreError::OtherNode {
                found: 2,
                expected: 3,
                ..
            })
        ));
        assert!(matches!(
            Store::open(&d, NodeId(2), "reverse-link", false),
            Err(StoreError::OtherAlgorithm { .. })
        ));
        // Refusals change nothing.
        assert_eq!(fs::read(d.join(FILE)).unwrap(), before_misuse);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_crash_between_write_and_rename_keeps_the_old_state() {
        let d = dir("torn");
        let (mut store, _) = Store::open(&d, NodeId(0), "reverse-link", false).unwrap();
        store.promise(Promised::new(0, 5)).unwrap();
        let kept = store.saved().clone();
        // The next save written but not renamed, torn half way: what a crash leaves.
        let mut next = kept.clone();
        next.promises[0] = Promised::new(0, 6);
        let text = render(NodeId(0), "reverse-link", &next);
        fs::write(d.join(TEMP), &text.as_bytes()[..text.len() / 2]).unwrap();
        drop(store);
        let (store, start) = Store::open(&d, NodeId(0), "reverse-link", false).unwrap();
        assert_eq!(start, Start::Restart(kept));
        // And the next save replaces the leftover.
        assert!(!d.join(TEMP).exists());
        drop(store);
        fs::remove_dir_all(&d).unwrap();
    }

    /// The child of `a_kill_at_any_point_leaves_a_whole_state`: saves without end.
    #[test]
    fn saving_child() {
        let Some(d) = std::env::var_os("MANET_MUTEX_STORE_CHILD") else {
            return;
        };
        let (mut store, _) = Store::open(Path::new(&d), NodeId(0), "reverse-link", false).unwrap();
        // Above what the killed ones stored: the promise only goes up.
        let from = store.saved().promises.first().map_or(0, |p| p.ballot) + 1;
        for ballot in from.. {
            store.promise(Promised::new(0, ballot)).unwrap();
        }
    }

    /// `kill -9` of a process that saves without end, at 30 moments: the state read after
    /// each is whole (never lost), and its promise never goes back.
    #[cfg(unix)]
    #[test]
    fn a_kill_at_any_point_leaves_a_whole_state() {
        let d = dir("killed");
        let mut last = 0;
        for round in 0..30u64 {
            let mut child = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "store::tests::saving_child", "--nocapture"])
                .env("MANET_MUTEX_STORE_CHILD", &d)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20 + 7 * round));
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            let (store, start) = Store::open(&d, NodeId(0), "reverse-link", false).unwrap();
            let saved = match start {
                Start::Restart(saved) => saved,
                // Killed before its first save.
                Start::First if last == 0 => Saved::default(),
                start => panic!("round {round}: {start:?}"),
            };
            let ballot = saved.promises.first().map_or(0, |p| p.ballot);
            assert!(ballot >= last, "round {round}: {ballot} after {last}");
            last = ballot;
            drop(store);
        }
        assert!(last > 0, "the child never saved");
        fs::remove_dir_all(&d).unwrap();
    }
}
