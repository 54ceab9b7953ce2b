//! The property tests' case count, one convention for every test file: `PROPTEST_CASES` if
//! set (an explicit count in a proptest config would otherwise override it), 20 times the
//! file's default with `MANET_MUTEX_SOAK=1`, else the default.

pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if std::env::var_os("MANET_MUTEX_SOAK").is_some() {
            default.saturating_mul(20)
        } else {
            default
        })
}
