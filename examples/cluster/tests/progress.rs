//! The launcher reports progress on stderr when stderr is not a terminal (issue 26): plain
//! lines `cluster launch (krl): 3/20 entries, 1 s`. `MANET_MUTEX_PROGRESS=every` makes it
//! print one per entry, so the test does not depend on how fast the machine is.

use std::process::Command;

#[test]
fn a_launch_with_stderr_redirected_prints_progress_lines() {
    let out = Command::new(env!("CARGO_BIN_EXE_cluster"))
        .args([
            "launch",
            "--algorithm",
            "krl",
            "--nodes",
            "3",
            "--entries",
            "20",
        ])
        .args(["--seed", "7264", "--timeout", "60"])
        .env("MANET_MUTEX_PROGRESS", "every")
        .output()
        .expect("the launcher runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "launch failed:\n{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("cluster launch (krl): ") && l.ends_with(" s"))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cluster launch (krl): 1/20 entries, ")),
        "no progress line for the first entry in:\n{stderr}"
    );
    assert!(
        lines.len() >= 20,
        "{} progress lines in:\n{stderr}",
        lines.len()
    );
}
