//! Records the git commit the library (and so the binary) is built from,
//! for `resetctl --version` and the `resetctl_build_info` metric
//! ([`resetctl::build`](src/build.rs) owns both). Outside a checkout (a
//! source tarball, `cargo install` from a registry) there is none, and both
//! say `unknown`.

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

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    // Tracked files changed since that commit: the build is not exactly it.
    let dirty = !commit.is_empty()
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
    println!("cargo:rerun-if-changed=build.rs");
}
