//! The release's licences (issue 52): deploy/debian/copyright, the
//! package's machine-readable copyright file, names every crate the static
//! binary bundles with its licence, as `make copyright` writes it.

use std::collections::BTreeSet;
use std::process::Command;

use crate::util::repo_root;

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
