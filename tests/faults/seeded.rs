//! Runs a fuzz body without cargo-fuzz: over inputs decoded from seeded random bytes, then over
//! every committed input in `fuzz/regressions/<target>/` (crash reproducers, replayed forever)
//! and any local corpus in `fuzz/corpus/<target>/`. Bytes are decoded exactly as the
//! `fuzz_target!` macro decodes them, so a file found by `cargo fuzz` replays identically here.
//! `MANET_MUTEX_REPLAY=FILE` runs only that input (e.g. a failing seed's saved bytes; add
//! `MANET_MUTEX_TRACE=1` for the network's event trace).

use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use arbitrary::{Arbitrary, Unstructured};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Seeded cases per target: `MANET_MUTEX_DEEP=1` multiplies them by 20.
pub fn cases(default: u64) -> u64 {
    if std::env::var_os("MANET_MUTEX_DEEP").is_some_and(|v| v == "1") {
        default * 20
    } else {
        default
    }
}

fn decode_and_run<T: for<'a> Arbitrary<'a>>(bytes: &[u8], body: &impl Fn(&T)) {
    if let Ok(input) = T::arbitrary_take_rest(Unstructured::new(bytes)) {
        body(&input);
    }
}

/// Run `body` on `cases` seeded inputs of up to `max_len` bytes, then on the committed and
/// local inputs for `target`. Returns how many inputs ran.
pub fn run<T: for<'a> Arbitrary<'a>>(
    target: &str,
    cases: u64,
    max_len: usize,
    body: impl Fn(&T),
) -> u64 {
    if let Some(file) = std::env::var_os("MANET_MUTEX_REPLAY") {
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        if let Ok(input) = T::arbitrary_take_rest(Unstructured::new(&bytes)) {
            body(&input);
        }
        return 1;
    }
    seeds(target, cases, max_len, &body);
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    cases
        + replay(&fuzz.join("regressions").join(target), &body)
        + replay(&fuzz.join("corpus").join(target), &body)
}

/// Run `body` on `cases` seeded inputs of up to `max_len` bytes (the seeds of [`run`], without
/// the committed and local inputs).
pub fn seeds<T: for<'a> Arbitrary<'a>>(
    target: &str,
    cases: u64,
    max_len: usize,
    body: &impl Fn(&T),
) {
    let mut bytes = Vec::with_capacity(max_len);
    for seed in 0..cases {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        bytes.resize(rng.random_range(0..=max_len), 0);
        rng.fill(&mut bytes[..]);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| decode_and_run(&bytes, body)));
        if let Err(panic) = outcome {
            // Keep the input so it can be minimised and committed as a reproducer.
            let saved =
                Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{target}-seed-{seed}"));
            let _ = std::fs::write(&saved, &bytes);
            eprintln!(
                "{target}: seed {seed} failed; input saved to {}",
                saved.display()
            );
            panic::resume_unwind(panic);
        }
    }
}

/// Run `body` on every file directly in `dir` (none if it does not exist); returns how many.
pub fn replay<T: for<'a> Arbitrary<'a>>(dir: &Path, body: &impl Fn(&T)) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        eprintln!("replaying {}", file.display());
        decode_and_run(&bytes, body);
    }
    files.len() as u64
}
