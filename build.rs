//! Records the git commit the library (and so the binary) is built from,
//! for `resetctl --version` and the `resetctl_build_info` metric
//! ([`resetctl::build`](src/build.rs) owns both): the checkout's HEAD, or,
//! in a source tarball made by `git archive` (a forge's, a release's; no
//! .git), the commit it stamped into `deploy/dist/commit` (export-subst,
//! .gitattributes). Elsewhere (`cargo install` from a registry) there is
//! none, and both say `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    // No optional locks: `git status` must not rewrite the index it watches.
    let out = Command::new("git")
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Whether git's work tree here is this package's own (a tarball unpacked
/// inside some other repository is not).
fn own_checkout() -> bool {
    let here = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from);
    let top = git(&["rev-parse", "--show-toplevel"]).map(std::path::PathBuf::from);
    match (here, top) {
        (Some(here), Some(top)) => here.canonicalize().ok() == top.canonicalize().ok(),
        _ => false,
    }
}

/// The commit `git archive` wrote into `deploy/dist/commit` ("HASH TIME"),
/// cut as `git rev-parse --short=12` cuts it; none in a checkout, where the
/// file still holds its placeholder.
fn stamped_commit() -> Option<String> {
    let text = std::fs::read_to_string("deploy/dist/commit").ok()?;
    let hash = text.split_whitespace().next()?;
    (hash.len() == 40 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then(|| hash[..12].to_owned())
}

fn main() {
    let commit = if own_checkout() {
        git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default()
    } else {
        stamped_commit().unwrap_or_default()
    };
    // Tracked files changed since that commit: the build is not exactly it.
    let dirty = !commit.is_empty()
        && own_checkout()
        && git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let commit = match (commit.is_empty(), dirty) {
        (true, _) => "unknown".to_owned(),
        (false, true) => format!("{commit}-dirty"),
        (false, false) => commit,
    };
    println!("cargo:rustc-env=RESETCTL_GIT_COMMIT={commit}");
    // A new commit or a change to what is staged means another answer.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        // Relative to this package's root, which is the workspace's.
        let dir = std::path::Path::new(&dir);
        for file in ["HEAD", "index"] {
            println!("cargo:rerun-if-changed={}", dir.join(file).display());
        }
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", dir.join(head).display());
        }
    }
    println!("cargo:rerun-if-changed=deploy/dist/commit");
    println!("cargo:rerun-if-changed=build.rs");
}
