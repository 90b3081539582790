//! Test-only hooks, inert unless `RESETCTL_TEST_*` environment variables are set,
//! and compiled out of release builds (`cfg!(debug_assertions)`: the tests run
//! the debug binary), so a stray variable can never hold or crash a production
//! process.
//!
//! The black-box tests run the real binary; these hooks let them know where
//! a process got to before it was killed, and hold a request in flight
//! while they signal the server. With none of the variables set every hook
//! is one check of a cached `None`.
//!
//! - `RESETCTL_TEST_TRACE=FILE`: [`reached`] appends each step name to FILE
//!   as one line, in one `write` (no user-space buffer), so the line is
//!   there even if the process is killed right after. A server traces
//!   `reload:applied` each time it has taken in a new snapshot or sync
//!   state (and the mirrored feed that goes with it), so a test can wait
//!   for that instead of sleeping before it checks that nothing changed.
//! - `RESETCTL_TEST_PAUSE_AT=STEP`: on reaching STEP (after tracing it) the
//!   process sleeps until it is killed, so a kill lands exactly there.
//! - `RESETCTL_TEST_PANIC_QUERY=QUERY`: a data request whose raw query (or
//!   an MCP tool call whose arguments, as JSON) equals QUERY panics, to
//!   prove a panic becomes a clean 500.
//! - `RESETCTL_TEST_HOLD_QUERY=QUERY` with `RESETCTL_TEST_RELEASE=FILE`: a
//!   `GET /openapi/v1/records` whose raw query equals QUERY traces
//!   `serve:held` and waits until FILE exists before it is answered.
//! - `RESETCTL_TEST_SYNC_INTERVAL_MS=N`: `sync --daemon` waits N ms after a
//!   successful attempt instead of its interval (whose minimum is 5
//!   minutes), so a replica's propagation can be tested in seconds.
//! - `RESETCTL_TEST_CLOCK_FILE=FILE`: the clock of long-running commands
//!   ([`FileClock`]) reads the instant from FILE at every reading, so a test
//!   moves a running server's clock (the quota's among them) by replacing
//!   the file, never by sleeping.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Records that the process reached `step` (see the module docs).
pub fn reached(step: &str) {
    if !cfg!(debug_assertions) {
        return;
    }
    static TRACE: OnceLock<Option<PathBuf>> = OnceLock::new();
    static PAUSE_AT: OnceLock<Option<String>> = OnceLock::new();
    if let Some(path) = TRACE.get_or_init(|| env("RESETCTL_TEST_TRACE").map(PathBuf::from)) {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("RESETCTL_TEST_TRACE names a writable file");
        file.write_all(format!("{step}\n").as_bytes())
            .expect("writing the test trace");
    }
    if PAUSE_AT
        .get_or_init(|| env("RESETCTL_TEST_PAUSE_AT"))
        .as_deref()
        == Some(step)
    {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

/// Holds a data request whose raw query is `RESETCTL_TEST_HOLD_QUERY` until
/// the file `RESETCTL_TEST_RELEASE` exists (see the module docs).
pub async fn hold(raw_query: &str) {
    if !cfg!(debug_assertions) {
        return;
    }
    static HOLD: OnceLock<Option<(String, PathBuf)>> = OnceLock::new();
    let hold = HOLD.get_or_init(|| {
        Some((
            env("RESETCTL_TEST_HOLD_QUERY")?,
            PathBuf::from(env("RESETCTL_TEST_RELEASE")?),
        ))
    });
    let Some((query, release)) = hold else {
        return;
    };
    if query != raw_query {
        return;
    }
    reached("serve:held");
    while !release.exists() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Panics if `input` is the `RESETCTL_TEST_PANIC_QUERY` (see the module docs).
pub fn panic_if_asked(input: &str) {
    if !cfg!(debug_assertions) {
        return;
    }
    static PANIC_ON: OnceLock<Option<String>> = OnceLock::new();
    if PANIC_ON
        .get_or_init(|| env("RESETCTL_TEST_PANIC_QUERY"))
        .as_deref()
        == Some(input)
    {
        panic!("injected panic for {input:?}");
    }
}

/// The daemon's wait after a success, when `RESETCTL_TEST_SYNC_INTERVAL_MS`
/// sets one (see the module docs).
pub fn sync_interval() -> Option<Duration> {
    if !cfg!(debug_assertions) {
        return None;
    }
    static INTERVAL: OnceLock<Option<Duration>> = OnceLock::new();
    *INTERVAL.get_or_init(|| {
        env("RESETCTL_TEST_SYNC_INTERVAL_MS")
            .map(|ms| Duration::from_millis(ms.parse().expect("a number of milliseconds")))
    })
}

/// The file `RESETCTL_TEST_CLOCK_FILE` names (see the module docs).
pub fn clock_file() -> Option<PathBuf> {
    if !cfg!(debug_assertions) {
        return None;
    }
    env("RESETCTL_TEST_CLOCK_FILE").map(PathBuf::from)
}

/// A clock that reads the instant from a file at every reading (tests).
#[derive(Debug)]
pub struct FileClock(pub PathBuf);

impl crate::clock::Clock for FileClock {
    fn now(&self) -> crate::model::Timestamp {
        let text = std::fs::read_to_string(&self.0).expect("RESETCTL_TEST_CLOCK_FILE is readable");
        crate::model::Timestamp::parse(text.trim())
            .expect("RESETCTL_TEST_CLOCK_FILE holds a timestamp")
    }

    /// Reads the file every 20 ms: the test moves the clock by replacing it.
    fn sleep_until(&self, at: crate::model::Timestamp) -> crate::clock::Wake<'_> {
        Box::pin(async move {
            while self.now() < at {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    }
}
