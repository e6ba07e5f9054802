//! Property-test settings, shared by the test binaries that hold property tests.

use proptest::test_runner::{Config, FileFailurePersistence};

/// Settings for a property test whose deep run takes `n` cases.
///
/// The deep run is what CI takes (`TICKFLOW_DEEP=1`); without it a test takes a tenth of `n`,
/// and never fewer than `min(n, 100)`, so `cargo test --workspace` on a newcomer's unoptimised
/// test build stays within the README's time (the timer model's 10,000 cases take 35 s there).
///
/// Failures proptest finds are kept beside each test file (`<file>.proptest-regressions`) and
/// replayed first in every run, quick or deep. Its default places them parallel to a crate root
/// it looks for beside the source, which a module of a merged test binary lacks.
pub fn cases(n: u32) -> Config {
    let deep = std::env::var_os("TICKFLOW_DEEP").is_some_and(|v| !v.is_empty() && v != "0");
    Config {
        cases: if deep { n } else { (n / 10).max(n.min(100)) },
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    }
}
