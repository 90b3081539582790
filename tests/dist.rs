//! `make dist` (deploy/dist/, issue 52): the release artefacts in
//! `target/dist/`, made from one static `x86_64-unknown-linux-musl`
//! binary, which `make test` builds before the suite (and which the tests
//! on the real clock run, `util::release_bin`). Here: that binary runs in
//! an empty root; every artefact holds exactly what it says, that one
//! binary and the licence texts; `SHA256SUMS` checks; packaging it again
//! elsewhere, later and under another umask gives the same bytes, and the
//! binary names no path of the machine that built it; the copyright file
//! lists every crate the binary bundles.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{dist_dir, release_bin, repo_root, tool};

/// The version of this build (the workspace's).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The archive's name, without `.tar.gz`.
fn archive_name() -> String {
    format!("resetctl-{VERSION}-x86_64-linux")
}

/// The three artefacts `SHA256SUMS` names, in its order.
fn artefacts() -> [String; 3] {
    [
        format!("{}.tar.gz", archive_name()),
        format!("resetctl_{VERSION}_amd64.deb"),
        format!("resetctl-{VERSION}-oci.tar"),
    ]
}

/// Runs `cmd`; panics naming `what` with its output unless it succeeds.
/// Returns its standard output.
#[track_caller]
fn run(what: &str, cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("UTF-8 output")
}

/// `target/dist/`, which `make dist` must have made.
#[track_caller]
fn dist() -> PathBuf {
    let dir = dist_dir();
    assert!(
        dir.join("SHA256SUMS").is_file(),
        "no release artefacts in {}: `make dist` makes them (`make test` runs it first)",
        dir.display()
    );
    dir
}

/// Whether the ELF file at `path` asks for a program interpreter (a
/// dynamically linked program does: the C library's loader).
fn is_dynamic(path: &Path) -> bool {
    let headers = text(run(
        "readelf (apt-get install binutils)",
        Command::new("readelf").arg("--program-headers").arg(path),
    ));
    headers.contains("program interpreter")
}

#[test]
fn the_static_binary_serves_the_api_from_an_empty_root() {
    tool(&["unshare"], "--version", "util-linux");
    tool(&["curl"], "--version", "curl");
    let dir = tempfile::tempdir().unwrap();
    // The root: the binary and an empty data dir, nothing else (no C
    // library, no /etc, no /dev, no /proc, no /tmp).
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("data")).unwrap();
    std::fs::copy(release_bin(), root.join("resetctl")).unwrap();
    let files: BTreeSet<String> = text(run(
        "list the root",
        Command::new("find").arg(".").current_dir(&root),
    ))
    .lines()
    .map(str::to_owned)
    .collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        [".", "./data", "./resetctl"],
        "the empty root"
    );
    let log = dir.path().join("serve.log");
    let script = format!(
        "set -e\n\
         ip link set lo up\n\
         chroot {root} /resetctl --data-dir /data seed\n\
         chroot {root} /resetctl --data-dir /data serve --listen 127.0.0.1:8080 > {log} 2>&1 &\n\
         for _ in $(seq 400); do (: < /dev/tcp/127.0.0.1/8080) 2>/dev/null && break; sleep 0.05; done\n\
         curl -fsS http://127.0.0.1:8080/openapi/v1/records/latest\n",
        root = root.display(),
        log = log.display()
    );
    let out = Command::new("unshare")
        .args(["--mount", "--net", "--pid", "--fork", "--mount-proc", "--"])
        .args(["bash", "-c", &script])
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .expect("run unshare");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let serve_log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        out.status.success(),
        "the binary in an empty root ({}; unshare needs root):\n{said}{}\nserve's log:\n{serve_log}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = said.lines();
    let seeded = lines.next().unwrap_or_default();
    assert!(
        seeded.starts_with("seeded from bundled history: "),
        "{said}"
    );
    let body: serde_json::Value = serde_json::from_str(lines.next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {said}\nserve's log:\n{serve_log}"));
    assert!(
        body["ok"] == true && body["data"]["id"].is_string(),
        "the latest record: {body}"
    );
}

#[test]
fn the_release_binary_is_static_and_names_its_version_and_commit() {
    let bin = Path::new(release_bin());
    assert!(
        !is_dynamic(bin),
        "{} is dynamically linked: the release binary is the static build of `make dist`",
        bin.display()
    );
    let version = text(run(
        "resetctl --version",
        Command::new(bin).arg("--version"),
    ));
    let commit = text(run(
        "git rev-parse",
        Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .current_dir(repo_root()),
    ));
    let mut lines = version.lines();
    assert_eq!(lines.next(), Some(format!("resetctl {VERSION}").as_str()));
    let named = lines.next().unwrap_or_default();
    assert!(
        named == format!("commit: {}", commit.trim())
            || named == format!("commit: {}-dirty", commit.trim()),
        "the commit line {named:?}: not HEAD ({})",
        commit.trim()
    );
}

/// `tar -tv` of `archive` as `MODE OWNER PATH` lines (times are checked
/// apart).
fn listing(archive: &Path) -> Vec<String> {
    text(run(
        "list the archive",
        Command::new("tar")
            .args(["--numeric-owner", "-tvf"])
            .arg(archive),
    ))
    .lines()
    .map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        format!("{} {} {}", w[0], w[1], w[5])
    })
    .collect()
}

/// The commit's time, `YYYY-MM-DD HH:MM`, in UTC, as tar prints it.
fn commit_time() -> String {
    let out = text(run(
        "git log",
        Command::new("git")
            .args([
                "log",
                "-1",
                "--format=%cd",
                "--date=format-local:%Y-%m-%d %H:%M",
            ])
            .env("TZ", "UTC")
            .current_dir(repo_root()),
    ));
    out.trim().to_owned()
}

#[test]
fn the_archive_holds_the_binary_its_pages_units_config_and_licences() {
    let dist = dist();
    let name = archive_name();
    let archive = dist.join(format!("{name}.tar.gz"));
    let mut expected = vec![format!("drwxr-xr-x 0/0 {name}/")];
    let file = |path: &str, mode: &str| format!("{mode} 0/0 {name}/{path}");
    for doc in [
        "CHANGELOG.md",
        "COPYRIGHT",
        "LICENSE-APACHE",
        "LICENSE-MIT",
        "README.md",
    ] {
        expected.push(file(doc, "-rw-r--r--"));
    }
    expected.push(format!("drwxr-xr-x 0/0 {name}/complete/"));
    for completion in ["_resetctl", "resetctl.bash", "resetctl.fish"] {
        expected.push(file(&format!("complete/{completion}"), "-rw-r--r--"));
    }
    expected.push(file("config.toml", "-rw-r--r--"));
    expected.push(format!("drwxr-xr-x 0/0 {name}/man/"));
    let mut pages: Vec<String> = std::fs::read_dir(repo_root().join("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .collect();
    pages.sort();
    assert!(pages.len() > 30, "man pages: {pages:?}");
    for page in &pages {
        expected.push(file(&format!("man/{page}"), "-rw-r--r--"));
    }
    expected.push(file("resetctl", "-rwxr-xr-x"));
    expected.push(format!("drwxr-xr-x 0/0 {name}/systemd/"));
    let mut units: Vec<String> = std::fs::read_dir(repo_root().join("deploy/systemd"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .chain(["resetctl.tmpfiles".to_owned()])
        .collect();
    units.sort();
    for unit in &units {
        expected.push(file(&format!("systemd/{unit}"), "-rw-r--r--"));
    }
    assert_eq!(listing(&archive), expected, "the archive's entries");

    // Every entry dated the commit's time, whenever it was made.
    let when = commit_time();
    let stamps = text(run(
        "list the archive",
        Command::new("tar")
            .args(["--utc", "-tvf"])
            .arg(&archive)
            .env("TZ", "UTC"),
    ));
    for line in stamps.lines() {
        assert!(line.contains(&when), "not dated {when}: {line}");
    }

    // The files are the checkout's, the licences the root's.
    let unpacked = tempfile::tempdir().unwrap();
    run(
        "unpack the archive",
        Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(unpacked.path()),
    );
    let tree = unpacked.path().join(&name);
    for (ours, theirs) in [
        ("LICENSE-MIT", "LICENSE-MIT"),
        ("LICENSE-APACHE", "LICENSE-APACHE"),
        ("COPYRIGHT", "deploy/debian/copyright"),
        ("README.md", "README.md"),
        ("CHANGELOG.md", "CHANGELOG.md"),
        ("config.toml", "deploy/debian/config.toml"),
        (
            "systemd/resetctl-serve.service",
            "deploy/systemd/resetctl-serve.service",
        ),
        (
            "systemd/resetctl.tmpfiles",
            "deploy/debian/resetctl.tmpfiles",
        ),
        ("man/resetctl.1", "man/resetctl.1"),
    ] {
        assert_eq!(
            std::fs::read(tree.join(ours)).unwrap(),
            std::fs::read(repo_root().join(theirs)).unwrap(),
            "the archive's {ours} is not the checkout's {theirs}"
        );
    }
    let bash = text(run(
        "resetctl completions bash",
        Command::new(tree.join("resetctl")).args(["completions", "bash"]),
    ));
    assert_eq!(
        std::fs::read_to_string(tree.join("complete/resetctl.bash")).unwrap(),
        bash
    );
    assert_eq!(
        std::fs::read(tree.join("resetctl")).unwrap(),
        std::fs::read(dist.join(&name).join("resetctl")).unwrap(),
        "the archive's binary is not the one make dist left beside it"
    );
    assert!(!is_dynamic(&tree.join("resetctl")), "a static binary");
}

/// The bytes of `path` inside the deb at `deb`.
fn from_deb(deb: &Path, path: &str) -> Vec<u8> {
    let tar = run(
        "dpkg-deb --fsys-tarfile (apt-get install dpkg)",
        Command::new("dpkg-deb").arg("--fsys-tarfile").arg(deb),
    );
    let dir = tempfile::tempdir().unwrap();
    let tarball = dir.path().join("data.tar");
    std::fs::write(&tarball, tar).unwrap();
    run(
        "read the package's file",
        Command::new("tar")
            .arg("-xOf")
            .arg(&tarball)
            .arg(format!(".{path}")),
    )
}

/// The files of the image archive at `oci`, unpacked into `root` layer by
/// layer.
fn unpack_image(oci: &Path, root: &Path) {
    let layout = root.with_extension("layout");
    std::fs::create_dir_all(&layout).unwrap();
    std::fs::create_dir_all(root).unwrap();
    run(
        "unpack the image archive",
        Command::new("tar")
            .arg("-xf")
            .arg(oci)
            .arg("-C")
            .arg(&layout),
    );
    let json = |digest: &str| -> serde_json::Value {
        let hex = digest.strip_prefix("sha256:").unwrap();
        serde_json::from_slice(&std::fs::read(layout.join("blobs/sha256").join(hex)).unwrap())
            .unwrap()
    };
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let manifest = json(index["manifests"][0]["digest"].as_str().unwrap());
    for layer in manifest["layers"].as_array().unwrap() {
        let hex = layer["digest"]
            .as_str()
            .unwrap()
            .strip_prefix("sha256:")
            .unwrap();
        run(
            "unpack a layer",
            Command::new("tar")
                .arg("-xf")
                .arg(layout.join("blobs/sha256").join(hex))
                .arg("-C")
                .arg(root),
        );
    }
}

#[test]
fn the_package_and_the_image_hold_the_archives_binary_and_the_licences() {
    let dist = dist();
    let binary = std::fs::read(dist.join(archive_name()).join("resetctl")).unwrap();
    let deb = dist.join(format!("resetctl_{VERSION}_amd64.deb"));
    assert!(
        from_deb(&deb, "/usr/bin/resetctl") == binary,
        "the package's /usr/bin/resetctl is not the archive's binary"
    );
    assert_eq!(
        from_deb(&deb, "/usr/share/doc/resetctl/copyright"),
        std::fs::read(repo_root().join("deploy/debian/copyright")).unwrap()
    );
    let depends = text(run(
        "dpkg-deb -f",
        Command::new("dpkg-deb").arg("-f").arg(&deb).arg("Depends"),
    ));
    assert_eq!(
        depends.trim(),
        "systemd | systemd-standalone-sysusers, systemd | systemd-standalone-tmpfiles",
        "a static binary depends on no C library"
    );

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    unpack_image(&dist.join(format!("resetctl-{VERSION}-oci.tar")), &root);
    assert!(
        std::fs::read(root.join("usr/bin/resetctl")).unwrap() == binary,
        "the image's /usr/bin/resetctl is not the archive's binary"
    );
    for (ours, theirs) in [
        ("usr/share/doc/resetctl/LICENSE-MIT", "LICENSE-MIT"),
        ("usr/share/doc/resetctl/LICENSE-APACHE", "LICENSE-APACHE"),
        (
            "usr/share/doc/resetctl/copyright",
            "deploy/debian/copyright",
        ),
    ] {
        assert_eq!(
            std::fs::read(root.join(ours)).unwrap(),
            std::fs::read(repo_root().join(theirs)).unwrap(),
            "the image's {ours}"
        );
    }
}

#[test]
fn sha256sums_names_the_three_artefacts_and_checks() {
    let dist = dist();
    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    let names: Vec<&str> = sums
        .lines()
        .map(|l| l.split_once("  ").expect("HASH  NAME").1)
        .collect();
    assert_eq!(names, artefacts(), "SHA256SUMS:\n{sums}");
    let checked = text(run(
        "sha256sum -c SHA256SUMS",
        Command::new("sha256sum")
            .args(["-c", "SHA256SUMS"])
            .current_dir(&dist),
    ));
    assert_eq!(
        checked,
        artefacts()
            .iter()
            .map(|a| format!("{a}: OK\n"))
            .collect::<String>()
    );
}

/// What differs between `a` and `b`, as diffoscope shows it (or how to
/// see it when it is not installed).
fn differences(a: &Path, b: &Path) -> String {
    match Command::new("diffoscope")
        .arg("--max-text-report-size=20000")
        .arg(a)
        .arg(b)
        .output()
    {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(_) => "(diffoscope shows where they differ: apt-get install diffoscope-minimal)".into(),
    }
}

#[test]
fn packaging_the_binary_again_elsewhere_later_and_under_another_umask_gives_the_same_bytes() {
    let dist = dist();
    let first = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    let made = std::fs::metadata(dist.join("SHA256SUMS"))
        .unwrap()
        .modified()
        .unwrap();
    // Not the same second as the first run: a time that leaks shows.
    while made.elapsed().unwrap_or_default() < std::time::Duration::from_secs(1) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let again = tempfile::tempdir().unwrap();
    let out = again.path().join("elsewhere");
    let binary = again.path().join("resetctl");
    std::fs::copy(dist.join(archive_name()).join("resetctl"), &binary).unwrap();
    let second = text(run(
        "deploy/dist/package-dist.sh",
        Command::new("bash")
            .arg("-c")
            .arg("umask 077 && exec \"$0\" \"$@\"")
            .arg(repo_root().join("deploy/dist/package-dist.sh"))
            .arg(&binary)
            .arg(&out)
            .current_dir(again.path())
            .env("TZ", "America/New_York")
            .env("LANG", "C.UTF-8"),
    ));
    let mut report = String::new();
    for name in artefacts() {
        let (a, b) = (dist.join(&name), out.join(&name));
        if std::fs::read(&a).unwrap() != std::fs::read(&b).unwrap() {
            report.push_str(&format!("{name} differs:\n{}\n", differences(&a, &b)));
        }
    }
    assert!(report.is_empty(), "{report}");
    assert_eq!(second, first, "SHA256SUMS");
}

#[test]
fn the_binary_names_no_path_of_the_machine_that_built_it() {
    let bin = std::fs::read(release_bin()).unwrap();
    let home = std::env::var("HOME").unwrap_or_default();
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup"));
    let checkout = repo_root().canonicalize().unwrap();
    let mut paths = vec![
        checkout.to_string_lossy().into_owned(),
        cargo_home,
        rustup_home,
    ];
    if home.len() > 1 {
        paths.push(format!("{home}/"));
    }
    let found: Vec<&String> = paths
        .iter()
        .filter(|p| bin.windows(p.len()).any(|w| w == p.as_bytes()))
        .collect();
    assert!(
        found.is_empty(),
        "{} holds the build machine's paths {found:?}: the build maps them away \
         (deploy/dist/build-binary.sh, --remap-path-prefix)",
        release_bin()
    );
}

#[test]
fn the_copyright_file_names_every_crate_the_binary_bundles() {
    let made = text(run(
        "deploy/debian/copyright.py",
        Command::new("python3")
            .arg(repo_root().join("deploy/debian/copyright.py"))
            .arg(repo_root()),
    ));
    let committed = std::fs::read_to_string(repo_root().join("deploy/debian/copyright")).unwrap();
    if made != committed {
        let mine: BTreeSet<&str> = made.lines().filter(|l| l.starts_with("Files:")).collect();
        let theirs: BTreeSet<&str> = committed
            .lines()
            .filter(|l| l.starts_with("Files:"))
            .collect();
        panic!(
            "deploy/debian/copyright is stale: run `make copyright`.\nmissing: {:?}\nno longer bundled: {:?}",
            mine.difference(&theirs).collect::<Vec<_>>(),
            theirs.difference(&mine).collect::<Vec<_>>()
        );
    }
    // Ours first, then every crate with its licence, each licence's text.
    assert!(committed.contains(
        "Files: *\nCopyright: 2026 The resetctl developers\nLicense: MIT or Apache-2.0\n"
    ));
    assert!(committed.contains("Files: crates.io/tokio-"), "{committed}");
    assert!(committed.contains("Files: musl/*"));
}

/// A build from a source tarball (`git archive`, as a forge or a release
/// makes one: no `.git`) still names its commit, and dates its artefacts
/// by it: `build.rs` and `deploy/dist/source-date-epoch.sh` read what `git
/// archive` stamps into `deploy/dist/commit` (`.gitattributes`). Here
/// `build.rs` runs as Cargo runs it, compiled on its own, in the unpacked
/// tarball of HEAD.
#[test]
fn a_source_tarball_without_git_names_its_commit_and_time() {
    let root = repo_root();
    let git = |args: &[&str]| -> String {
        text(run(
            "git",
            Command::new("git").args(args).current_dir(&root),
        ))
        .trim()
        .to_owned()
    };
    let head = git(&["rev-parse", "--short=12", "HEAD"]);
    let time = git(&["log", "-1", "--format=%ct"]);
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let tarball = run(
        "git archive",
        Command::new("git")
            .args(["archive", "--format=tar", "HEAD", "build.rs", "deploy/dist"])
            .current_dir(&root),
    );
    std::fs::write(dir.path().join("src.tar"), tarball).unwrap();
    run(
        "unpack the tarball",
        Command::new("tar")
            .arg("-xf")
            .arg(dir.path().join("src.tar"))
            .arg("-C")
            .arg(&src),
    );
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let script = dir.path().join("build-script");
    run(
        "rustc build.rs",
        Command::new(rustc)
            .args(["--edition", "2021", "-O"])
            .arg(src.join("build.rs"))
            .arg("-o")
            .arg(&script),
    );
    let said = text(run(
        "build.rs",
        Command::new(&script)
            .current_dir(&src)
            .env("CARGO_MANIFEST_DIR", &src),
    ));
    assert!(
        said.lines()
            .any(|l| l == format!("cargo:rustc-env=RESETCTL_GIT_COMMIT={head}")),
        "build.rs in a tarball of {head}:\n{said}"
    );
    let epoch = text(run(
        "deploy/dist/source-date-epoch.sh",
        Command::new(src.join("deploy/dist/source-date-epoch.sh")).env_remove("SOURCE_DATE_EPOCH"),
    ));
    assert_eq!(epoch.trim(), time, "the tarball's SOURCE_DATE_EPOCH");
}

/// The CHANGELOG's sections: Unreleased, then one per version, dated
/// (`## [X.Y.Z] - YYYY-MM-DD`), newest first; the release workflow refuses
/// a tag whose version has none.
#[test]
fn the_changelog_has_a_dated_section_per_version() {
    let changelog = std::fs::read_to_string(repo_root().join("CHANGELOG.md")).unwrap();
    let sections: Vec<&str> = changelog.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(sections.first(), Some(&"## [Unreleased]"), "{sections:?}");
    let mut dates = Vec::new();
    for section in &sections[1..] {
        let (version, date) = section
            .strip_prefix("## [")
            .and_then(|s| s.split_once("] - "))
            .unwrap_or_else(|| panic!("not `## [X.Y.Z] - YYYY-MM-DD`: {section}"));
        assert!(
            version.split('.').count() == 3 && version.split('.').all(|n| n.parse::<u32>().is_ok()),
            "{section}"
        );
        let parts: Vec<&str> = date.split('-').collect();
        assert!(
            date.len() == 10
                && parts.len() == 3
                && parts.iter().all(|p| p.parse::<u32>().is_ok())
                && (1..=12).contains(&parts[1].parse::<u32>().unwrap())
                && (1..=31).contains(&parts[2].parse::<u32>().unwrap()),
            "{section}"
        );
        dates.push(date);
    }
    let mut newest_first = dates.clone();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(dates, newest_first, "newest first");
}
