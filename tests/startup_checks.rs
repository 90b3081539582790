//! What an operator gets from a data dir or a setting that is wrong: a
//! clear exit code that says what to run, before anything listens, and a
//! server that starts on what can still be served.

use std::time::Duration;

use crate::util::server::Server;
use crate::util::World;

const NOW: &str = "2026-11-20T10:00:00.000Z";

fn three_versions() -> World {
    let w = World::new();
    w.seed_bundled();
    for minute in ["01", "02"] {
        w.run(&[
            "--now",
            &format!("2026-11-20T10:{minute}:00.000Z"),
            "publish",
        ])
        .success();
    }
    w
}

#[test]
fn a_pointer_to_a_missing_or_broken_version_names_the_newest_good_one() {
    let w = three_versions();
    let snapshots = w.data_dir().join("snapshots");
    // The pointer names a version that is not there.
    std::fs::write(snapshots.join("CURRENT"), "9\n").unwrap();
    let status = w.run(&["--now", NOW, "status"]).code(65);
    assert!(
        status.stderr.contains("no snapshot with sequence 9")
            && status.stderr.contains(
                "the newest snapshot that loads is 3: make it current with `resetctl snapshots rollback 3`"
            ),
        "{}",
        status.stderr
    );
    w.run(&["export"]).code(65);
    // The server starts on the newest good version and says so.
    let s = Server::start(&w, &["--now", NOW], &[]);
    let health = s.get("/healthz");
    assert_eq!(health.status, 200);
    let health = health.json();
    assert_eq!(health["sequence"], 3);
    assert!(
        health["warning"]
            .as_str()
            .unwrap()
            .contains("serving snapshot 3, the newest that loads. Make it current with `resetctl snapshots rollback 3`"),
        "{health}"
    );
    assert_eq!(s.get("/openapi/v1/records").status, 200);
    assert!(s.log_text().contains("ERROR"), "{}", s.log_text());
    // Repaired, the warning goes.
    w.run(&["snapshots", "rollback", "3"]).success();
    s.wait_for("/healthz", Duration::from_secs(10), |r| {
        r.json().get("warning").is_none()
    });
    drop(s);
    // The pointer's version is cut short: the one before is the newest good one.
    std::fs::write(
        snapshots.join("000000000003.json"),
        &std::fs::read(snapshots.join("000000000003.json")).unwrap()[..100],
    )
    .unwrap();
    let status = w.run(&["--now", NOW, "status"]).code(65);
    assert!(
        status.stderr.contains("`resetctl snapshots rollback 2`"),
        "{}",
        status.stderr
    );
    let s = Server::start(&w, &["--now", NOW], &[]);
    assert_eq!(s.get("/healthz").json()["sequence"], 2);
}

#[test]
fn trusting_every_address_is_refused() {
    let w = World::new();
    for cidr in ["0.0.0.0/0", "::/0"] {
        let refused = w
            .run_refused(&["serve", "--listen", "127.0.0.1:0", "--trust-proxy", cidr])
            .code(64);
        assert!(
            refused.stderr.contains("holds every address"),
            "{}",
            refused.stderr
        );
        assert_eq!(refused.stdout, "", "nothing listened");
    }
    let config = w.path("config.toml");
    std::fs::write(&config, "trust-proxy = [\"10.0.0.0/8\", \"::/0\"]\n").unwrap();
    let refused = w
        .run_refused(&[
            "--config",
            config.to_str().unwrap(),
            "serve",
            "--listen",
            "127.0.0.1:0",
        ])
        .code(64);
    assert!(
        refused.stderr.contains("holds every address"),
        "{}",
        refused.stderr
    );
}

/// Issue 39, item 5: ranges that together hold every address trust
/// everyone as `0.0.0.0/0` does; so does the IPv4-mapped range of every
/// IPv4 address. Refused in every layer, whatever the split.
#[test]
fn ranges_that_together_hold_every_address_are_refused() {
    let w = World::new();
    let serve = ["serve", "--listen", "127.0.0.1:0"];
    for ranges in [
        &["0.0.0.0/1", "128.0.0.0/1"][..],
        &["10.0.0.0/8", "0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/1"],
        &["::/1", "8000::/1"],
        &["::ffff:0:0/96"],
    ] {
        let mut args = serve.to_vec();
        for range in ranges {
            args.extend(["--trust-proxy", range]);
        }
        let refused = w.run_refused(&args).code(64);
        assert!(
            refused.stderr.contains("holds every address"),
            "{ranges:?}: {}",
            refused.stderr
        );
        assert_eq!(refused.stdout, "", "nothing listened");
        let mut env = w.cmd();
        env.env("RESETCTL_TRUST_PROXY", ranges.join(","));
        let refused = crate::util::Run::from(env.arg("status").output().unwrap()).code(64);
        assert!(
            refused
                .stderr
                .contains("RESETCTL_TRUST_PROXY: trust-proxy:")
                && refused.stderr.contains("holds every address"),
            "{ranges:?}: {}",
            refused.stderr
        );
    }
    // Half the addresses are not every address.
    w.seed_bundled();
    let s = Server::start(
        &w,
        &[
            "--now",
            NOW,
            "--trust-proxy",
            "0.0.0.0/1",
            "--trust-proxy",
            "::/1",
        ],
        &[],
    );
    assert_eq!(s.get("/healthz").status, 200);
}

#[test]
fn a_bad_redis_url_is_refused_before_anything_listens() {
    let w = World::new();
    for url in [
        "redis://:secret@host:notaport/0",
        "redis+sentinel://:secret@127.0.0.1:1,127.0.0.1:2",
        "rediss+cluster://:secret@127.0.0.1:1,127.0.0.1:notaport",
    ] {
        let refused = w
            .run_refused(&[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--rate-limit-store",
                url,
            ])
            .code(64);
        assert_eq!(refused.stdout, "", "{url}: nothing listened");
        assert!(
            refused.stderr.contains("bad Redis URL"),
            "{}",
            refused.stderr
        );
        assert!(!refused.stderr.contains("secret"), "{}", refused.stderr);
    }
}

#[test]
fn the_calendar_holds_the_first_two_hundred_events_of_its_list() {
    let up = crate::util::upstream::Upstream::start(crate::util::upstream::Behavior::Serve {
        body: crate::util::generated_document(500).into_bytes(),
        etag: None,
        last_modified: None,
    });
    let w = World::new();
    w.run(&[
        "--now",
        NOW,
        "sync",
        "--upstream",
        &up.url("/doc.json"),
        "--once",
    ])
    .success();
    let s = Server::start(&w, &["--now", NOW], &[]);
    let calendar = s.get("/openapi/v1/records.ics").text();
    assert_eq!(calendar.matches("BEGIN:VEVENT").count(), 200);
    assert!(calendar.len() < 200 * 1024, "{} bytes", calendar.len());
}

/// Issue 39, item 10: a rule between two keys holds on the merged
/// settings (a TLS file from the environment or the config file with the
/// TLS store URL given as a flag is one setting), while each value is
/// still checked in its own layer; an unknown config key suggests the
/// nearest one; a value error names the file; a missing --config is a
/// usage error.
#[test]
fn settings_from_several_layers_are_one_setting_and_errors_name_their_file() {
    let w = World::new();
    w.seed_bundled();
    let ca = w.path("ca.pem");
    std::fs::write(
        &ca,
        "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let store = ["status", "--rate-limit-store", "rediss://127.0.0.1:6380"];
    // The CA file from the environment, the store as a flag.
    let mut cmd = w.cmd();
    cmd.env("RESETCTL_REDIS_CA_FILE", &ca).args(store);
    let run = crate::util::Run::from(cmd.output().unwrap()).success();
    assert!(
        run.stdout.contains("rediss://127.0.0.1:6380"),
        "{}",
        run.stdout
    );
    // The same from the config file.
    let config = w.path("config.toml");
    std::fs::write(
        &config,
        format!("redis-ca-file = {:?}\n", ca.to_str().unwrap()),
    )
    .unwrap();
    let mut args = vec!["--config", config.to_str().unwrap()];
    args.extend(store);
    w.run(&args).success();
    // Each value is still checked where it is: a CA file that does not
    // exist is refused even with the store given as a flag.
    let mut cmd = w.cmd();
    cmd.env("RESETCTL_REDIS_CA_FILE", w.path("nope.pem"))
        .args(store);
    let run = crate::util::Run::from(cmd.output().unwrap()).code(64);
    assert!(run.stderr.contains("redis-ca-file"), "{}", run.stderr);
    // Files with no TLS store at all are still refused, naming the store.
    let mut cmd = w.cmd();
    cmd.env("RESETCTL_REDIS_CA_FILE", &ca).arg("status");
    let run = crate::util::Run::from(cmd.output().unwrap()).code(64);
    assert!(run.stderr.contains("memory"), "{}", run.stderr);

    // An unknown key suggests the nearest, and says where it is.
    std::fs::write(&config, "keep = 3\nlisen = \"127.0.0.1:9\"\n").unwrap();
    let run = w
        .run(&["--config", config.to_str().unwrap(), "status"])
        .code(64);
    assert!(
        run.stderr.contains(&format!(
            "config file {}: line 2, column 1: unknown key `lisen`; did you mean `listen`?",
            config.display()
        )),
        "{}",
        run.stderr
    );
    // A value error names the file it is in.
    std::fs::write(&config, "keep = 0\n").unwrap();
    let run = w
        .run(&["--config", config.to_str().unwrap(), "status"])
        .code(64);
    assert!(
        run.stderr.contains(&format!(
            "config file {}: keep must be at least 1",
            config.display()
        )),
        "{}",
        run.stderr
    );
    // A --config that names no file is a usage error.
    let run = w
        .run(&[
            "--config",
            w.path("missing.toml").to_str().unwrap(),
            "status",
        ])
        .code(64);
    assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
}

/// Issue 39, item 13: a mistyped data dir is found at once: `serve` says at
/// start that nothing is published and where it looked, a browser at `/`
/// gets a page saying so (not a JSON 503), and `status` names a data dir
/// that does not exist as such instead of offering to seed it.
#[test]
fn a_mistyped_data_dir_is_named_at_start_on_the_page_and_by_status() {
    let w = World::new();
    // The world's data dir does not exist until something is published.
    let typo = w.data_dir();
    let status = w.run(&["status"]).code(69);
    assert!(
        status
            .stderr
            .contains(&format!("the data dir {} does not exist", typo.display()))
            && !status.stderr.contains("resetctl seed"),
        "{}",
        status.stderr
    );
    let s = Server::start(&w, &["--now", NOW], &[]);
    let said = format!(
        "nothing is published in {} (it did not exist",
        typo.display()
    );
    crate::util::wait_until(Duration::from_secs(10), "the warning in the log", || {
        s.log_text().contains(&said)
    });
    for (path, words) in [
        ("/", "Nothing is published yet"),
        ("/zh/", "尚未发布任何内容"),
    ] {
        let page = s.request("GET", path, &[("Accept", "text/html")]);
        assert_eq!(page.status, 503, "{path}");
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert!(page.text().contains(words), "{path}: {}", page.text());
        assert!(page.header("content-security-policy").is_some());
    }
    // The API still answers its JSON 503.
    assert_eq!(
        s.get("/openapi/v1/records").json()["error"],
        "data_unavailable"
    );
}

/// `serve --check`, the config test: every effective setting with where it
/// came from and secrets redacted; a port a running server holds is
/// reported, not a failure; a listen address that is not this host's is
/// exit 71 and a bad setting 64, as serve would; nothing listens after.
#[test]
fn serve_check_tests_the_settings_as_serve_would_without_serving() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--now", NOW], &[]);
    let held = s.addr.to_string();
    let run = w.run(&["serve", "--listen", &held, "--check"]).success();
    assert!(
        run.stdout.contains(&format!("listen = {held}"))
            && run.stdout.contains("# flag")
            && run.stdout.contains("its port is in use now")
            && run.stdout.contains("# the settings are good"),
        "{}",
        run.stdout
    );
    // A quota store that does not answer is refused (69), as a reload
    // refuses it; its password is shown nowhere.
    let mut cmd = w.cmd();
    cmd.env(
        "RESETCTL_RATE_LIMIT_STORE",
        "redis://user:S3cretPw@127.0.0.1:1/0",
    )
    .args(["serve", "--listen", &held, "--check"]);
    let run = crate::util::Run::from(cmd.output().unwrap()).code(69);
    assert!(
        run.stdout
            .contains("rate-limit-store = redis://127.0.0.1:1/0")
            && run.stdout.contains("# env RESETCTL_RATE_LIMIT_STORE")
            && !run.stdout.contains("# the settings are good"),
        "{}",
        run.stdout
    );
    assert_eq!(
        exit_message(&run),
        "resetctl: the quota store at redis://127.0.0.1:1/0 does not answer: Connection refused (os error 111)"
    );
    assert!(!format!("{}{}", run.stdout, run.stderr).contains("S3cretPw"));
    let foreign = w
        .run(&["serve", "--listen", "192.0.2.1:8080", "--check"])
        .code(71);
    assert!(
        foreign.stderr.contains("is not this host's"),
        "{}",
        foreign.stderr
    );
    let bad = w
        .run(&["serve", "--max-connections", "0", "--check"])
        .code(64);
    assert!(
        bad.stderr.contains("max-connections must be at least 1"),
        "{}",
        bad.stderr
    );
    // Nothing was left listening: the port the check found free still is.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().to_string();
    drop(free);
    w.run(&["serve", "--listen", &port, "--check"]).success();
    std::net::TcpListener::bind(&port).expect("the checked port is free again");
}

/// The line of `run`'s stderr that is its exit message (`resetctl: …`).
#[track_caller]
fn exit_message(run: &crate::util::Run) -> &str {
    run.stderr
        .lines()
        .find(|l| l.starts_with("resetctl: "))
        .unwrap_or_else(|| panic!("no exit message (exit {}):\n{}", run.code, run.stderr))
}

/// `cmd` (a `resetctl` command of [`World::cmd`]) run as the user
/// `nobody`, as a unit's `User=` runs it: what the service user may
/// open and bind, not what root may.
fn as_nobody(cmd: &std::process::Command) -> std::process::Command {
    let mut wrapped = std::process::Command::new("setpriv");
    wrapped
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear()
        .stdin(std::process::Stdio::null());
    for (name, value) in cmd.get_envs() {
        if let Some(value) = value {
            wrapped.env(name, value);
        }
    }
    wrapped
}

/// Runs `cmd` to its end, which must come within 20 s (else it is killed
/// and reported as exit code -1: it served instead of refusing).
fn finished(mut cmd: std::process::Command) -> crate::util::Run {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn resetctl");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    crate::util::Run::from(child.wait_with_output().unwrap())
}

/// One bad configuration: what it is, how `serve` is run with it (as
/// root or as the service user), and what both start and `--check` say.
struct Bad {
    what: &'static str,
    as_service_user: bool,
    args: Vec<String>,
    config: &'static str,
    code: i32,
    first_line: String,
}

/// Issue 50, item 1: `serve --check` is start's own checks. For each bad
/// configuration, `serve` fails at start with the same exit code and the
/// same first line as `--check` (both as the user the unit runs them as),
/// and that is the documented refusal: nothing `--check` passes fails at
/// start, and nothing it refuses starts.
#[test]
fn serve_fails_at_start_exactly_as_serve_check_says() {
    let w = World::new();
    w.seed_bundled();
    // The service user reads the world's files, as `resetctl` reads /var/lib/resetctl.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(w.tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let unreadable = w.path("unreadable");
    std::fs::create_dir_all(unreadable.join("snapshots")).unwrap();
    std::fs::set_permissions(&unreadable, std::fs::Permissions::from_mode(0o700)).unwrap();
    let port = crate::util::redis::free_port();
    let at = format!("127.0.0.1:{port}");
    let config = w.path("bad.toml");
    let file = |why: &str| format!("resetctl: config file {}: {why}", config.display());
    let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let table = [
        Bad {
            what: "the admin listener on the API's address",
            as_service_user: false,
            args: args(&["--listen", &at, "--admin-listen", &at]),
            config: "",
            code: 64,
            first_line: format!(
                "resetctl: admin-listen {at} is the address of listen ({at}): the admin \
                 listener (metrics, healthz, export) needs a port of its own"
            ),
        },
        Bad {
            what: "a port below 1024 for the service user",
            as_service_user: true,
            args: args(&["--listen", "127.0.0.1:80"]),
            config: "",
            code: 71,
            first_line: "resetctl: cannot listen on 127.0.0.1:80: permission denied for user \
                         nobody (a port below 1024 needs root or CAP_NET_BIND_SERVICE: under \
                         systemd, resetctl-serve.socket can bind it, or a drop-in gives the \
                         capability)"
                .to_owned(),
        },
        Bad {
            what: "a typo in the log filter",
            as_service_user: false,
            args: args(&["--listen", "127.0.0.1:0"]),
            config: "log = \"info,resetctl::access=wanr\"\n",
            code: 64,
            first_line: file(
                "log: unknown directive `resetctl::access=wanr`: a directive is a level \
                 (error, warn, info, debug, trace or off) or TARGET=LEVEL \
                 (`info,resetctl::access=warn`)",
            ),
        },
        Bad {
            what: "a log filter that is one word but no level",
            as_service_user: false,
            args: args(&["--listen", "127.0.0.1:0", "--log", "inof"]),
            config: "",
            code: 64,
            first_line: "resetctl: log: unknown directive `inof`: a directive is a level \
                         (error, warn, info, debug, trace or off) or TARGET=LEVEL \
                         (`info,resetctl::access=warn`)"
                .to_owned(),
        },
        Bad {
            what: "a data dir the service user cannot read",
            as_service_user: true,
            args: args(&[
                "--data-dir",
                unreadable.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ]),
            config: "",
            code: 74,
            first_line: format!(
                "resetctl: the data dir {} cannot be read by user nobody: Permission denied \
                 (os error 13)",
                unreadable.display()
            ),
        },
        Bad {
            what: "a listen address that is no address",
            as_service_user: false,
            args: args(&["--listen", "nonsense"]),
            config: "",
            code: 64,
            first_line: "resetctl: listen \"nonsense\" is not an address like 127.0.0.1:8080 \
                         or localhost:8080: invalid socket address"
                .to_owned(),
        },
        Bad {
            what: "an address not this host's",
            as_service_user: false,
            args: args(&["--listen", "192.0.2.1:8080"]),
            config: "",
            code: 71,
            first_line: "resetctl: cannot listen on 192.0.2.1:8080: 192.0.2.1 is not this \
                         host's: Cannot assign requested address (os error 99)"
                .to_owned(),
        },
        Bad {
            what: "a value out of its range",
            as_service_user: false,
            args: args(&["--listen", "127.0.0.1:0", "--max-connections", "0"]),
            config: "",
            code: 64,
            first_line: "resetctl: max-connections must be at least 1".to_owned(),
        },
    ];
    let mut wrong = Vec::new();
    for bad in &table {
        std::fs::write(&config, bad.config).unwrap();
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
        let runs = [true, false].map(|checking| {
            let mut cmd = w.cmd();
            cmd.arg("--config")
                .arg(&config)
                .arg("serve")
                .args(&bad.args);
            if checking {
                cmd.arg("--check");
            }
            let cmd = if bad.as_service_user {
                as_nobody(&cmd)
            } else {
                cmd
            };
            finished(cmd)
        });
        let [check, start] = &runs;
        for (run, how) in [(check, "serve --check"), (start, "serve")] {
            let said = run
                .stderr
                .lines()
                .find(|l| l.starts_with("resetctl: "))
                .unwrap_or("(no exit message)");
            if (run.code, said) != (bad.code, bad.first_line.as_str()) {
                wrong.push(format!(
                    "{}: {how} exited {} with {said:?}\n  (expected {} with {:?})",
                    bad.what, run.code, bad.code, bad.first_line
                ));
            }
        }
        if !start.stdout.is_empty() {
            wrong.push(format!("{}: serve listened: {}", bad.what, start.stdout));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The one difference, documented: a quota store that does not answer
/// is refused by `--check` (and a reload), while a start serves and
/// answers data requests 503 until the store answers.
#[test]
fn a_store_that_does_not_answer_fails_the_check_and_a_start_serves_503() {
    let w = World::new();
    w.seed_bundled();
    let store = ["--rate-limit-store", "redis://127.0.0.1:1/0"];
    let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--check"];
    args.extend(store);
    let check = w.run(&args).code(69);
    assert_eq!(
        exit_message(&check),
        "resetctl: the quota store at redis://127.0.0.1:1/0 does not answer: Connection \
         refused (os error 111)"
    );
    let s = Server::start(&w, &["--now", NOW, store[0], store[1]], &[]);
    assert_eq!(
        s.get("/openapi/v1/records").json()["error"],
        "rate_limit_unavailable"
    );
    assert!(
        s.log_text().contains(
            "the quota store at redis://127.0.0.1:1/0 does not answer yet (Connection refused"
        ),
        "{}",
        s.log_text()
    );
}
