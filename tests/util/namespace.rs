//! Tests that need a namespace of their own (as root): the test binary
//! runs one test again inside `unshare`, which tells it so through
//! [`INSIDE`]; and throwaway overlays on real directories (`/etc`, `/var`…)
//! inside a mount namespace, so nothing reaches the host's.

use std::path::Path;
use std::process::Command;

/// Set in the environment of a test run again inside its namespace.
pub const INSIDE: &str = "RESETCTL_TEST_NAMESPACE";

/// Whether this process is the test run again inside its namespace.
pub fn inside() -> bool {
    std::env::var_os(INSIDE).is_some()
}

/// Runs the test `name` (`module::test`) of this binary again under
/// `unshare UNSHARE… --`, and fails with `needs` (what the namespace takes)
/// and its log unless it passed there.
pub fn run_test_again(name: &str, unshare: &[&str], needs: &str) {
    let (passed, log) = rerun(name, unshare, &[], &[(INSIDE, "1".as_ref())]);
    assert!(
        passed,
        "the test in its own namespace failed (it needs {needs}; run `make test-deps`):\n{log}"
    );
}

/// Runs the test `name` (`module::test`) of this binary again as one
/// throwaway machine: its own mount (private), network and pid namespaces,
/// bash as its init (reaping what the test leaves running), with `env`
/// set; the output, both streams in one text, and whether it passed.
pub fn run_test_as_machine(name: &str, env: &[(&str, &std::ffi::OsStr)]) -> (bool, String) {
    rerun(
        name,
        &[
            "--mount",
            "--net",
            "--pid",
            "--fork",
            "--mount-proc",
            "--propagation",
            "private",
        ],
        &["bash", "-c", "\"$@\" & wait $!", "init"],
        env,
    )
}

/// `unshare UNSHARE… -- LAUNCHER… <this binary> --exact NAME` with `env`:
/// whether the one test passed there, and both streams in one text.
fn rerun(
    name: &str,
    unshare: &[&str],
    launcher: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (bool, String) {
    let out = Command::new("unshare")
        .args(unshare)
        .arg("--")
        .args(launcher)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run unshare (util-linux; `make test-deps` installs it)");
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success() && log.contains("1 passed"), log)
}

/// Forgets, in the overlays on `/etc` and `/var` of a mount namespace of
/// the test's own, a resetctl deployed on this machine (by the package or
/// by the guide's steps): its config, data dir, units and sysusers file,
/// and its user and group. A test that deploys one (the guide as pasted,
/// the package) then starts from a machine without it, as on a fresh
/// one; the host keeps its own.
pub fn forget_a_deployed_resetctl() {
    for path in [
        "/etc/resetctl",
        "/var/lib/resetctl",
        "/var/backups/resetctl",
        "/etc/sysusers.d/resetctl.conf",
    ] {
        let path = Path::new(path);
        let _ = if path.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
    }
    if let Ok(units) = std::fs::read_dir("/etc/systemd/system") {
        for unit in units.flatten() {
            if unit.file_name().to_string_lossy().starts_with("resetctl-") {
                let _ = std::fs::remove_file(unit.path());
            }
        }
    }
    let known = |what: &str| {
        Command::new("getent")
            .args([what, "resetctl"])
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if known("passwd") {
        let _ = Command::new("userdel").arg("resetctl").status();
    }
    if known("group") {
        let _ = Command::new("groupdel").arg("resetctl").status();
    }
}

/// A throwaway overlay on `dir`: writes land in `scratch` (which must not
/// be under `dir`), reads see `dir` beneath them. Only inside a mount
/// namespace of the test's own.
pub fn overlay(dir: &str, scratch: &Path) {
    let (upper, work) = (scratch.join("upper"), scratch.join("work"));
    std::fs::create_dir_all(&upper).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let status = Command::new("mount")
        .args(["-t", "overlay", "overlay", "-o"])
        .arg(format!(
            "lowerdir={dir},upperdir={},workdir={}",
            upper.display(),
            work.display()
        ))
        .arg(dir)
        .status()
        .expect("mount (util-linux)");
    assert!(status.success(), "mount an overlay on {dir}");
}
