//! The guide as pasted: every `sh` block of the operator's manual (`docs/manual/`), in order,
//! run by bash (`-e -o pipefail`: a command that fails fails its block, and
//! the block fails the test) as root in a throwaway root: a mount namespace
//! with overlays on `/etc`, `/var`, `/usr/local` and `/run`, a network
//! namespace with only loopback, a pid namespace that ends every process the
//! blocks started. Each run is one machine set up from scratch: `mirror`
//! (from the release archive, with `systemd-sysusers`, the timer, then the
//! daemon), `standalone` (from the archive, with `useradd`) and `package` (a
//! mirror on a package host: the release's Debian package, `/usr`
//! overlaid too); a block tagged with runs (```` ```sh mirror
//! standalone ````) runs only in those, an untagged one in every run, and the
//! one tagged `build` (`make dist`, from source) in none, nor those tagged `image`
//! (tests/image.rs).
//!
//! What the test supplies, and nothing else:
//! - the downloads (issue 52): the release archive, the package and
//!   `SHA256SUMS` of `make dist` (which `make test` runs first) in the
//!   current directory, as a user downloads them; the guide checks them,
//!   then installs the archive (`mirror`, `standalone`) or the package;
//! - `systemctl`: tests/util/systemctl-stub.sh bind-mounted over
//!   `/usr/bin/systemctl`; it records each call (asserted below to be the
//!   guide's, in order), starts and stops the services the guide installed
//!   and runs the oneshots, and starts nginx for `reload nginx`;
//! - the editor behind `sudoedit`: it writes the guide's block whose first
//!   line names the file (the run's `/etc/resetctl/config.toml`, nginx's
//!   `conf.d/resetctl.conf`);
//! - the outside world the guide assumes: `resets.example.org` resolves to
//!   this machine (`/etc/hosts`), a Redis with password `CHANGE-ME` listens
//!   on 10.0.0.20, and the mirror's `upstream = "public"` is a copy of the
//!   public feed on loopback (the namespace has no internet);
//! - of the names to replace, only `20261120-0300`: the time of the newest
//!   backup when the restore runs.
//!
//! The several-instances blocks (a replica's first sync and units) run in
//! the mirror run, on the mirror's config: a replica differs in its config
//! only, which tests/deployment.rs checks, and tests/topology.rs runs a
//! writer with replicas.
//!
//! Afterwards every path the blocks name under the overlaid directories, and
//! the user and group files, are as they were before: nothing escaped.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::deployment::{blocks, main_config, read, Block, CONFIG, GUIDE};
use crate::util::repo_root;
use crate::util::upstream::Upstream;

/// The tags an `sh` block may carry: the runs, and the build machine's block.
pub(crate) const TAGS: [&str; 5] = ["mirror", "standalone", BUILD, PACKAGE, IMAGE];
/// The blocks that run the container image: tests/image.rs runs each
/// `podman run` as its entrypoint in the image's unpacked root.
pub(crate) const IMAGE: &str = "image";
/// The blocks that install the Debian package: tests/package.rs runs them,
/// against the package built from the binary under test.
pub(crate) const PACKAGE: &str = "package";
/// The block that builds the release from source (`make dist`): the test
/// supplies make dist's output as the downloads instead.
const BUILD: &str = "build";
/// The name to replace in the restore: the time of the backup to restore.
const BACKUP_TIME: &str = "20261120-0300";
/// Where the guide's backups go.
const BACKUPS: &str = "/var/backups/resetctl";
/// The directories the throwaway root lays an overlay on (`/usr/local`
/// within `/usr`, which the package run overlays whole).
const OVERLAID: [&str; 4] = ["/etc", "/var", "/usr/local", "/run"];
/// The run of a package host.
const PACKAGE_RUN: &str = PACKAGE;

/// What the `run` overlays: `/usr` whole on a package host (the package
/// installs there), else [`OVERLAID`].
fn overlaid(run: &str) -> Vec<&'static str> {
    if run == PACKAGE_RUN {
        vec!["/etc", "/var", "/usr", "/run"]
    } else {
        OVERLAID.to_vec()
    }
}
/// The mirror's upstream in the guide's config, replaced by the loopback copy.
const PUBLIC_UPSTREAM: &str = "upstream = \"public\"";
/// Set (to the run) in the process that runs inside the namespaces.
const RUN_VAR: &str = "RESETCTL_TEST_GUIDE_RUN";
/// The scratch directory (outside the overlaid directories) of that process.
const SCRATCH_VAR: &str = "RESETCTL_TEST_GUIDE_SCRATCH";
/// Where the stub records its calls, inside the root.
const STUB_CALLS: &str = "/run/systemctl-stub/calls";

#[test]
fn the_guide_runs_as_pasted_for_a_mirror() {
    as_pasted("mirror", "the_guide_runs_as_pasted_for_a_mirror");
}

/// Issue 50, item 6: the guide as a package user follows it: the package
/// of the release, then a mirror (the config, the first sync, the
/// units, nginx, operations, backups, the package's upgrade, a reload).
#[test]
fn the_guide_runs_as_pasted_for_a_mirror_on_a_package_host() {
    as_pasted(
        PACKAGE_RUN,
        "the_guide_runs_as_pasted_for_a_mirror_on_a_package_host",
    );
}

#[test]
fn the_guide_runs_as_pasted_for_a_standalone_instance() {
    as_pasted(
        "standalone",
        "the_guide_runs_as_pasted_for_a_standalone_instance",
    );
}

/// Outside: runs this test again inside fresh namespaces, then checks that
/// nothing it did is left on the host.
fn as_pasted(run: &str, test: &str) {
    if std::env::var(RUN_VAR).as_deref() == Ok(run) {
        return inside(run);
    }
    let started = Instant::now();
    // The tools the blocks and the throwaway root use, each with its package.
    for (tool, package) in [
        ("sudo", "sudo"),
        ("curl", "curl"),
        ("redis-server", "redis-server"),
        ("redis-cli", "redis-tools"),
        ("systemd-sysusers", "systemd"),
        ("unshare", "util-linux"),
        ("runuser", "util-linux"),
        ("flock", "util-linux"),
    ] {
        crate::util::tool(&[tool], "--version", package);
    }
    crate::util::nginx::nginx_binary();
    let watched = watched_paths();
    let before = states(&watched);
    let scratch = tempfile::tempdir().unwrap();
    assert!(
        !overlaid(run).iter().any(|d| scratch.path().starts_with(d)),
        "the overlays' upper directories cannot be under what they cover: set TMPDIR \
         outside {:?} (it is {})",
        overlaid(run),
        scratch.path().display()
    );
    // bash as the namespace's init reaps the services the blocks leave
    // behind (nginx, redis, serve), so none lingers as a zombie.
    let (passed, log) = crate::util::namespace::run_test_as_machine(
        &format!("deployment_as_pasted::{test}"),
        &[
            (RUN_VAR, std::ffi::OsStr::new(run)),
            (SCRATCH_VAR, scratch.path().as_os_str()),
        ],
    );
    let after = states(&watched);
    let escaped: Vec<String> = watched
        .iter()
        .filter(|p| before[*p] != after[*p])
        .map(|p| format!("{}: {:?} -> {:?}", p.display(), before[p], after[p]))
        .collect();
    assert!(
        escaped.is_empty(),
        "the {run} run changed the host outside its throwaway root:\n{}",
        escaped.join("\n")
    );
    assert!(
        passed,
        "the guide's {run} run failed (it needs root for unshare and overlayfs, and \
         sudo, nginx, redis-server, curl and systemd: run `make test-deps`):\n{log}"
    );
    println!("{log}\nthe {run} run took {:?}", started.elapsed());
}

/// Inside the namespaces: build the throwaway root, run the blocks.
fn inside(run: &str) {
    let scratch = PathBuf::from(std::env::var_os(SCRATCH_VAR).expect(SCRATCH_VAR));
    let guide = read(&repo_root().join(GUIDE).join("README.md")).replace('\n', " ");
    let names = guide
        .split_once("Names to replace:")
        .and_then(|(_, rest)| rest.split("  ").next())
        .unwrap_or_else(|| panic!("{GUIDE} has no \"Names to replace:\""));
    assert!(
        names.contains(&format!("`{BACKUP_TIME}`")),
        "{GUIDE}: the restore's `{BACKUP_TIME}` is not among the names to replace:{names}"
    );
    throwaway_root(&scratch, run);
    // The outside world the guide assumes.
    let redis = crate::util::tool(&["redis-server"], "--version", "redis-server");
    sh(Command::new(redis)
        .args([
            "--bind",
            "10.0.0.20",
            "--port",
            "6379",
            "--requirepass",
            "CHANGE-ME",
        ])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "yes"])
        .arg("--dir")
        .arg(&scratch));
    let feed = read(&repo_root().join("tests/fixtures/feed/fixture-live-status-2026-08-01.json"));
    let upstream = Upstream::start_on("127.0.0.1", crate::util::upstream::Behavior::Status(500));
    upstream.serve(&feed, "\"feed-1\"");
    let upstream_url = upstream.url("/api/status.json");
    let checkout = downloads(&scratch);
    let editor = editor(&scratch, run, &upstream_url);
    wait_for_port("10.0.0.20:6379");

    let mut ran = Vec::new();
    for block in blocks().into_iter().filter(|b| b.kind == "sh") {
        if block.tags.iter().any(|t| t == BUILD) {
            println!(
                "{}: skipped: the build (the downloads are make dist's)",
                block.at()
            );
            continue;
        }
        if !block.tags.is_empty() && !block.tags.iter().any(|t| t == run) {
            continue;
        }
        let version = env!("CARGO_PKG_VERSION");
        if block.tags.iter().any(|t| t == PACKAGE) {
            assert!(
                !block.text.contains("resetctl_")
                    || block
                        .text
                        .contains(&format!("./resetctl_{version}_amd64.deb")),
                "{}: the guide installs another package than this version's",
                block.at()
            );
        }
        assert!(
            !block.text.contains("x86_64-linux")
                || block
                    .text
                    .contains(&format!("resetctl-{version}-x86_64-linux")),
            "{}: the guide installs another archive than this version's",
            block.at()
        );
        let mut text = block.text.clone();
        if text.contains(BACKUP_TIME) {
            text = text.replace(BACKUP_TIME, &newest_backup_time(&block));
        }
        run_block(&block, &text, &scratch, &checkout, &editor);
        ran.push(block);
    }
    let least = if run == PACKAGE_RUN { 12 } else { 15 };
    assert!(ran.len() >= least, "only {} blocks ran", ran.len());

    // The stub was the systemctl the blocks ran, and saw exactly their calls.
    let expected: Vec<String> = ran
        .iter()
        .flat_map(|b| b.text.lines())
        .filter_map(|l| {
            l.trim()
                .trim_start_matches("sudo ")
                .strip_prefix("systemctl ")
        })
        .map(str::to_owned)
        .collect();
    // (The package's maintainer scripts call `systemctl --system …`; the
    // guide's calls are the rest.)
    let calls: Vec<String> = read(Path::new(STUB_CALLS))
        .lines()
        .filter(|call| !call.starts_with("--"))
        .map(str::to_owned)
        .collect();
    assert!(
        expected.len() >= 5,
        "systemctl calls in the guide: {expected:?}"
    );
    assert_eq!(calls, expected, "the systemctl calls (got, expected)");
    // A reload of serve reached it: it read its settings again.
    if expected
        .iter()
        .any(|c| c == "reload resetctl-serve.service")
    {
        let log = read(Path::new("/run/systemctl-stub/resetctl-serve.service.log"));
        assert!(
            log.contains("settings read again: "),
            "serve's log shows no reload:\n{log}"
        );
    }
}

/// Overlays on the directories the guide writes, loopback up with the
/// private Redis address, the public host name at home, systemctl stubbed.
fn throwaway_root(scratch: &Path, run: &str) {
    for dir in overlaid(run) {
        let name = dir.trim_start_matches('/').replace('/', "_");
        crate::util::namespace::overlay(dir, &scratch.join(name));
    }
    // A fresh machine, also where resetctl is deployed: its package purged
    // where /usr is the run's, and on the source runs the guide's
    // /usr/local/bin coming first in PATH.
    if run == PACKAGE_RUN {
        sh(Command::new("sh").args([
            "-c",
            "if dpkg -s resetctl > /dev/null 2>&1; then dpkg --purge resetctl > /dev/null; fi",
        ]));
    }
    crate::util::namespace::forget_a_deployed_resetctl();
    let _ = fs::remove_file("/usr/local/bin/resetctl");
    sh(Command::new("ip").args(["link", "set", "lo", "up"]));
    sh(Command::new("ip").args(["addr", "add", "10.0.0.20/32", "dev", "lo"]));
    let hosts = read(Path::new("/etc/hosts"));
    fs::write(
        "/etc/hosts",
        format!("{hosts}127.0.0.1 resets.example.org\n"),
    )
    .unwrap();
    sh(Command::new("mount")
        .arg("--bind")
        .arg(repo_root().join("tests/util/systemctl-stub.sh"))
        .arg("/usr/bin/systemctl"));
}

/// The directory a release was downloaded into, as the guide's commands
/// expect it in the current directory: `make dist`'s archive, package and
/// `SHA256SUMS` (every run installs the release, checksum first).
fn downloads(scratch: &Path) -> PathBuf {
    let dir = scratch.join("downloads");
    fs::create_dir_all(&dir).unwrap();
    let dist = crate::util::dist_dir();
    let version = env!("CARGO_PKG_VERSION");
    for name in [
        format!("resetctl-{version}-x86_64-linux.tar.gz"),
        format!("resetctl_{version}_amd64.deb"),
        "SHA256SUMS".to_owned(),
    ] {
        let from = dist.join(&name);
        assert!(
            from.is_file(),
            "no {}: `make dist` makes it (`make test` runs it first)",
            from.display()
        );
        fs::copy(&from, dir.join(&name)).unwrap();
    }
    dir
}

/// The editor `sudoedit` runs: it writes the guide's block for the file
/// (sudoedit hands it a temp copy, named like the file with a random middle).
fn editor(scratch: &Path, run: &str, upstream_url: &str) -> PathBuf {
    let config = if run == "mirror" || run == PACKAGE_RUN {
        main_config()
    } else {
        blocks()
            .into_iter()
            .find(|b| {
                b.kind == "toml"
                    && b.first_line()
                        .starts_with(&format!("# {CONFIG} for a {run}"))
            })
            .unwrap_or_else(|| {
                panic!("{GUIDE}: no toml block starts with `# {CONFIG} for a {run}`")
            })
            .text
    };
    let config = config.replace(PUBLIC_UPSTREAM, &format!("upstream = \"{upstream_url}\""));
    let nginx = blocks()
        .into_iter()
        .find(|b| b.kind == "nginx" && b.first_line() == "# /etc/nginx/conf.d/resetctl.conf")
        .unwrap_or_else(|| {
            panic!("{GUIDE}: no nginx block starts with `# /etc/nginx/conf.d/resetctl.conf`")
        })
        .text;
    let texts = scratch.join("texts");
    fs::create_dir_all(&texts).unwrap();
    fs::write(texts.join("config.toml"), config).unwrap();
    fs::write(texts.join("resetctl.conf"), nginx).unwrap();
    let path = scratch.join("editor");
    let t = texts.display();
    fs::write(
        &path,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n*/config*.toml) cat {t}/config.toml > \"$1\" ;;\n\
             */resetctl*.conf) cat {t}/resetctl.conf > \"$1\" ;;\n\
             *) echo \"the test's editor has no text for $1\" >&2; exit 1 ;;\nesac\n"
        ),
    )
    .unwrap();
    fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// The time in the name of the newest backup, for the restore.
fn newest_backup_time(block: &Block) -> String {
    let names = fs::read_dir(BACKUPS)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    names
        .iter()
        .filter_map(|n| n.strip_prefix("resetctl-")?.strip_suffix(".tar.gz"))
        .max()
        .unwrap_or_else(|| {
            panic!(
                "{}: no backup to restore in {BACKUPS}: {names:?}",
                block.at()
            )
        })
        .to_owned()
}

/// Runs one block as root, in the checkout, as a reader's shell would;
/// killed after 60 s.
fn run_block(block: &Block, text: &str, scratch: &Path, checkout: &Path, editor: &Path) {
    let dir = scratch.join("blocks");
    fs::create_dir_all(dir.join("home")).unwrap();
    let script = dir.join(format!("{}.sh", block.line));
    let output = dir.join(format!("{}.out", block.line));
    fs::write(&script, text).unwrap();
    // One file, one offset: the commands (-x) and their output in order.
    let printed = fs::File::create(&output).unwrap();
    let started = Instant::now();
    let mut child = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-x"])
        .arg(&script)
        .current_dir(checkout)
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("HOME", dir.join("home"))
        .env("LANG", "C.UTF-8")
        .env("SUDO_EDITOR", editor)
        .stdin(Stdio::null())
        .stdout(printed.try_clone().unwrap())
        .stderr(printed)
        .spawn()
        .expect("run bash");
    let deadline = started + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let printed = read(&output);
    println!("{} ({:?}):\n{printed}", block.at(), started.elapsed());
    if status.is_some_and(|s| s.success()) {
        return;
    }
    let services: String = fs::read_dir("/run/systemctl-stub")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
                .map(|e| format!("--- {}\n{}", e.path().display(), read(&e.path())))
                .collect()
        })
        .unwrap_or_default();
    panic!(
        "{}: the block failed ({}):\n{text}--- its output\n{printed}{services}",
        block.at(),
        status.map_or("killed after 60 s".to_owned(), |s| s.to_string())
    );
}

/// Runs a setup command, which must succeed.
fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait_for_port(addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The host paths to compare before and after: every absolute path the
/// `sh` blocks name under an overlaid directory, the user and group files,
/// and what the stub and the services it starts write.
fn watched_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = [
        "/etc/passwd",
        "/etc/group",
        "/etc/shadow",
        "/etc/hosts",
        "/usr/bin/systemctl",
        // What the package run's dpkg writes.
        "/usr/bin/resetctl",
        "/var/lib/dpkg/status",
        "/lib/systemd/system/resetctl-serve.service",
        // What the stub and the services it starts write.
        "/run/systemctl-stub",
        "/run/nginx.pid",
        "/var/log/nginx/access.log",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for block in blocks().into_iter().filter(|b| b.kind == "sh") {
        for word in block
            .text
            .split(|c: char| c.is_whitespace() || "'\"=".contains(c))
        {
            let word = word.trim_end_matches(['/', ';', ')']);
            if OVERLAID.iter().any(|d| word.starts_with(&format!("{d}/")))
                && !word.contains(['*', '$'])
            {
                paths.push(PathBuf::from(word));
            }
        }
    }
    paths.sort();
    paths.dedup();
    assert!(paths.len() > 15, "paths: {paths:?}");
    paths
}

/// What a path is on the host: absent, or its kind, size, mode, owner and
/// modification time (a directory's changes when an entry is added).
type State = Option<(bool, u64, u32, u32, i64, i64)>;

fn states(paths: &[PathBuf]) -> BTreeMap<PathBuf, State> {
    use std::os::unix::fs::MetadataExt;
    paths
        .iter()
        .map(|p| {
            let state = fs::symlink_metadata(p).ok().map(|m| {
                (
                    m.is_dir(),
                    m.len(),
                    m.mode(),
                    m.uid(),
                    m.mtime(),
                    m.mtime_nsec(),
                )
            });
            (p.clone(), state)
        })
        .collect()
}
