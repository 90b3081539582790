//! The system-wide config file (`/etc/resetctl/config.toml`): read when
//! no config file is named and the user has none, so a deployed box needs
//! no `--config` and `--data-dir` on every command; and when the data dir
//! in use has nothing published while a deployed instance's config or data
//! dir exists, the error names them instead of "run `resetctl seed`".
//!
//! `/etc` and `/var` are the real paths the binary reads, so the test runs
//! itself again in a mount namespace of its own (`unshare --mount`, as
//! root) with a throwaway overlay on each: nothing reaches the real ones.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::{bin, namespace, Run};

const NOW: &str = "2026-11-20T10:00:00.000Z";

#[test]
fn the_system_config_is_read_when_present_and_named_when_the_data_dir_is_empty() {
    if namespace::inside() {
        return system_config_in_this_namespace();
    }
    namespace::run_test_again(
        "system_config::the_system_config_is_read_when_present_and_named_when_the_data_dir_is_empty",
        &["--mount", "--propagation", "private"],
        "root for `unshare --mount` and overlayfs",
    );
}

/// `resetctl ARGS…` as an operator on the box runs it: no `--config`, no
/// `--data-dir`, a home of its own.
fn operator(home: &Path, args: &[&str]) -> Run {
    Run::from(
        Command::new(bin())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("spawn resetctl"),
    )
}

fn system_config_in_this_namespace() {
    let tmp = tempfile::tempdir().unwrap();
    namespace::overlay("/etc", &tmp.path().join("etc"));
    namespace::overlay("/var", &tmp.path().join("var"));
    // A machine with resetctl deployed is this test's host too.
    namespace::forget_a_deployed_resetctl();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    // Nothing deployed: the plain advice, about the platform data dir, the
    // last resort when no config file names one.
    let bare = operator(&home, &["--now", NOW, "status", "--json"]);
    assert_eq!(
        bare.json()["dataDir"],
        home.join(".local/share/resetctl").to_str().unwrap()
    );
    let bare = operator(&home, &["--now", NOW, "status"]);
    assert_eq!(bare.code, 69, "{}", bare.stderr);
    assert!(
        bare.stderr
            .contains("/resetctl does not exist: is the path right?"),
        "{}",
        bare.stderr
    );

    // The guide's layout: the system config names the units' data dir.
    std::fs::create_dir_all("/etc/resetctl").unwrap();
    std::fs::write(
        "/etc/resetctl/config.toml",
        "data-dir = \"/var/lib/resetctl\"\n",
    )
    .unwrap();
    operator(&home, &["--now", NOW, "seed"]).success();
    assert!(Path::new("/var/lib/resetctl/snapshots/CURRENT").is_file());
    let status = operator(&home, &["--now", NOW, "status"]).success();
    assert!(
        status.stdout.starts_with("data dir:  /var/lib/resetctl\n"),
        "{}",
        status.stdout
    );

    // A user file of one's own wins, and is not merged with the system one;
    // its empty data dir is no place for "run `resetctl seed`".
    let user_config = home.join(".config/resetctl");
    std::fs::create_dir_all(&user_config).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::write(
        user_config.join("config.toml"),
        format!("data-dir = \"{}\"\n", elsewhere.display()),
    )
    .unwrap();
    let empty = operator(&home, &["--now", NOW, "status"]);
    assert_eq!(empty.code, 69, "{}", empty.stderr);
    assert!(
        empty.stderr.contains(&format!(
            "the data dir {} does not exist: is the path right? (`--data-dir`, `RESETCTL_DATA_DIR` or `data-dir` in the config file); is the instance elsewhere? \
             /etc/resetctl/config.toml exists but was not read (pass --config /etc/resetctl/config.toml); \
             the units' data dir /var/lib/resetctl exists (pass --data-dir /var/lib/resetctl",
            elsewhere.display()
        )),
        "{}",
        empty.stderr
    );
    // Named explicitly, the system file answers again.
    operator(
        &home,
        &[
            "--now",
            NOW,
            "--config",
            "/etc/resetctl/config.toml",
            "status",
        ],
    )
    .success();
}

/// The part of the suite [`the_suite_reads_no_config_of_the_machine_and_leaves_nothing_running`]
/// runs on a hostile machine: modules that start `resetctl` in every way the
/// suite does (the world's commands, commands of their own, `make`, a
/// service manager's wrapper, a namespace of their own) and read what it
/// says, and those that deploy resetctl themselves (the package, the guide).
const SUITE_PART: [&str; 10] = [
    "cli::",
    "precedence::",
    "seed::",
    "snapshots::",
    "troubleshooting::",
    "make_run::",
    "service_manager::",
    "system_config::the_system_config_is_read_when_present_and_named_when_the_data_dir_is_empty",
    // The package installed into a throwaway root (lintian and the modes
    // inside the .deb read no machine state and are left to the main run).
    "package::the_package_installs_upgrades_removes_and_purges_in_a_throwaway_root",
    "deployment_as_pasted::",
];

/// Issue 50, item 7: with the package installed on the machine and
/// configured against the tests (its `/etc/resetctl/config.toml` holds a
/// key every command reading it refuses), part of the suite passes, so none
/// of its `resetctl`s read the machine's config or trip over the package's
/// user and `/usr/bin/resetctl`; and once it is done, no `resetctl` it
/// started still runs.
#[test]
fn the_suite_reads_no_config_of_the_machine_and_leaves_nothing_running() {
    if namespace::inside() {
        return hostile_machine();
    }
    let (passed, log) = namespace::run_test_as_machine(
        "system_config::the_suite_reads_no_config_of_the_machine_and_leaves_nothing_running",
        &[(namespace::INSIDE, "1".as_ref())],
    );
    assert!(
        passed,
        "on a machine with a hostile /etc/resetctl/config.toml (it needs root for unshare \
         and overlayfs: run `make test-deps`):\n{log}"
    );
}

fn hostile_machine() {
    let sh = |script: &str| {
        let out = Command::new("sh").args(["-c", script]).output().unwrap();
        assert!(out.status.success(), "{script}: {out:?}");
    };
    sh("ip link set lo up");
    let tmp = tempfile::tempdir().unwrap();
    let built = Command::new(crate::util::repo_root().join("deploy/debian/build-deb.sh"))
        .env("RESETCTL_DEB_COMPRESS", "gzip")
        .arg(bin())
        .arg(crate::util::bin_version())
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(built.status.success(), "build-deb.sh: {built:?}");
    let deb = String::from_utf8_lossy(&built.stdout).trim().to_owned();
    for dir in ["/etc", "/var", "/usr", "/run"] {
        namespace::overlay(dir, &tmp.path().join(dir.trim_start_matches('/')));
    }
    sh(&format!(
        "mount --bind {} /usr/bin/systemctl",
        crate::util::repo_root()
            .join("tests/util/systemctl-stub.sh")
            .display()
    ));
    // The package installed, and configured: a config every command that
    // reads it refuses (an unknown key), with settings a test would notice
    // besides.
    sh(&format!(
        "DEBIAN_FRONTEND=noninteractive dpkg -i {deb} > /dev/null"
    ));
    std::fs::write(
        "/etc/resetctl/config.toml",
        "hostile-key = true\nrate-limit = \"1/3600\"\nsite-name = \"Hostile\"\n",
    )
    .unwrap();
    // It is read by a command that is not the suite's.
    let home = tmp.path().join("home");
    let plain = operator(&home, &["status"]);
    assert_eq!(plain.code, 64, "{plain:?}");
    assert!(
        plain
            .stderr
            .contains("/etc/resetctl/config.toml: line 1, column 1: unknown key `hostile-key`"),
        "{}",
        plain.stderr
    );
    // The suite's part, as `cargo test` runs it.
    let out = Command::new(std::env::current_exe().unwrap())
        .args(SUITE_PART)
        .args(["--test-threads", "2"])
        .env_remove(namespace::INSIDE)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && log.contains("test result: ok"),
        "the suite's part failed on a machine with a hostile config:\n{log}"
    );
    // Nothing it started runs on.
    let ours = std::fs::canonicalize(bin()).unwrap();
    let running: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let dir = entry.ok()?.path();
            let exe = std::fs::read_link(dir.join("exe")).ok()?;
            (exe == ours || exe == Path::new("/usr/bin/resetctl")).then(|| {
                String::from_utf8_lossy(&std::fs::read(dir.join("cmdline")).unwrap_or_default())
                    .replace('\0', " ")
            })
        })
        .collect();
    assert!(
        running.is_empty(),
        "still running after the suite's part: {running:?}"
    );
}
