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
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    // Nothing deployed: the plain advice.
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
