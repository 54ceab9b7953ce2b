//! Every bad input of the launcher (issue 26) is refused before any process starts: a message
//! naming the flag, exit code 2, no panic, and no node process left behind.

use std::process::Command;

/// Seeds no other run uses, one per test (they run at once): the nodes get
/// `--seed seed·1000 + id`, so a node process of a test left behind shows up in the process
/// list with its test's prefix.
const BAD: &str = "7262";
const CASE: &str = "7263";

/// `cluster launch FLAGS --seed seed`: its exit code, standard output and standard error.
fn launch(seed: &str, flags: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cluster"))
        .arg("launch")
        .args(flags)
        .args(["--seed", seed, "--timeout", "20"])
        .output()
        .expect("the launcher runs");
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.code(), text(out.stdout), text(out.stderr))
}

/// Node processes of the runs with `seed` still alive (their command line has `--seed seed…`).
fn orphans(seed: &str) -> Vec<String> {
    let marker = format!("--seed {seed}");
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    procs
        .flatten()
        .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("--supervised") && c.contains(&marker))
        .collect()
}

#[test]
fn bad_input_is_refused_before_anything_starts() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--loss", "1.5"],
            "--loss is a probability, 0 to 1, not 1.5",
        ),
        (
            &["--loss", "-0.5"],
            "--loss is a probability, 0 to 1, not -0.5",
        ),
        (
            &["--edges", "0-9", "--nodes", "3"],
            "--edges: 0-9 is not a link between two of the 3 nodes",
        ),
        (
            &["--nodes", "-5"],
            "'--nodes <NODES>': must be a whole number ≥ 2",
        ),
        (
            &["--nodes", "1"],
            "'--nodes <NODES>': must be a whole number ≥ 2",
        ),
        (&["--k", "0"], "'--k <K>': must be a whole number ≥ 1"),
        (
            &["--entries", "0"],
            "'--entries <ENTRIES>': must be a whole number ≥ 1",
        ),
        (
            &["--timeout", "-1"],
            "'--timeout <TIMEOUT>': must be a whole number ≥ 1",
        ),
        (
            &["--algorithm", "krl", "--edges", "0-1", "--nodes", "3"],
            "--topology/--edges: node 2 of --nodes 3 has no link",
        ),
        (
            &[
                "--algorithm",
                "krl",
                "--edges",
                "0-1,1-2",
                "--nodes",
                "3",
                "--k",
                "3",
            ],
            "--k 3 with --nodes 3: krl needs k < nodes",
        ),
        (
            &[
                "--algorithm",
                "krl",
                "--edges",
                "0-1,1-2,3-4",
                "--nodes",
                "5",
                "--k",
                "1",
            ],
            "krl refuses it: invalid configuration for node 3",
        ),
        (
            &["--algorithm", "ra", "--k", "3"],
            "--k: applies to --algorithm krl, krlf and prioritized, not ra",
        ),
        (
            &["--algorithm", "look-ahead", "--edges", "0-1"],
            "--topology/--edges: applies to --algorithm krl, krlf and prioritized",
        ),
        (
            &["--algorithm", "krl", "--majority"],
            "--exclusion and --majority are recovery settings: give --recovery",
        ),
        (
            &["--algorithm", "krl,bogus"],
            "\"bogus\": not an algorithm; all, or any of krl, krlf, prioritized, look-ahead, ra",
        ),
        (
            &["--algorithm", "krl", "--mobility", "no-such-file.ns2"],
            "--mobility no-such-file.ns2",
        ),
    ];
    for (flags, message) in cases {
        let (code, stdout, stderr) = launch(BAD, flags);
        assert_eq!(code, Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(message), "{flags:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{flags:?}: {stderr}");
        assert!(stdout.is_empty(), "{flags:?} started a run: {stdout}");
        assert_eq!(
            orphans(BAD),
            Vec::<String>::new(),
            "{flags:?} left processes"
        );
    }
}

/// Algorithm names are taken in any case.
#[test]
fn algorithm_names_are_case_insensitive() {
    let flags = ["--algorithm", "KRL", "--nodes", "3", "--entries", "20"];
    let (code, stdout, stderr) = launch(CASE, &flags);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("krl "), "{stdout}");
    assert_eq!(orphans(CASE), Vec::<String>::new());
}

/// A node process that dies of something the launcher did not do (here a `kill -9` from
/// outside) ends the run at once, named, with a non-zero exit, and leaves nothing behind;
/// before, the launcher waited for `--timeout`.
#[test]
fn a_node_that_dies_unplanned_ends_the_run_at_once() {
    use std::io::Read;
    let seed = "7264";
    let mut launcher = Command::new(env!("CARGO_BIN_EXE_cluster"))
        .args(["launch", "--algorithm", "ra", "--nodes", "3"])
        .args(["--entries", "1000000", "--think", "50", "--timeout", "300"])
        .args(["--seed", seed])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the launcher runs");
    // Node 1's process, once it is up.
    let victim = loop {
        let found = orphans(seed)
            .into_iter()
            .find(|c| c.contains(" node ") && c.contains("--id 1 "));
        if let Some(cmdline) = found {
            break cmdline;
        }
        assert!(
            launcher.try_wait().unwrap().is_none(),
            "the launcher ended before node 1 started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let pid = pid_of(&victim);
    let killed = Command::new("kill").args(["-9", &pid]).status().unwrap();
    assert!(killed.success());
    let code = launcher.wait().unwrap().code();
    let (mut stdout, mut stderr) = (String::new(), String::new());
    launcher
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    launcher
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_ne!(code, Some(0), "{stdout}\n{stderr}");
    let all = format!("{stdout}\n{stderr}");
    assert!(all.contains("node 1 ended before the run did"), "{all}");
    assert!(
        !all.contains("not finished after"),
        "waited for --timeout: {all}"
    );
    assert_eq!(orphans(seed), Vec::<String>::new());
}

/// The pid of the process whose command line is `cmdline` (as `orphans` gives it).
fn pid_of(cmdline: &str) -> String {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .find(|p| {
            std::fs::read(p.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ") == cmdline)
        })
        .map(|p| p.file_name().to_string_lossy().into_owned())
        .expect("the process is still there")
}
