//! Test-only hooks, inert unless their `RESETCTL_TEST_*` variables are set.
//!
//! A black-box test cannot otherwise make a kill land between two writes
//! every time. With `RESETCTL_TEST_PAUSE_AT=STEP`, the process writes STEP
//! into the file `RESETCTL_TEST_PAUSE_FILE` when it reaches that step and
//! then waits forever, so the test kills it exactly there. Operators never
//! set these; they are not documented for them.

use std::time::Duration;

/// Pauses here forever if a test asked to pause at `step`.
pub fn pause_at(step: &str) {
    if std::env::var_os("RESETCTL_TEST_PAUSE_AT").is_some_and(|s| s == step) {
        if let Some(path) = std::env::var_os("RESETCTL_TEST_PAUSE_FILE") {
            let _ = std::fs::write(path, step);
        }
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}
