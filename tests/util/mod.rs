//! The test harness: runs the real binary with a scrubbed environment and a
//! fresh temp data dir, and compares outputs with readable diffs.

#![allow(dead_code)]

pub mod disk;
pub mod namespace;
pub mod nginx;
pub mod pki;
pub mod powerloss;
pub mod receiver;
pub mod redis;
pub mod server;
pub mod smtp;
pub mod upstream;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The binary under test.
///
/// `RESETCTL_TEST_BIN` names another build to run instead: how a new test
/// is seen to fail against the previous release or a deliberately broken
/// build, without recompiling the tests.
pub fn bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("RESETCTL_TEST_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_resetctl").to_owned())
    })
}

/// The release build: the static binary of `make dist` (which `make test`
/// runs first), the optimised binary a user runs, for the tests on the real
/// clock whose races a debug build's timing may hide, and for the tests of
/// the release artefacts. `RESETCTL_TEST_RELEASE_BIN` names another one
/// (a build to see a test fail against).
#[track_caller]
pub fn release_bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let path = std::env::var("RESETCTL_TEST_RELEASE_BIN").unwrap_or_else(|_| {
            dist_dir()
                .join(format!(
                    "resetctl-{}-x86_64-linux/resetctl",
                    env!("CARGO_PKG_VERSION")
                ))
                .to_string_lossy()
                .into_owned()
        });
        assert!(
            Path::new(&path).exists(),
            "no release build at {path}: `make test` builds it (make dist), \
             or set RESETCTL_TEST_RELEASE_BIN"
        );
        path
    })
}

/// Where `make dist` leaves the release artefacts: `target/dist/` of the
/// checkout (`$CARGO_TARGET_DIR/dist/` when that is set), or what
/// `RESETCTL_TEST_DIST_DIR` names.
pub fn dist_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RESETCTL_TEST_DIST_DIR") {
        return dir.into();
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
        .join("dist")
}

/// Makes `cmd` (a `resetctl` to run) read the config file of the test's
/// own, `dir/own-config.toml` (made empty unless the test wrote one), by
/// `RESETCTL_CONFIG`: so no `resetctl` a test starts reads the machine's
/// `/etc/resetctl/config.toml` or a user's, whatever is installed there
/// (`--config` on its command line, or a later `RESETCTL_CONFIG`, still
/// wins). The tests of which file is read by default run in a mount
/// namespace of their own instead (system_config::, which also proves this
/// with a hostile `/etc/resetctl/config.toml` present).
pub fn own_config<'a>(cmd: &'a mut Command, dir: &Path) -> &'a mut Command {
    cmd.env("RESETCTL_CONFIG", own_config_path(dir))
}

/// The variable an option is read from: clap's own (`--config`, `--now`),
/// or a setting's, which its `--help` names (the environment layer reads
/// it, not clap).
pub fn variable_of(arg: &clap::Arg) -> Option<String> {
    arg.get_env()
        .map(|e| e.to_string_lossy().into_owned())
        .or_else(|| {
            let help = arg.get_long_help()?.to_string();
            let (_, variable) = help.rsplit_once("[env: ")?;
            Some(variable.trim_end_matches(']').to_owned())
        })
}

/// The config file of [`own_config`], made (empty) when missing.
pub fn own_config_path(dir: &Path) -> PathBuf {
    let path = dir.join("own-config.toml");
    if !path.exists() {
        std::fs::create_dir_all(dir).expect("the test's dir");
        std::fs::write(&path, "").expect("the test's own config file");
    }
    path
}

/// A test's private world: a data dir and a home (so no user config leaks in).
pub struct World {
    pub tmp: tempfile::TempDir,
}

impl World {
    pub fn new() -> Self {
        Self {
            tmp: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.tmp.path().join("data")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// A `resetctl` command with `--data-dir` set and nothing else inherited.
    pub fn cmd(&self) -> Command {
        self.cmd_of(bin())
    }

    /// [`World::cmd`] of another build of the binary (the release build).
    pub fn cmd_of(&self, bin: &str) -> Command {
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.tmp.path().join("home"))
            .env("XDG_CONFIG_HOME", self.tmp.path().join("home/.config"))
            .env("XDG_DATA_HOME", self.tmp.path().join("home/.local/share"))
            .arg("--data-dir")
            .arg(self.data_dir())
            .stdin(Stdio::null());
        own_config(&mut cmd, self.tmp.path());
        cmd
    }

    /// What a command adds to "the data dir … does not exist" or "nothing
    /// is published yet in …" on this machine: where a deployed instance
    /// may be ("; is the instance elsewhere? …", by the library's own rule,
    /// which looks at `/etc/resetctl/config.toml` and `/var/lib/resetctl`),
    /// or nothing where none is deployed. The suite runs on both.
    pub fn machine_hint(&self) -> Option<String> {
        resetctl::config::elsewhere_hint(&self.data_dir(), Some(&own_config_path(self.tmp.path())))
            .map(|hint| format!("; is the instance elsewhere? {hint}"))
    }

    /// Runs `resetctl ARGS…` to completion.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.cmd().args(args).output().expect("spawn resetctl"))
    }

    /// Runs `resetctl ARGS…` that must exit on its own (a refusal): killed
    /// and reported as exit code -1 if it is still running after 20 s (it
    /// started serving instead), so a regression fails instead of hanging.
    pub fn run_refused(&self, args: &[&str]) -> Run {
        let mut child = self
            .cmd()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn resetctl");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while child.try_wait().expect("poll resetctl").is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Run::from(child.wait_with_output().expect("collect resetctl's output"))
    }

    /// Starts `resetctl ARGS…` without waiting.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.cmd()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn resetctl")
    }

    /// Seeds the bundled history at a fixed time and asserts success.
    pub fn seed_bundled(&self) {
        self.run(&["--now", "2026-11-20T10:00:00.000Z", "seed"])
            .success();
    }

    /// Publishes `records` (JSON values) as a standalone snapshot through the
    /// library's store, as a publisher would; returns the sequence.
    pub fn publish_records(&self, records: &[serde_json::Value], generated_at: &str) -> u64 {
        self.publish_checked(records, generated_at, None)
    }

    /// [`World::publish_records`] with `meta.lastSuccessfulCheckAt`.
    pub fn publish_checked(
        &self,
        records: &[serde_json::Value],
        generated_at: &str,
        last_check: Option<&str>,
    ) -> u64 {
        use resetctl::snapshot::{Draft, Mode, SnapshotStore};
        let records: Vec<resetctl::model::Record> = records
            .iter()
            .map(|r| serde_json::from_value(r.clone()).expect("a valid record"))
            .collect();
        let store = SnapshotStore::new(self.data_dir());
        let lock = store
            .lock(std::time::Duration::from_secs(30), "test")
            .unwrap();
        let at = resetctl::model::Timestamp::parse(generated_at).unwrap();
        let draft = Draft {
            mode: Mode::Standalone,
            generated_at: at,
            last_successful_check_at: last_check
                .map(|t| resetctl::model::Timestamp::parse(t).unwrap()),
            ledger_entry: None,
            sync: None,
            records,
        };
        resetctl::publish::publish(&store, &lock, draft, at, 1000)
            .unwrap()
            .sequence
    }

    /// The current snapshot file, parsed.
    pub fn current_snapshot(&self) -> serde_json::Value {
        let status = self.run(&["status", "--json"]).success().json();
        let path = status["snapshot"]["path"]
            .as_str()
            .expect("a current snapshot")
            .to_owned();
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Self {
        Self {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Asserts exit code 0.
    #[track_caller]
    pub fn success(self) -> Self {
        self.code(0)
    }

    /// Asserts the exit code.
    #[track_caller]
    pub fn code(self, expected: i32) -> Self {
        assert_eq!(
            self.code, expected,
            "exit code: expected {expected}, got {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// Stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// Reads a fixture under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The first of `candidates` that runs (`CANDIDATE version_flag` exits 0):
/// a tool a test needs. Missing, the test fails naming the apt `package`
/// that `make test` installs.
#[track_caller]
pub fn tool(candidates: &[&str], version_flag: &str, package: &str) -> String {
    let found = candidates.iter().copied().find(|candidate| {
        Command::new(candidate)
            .arg(version_flag)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    match found {
        Some(found) => found.to_owned(),
        None => panic!(
            "{} is not installed; `make test` installs it (apt-get install {package})",
            candidates[0]
        ),
    }
}

/// `.venv/bin/<name>` of the pinned test virtualenv (`make test-deps`
/// installs it with tests/requirements.txt), or what `override_var` names.
#[track_caller]
pub fn venv_bin(name: &str, override_var: &str) -> PathBuf {
    let path = std::env::var_os(override_var)
        .map(Into::into)
        .unwrap_or_else(|| repo_root().join(".venv/bin").join(name));
    assert!(
        path.exists(),
        "{name} is not installed at {}; run `make test-deps` (python3 -m venv .venv && .venv/bin/pip install -r tests/requirements.txt) or set {override_var}",
        path.display()
    );
    path
}

/// The Python of the test virtualenv; `TEST_PYTHON` names another one.
pub fn python() -> PathBuf {
    venv_bin("python", "TEST_PYTHON")
}

/// The version the binary under test reports (`resetctl 0.1.0`: `0.1.0`).
pub fn bin_version() -> String {
    let out = Command::new(bin()).arg("--version").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("resetctl "))
        .expect("resetctl VERSION")
        .to_owned()
}

/// What `tests/<script> <arg>` (a reader built on the library the format's
/// users use) printed as JSON for `input` on its standard input; fails the
/// test with the reader's error and the input when it refuses.
#[track_caller]
pub fn python_json(script: &str, arg: &str, input: &[u8]) -> serde_json::Value {
    use std::io::Write;
    let mut child = Command::new(python())
        .arg(repo_root().join("tests").join(script))
        .arg(arg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run tests/{script}: {e}"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "tests/{script} {arg} refused the input: {}\n--- input\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(input)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A tiny deterministic generator (xorshift) for randomised loops; the seed is printed.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from `RESETCTL_TEST_SEED` when set, else from the
    /// time; the seed is printed with how to replay the run.
    pub fn from_time() -> Self {
        let seed = match std::env::var("RESETCTL_TEST_SEED") {
            Ok(text) => text
                .trim()
                .parse::<u64>()
                .expect("RESETCTL_TEST_SEED is a number"),
            Err(_) => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64,
        } | 1;
        eprintln!("rng seed {seed} (replay: RESETCTL_TEST_SEED={seed} cargo test -- THIS_TEST)");
        Self(seed)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The bundled history as an upstream records document with its own
/// `generatedAt`, cut to its first `keep` records.
pub fn bundled_document(generated_at: &str, keep: usize) -> String {
    let mut doc: serde_json::Value =
        serde_json::from_slice(resetctl::BUNDLED_SEED_HISTORY).unwrap();
    doc["generatedAt"] = serde_json::json!(generated_at);
    doc["lastSuccessfulCheckAt"] = serde_json::json!("2026-08-13T10:00:00.000Z");
    doc["records"].as_array_mut().unwrap().truncate(keep);
    doc.to_string()
}

/// A records document with `n` generated completion records (valid, distinct ids).
pub fn generated_document(n: usize) -> String {
    let mut records = Vec::with_capacity(n);
    for i in 0..n {
        let id = 3_000_000_000_000_000_000u64 + i as u64;
        let secs = 1_780_000_000 + i as i64 * 60;
        let at = chrono_like(secs);
        records.push(format!(
            r#"{{"id":"{id}","kind":"reset_completed","resetType":"global","announcedAt":"{at}","effectiveAt":"{at}","text":"Generated record {i}","confidence":0.9,"scope":{{"plans":["all"],"windows":["weekly"]}},"source":{{"origin":"x","postId":"{id}","handle":"gen","url":"https://x.com/gen/status/{id}"}},"schedulePrecision":null,"scheduleBasis":null,"scheduleWindow":null,"scheduleState":null,"completedAt":"{at}","completionRecordId":null,"fulfillmentOrigin":null,"relatedRecordIds":[]}}"#
        ));
    }
    format!(
        r#"{{"generatedAt":"2026-11-20T10:00:00.000Z","lastSuccessfulCheckAt":null,"records":[{}]}}"#,
        records.join(",")
    )
}

/// Seconds since the epoch as the one timestamp form (UTC, ms, Z).
pub fn chrono_like(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm), enough for test data.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Waits until `check` holds, polling every 2 ms; panics naming `what` after `timeout`.
#[track_caller]
pub fn wait_until(timeout: std::time::Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + timeout;
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "not within {timeout:?}: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Awaits `future` for at most `seconds`, failing the test naming `what`
/// past it: no await of a test waits forever on a regression.
pub async fn within<T>(
    seconds: u64,
    what: &str,
    future: impl std::future::Future<Output = T>,
) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(seconds), future)
        .await
        .unwrap_or_else(|_| panic!("not within {seconds} s: {what}"))
}

/// The steps a process traced through `RESETCTL_TEST_TRACE` (src/testhook.rs), in order.
pub fn trace(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Polls `child` and the trace at `path` until the trace holds `step`
/// (true) or the child has exited without it (false); panics after 60 s.
pub fn wait_for_step(child: &mut Child, path: &Path, step: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if trace(path).iter().any(|s| s == step) {
            return true;
        }
        if child.try_wait().expect("poll the child").is_some() {
            return trace(path).iter().any(|s| s == step);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{step:?} not reached within 60 s; trace {:?}",
            trace(path)
        );
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
}

/// A loopback port nothing listens on, held for as long as the returned
/// socket lives (bound, never listening: a connection to it is refused, and
/// no other process can take the port meanwhile, unlike a port found,
/// released and then reused).
pub fn refused_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
    socket
        .bind("127.0.0.1:0".parse().unwrap())
        .expect("bind a loopback port");
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}

/// Held by the tests that load the machine with load generators of their
/// own, and by those that need it unloaded for a timing bound (a burst
/// answered within the Redis store's 300 ms), so none of them shares the
/// two cores with another: a reshard under six threads of load beside a
/// 200-request burst made the burst's checks start after their deadline.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A `sync --daemon` owned by the test: killed when dropped, passed or not.
pub struct Daemon(std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `sync --daemon` on `w`'s data dir from `upstream`, polling every 200 ms
/// after a success (the test setting; the real minimum is 5 minutes).
pub fn sync_daemon(w: &World, upstream: &str) -> Daemon {
    let child = w
        .cmd()
        .env("RESETCTL_TEST_SYNC_INTERVAL_MS", "200")
        .args([
            "sync",
            "--upstream",
            upstream,
            "--daemon",
            "--interval-minutes",
            "5",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn sync --daemon");
    Daemon(child)
}
