//! The checked-in header is what cbindgen makes of the sources now: a change to the interface
//! that forgot to regenerate it fails here (no network needed). `MANET_MUTEX_BLESS=1` rewrites
//! it instead.

use std::path::PathBuf;

fn generate() -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

#[test]
fn the_checked_in_header_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/manet_mutex.h");
    let fresh = generate();
    if std::env::var_os("MANET_MUTEX_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write the header");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if checked_in != fresh {
        let line = checked_in
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .map_or(
                checked_in.lines().count().min(fresh.lines().count()) + 1,
                |i| i + 1,
            );
        panic!(
            "include/manet_mutex.h is out of date (first difference at line {line}); \
             regenerate it: MANET_MUTEX_BLESS=1 cargo test -p manet-mutex-ffi --test header"
        );
    }
}

/// The header names every entry point the library exports (a `#[no_mangle]` function that
/// cbindgen skipped, e.g. for an unsupported signature, would be missing from it).
#[test]
fn the_header_declares_every_exported_function() {
    let header = generate();
    let sources = ["src/lib.rs", "src/handle.rs", "src/options.rs"];
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut count = 0;
    for source in sources {
        let text = std::fs::read_to_string(dir.join(source)).unwrap();
        for name in text
            .split("extern \"C\" fn ")
            .skip(1)
            .map(|rest| rest.split('(').next().unwrap())
        {
            count += 1;
            assert!(
                header.contains(&format!("{name}(")),
                "{name} is not declared in the header"
            );
        }
    }
    assert!(count >= 20, "only {count} entry points found");
}
