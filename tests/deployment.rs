//! The deployment kit: the units of `deploy/systemd/` and every fenced
//! block of the operator's manual (`docs/manual/`), checked with the real tools. Units pass
//! `systemd-analyze verify`; `ini` blocks are those files verbatim; `nginx`
//! blocks pass `nginx -t`; `toml` blocks are configs `resetctl` accepts (and
//! `serve` starts with); `crontab` lines have five time fields and an
//! absolute command; `sh` blocks are valid shell (and run as pasted in
//! tests/deployment_as_pasted.rs, which reads the blocks here), and every `resetctl`
//! command in them, in the crontab lines and in the units' `ExecStart=`
//! runs against the real binary in a scratch root (absolute paths moved
//! under it; `sync` with `--check` for `--once`/`--daemon`, so nothing is
//! fetched), or, when it would run forever, parses up to `--help`.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{bin, nginx::nginx_binary, repo_root};

/// The operator's manual, relative to the repository root: its contents
/// (`README.md`) list the chapters in the order they are read and run.
pub(crate) const GUIDE: &str = "docs/manual";
/// The units and the sysusers file.
const UNITS: &str = "deploy/systemd";
/// Where the units and the guide install the binary.
const INSTALLED: &str = "/usr/local/bin/resetctl";
/// The config file the units and the guide's commands read.
pub(crate) const CONFIG: &str = "/etc/resetctl/config.toml";
/// The fence kinds a reader may copy, each checked below; nothing else is fenced.
const KINDS: [&str; 5] = ["sh", "toml", "ini", "nginx", "crontab"];
/// Global flags that take a value (the subcommand comes after them).
const GLOBAL_VALUE_FLAGS: [&str; 8] = [
    "--data-dir",
    "--config",
    "--log",
    "--log-format",
    "--now",
    "--match-tolerance-minutes",
    "--keep",
    "--lock-timeout",
];

/// One fenced block of the guide.
pub(crate) struct Block {
    /// The first word of the info string: `sh`, `toml`…
    pub(crate) kind: String,
    /// The other words of the info string: for an `sh` block, the runs of
    /// tests/deployment_as_pasted.rs it belongs to (none: every run).
    pub(crate) tags: Vec<String>,
    pub(crate) text: String,
    /// The chapter (`docs/manual/install.md`) and the line of the fence.
    pub(crate) file: String,
    pub(crate) line: usize,
}

impl Block {
    pub(crate) fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    pub(crate) fn first_line(&self) -> &str {
        self.text.lines().next().unwrap_or("")
    }
}

pub(crate) fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The manual's chapters, in the order of its contents (the numbered
/// list of `README.md`), each as (path from the repository root, text).
pub(crate) fn chapters() -> Vec<(String, String)> {
    let contents = read(&repo_root().join(GUIDE).join("README.md"));
    let mut chapters: Vec<(String, String)> = Vec::new();
    for line in contents.lines() {
        let Some((number, rest)) = line.split_once(". [") else {
            continue;
        };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let file = rest
            .split_once("](")
            .and_then(|(_, after)| after.split_once(')'))
            .map(|(file, _)| file)
            .unwrap_or_else(|| panic!("{GUIDE}/README.md: a chapter without a link: {line}"));
        let path = format!("{GUIDE}/{file}");
        chapters.push((path.clone(), read(&repo_root().join(&path))));
    }
    assert!(
        chapters.len() >= 8,
        "{GUIDE}/README.md lists {} chapters",
        chapters.len()
    );
    chapters
}

/// Every fenced block of the manual's chapters, in order, with its info
/// string as `kind` and `tags`.
pub(crate) fn blocks() -> Vec<Block> {
    chapters()
        .iter()
        .flat_map(|(file, text)| blocks_in(file, text))
        .collect()
}

/// Every fenced block of the Markdown `text` of `file` (the tests' one
/// reader of fences: the manual, the client guide, the README).
pub(crate) fn blocks_in(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, usize, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match open.as_mut() {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some((info.trim().to_owned(), i + 1, indent, Vec::new()));
                }
            }
            Some((_, _, fence_indent, lines)) => {
                if trimmed.trim_end() == "```" {
                    let (info, line, _, lines) = open.take().unwrap();
                    let mut words = info.split_whitespace().map(str::to_owned);
                    out.push(Block {
                        kind: words.next().unwrap_or_default(),
                        tags: words.collect(),
                        text: lines.iter().map(|l| format!("{l}\n")).collect(),
                        file: file.to_owned(),
                        line,
                    });
                } else {
                    let strip = line.len() - line.trim_start().len();
                    lines.push(line[strip.min(*fence_indent)..].to_owned());
                }
            }
        }
    }
    assert!(open.is_none(), "{file}: a fence is never closed");
    out
}

fn blocks_of(kind: &str) -> Vec<Block> {
    blocks().into_iter().filter(|b| b.kind == kind).collect()
}

/// The files of `deploy/systemd/`, by name.
fn unit_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = fs::read_dir(repo_root().join(UNITS))
        .expect("deploy/systemd")
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                read(&p),
            )
        })
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{UNITS} holds {files:?}");
    files
}

/// `(unit name, value)` of every `KEY=` line of the units.
fn unit_settings(key: &str) -> Vec<(String, String)> {
    let prefix = format!("{key}=");
    unit_files()
        .into_iter()
        .filter(|(name, _)| name.ends_with(".service"))
        .flat_map(|(name, text)| {
            text.lines()
                .filter_map(|l| l.strip_prefix(&prefix).map(str::to_owned))
                .map(|v| (name.clone(), v))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The config the guide installs at /etc/resetctl/config.toml: its first
/// `toml` block that says so on its first line.
pub(crate) fn main_config() -> String {
    blocks_of("toml")
        .into_iter()
        .find(|b| b.first_line().starts_with(&format!("# {CONFIG}")))
        .unwrap_or_else(|| panic!("{GUIDE}: no toml block starts with `# {CONFIG}`"))
        .text
}

/// A tool of the `systemd` package, or a failure with the install hint.
fn systemd_tool(name: &str) -> String {
    crate::util::tool(&[name], "--version", "systemd")
}

#[test]
fn the_guide_fences_only_checkable_blocks_and_each_kind_at_least_once() {
    let blocks = blocks();
    for block in &blocks {
        assert!(
            KINDS.contains(&block.kind.as_str()),
            "{}: a ```{} block cannot be checked; fence only {KINDS:?} (show other text unfenced)",
            block.at(),
            block.kind
        );
        let tags = crate::deployment_as_pasted::TAGS;
        assert!(
            block.tags.is_empty()
                || (block.kind == "sh" && block.tags.iter().all(|t| tags.contains(&t.as_str()))),
            "{}: ```{} {}: only sh blocks are tagged, with some of {tags:?}",
            block.at(),
            block.kind,
            block.tags.join(" ")
        );
    }
    for kind in KINDS {
        assert!(
            blocks.iter().any(|b| b.kind == kind),
            "{GUIDE} has no ```{kind} block"
        );
    }
}

#[test]
fn ini_blocks_are_the_files_of_deploy_systemd_verbatim_and_show_every_one() {
    let files = unit_files();
    let mut shown = Vec::new();
    for block in blocks_of("ini") {
        let name = block
            .first_line()
            .strip_prefix(&format!("# {UNITS}/"))
            .unwrap_or_else(|| {
                panic!(
                    "{}: an ini block starts with `# {UNITS}/NAME`, got {:?}",
                    block.at(),
                    block.first_line()
                )
            });
        let (_, content) = files
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{}: {UNITS}/{name} does not exist", block.at()));
        assert!(
            &block.text == content,
            "{}: the block differs from {UNITS}/{name}:\n--- block\n{}--- file\n{content}",
            block.at(),
            block.text
        );
        shown.push(name.to_owned());
    }
    for (name, content) in &files {
        assert!(
            content.starts_with(&format!("# {UNITS}/{name}\n")),
            "{UNITS}/{name} starts with `# {UNITS}/{name}`, as the guide shows it"
        );
        assert!(shown.contains(name), "{GUIDE} does not show {UNITS}/{name}");
    }
}

#[test]
fn the_units_pass_systemd_analyze_verify() {
    let analyze = systemd_tool("systemd-analyze");
    let dir = tempfile::tempdir().unwrap();
    let mut units = Vec::new();
    for (name, content) in unit_files() {
        if [".service", ".timer", ".socket"]
            .iter()
            .any(|kind| name.ends_with(kind))
        {
            // verify wants an executable ExecStart: the binary under test.
            let path = dir.path().join(&name);
            fs::write(&path, content.replace(INSTALLED, bin())).unwrap();
            units.push((name, path));
        }
    }
    assert!(units.len() >= 4, "units: {units:?}");
    let out = Command::new(analyze)
        .args(["verify", "--man=no"])
        .args(units.iter().map(|(_, p)| p))
        .output()
        .expect("run systemd-analyze verify");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let ours: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.contains(&*dir.path().to_string_lossy())
                || units.iter().any(|(name, _)| l.contains(name.as_str()))
        })
        .collect();
    assert!(
        out.status.success() && ours.is_empty(),
        "systemd-analyze verify ({}):\n{text}",
        out.status
    );
}

#[test]
fn the_serve_unit_keeps_its_hardening_score() {
    let analyze = systemd_tool("systemd-analyze");
    let dir = tempfile::tempdir().unwrap();
    let (name, content) = unit_files()
        .into_iter()
        .find(|(n, _)| n == "resetctl-serve.service")
        .expect("resetctl-serve.service");
    let path = dir.path().join(&name);
    fs::write(&path, content.replace(INSTALLED, bin())).unwrap();
    let out = Command::new(analyze)
        .args(["security", "--offline=true", "--no-pager"])
        .arg(&path)
        .output()
        .expect("run systemd-analyze security");
    let text = String::from_utf8_lossy(&out.stdout);
    let score: f64 = text
        .lines()
        .find_map(|l| {
            l.split("Overall exposure level for resetctl-serve.service: ")
                .nth(1)
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in:\n{text}"));
    // 1.4 ("OK") when the hardening was written; nothing since may loosen it.
    assert!(score <= 1.4, "exposure {score} > 1.4:\n{text}");
}

#[test]
fn the_sysusers_file_creates_the_user_the_units_run_as() {
    let sysusers = systemd_tool("systemd-sysusers");
    let root = tempfile::tempdir().unwrap();
    let conf = root.path().join("etc/sysusers.d");
    fs::create_dir_all(&conf).unwrap();
    fs::write(
        conf.join("resetctl.conf"),
        read(&repo_root().join(UNITS).join("resetctl.sysusers")),
    )
    .unwrap();
    let out = Command::new(sysusers)
        .arg(format!("--root={}", root.path().display()))
        .arg("resetctl.conf")
        .output()
        .expect("run systemd-sysusers");
    assert!(
        out.status.success(),
        "systemd-sysusers: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let passwd = read(&root.path().join("etc/passwd"));
    let user: Vec<&str> = passwd
        .lines()
        .find(|l| l.starts_with("resetctl:"))
        .unwrap_or_else(|| panic!("no resetctl user in {passwd:?}"))
        .split(':')
        .collect();
    assert_eq!(user[5], "/var/lib/resetctl", "home: {user:?}");
    assert_eq!(user[6], "/usr/sbin/nologin", "shell: {user:?}");
    let group = read(&root.path().join("etc/group"));
    assert!(group.lines().any(|l| l.starts_with("resetctl:")), "{group}");
    // Every service runs as that user, shares its home as the state
    // directory, and passes it as the data dir.
    let services = unit_files()
        .into_iter()
        .filter(|(n, _)| n.ends_with(".service"))
        .count();
    for (key, value) in [
        ("User", "resetctl"),
        ("Group", "resetctl"),
        ("StateDirectory", "resetctl"),
    ] {
        let set = unit_settings(key);
        assert_eq!(set.len(), services, "{key}= in every service: {set:?}");
        assert!(set.iter().all(|(_, v)| v == value), "{key}: {set:?}");
    }
    for (name, exec) in unit_settings("ExecStart") {
        if !runs_resetctl(&exec) {
            continue;
        }
        assert!(
            exec.starts_with(&format!(
                "{INSTALLED} --config {CONFIG} --data-dir /var/lib/resetctl "
            )),
            "{name}: ExecStart={exec}"
        );
    }
}

/// Whether a unit's `ExecStart=` runs a `resetctl` binary.
fn runs_resetctl(exec: &str) -> bool {
    exec.split_whitespace()
        .next()
        .is_some_and(|program| program == "resetctl" || program.ends_with("/resetctl"))
}

/// The value of `key=` in a unit, with systemd's `%%` and `$$` read as `%` and `$`.
fn unit_value(unit: &str, text: &str, key: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{unit} has no {key}="))
        .replace("%%", "%")
        .replace("$$", "$")
}

/// The backup unit runs exactly the guide's two backup commands (as the
/// `resetctl` user both): the archive under the lock, then the retention.
#[test]
fn the_backup_unit_runs_the_guides_backup_commands() {
    let name = "resetctl-backup.service";
    let unit = unit_files()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{UNITS}/{name} does not exist"))
        .1;
    let by_hand: Vec<String> = blocks_of("sh")
        .iter()
        .flat_map(|b| b.text.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter_map(|l| l.strip_prefix("sudo -u resetctl ").map(str::to_owned))
        .filter(|l| !l.starts_with("resetctl "))
        .collect();
    let words = |text: &str| -> Vec<String> {
        tokens(text)
            .into_iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w),
                _ => None,
            })
            .collect()
    };
    // ExecStart=/bin/sh -c '…': the shell makes the archive's name from the date.
    let exec = unit_value(name, &unit, "ExecStart");
    let script = exec
        .strip_prefix("/bin/sh -c '")
        .and_then(|s| s.strip_suffix('\''))
        .unwrap_or_else(|| panic!("{name}: ExecStart={exec} is not /bin/sh -c '…'"));
    assert!(
        script.starts_with("flock /var/lib/resetctl/resetctl.lock tar ")
            && by_hand.iter().any(|l| l == script),
        "{name}: ExecStart runs {script:?}, the guide's backup commands are {by_hand:?}"
    );
    // ExecStartPost=/usr/bin/find …: systemd passes the pattern unquoted, the guide quotes it.
    let post = words(&unit_value(name, &unit, "ExecStartPost"));
    assert_eq!(post[0], "/usr/bin/find", "{name}: ExecStartPost={post:?}");
    let mut find = vec!["find".to_owned()];
    find.extend_from_slice(&post[1..]);
    assert!(
        by_hand.iter().any(|l| words(l) == find),
        "{name}: ExecStartPost runs {post:?}, the guide's backup commands are {by_hand:?}"
    );
    assert!(post.contains(&"-delete".to_owned()) && post.contains(&"-mtime".to_owned()));
}

#[test]
fn the_serve_unit_leaves_room_for_the_drain_and_the_connection_cap() {
    let serve = &unit_files()
        .into_iter()
        .find(|(n, _)| n == "resetctl-serve.service")
        .expect("resetctl-serve.service")
        .1;
    let value = |key: &str| {
        serve
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("resetctl-serve.service has no {key}="))
            .to_owned()
    };
    // serve drains for at most 10 s after SIGTERM.
    assert_eq!(value("KillSignal"), "SIGTERM");
    let stop: u64 = value("TimeoutStopSec")
        .strip_suffix('s')
        .and_then(|s| s.parse().ok())
        .expect("TimeoutStopSec in seconds");
    assert!(
        stop > 10,
        "TimeoutStopSec={stop}s leaves no room for the 10 s drain"
    );
    // The default --max-connections (10000) plus the 64 files ensure_open_files adds.
    let files: u64 = value("LimitNOFILE").parse().expect("LimitNOFILE=N");
    assert!(files >= 10_064, "LimitNOFILE={files}");
}

#[test]
fn nginx_blocks_pass_nginx_t() {
    let nginx = nginx_binary();
    for block in blocks_of("nginx") {
        assert!(
            block.text.lines().any(|l| l.starts_with("server {")),
            "{}: an nginx block is a complete server {{}} block",
            block.at()
        );
        if block.text.contains("proxy_pass") {
            assert!(
                block.text.contains("proxy_set_header X-Forwarded-For"),
                "{}: a proxy in front of resetctl sets X-Forwarded-For (its default client-ip-header)",
                block.at()
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path().display().to_string();
        fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let conf = format!(
            "pid {r}/nginx.pid;\nerror_log {r}/error.log warn;\nevents {{ worker_connections 64; }}\n\
             http {{\naccess_log off;\nclient_body_temp_path {r}/tmp; proxy_temp_path {r}/tmp;\n\
             fastcgi_temp_path {r}/tmp; uwsgi_temp_path {r}/tmp; scgi_temp_path {r}/tmp;\n{}}}\n",
            block.text
        );
        fs::write(dir.path().join("nginx.conf"), &conf).unwrap();
        let out = Command::new(&nginx)
            .arg("-t")
            .arg("-q")
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .output()
            .expect("run nginx -t");
        assert!(
            out.status.success(),
            "{}: nginx -t failed:\n{}\n--- config\n{conf}",
            block.at(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn sh_blocks_are_valid_shell() {
    let dir = tempfile::tempdir().unwrap();
    for block in blocks_of("sh") {
        let path = dir.path().join("block.sh");
        fs::write(&path, &block.text).unwrap();
        let out = Command::new("sh")
            .arg("-n")
            .arg(&path)
            .output()
            .expect("run sh -n");
        assert!(
            out.status.success(),
            "{}: not valid shell: {}",
            block.at(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn crontab_lines_have_five_time_fields_and_an_absolute_command() {
    let mut lines = 0;
    for block in blocks_of("crontab") {
        for line in block.text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || is_assignment(line) {
                continue;
            }
            lines += 1;
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert!(fields.len() > 5, "{}: {line:?} has no command", block.at());
            for field in &fields[..5] {
                assert!(
                    field
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "*/,-".contains(c)),
                    "{}: {field:?} is not a time field in {line:?}",
                    block.at()
                );
            }
            assert!(
                fields[5].starts_with('/'),
                "{}: cron's PATH is short: the command {:?} needs an absolute path",
                block.at(),
                fields[5]
            );
            // cron turns an unescaped % into a newline.
            let command = crontab_command(line);
            assert!(
                !command.replace("\\%", "").contains('%'),
                "{}: an unescaped % in {command:?}",
                block.at()
            );
            let found = invocations(command, &block.at());
            assert!(
                found.iter().all(|i| i.binary == INSTALLED) && !found.is_empty(),
                "{}: {command:?} runs {INSTALLED}",
                block.at()
            );
        }
    }
    assert!(lines > 0, "{GUIDE}: no crontab line");
}

/// `man resetctl-sync` shows the guide's crontab for the sync, line for line
/// (the guide's block decides; the clap text in `cli/src/args.rs` copies it).
#[test]
fn the_sync_man_page_shows_the_guides_crontab() {
    let block = blocks_of("crontab")
        .into_iter()
        .find(|b| b.text.contains(" sync --once"))
        .unwrap_or_else(|| panic!("{GUIDE}: no crontab block runs `sync --once`"));
    let guide: Vec<&str> = block
        .text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim().starts_with('#'))
        .collect();
    // The page's crontab: the indented lines after the paragraph that opens with `crontab (`.
    let page = read(&repo_root().join("man/resetctl-sync.1")).replace("\\-", "-");
    let shown: Vec<&str> = page
        .lines()
        .skip_while(|l| !l.starts_with("crontab ("))
        .skip_while(|l| !l.starts_with("  "))
        .map_while(|l| l.strip_prefix("  "))
        .collect();
    assert_eq!(
        shown,
        guide,
        "man/resetctl-sync.1's crontab (left) is not the one of {}",
        block.at()
    );
}

#[test]
fn toml_blocks_are_configs_resetctl_accepts() {
    for block in blocks_of("toml") {
        let root = Root::new(&block.text);
        let config = root.path(CONFIG);
        let data = root.path("/var/lib/resetctl");
        let global = |cmd: &mut Command| {
            cmd.arg("--config")
                .arg(&config)
                .arg("--data-dir")
                .arg(&data);
        };
        // Every key is known and every value valid (64 names the problem).
        let mut status = root.command();
        global(&mut status);
        let run = root.run(status.arg("status"));
        assert!(
            run.code != 64 && run.code >= 0,
            "{}: `resetctl status` with this config: {run:?}",
            block.at()
        );
        if block.text.lines().any(|l| l.starts_with("upstream")) {
            let mut sync = root.command();
            global(&mut sync);
            let run = root.run(sync.args(["sync", "--check"]));
            assert_eq!(
                run.code,
                0,
                "{}: `resetctl sync --check` with this config: {run:?}",
                block.at()
            );
        }
        // serve resolves every setting before it binds: it starts (on free ports).
        let mut serve = root.command();
        global(&mut serve);
        serve.args(["serve", "--listen", "127.0.0.1:0"]);
        if block.text.lines().any(|l| l.starts_with("admin-listen")) {
            serve.args(["--admin-listen", "127.0.0.1:0"]);
        }
        if let Err(why) = serve_starts(serve) {
            panic!("{}: `resetctl serve` with this config: {why}", block.at());
        }
    }
}

#[test]
fn every_resetctl_command_of_the_guide_and_the_units_runs_or_parses() {
    let config = main_config();
    let mut failures = Vec::new();
    let mut checked = 0;
    // sh blocks and crontab lines: each block in a fresh root, its commands in order.
    // A crontab's `NAME=value` lines set the environment of the lines below them.
    let crontabs = blocks_of("crontab").into_iter().map(|b| {
        let mut assignments = String::new();
        let mut text = String::new();
        for line in b.text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
            } else if is_assignment(line) {
                assignments.push_str(line);
                assignments.push(' ');
            } else {
                text.push_str(&format!("{assignments}{}\n", crontab_command(line)));
            }
        }
        Block { text, ..b }
    });
    for block in blocks_of("sh").into_iter().chain(crontabs) {
        let root = Root::new(&config);
        for invocation in invocations(&block.text, &block.at()) {
            checked += 1;
            if let Err(why) = root.check(&invocation) {
                failures.push(why);
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} resetctl commands found in {GUIDE}"
    );
    // The units' ExecStart lines that run resetctl (the backup runs tar:
    // the_backup_unit_runs_the_guides_backup_commands).
    let execs: Vec<(String, String)> = unit_settings("ExecStart")
        .into_iter()
        .filter(|(_, exec)| runs_resetctl(exec))
        .collect();
    assert!(execs.len() >= 4, "ExecStart lines: {execs:?}");
    for (name, exec) in execs {
        let at = format!("{UNITS}/{name}");
        let found = invocations(&exec, &at);
        assert!(
            found.len() == 1 && found[0].binary == INSTALLED,
            "{at}: ExecStart={exec} runs {INSTALLED}"
        );
        if let Err(why) = Root::new(&config).check(&found[0]) {
            failures.push(why);
        }
    }
    assert!(
        failures.is_empty(),
        "{} command(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// One `resetctl` command found in shell text.
#[derive(Debug)]
struct Invocation {
    at: String,
    binary: String,
    args: Vec<String>,
    /// The `NAME=value` words before the command (a crontab's variables too).
    env: Vec<(String, String)>,
}

/// A shell token: a word (quotes removed), a command separator, or a redirection.
#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Separator,
    Redirect,
}

/// Splits shell text into words, separators (`;`, `|`, `&&`, newlines,
/// `$(`, `(`, `)`) and redirections, closely enough for the guide's commands.
fn tokens(text: &str) -> Vec<Token> {
    let text = text.replace("\\\n", " ");
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let end = |out: &mut Vec<Token>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            out.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end(&mut out, &mut word, &mut in_word),
            '\n' | ';' | '|' | '&' | '(' | ')' => {
                end(&mut out, &mut word, &mut in_word);
                out.push(Token::Separator);
            }
            '<' | '>' => {
                // `2>`: the number is the redirected descriptor, not a word.
                if in_word && word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end(&mut out, &mut word, &mut in_word);
                while matches!(chars.peek(), Some('>' | '&')) {
                    chars.next();
                }
                out.push(Token::Redirect);
            }
            '#' if !in_word => {
                while chars.peek().is_some_and(|c| *c != '\n') {
                    chars.next();
                }
            }
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.push(chars.next().unwrap());
                        }
                        _ => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    word.push(c);
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                end(&mut out, &mut word, &mut in_word);
                chars.next();
                out.push(Token::Separator);
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end(&mut out, &mut word, &mut in_word);
    out
}

/// The command of a crontab line: what follows its five time fields.
fn crontab_command(line: &str) -> &str {
    let mut rest = line.trim_start();
    for _ in 0..5 {
        rest = rest
            .trim_start_matches(|c: char| !c.is_whitespace())
            .trim_start();
    }
    rest
}

/// `NAME=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The command a segment runs, past `VAR=value`, `sudo -u USER`,
/// `runuser -u USER --`, `flock FILE` and the like.
fn command_words(mut words: &[String]) -> &[String] {
    fn skip_options<'a>(mut w: &'a [String], with_value: &[&str]) -> &'a [String] {
        while let Some(option) = w.first().filter(|o| o.starts_with('-')) {
            if option == "--" {
                return &w[1..];
            }
            let n = if with_value.contains(&option.as_str()) {
                2
            } else {
                1
            };
            w = w.get(n..).unwrap_or(&[]);
        }
        w
    }
    loop {
        match words.first().map(String::as_str) {
            Some(first) if is_assignment(first) => words = &words[1..],
            Some("sudo") => {
                words = skip_options(&words[1..], &["-u", "-g", "-C", "-D", "-h", "-p", "-U"])
            }
            Some("runuser") => words = skip_options(&words[1..], &["-u", "-g", "-G"]),
            Some("flock") => {
                let rest = skip_options(&words[1..], &["-w", "-E", "--timeout"]);
                words = rest.get(1..).unwrap_or(&[]);
            }
            Some("exec" | "nice" | "time" | "command" | "env") => words = &words[1..],
            _ => return words,
        }
    }
}

/// Every `resetctl` command in shell text (a script, a crontab command or
/// an `ExecStart=` value), each with its arguments up to the next
/// separator, redirections left out.
fn invocations(text: &str, at: &str) -> Vec<Invocation> {
    let mut segments: Vec<Vec<String>> = vec![Vec::new()];
    let mut redirect = false;
    for token in tokens(text) {
        match token {
            Token::Separator => segments.push(Vec::new()),
            Token::Redirect => redirect = true,
            Token::Word(_) if redirect => redirect = false,
            Token::Word(w) => segments.last_mut().unwrap().push(w),
        }
    }
    segments
        .iter()
        .filter_map(|segment| {
            let words = command_words(segment);
            let binary = words.first()?;
            (binary == "resetctl" || binary.ends_with("/resetctl")).then(|| Invocation {
                at: format!("{at}: {}", segment.join(" ")),
                binary: binary.clone(),
                args: words[1..].to_vec(),
                env: segment
                    .iter()
                    .map_while(|w| w.split_once('=').filter(|_| is_assignment(w)))
                    .map(|(name, value)| (name.to_owned(), value.to_owned()))
                    .collect(),
            })
        })
        .collect()
}

/// A scratch root: the guide's absolute paths (/var/lib/resetctl,
/// /etc/resetctl/config.toml, /var/backups/…) land under it.
struct Root {
    dir: tempfile::TempDir,
}

/// A finished command.
#[derive(Debug)]
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Root {
    /// A root with the data dir made (as StateDirectory= does) and `config`
    /// at /etc/resetctl/config.toml, its `data-dir` moved under the root too.
    fn new(config: &str) -> Self {
        let root = Root {
            dir: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(root.path("/var/lib/resetctl")).unwrap();
        fs::create_dir_all(root.path("/home")).unwrap();
        let config: String = config
            .lines()
            .map(|line| match line.strip_prefix("data-dir = \"/") {
                Some(rest) => format!("data-dir = \"{}/{rest}\n", root.dir.path().display()),
                None => format!("{line}\n"),
            })
            .collect();
        fs::write(root.path(CONFIG), config).unwrap();
        root
    }

    /// `absolute` under the root (its parent made).
    fn path(&self, absolute: &str) -> PathBuf {
        let path = self.dir.path().join(absolute.trim_start_matches('/'));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        path
    }

    /// An argument with an absolute path (alone or as `--flag=/path`) moved under the root.
    fn map(&self, arg: &str) -> String {
        if arg.starts_with('/') {
            return self.path(arg).display().to_string();
        }
        match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") && value.starts_with('/') => {
                format!("{flag}={}", self.path(value).display())
            }
            _ => arg.to_owned(),
        }
    }

    /// `resetctl` with nothing inherited but PATH, and a home inside the root.
    fn command(&self) -> Command {
        let mut cmd = Command::new(bin());
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("/home"))
            .env("XDG_CONFIG_HOME", self.path("/home/.config"))
            .env("XDG_DATA_HOME", self.path("/home/.local/share"))
            // The system-wide file a command without --config reads
            // (/etc/resetctl/config.toml), moved under the root like every
            // other path; read from /etc itself by system_config:: and
            // deployment_as_pasted::.
            .env("RESETCTL_CONFIG", self.path(CONFIG))
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `cmd` to completion (killed after 60 s: nothing here should take long).
    fn run(&self, cmd: &mut Command) -> Ran {
        let out = self.path("/run/out");
        let err = self.path("/run/err");
        let mut child = cmd
            .stdout(fs::File::create(&out).unwrap())
            .stderr(fs::File::create(&err).unwrap())
            .spawn()
            .expect("spawn resetctl");
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Ran {
            code: status.code().unwrap_or(-1),
            stdout: fs::read_to_string(&out).unwrap_or_default(),
            stderr: fs::read_to_string(&err).unwrap_or_default(),
        }
    }

    /// Runs one command of the guide: `serve`, a long-running `webhook
    /// deliver` and the `webhook` commands that contact a target parse up to
    /// `--help` (exit 0); `sync` runs with `--check` instead of `--once` or
    /// `--daemon` (it resolves every setting without fetching; exit 0);
    /// anything else runs and must not be a usage error (64).
    fn check(&self, invocation: &Invocation) -> Result<(), String> {
        let args: Vec<String> = invocation.args.iter().map(|a| self.map(a)).collect();
        let mut path = Vec::new();
        let mut i = 0;
        while i < args.len() && path.len() < 2 {
            let arg = args[i].as_str();
            if arg.starts_with('-') {
                i += if GLOBAL_VALUE_FLAGS.contains(&arg) {
                    2
                } else {
                    1
                };
                continue;
            }
            path.push(arg);
            i += 1;
        }
        let has = |flag: &str| args.iter().any(|a| a == flag);
        let (args, expect_zero) = match path.as_slice() {
            ["serve", ..] => ([args.clone(), vec!["--help".into()]].concat(), true),
            ["webhook", "add" | "test", ..] => {
                ([args.clone(), vec!["--help".into()]].concat(), true)
            }
            ["webhook", "deliver", ..] if !has("--once") => {
                ([args.clone(), vec!["--help".into()]].concat(), true)
            }
            ["sync", ..] => (
                args.iter()
                    .map(|a| match a.as_str() {
                        "--once" | "--daemon" => "--check".to_owned(),
                        _ => a.clone(),
                    })
                    .collect(),
                true,
            ),
            _ => (args.clone(), false),
        };
        let env = invocation
            .env
            .iter()
            .map(|(name, value)| (name, self.map(value)));
        let ran = self.run(self.command().envs(env).args(&args));
        let ok = if expect_zero {
            ran.code == 0
        } else {
            ran.code >= 0 && ran.code != 64
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{}\n  ran: {:?} resetctl {}\n  exit {}\n  stdout: {}\n  stderr: {}",
                invocation.at,
                invocation.env,
                args.join(" "),
                ran.code,
                ran.stdout.trim(),
                ran.stderr.trim()
            ))
        }
    }
}

/// Starts `serve`, waits until it answers `GET /healthz` (it binds before
/// it builds the quota, so listening alone proves little), stops it again.
fn serve_starts(mut cmd: Command) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("stderr");
    let mut child = cmd
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&err).unwrap())
        .spawn()
        .expect("spawn resetctl serve");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut addr: Option<SocketAddr> = None;
    let result = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Err(format!(
                "exited ({status}): {}",
                fs::read_to_string(&err).unwrap_or_default().trim()
            ));
        }
        if Instant::now() > deadline {
            break Err("no answer to GET /healthz within 30 s".into());
        }
        match addr {
            None => {
                if let Ok(line) = rx.recv_timeout(Duration::from_millis(20)) {
                    addr = line
                        .strip_prefix("listening on http://")
                        .and_then(|a| a.trim().parse().ok());
                }
            }
            Some(addr) if answers_http(addr) => break Ok(()),
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Whether `GET /healthz` at `addr` gets an HTTP answer (any status).
fn answers_http(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if stream.write_all(request).is_err() {
        return false;
    }
    let mut head = Vec::new();
    let _ = stream.take(9).read_to_end(&mut head);
    head == b"HTTP/1.1 "
}

#[test]
fn the_shell_reader_finds_the_commands_a_shell_would_run() {
    let found = invocations(
        "sudo -u resetctl resetctl --config '/etc/a b.toml' status --json | jq .sync # resetctl x\n\
         resetctl completions bash 2>&1 > /etc/bash_completion.d/resetctl\n\
         sudo -u resetctl flock /var/lib/resetctl/resetctl.lock tar -czf - . | sudo tee \"$(date +%F)\"\n\
         X=1 /usr/local/bin/resetctl \\\n  sync --once && useradd resetctl",
        "t",
    );
    let args: Vec<(String, Vec<String>)> = found.into_iter().map(|i| (i.binary, i.args)).collect();
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        args,
        [
            (
                "resetctl".to_owned(),
                words(&["--config", "/etc/a b.toml", "status", "--json"])
            ),
            ("resetctl".to_owned(), words(&["completions", "bash"])),
            (INSTALLED.to_owned(), words(&["sync", "--once"])),
        ]
    );
}

/// Issue 39, item 15: the guide's Redis check fails when Redis does not
/// answer `PONG`. Its `redis-cli` line, as pasted (bash `-e -o pipefail`,
/// as the guide's blocks run), against a real Redis with the guide's
/// password: it prints `PONG` and succeeds; with another password it fails.
#[test]
fn the_guides_redis_check_passes_only_on_pong() {
    let line = blocks()
        .into_iter()
        .filter(|b| b.kind == "sh")
        .flat_map(|b| b.text.lines().map(str::to_owned).collect::<Vec<_>>())
        .find(|l| l.starts_with("redis-cli"))
        .expect("the guide checks its Redis with redis-cli");
    let redis = crate::util::redis::Redis::start();
    // The guide's password, set once the harness has seen the server answer.
    let set = Command::new("redis-cli")
        .args([
            "-p",
            &redis.port.to_string(),
            "CONFIG",
            "SET",
            "requirepass",
            "CHANGE-ME",
        ])
        .output()
        .expect("redis-cli (apt-get install redis-tools)");
    assert_eq!(String::from_utf8_lossy(&set.stdout), "OK\n", "{set:?}");
    let pasted = line.replace("10.0.0.20:6379", &format!("127.0.0.1:{}", redis.port));
    let run = |script: &str| {
        Command::new("bash")
            .args(["-e", "-o", "pipefail", "-c", script])
            .output()
            .expect("bash")
    };
    let good = run(&pasted);
    assert!(
        good.status.success() && String::from_utf8_lossy(&good.stdout) == "PONG\n",
        "{pasted}: {good:?}"
    );
    let wrong = run(&pasted.replace("CHANGE-ME", "WRONG"));
    assert!(
        !wrong.status.success(),
        "{pasted} with a wrong password: {wrong:?}"
    );
}
