//! The header and the static library from C and C++: `tests/c/network.c` (gcc -std=c99
//! -Wall -Werror) and `tests/c/network.cpp` (g++ -std=c++17 -Wall -Werror), compiled against
//! `include/manet_mutex.h` and `libmanet_mutex_ffi.a`, linked with `-lpthread -ldl -lm`, and
//! run: three nodes per algorithm exchange datagrams in memory on a simulated clock, each
//! enters once, fences increase; the misuse cases return their codes without aborting.
//!
//! The library is built by `cargo build -p manet-mutex-ffi --lib` with the test's own profile
//! and target folder before each use (quick when it is current), so a stale one is never
//! linked. Needs `gcc` and `g++` (a missing compiler fails the test).

use std::path::{Path, PathBuf};
use std::process::Command;

const LIB: &str = "libmanet_mutex_ffi.a";

/// The static library of this build: beside the test binary (`target/<profile>/deps`), or
/// uplifted in `target/<profile>`, or built now.
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe.parent().expect("deps folder").to_path_buf();
    let profile_dir = deps.parent().expect("profile folder").to_path_buf();
    // Always through cargo (quick when nothing changed): a library left by an earlier build
    // would otherwise be linked as it was (a stale one failed the ABI version check).
    // The profile's folder name is the profile's name, except `debug` for `dev`.
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev".to_string(),
        Some(name) => name.to_string(),
    };
    let target_dir = profile_dir.parent().expect("target folder");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "-p",
            "manet-mutex-ffi",
            "--lib",
            "--profile",
            &profile,
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build -p manet-mutex-ffi failed");
    let built = profile_dir.join(LIB);
    assert!(
        built.is_file(),
        "{} not found after the build",
        built.display()
    );
    built
}

fn build_and_run(compiler: &str, standard: &str, source: &str) -> String {
    build_and_run_with(compiler, standard, source, &[], false)
}

/// Compile `source` (under `tests/c`, or a path) against the header and the library (the
/// static one, or with `shared` the shared one beside it), run it with `args`: its output.
fn build_and_run_with(
    compiler: &str,
    standard: &str,
    source: &str,
    args: &[&str],
    shared: bool,
) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ffi-c");
    std::fs::create_dir_all(&out_dir).unwrap();
    let name = Path::new(source).file_name().unwrap().to_string_lossy();
    let suffix = if shared { "_shared" } else { "" };
    let exe = out_dir.join(format!("{}{suffix}", name.replace('.', "_")));
    let lib = static_library();
    let mut command = Command::new(compiler);
    command
        .arg(standard)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-O1", "-o"])
        .arg(&exe)
        .arg(dir.join("tests/c").join(source))
        .arg("-I")
        .arg(dir.join("include"));
    if shared {
        let lib_dir = lib.parent().unwrap();
        assert!(
            lib_dir.join("libmanet_mutex_ffi.so").is_file(),
            "no shared library"
        );
        command
            .arg(format!("-L{}", lib_dir.display()))
            .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
            .arg("-lmanet_mutex_ffi");
    } else {
        command.arg(&lib);
    }
    let compiled = command
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        compiled.status.success(),
        "{compiler} {source} failed:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let ran = Command::new(&exe)
        .args(args)
        .output()
        .expect("run the program");
    let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
    assert!(
        ran.status.success(),
        "{source} failed ({}):\n{stdout}\n{}",
        ran.status,
        String::from_utf8_lossy(&ran.stderr)
    );
    stdout
}

#[test]
fn a_c99_program_runs_three_nodes_per_algorithm_and_every_misuse_returns_its_code() {
    let auth = if cfg!(feature = "auth") {
        "auth"
    } else {
        "noauth"
    };
    let out = build_and_run_with("gcc", "-std=c99", "network.c", &[auth], false);
    for line in [
        "ok ricart-agrawala:",
        "ok krl over discovery:",
        "ok look-ahead:",
        "ok ricart-agrawala, keyed:",
        "ok misuse",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
}

#[test]
fn a_cpp17_program_runs_prioritized_and_look_ahead_nodes() {
    let out = build_and_run("g++", "-std=c++17", "network.cpp");
    for line in [
        "ok prioritized 2-of-k over discovery (C++):",
        "ok look-ahead (C++):",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
}

/// The header compiles on its own, first thing in a translation unit, in C89-compatible C99
/// and in C++ (no other include needed).
#[test]
fn the_header_compiles_alone_in_c_and_cpp() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ffi-c");
    std::fs::create_dir_all(&out_dir).unwrap();
    for (compiler, standard, ext) in [("gcc", "-std=c99", "c"), ("g++", "-std=c++17", "cpp")] {
        let source = out_dir.join(format!("alone.{ext}"));
        std::fs::write(
            &source,
            "#include \"manet_mutex.h\"\n#include \"manet_mutex.h\"\n",
        )
        .unwrap();
        let compiled = Command::new(compiler)
            .arg(standard)
            .args([
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
                "-I",
            ])
            .arg(dir.join("include"))
            .arg(&source)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
        assert!(
            compiled.status.success(),
            "{compiler}: the header alone fails:\n{}",
            String::from_utf8_lossy(&compiled.stderr)
        );
    }
}

/// The README's C example, extracted from its first C code block, compiles (C99, warnings
/// as errors) and runs: node 1 enters once.
#[test]
fn the_readme_example_compiles_and_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let start = readme.find("```c\n").expect("a C block in the README") + "```c\n".len();
    let end = start + readme[start..].find("```").expect("its end");
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ffi-c");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::write(out_dir.join("readme.c"), &readme[start..end]).unwrap();
    let out = build_and_run(
        "gcc",
        "-std=c99",
        out_dir.join("readme.c").to_str().unwrap(),
    );
    assert_eq!(out.matches("entered").count(), 1, "{out}");
    assert!(out.contains("node 1 entered, fence"), "{out}");
}

/// The same C program against the shared library (`libmanet_mutex_ffi.so`, found by rpath).
#[test]
fn the_c99_program_runs_against_the_shared_library_too() {
    let auth = if cfg!(feature = "auth") {
        "auth"
    } else {
        "noauth"
    };
    let out = build_and_run_with("gcc", "-std=c99", "network.c", &[auth], true);
    assert!(out.contains("ok misuse"), "{out}");
    assert_eq!(out.matches("ok ").count(), 5, "{out}");
}
