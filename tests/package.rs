//! The Debian package of the release (`make dist`'s
//! `target/dist/resetctl_VERSION_amd64.deb`, made by
//! `deploy/debian/build-deb.sh` from the static binary): lintian finds
//! nothing to warn about, and in a throwaway root (a mount namespace with
//! overlays on `/etc`, `/usr`, `/var` and `/run`, only loopback, a pid
//! namespace, `systemctl` stubbed as in tests/deployment_as_pasted.rs) it
//! installs what it says, an upgrade keeps the data and a changed conffile,
//! `remove` keeps both, and `purge` removes what the package made and keeps
//! the records. (The guide's package blocks run in
//! tests/deployment_as_pasted.rs, on a package host.)

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::deployment::read;
use crate::util::{dist_dir, release_bin, repo_root};

/// Set (to the scratch dir holding the packages) in the run inside.
const INSIDE_VAR: &str = "RESETCTL_TEST_PACKAGE_DIR";
/// The version of the package built first, to upgrade from.
const PREVIOUS: &str = "0.0.9";

/// The version of this build (the workspace's).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `make dist`'s package, which the tests here install.
pub(crate) fn released() -> PathBuf {
    let deb = dist_dir().join(format!("resetctl_{VERSION}_amd64.deb"));
    assert!(
        deb.is_file(),
        "no package at {}: `make dist` makes it (`make test` runs it first)",
        deb.display()
    );
    deb
}

/// `deploy/debian/build-deb.sh` on the release binary, as `version`: the
/// package's path.
fn build(version: &str, out: &Path) -> PathBuf {
    crate::util::tool(&["dpkg-deb"], "--version", "dpkg");
    let run = Command::new(repo_root().join("deploy/debian/build-deb.sh"))
        .env("RESETCTL_DEB_COMPRESS", "gzip")
        .arg(release_bin())
        .arg(version)
        .arg(out)
        .output()
        .expect("run deploy/debian/build-deb.sh");
    assert!(
        run.status.success(),
        "build-deb.sh failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let deb = PathBuf::from(String::from_utf8_lossy(&run.stdout).trim());
    assert_eq!(
        deb,
        out.join(format!("resetctl_{version}_amd64.deb")),
        "the package's name"
    );
    deb
}

#[test]
fn lintian_finds_no_error_and_no_warning_in_the_package() {
    let lintian = crate::util::tool(&["lintian"], "--version", "lintian");
    let deb = released();
    let out = Command::new(lintian)
        .args(["--fail-on", "error,warning", "--tag-display-limit", "0"])
        .arg(&deb)
        .output()
        .expect("run lintian");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let tags: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("E: ") || l.starts_with("W: "))
        .collect();
    assert!(
        out.status.success() && tags.is_empty(),
        "lintian ({}):\n{text}",
        out.status
    );
}

/// The config directory and file as the package holds them, before any
/// script has run: never readable by others (the config may hold a Redis
/// password or an upstream token).
#[test]
fn the_package_holds_its_config_unreadable_by_others() {
    let deb = released();
    let out = Command::new("dpkg-deb")
        .arg("-c")
        .arg(&deb)
        .output()
        .unwrap();
    assert!(out.status.success());
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    let mode_of = |path: &str| {
        listing
            .lines()
            .find(|l| l.ends_with(path))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| panic!("{path} is not in the package:\n{listing}"))
    };
    assert_eq!(mode_of(" ./etc/resetctl/"), "drwxr-x--- root/root");
    assert_eq!(
        mode_of(" ./etc/resetctl/config.toml"),
        "-rw-r----- root/root"
    );
}

/// The modes and owners of the config directory and file, one line each.
fn config_modes(dir: &Path) -> String {
    sh(
        "the config's modes",
        "stat -c '%a %U:%G %n' /etc/resetctl /etc/resetctl/config.toml > modes",
        dir,
    );
    read(&dir.join("modes"))
}

#[test]
fn the_package_installs_upgrades_removes_and_purges_in_a_throwaway_root() {
    if let Some(dir) = std::env::var_os(INSIDE_VAR) {
        return inside(Path::new(&dir));
    }
    let dir = tempfile::tempdir().unwrap();
    build(PREVIOUS, &dir.path().join("previous"));
    fs::copy(
        released(),
        dir.path().join(format!("resetctl_{VERSION}_amd64.deb")),
    )
    .unwrap();
    let host_dpkg = read(Path::new("/var/lib/dpkg/status"));
    let host_binary = fs::read("/usr/bin/resetctl").ok();
    let (passed, log) = crate::util::namespace::run_test_as_machine(
        "package::the_package_installs_upgrades_removes_and_purges_in_a_throwaway_root",
        &[(INSIDE_VAR, dir.path().as_os_str())],
    );
    assert_eq!(
        read(Path::new("/var/lib/dpkg/status")),
        host_dpkg,
        "the host's dpkg database changed"
    );
    assert!(
        fs::read("/usr/bin/resetctl").ok() == host_binary,
        "the package reached the host"
    );
    assert!(
        passed,
        "the package run failed (it needs root for unshare and overlayfs, dpkg, apt and \
         systemd-sysusers: run `make test-deps`):\n{log}"
    );
}

/// Runs `script` with bash (`-e -o pipefail`, traced) in `dir`, its output
/// in a file (a service it starts keeps no pipe of ours open); panics with
/// that output, naming `what`, unless it succeeds within 120 s. Returns it.
fn sh(what: &str, script: &str, dir: &Path) -> String {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-x", "-c", script])
        .current_dir(dir)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .stdout(log.reopen().unwrap())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let text = read(log.path());
    println!("{what}:\n{text}");
    assert!(
        status.is_some_and(|s| s.success()),
        "{what} failed ({status:?}, None: still running after 120 s):\n{text}"
    );
    text
}

/// Inside the namespaces: the throwaway root, then the package's life.
fn inside(dir: &Path) {
    let scratch = dir.join("overlays");
    for over in ["/etc", "/usr", "/var", "/run"] {
        crate::util::namespace::overlay(over, &scratch.join(over.trim_start_matches('/')));
    }
    sh("loopback up", "ip link set lo up", dir);
    let stub = repo_root().join("tests/util/systemctl-stub.sh");
    sh(
        "the systemctl stub",
        &format!("mount --bind {} /usr/bin/systemctl", stub.display()),
        dir,
    );
    let previous = dir.join(format!("previous/resetctl_{PREVIOUS}_amd64.deb"));
    let version = VERSION;
    // A machine with the package installed is this test's host too: here,
    // it starts without it.
    sh(
        "a fresh machine",
        "if dpkg -s resetctl > /dev/null 2>&1; then dpkg --purge resetctl; fi",
        dir,
    );
    crate::util::namespace::forget_a_deployed_resetctl();

    // A first install and purge with nothing stored: nothing of it is left.
    sh("install", &format!("dpkg -i {}", previous.display()), dir);
    let data = Path::new("/var/lib/resetctl");
    let meta = fs::metadata(data).expect("the data dir");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        meta.permissions().mode() & 0o7777,
        0o750,
        "the data dir's mode"
    );
    let owner = sh("the owner", "stat -c %U:%G /var/lib/resetctl", dir);
    assert!(owner.contains("resetctl:resetctl"), "{owner}");
    // The config, which may hold secrets: root writes, the group reads.
    let secret = "750 root:resetctl /etc/resetctl\n640 root:resetctl /etc/resetctl/config.toml\n";
    assert_eq!(config_modes(dir), secret, "as installed");
    // An upgrade that replaces the unchanged conffile leaves it so.
    let ours = dir.join(format!("resetctl_{version}_amd64.deb"));
    sh("upgrade", &format!("dpkg -i {}", ours.display()), dir);
    assert_eq!(config_modes(dir), secret, "after an upgrade");
    sh("purge", "dpkg --purge resetctl", dir);
    for gone in ["/usr/bin/resetctl", "/etc/resetctl", "/var/lib/resetctl"] {
        assert!(!Path::new(gone).exists(), "{gone} is left after a purge");
    }

    // The package of the binary under test, installed as the guide does,
    // and a first snapshot served by its units.
    sh(
        "install",
        &format!(
            "apt install ./{} && sudo -u resetctl resetctl --config /etc/resetctl/config.toml \
             --data-dir /var/lib/resetctl seed && systemctl enable --now resetctl-serve.socket \
             resetctl-serve.service && curl -fsS http://127.0.0.1:8080/openapi/v1/records/latest",
            ours.file_name().unwrap().to_string_lossy()
        ),
        dir,
    );
    let status = sh(
        "status",
        "sudo -u resetctl resetctl --config /etc/resetctl/config.toml --data-dir /var/lib/resetctl status --json",
        dir,
    );
    assert!(status.contains("\"sequence\""), "{status}");
    for installed in [
        "/usr/share/man/man1/resetctl-serve.1.gz",
        "/usr/share/bash-completion/completions/resetctl",
        "/usr/share/zsh/vendor-completions/_resetctl",
        "/usr/share/fish/vendor_completions.d/resetctl.fish",
        "/usr/lib/sysusers.d/resetctl.conf",
        "/usr/lib/tmpfiles.d/resetctl.conf",
    ] {
        assert!(
            Path::new(installed).is_file(),
            "{installed} is not installed"
        );
    }
    let unit = read(Path::new("/lib/systemd/system/resetctl-serve.service"));
    assert!(
        unit.contains("ExecStart=/usr/bin/resetctl --config /etc/resetctl/config.toml"),
        "{unit}"
    );

    // The operator changes the conffile; an upgrade (here: the same
    // package again over the previous one's files) keeps it and the data.
    sh("stop", "systemctl stop resetctl-serve.service", dir);
    let config = Path::new("/etc/resetctl/config.toml");
    let changed = format!("{}site-name = \"Ops resets\"\n", read(config));
    fs::write(config, &changed).unwrap();
    // And makes it stricter than the package does: an upgrade keeps that.
    sh(
        "stricter",
        "chmod 0600 /etc/resetctl/config.toml && chmod 0700 /etc/resetctl",
        dir,
    );
    let snapshots_before = sh("snapshots", "ls /var/lib/resetctl/snapshots", dir);
    sh(
        "downgrade then upgrade",
        &format!(
            "dpkg -i {} && dpkg -i {}",
            previous.display(),
            ours.display()
        ),
        dir,
    );
    assert_eq!(
        read(config),
        changed,
        "the upgrade kept the changed conffile"
    );
    assert_eq!(
        config_modes(dir),
        "700 root:resetctl /etc/resetctl\n600 root:resetctl /etc/resetctl/config.toml\n",
        "the upgrade kept the operator's stricter modes"
    );
    assert_eq!(
        sh("snapshots", "ls /var/lib/resetctl/snapshots", dir),
        snapshots_before,
        "the upgrade kept the data"
    );

    // remove: the program goes, the config and the data stay.
    sh("remove", "dpkg -r resetctl", dir);
    assert!(!Path::new("/usr/bin/resetctl").exists());
    assert!(!Path::new("/lib/systemd/system/resetctl-serve.service").exists());
    assert_eq!(read(config), changed, "remove keeps the config");
    // purge: the config goes; the records are kept, and it says so.
    let purged = sh("purge", "dpkg --purge resetctl", dir);
    assert!(
        !Path::new("/etc/resetctl").exists(),
        "purge removes the config"
    );
    assert!(
        purged.contains("resetctl: /var/lib/resetctl holds data and is kept"),
        "{purged}"
    );
    assert!(
        Path::new("/var/lib/resetctl/snapshots").is_dir(),
        "purge keeps the records"
    );
}
