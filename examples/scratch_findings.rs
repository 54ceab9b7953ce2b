use arbitrary::{Arbitrary, Unstructured};
use manet_mutex::testkit::fuzz::{permission_network, prioritized_network, reverse_link_network};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};

fn msg(p: Box<dyn std::any::Any + Send>) -> String {
    let s = p
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    let first = s.lines().next().unwrap_or("").to_string();
    // strip context prefix up to "}: "
    let core = match first.rfind("}: ") {
        Some(i) if i < 400 => first[i + 3..].to_string(),
        _ => first,
    };
    let core: String = core
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    core.chars().take(140).collect()
}

fn campaign<T: for<'a> Arbitrary<'a>>(name: &str, cases: u64, new: impl Fn(&T), old: impl Fn(&T)) {
    let mut kinds: BTreeMap<String, (u64, u64, bool)> = BTreeMap::new();
    let mut bytes = Vec::new();
    let mut failed = 0;
    for seed in 0..cases {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        bytes.resize(rng.random_range(0..=4096), 0);
        rng.fill(&mut bytes[..]);
        let Ok(input) = T::arbitrary_take_rest(Unstructured::new(&bytes)) else {
            continue;
        };
        if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| new(&input))) {
            failed += 1;
            std::env::set_var("MANET_MUTEX_TRACE", "1");
            let traced = panic::catch_unwind(AssertUnwindSafe(|| new(&input)))
                .err()
                .map(|p| p.downcast_ref::<String>().cloned().unwrap_or_default())
                .unwrap_or_default();
            std::env::remove_var("MANET_MUTEX_TRACE");
            let changes: Vec<String> = traced
                .lines()
                .filter(|l| l.contains("(Kind("))
                .map(|l| {
                    let after = &l[l.find("(Kind(").unwrap()..];
                    let from = after
                        .split("): ")
                        .nth(1)
                        .unwrap_or("")
                        .split(['(', ' ', '{'])
                        .next()
                        .unwrap_or("")
                        .to_string();
                    let to = after
                        .split(" into ")
                        .nth(1)
                        .unwrap_or("")
                        .split(['(', ' ', '{'])
                        .next()
                        .unwrap_or("")
                        .to_string();
                    format!("{from}->{to}")
                })
                .collect();
            let acks = traced
                .lines()
                .filter(|l| {
                    l.starts_with("corrupted") && l.contains("TokenAck") && l.contains("Field")
                })
                .count();
            println!("    seed {seed}: kind changes {changes:?}, field-corrupted acks {acks}");
            let old_ok = panic::catch_unwind(AssertUnwindSafe(|| old(&input))).is_ok();
            let e = kinds.entry(msg(p)).or_insert((seed, 0, old_ok));
            e.1 += 1;
        }
    }
    println!("{name}: {cases} seeds, {failed} failed");
    for (k, (seed, n, old_ok)) in kinds {
        println!("  {n:5} first seed {seed:6} (as recorded passes: {old_ok}): {k}");
    }
}

fn main() {
    panic::set_hook(Box::new(|_| {}));
    std::env::set_var("MANET_MUTEX_RECORD", "0");
    let cases: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let which = std::env::args().nth(2).unwrap_or_default();
    if which.starts_with("prop") {
        use manet_mutex::testkit::strategy::{
            permission_input, prioritized_input, reverse_link_input,
        };
        let n = cases as u32;
        let only = which.strip_prefix("prop").unwrap_or("");
        if only.is_empty() || only == "-reverse_link" {
            prop_campaign(
                "reverse_link",
                n,
                reverse_link_input(),
                reverse_link_network::run,
                reverse_link_network::run_as_recorded,
            );
        }
        if only.is_empty() || only == "-prioritized" {
            prop_campaign(
                "prioritized",
                n,
                prioritized_input(),
                prioritized_network::run,
                prioritized_network::run_as_recorded,
            );
        }
        if only.is_empty() || only == "-look_ahead" {
            prop_campaign(
                "look_ahead",
                n,
                permission_input(),
                permission_network::run::<manet_mutex::look_ahead::Node>,
                permission_network::run_as_recorded::<manet_mutex::look_ahead::Node>,
            );
        }
        if only.is_empty() || only == "-ricart_agrawala" {
            prop_campaign(
                "ricart_agrawala",
                n,
                permission_input(),
                permission_network::run::<manet_mutex::ricart_agrawala::Node>,
                permission_network::run_as_recorded::<manet_mutex::ricart_agrawala::Node>,
            );
        }
        return;
    }
    if which.is_empty() || which == "krl" {
        campaign(
            "reverse_link_network",
            cases,
            reverse_link_network::run,
            reverse_link_network::run_as_recorded,
        );
    }
    if which.is_empty() || which == "prio" {
        campaign(
            "prioritized_network",
            cases,
            prioritized_network::run,
            prioritized_network::run_as_recorded,
        );
    }
    if which.is_empty() || which == "la" {
        campaign(
            "look_ahead_network",
            cases,
            permission_network::run::<manet_mutex::look_ahead::Node>,
            permission_network::run_as_recorded::<manet_mutex::look_ahead::Node>,
        );
    }
    if which.is_empty() || which == "ra" {
        campaign(
            "ricart_agrawala_network",
            cases,
            permission_network::run::<manet_mutex::ricart_agrawala::Node>,
            permission_network::run_as_recorded::<manet_mutex::ricart_agrawala::Node>,
        );
    }
}

pub fn prop_campaign<T: std::fmt::Debug>(
    name: &str,
    cases: u32,
    strategy: impl proptest::strategy::Strategy<Value = T>,
    new: impl Fn(&T),
    old: impl Fn(&T),
) {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRng, TestRunner};
    let config = Config::default();
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let mut kinds: BTreeMap<String, (u32, u64, bool)> = BTreeMap::new();
    let mut failed = 0;
    for case in 0..cases {
        let input = strategy.new_tree(&mut runner).unwrap().current();
        let t0 = std::time::Instant::now();
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| new(&input)));
        if t0.elapsed().as_secs_f64() > 2.0 {
            println!("  slow case {case}: {:?}", t0.elapsed());
        }
        if case % 500 == 0 {
            println!("  {name} case {case}");
        }
        if let Err(p) = outcome {
            failed += 1;
            let old_ok = panic::catch_unwind(AssertUnwindSafe(|| old(&input))).is_ok();
            let e = kinds.entry(msg(p)).or_insert((case, 0, old_ok));
            e.1 += 1;
        }
    }
    println!("{name} (proptest): {cases} cases, {failed} failed");
    for (k, (case, n, old_ok)) in kinds {
        println!("  {n:5} first case {case:6} (as recorded passes: {old_ok}): {k}");
    }
}
