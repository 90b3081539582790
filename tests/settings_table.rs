//! The table of settings drives every layer (issue 51): a throwaway row,
//! added to a copy of this source tree and nothing else, is a flag, a
//! variable, a config-file key (with the file's suggestion for a typo), a
//! `--help` line with its default, an option of the man page, an entry of
//! the manual's list of every setting, and a `serve --check` line, with
//! its default and where each value came from.
//!
//! The copy is built with its own target dir, seeded with hard links to
//! this build's compiled dependencies, so only the two crates of the
//! workspace compile (a nested cargo on this build's own target dir would
//! wait for the lock the outer `cargo test` holds).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{repo_root, Run};

/// The row the test adds, at the end of the table.
const ROW: &str =
    "    /// A throwaway setting of the table's test: how many answers to keep.\n    \
     throwaway_answers: u32 [] in [\"serve\"] under \"Serving\" as \"N\" = 42,\n";

const TABLE: &str = "src/config/table.rs";

/// `cmd` run, which must succeed.
#[track_caller]
fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    Run::from(out).success()
}

fn git(dir: &Path, args: &[&str]) -> String {
    run(Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(args))
    .stdout
}

/// Every file git knows of in `from` (tracked or new, not ignored), copied to `to`.
fn copy_source(from: &Path, to: &Path) {
    let listed = git(
        from,
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
    );
    for name in listed.split('\0').filter(|n| !n.is_empty()) {
        let source = from.join(name);
        if !source.is_file() {
            continue; // deleted in the work tree
        }
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&source, &target).unwrap();
    }
}

/// The copy's target dir: this build's compiled dependencies, hard-linked
/// (this test runs from `<target>/debug/deps/`, wherever the target dir is).
fn seeded_target(dir: &Path) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let ours = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary is in <target>/debug/deps");
    let theirs = dir.join("target/debug");
    std::fs::create_dir_all(&theirs).unwrap();
    for part in ["deps", "build", ".fingerprint"] {
        run(Command::new("cp")
            .arg("-al")
            .arg(ours.join(part))
            .arg(&theirs));
    }
    dir.join("target")
}

/// The copy's `resetctl`, started as every test's is: no config file but
/// the one given, no home, a data dir of its own.
fn resetctl(bin: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .stdin(std::process::Stdio::null());
    crate::util::own_config(&mut cmd, home);
    cmd
}

/// `serve --check`'s line of `throwaway-answers`.
fn check_line(cmd: &mut Command) -> String {
    let out = run(cmd).stdout;
    out.lines()
        .find(|l| l.starts_with("throwaway-answers = "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| panic!("serve --check shows no throwaway-answers:\n{out}"))
}

#[test]
fn a_row_added_to_the_table_is_a_flag_a_variable_a_key_a_help_line_a_man_entry_and_a_check_line() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    copy_source(&repo_root(), &src);
    git(&src, &["init", "-q"]);
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-qm", "the tree as it is"]);

    // The row, and nothing else.
    let table = src.join(TABLE);
    let text = std::fs::read_to_string(&table).unwrap();
    let end = text
        .rfind("\n}\n")
        .expect("the table ends with its closing brace");
    std::fs::write(&table, format!("{}\n{ROW}}}\n", &text[..end])).unwrap();
    let stat = git(&src, &["diff", "--stat"]);
    assert!(
        stat.contains(TABLE) && stat.contains("1 file changed"),
        "{stat}"
    );

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let target = seeded_target(tmp.path());
    run(Command::new(cargo)
        .current_dir(&src)
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "build",
            "--offline",
            "--locked",
            "-p",
            "resetctl-cli",
            "--bin",
            "resetctl",
        ]));
    let bin = target.join("debug/resetctl");
    let home = tmp.path().join("home");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&home).unwrap();
    let config = tmp.path().join("config.toml");
    let check = |env: &[(&str, &str)], file: &str, flag: &[&str]| {
        std::fs::write(&config, file).unwrap();
        let mut cmd = resetctl(&bin, &home);
        cmd.envs(env.iter().copied()).args([
            "--data-dir",
            data.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "serve",
            "--listen",
            "127.0.0.1:0",
        ]);
        check_line(cmd.args(flag).arg("--check"))
    };

    // Its default, then each layer over the one below.
    assert_eq!(check(&[], "", &[]), "throwaway-answers = 42 # default");
    let file = "throwaway-answers = 7\n";
    assert_eq!(
        check(&[], file, &[]),
        format!("throwaway-answers = 7 # config file {}", config.display())
    );
    let env = [("RESETCTL_THROWAWAY_ANSWERS", "8")];
    assert_eq!(
        check(&env, file, &[]),
        "throwaway-answers = 8 # env RESETCTL_THROWAWAY_ANSWERS"
    );
    assert_eq!(
        check(&env, file, &["--throwaway-answers", "9"]),
        "throwaway-answers = 9 # flag"
    );

    // A bad value is refused by each layer, naming it.
    let refused = |env: &[(&str, &str)], file: &str, flag: &[&str]| {
        std::fs::write(&config, file).unwrap();
        let out = resetctl(&bin, &home)
            .envs(env.iter().copied())
            .args(["--config", config.to_str().unwrap(), "serve", "--check"])
            .args(flag)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let said = refused(&[], "", &["--throwaway-answers", "many"]);
    assert!(said.contains("--throwaway-answers <N>"), "{said}");
    let said = refused(&[("RESETCTL_THROWAWAY_ANSWERS", "many")], "", &[]);
    assert!(said.contains("RESETCTL_THROWAWAY_ANSWERS"), "{said}");
    let said = refused(&[], "throwaway-answers = \"many\"\n", &[]);
    assert!(said.contains("throwaway-answers"), "{said}");
    let said = refused(&[], "throwaway-answer = 1\n", &[]);
    assert!(
        said.contains("unknown key") && said.contains("throwaway-answers"),
        "a typo's suggestion: {said}"
    );

    // Its help, under its heading, with its variable and its default.
    let help = run(resetctl(&bin, &home).args(["serve", "--help"])).stdout;
    let mut heading = "";
    let mut entry: Vec<&str> = Vec::new();
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            if !entry.is_empty() {
                break;
            }
            heading = line;
        } else {
            let option = line.trim_start().starts_with('-');
            match (entry.is_empty(), option) {
                // Its first line, or a line of its text.
                (true, true) if line.trim_start().starts_with("--throwaway-answers") => {
                    entry.push(line)
                }
                (false, false) => entry.push(line),
                // The next option.
                (false, true) => break,
                _ => {}
            }
        }
    }
    let words = entry
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(heading, "Serving:", "{help}");
    assert_eq!(
        words,
        "--throwaway-answers <N> A throwaway setting of the table's test: how many answers \
         to keep. Default: 42 [env: RESETCTL_THROWAWAY_ANSWERS]",
        "serve --help:\n{help}"
    );

    // The man page and the manual's list of every setting.
    let man = tmp.path().join("man");
    let settings = tmp.path().join("settings.md");
    run(resetctl(&bin, &home)
        .arg("man")
        .arg(&man)
        .arg("--settings")
        .arg(&settings));
    let page = std::fs::read_to_string(man.join("resetctl-serve.1")).unwrap();
    assert!(
        page.contains("\\fB\\-\\-throwaway\\-answers\\fR \\fI<N>\\fR"),
        "resetctl-serve.1 has no --throwaway-answers"
    );
    let list = std::fs::read_to_string(&settings).unwrap();
    assert!(
        list.contains("| [`throwaway-answers`](#throwaway-answers) | `serve` | at restart |")
            && list.contains("\n### `throwaway-answers`\n\n`--throwaway-answers N` · `RESETCTL_THROWAWAY_ANSWERS`"),
        "docs/manual/settings.md of the copy:\n{list}"
    );
}
