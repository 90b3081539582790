//! `make run`'s first page (issue 29, item 1): the Makefile's `demo-data`
//! step, which `make run` runs before serving, run here against the binary
//! under test on a fresh data dir, must leave a page that answers Yes or
//! No, not Unknown; and a second `make run` more than 30 hours later (when
//! `status` exits 1 for the old check) must still work and answer Yes or
//! No again. The make step itself is what runs, not a copy of it.

use std::process::Command;

use crate::util::server::Server;
use crate::util::{bin, repo_root, World};

/// `make demo-data` on `w`'s data dir with the clock at `now`.
fn demo_data(w: &World, now: &str) -> String {
    let out = Command::new("make")
        .arg("-C")
        .arg(repo_root())
        .args(["--no-print-directory", "demo-data"])
        .arg(format!("BIN={}", bin()))
        .arg(format!("DATA_DIR={}", w.data_dir().display()))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", w.path("home"))
        .env(
            "RESETCTL_CONFIG",
            crate::util::own_config_path(w.tmp.path()),
        )
        .env("RESETCTL_NOW", now)
        .output()
        .expect("run make (apt-get install make)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "make demo-data at {now}:\n{text}");
    text
}

/// The verdict and whether the operator note shows, of the page at `now`.
fn page_at(w: &World, now: &str) -> (String, bool) {
    let s = Server::start(w, &["--now", now], &[]);
    let page = s.get("/en/").text();
    let verdict = page
        .split("data-verdict=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no verdict:\n{page}"))
        .to_owned();
    let note_shown = page.contains(r#"id="operator-note" role="note">"#);
    (verdict, note_shown)
}

#[test]
fn make_run_shows_a_yes_or_no_on_its_first_page_and_a_day_later() {
    let w = World::new();
    let first = "2026-11-25T09:00:00.000Z";
    let out = demo_data(&w, first);
    assert!(out.contains("seeding"), "{out}");
    assert_eq!(page_at(&w, first), ("no".to_owned(), false), "{out}");

    // Two days on, before make: the page says Unknown and tells the
    // operator what to run, and `status` exits 1.
    let later = "2026-11-27T09:00:00.000Z";
    assert_eq!(page_at(&w, later), ("unknown".to_owned(), true));
    w.run(&["--now", later, "status"]).code(1);
    let out = demo_data(&w, later);
    assert!(
        !out.contains("seeding"),
        "seeds only an empty data dir:\n{out}"
    );
    assert_eq!(page_at(&w, later), ("no".to_owned(), false), "{out}");
}

/// Issue 39, item 14: `make run` serves with a quota that lets a newcomer
/// try every example of the README, docs/api.md and the docs page (twice over), says
/// which quota it uses, and how to try the public one. The make step that
/// `make run` ends with is what runs, on the binary under test.
#[test]
fn make_run_lets_a_newcomer_try_every_example_and_says_its_quota() {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let w = World::new();
    w.seed_bundled();
    // In a process group of its own: make runs `resetctl serve` as its
    // child, which killing make alone would leave running.
    let mut make = Command::new("make")
        .arg("-C")
        .arg(repo_root())
        .args(["--no-print-directory", "serve-demo"])
        .arg(format!("BIN={}", bin()))
        .arg(format!("DATA_DIR={}", w.data_dir().display()))
        .arg("LISTEN=127.0.0.1:0")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", w.path("home"))
        .env(
            "RESETCTL_CONFIG",
            crate::util::own_config_path(w.tmp.path()),
        )
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run make (apt-get install make)");
    /// Ends make and what it runs (its whole process group), then reaps make.
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let group = format!("-{}", self.0.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = self.0.wait();
        }
    }
    let stdout = std::io::BufReader::new(make.stdout.take().unwrap());
    let make = Kill(make);
    let mut said = String::new();
    let mut addr = None;
    for line in stdout.lines().map_while(Result::ok) {
        if let Some(at) = line.strip_prefix("listening on http://") {
            addr = Some(at.parse::<std::net::SocketAddr>().unwrap());
            break;
        }
        said.push_str(&line);
        said.push('\n');
    }
    let addr = addr.unwrap_or_else(|| panic!("make serve-demo did not listen:\n{said}"));
    assert!(
        said.contains("a demo quota of 1000/3600") && said.contains("make run RATE_LIMIT=20/3600"),
        "{said}"
    );
    let examples: usize = ["README.md", "docs/api.md", "src/api/assets/docs.html"]
        .iter()
        .map(|f| {
            std::fs::read_to_string(repo_root().join(f))
                .unwrap()
                .matches("curl ")
                .count()
        })
        .sum();
    assert!(examples > 0);
    for n in 0..2 * examples {
        let reply = crate::util::server::raw_request(addr, "GET", "/openapi/v1/records", &[]);
        assert_eq!(
            reply.status,
            200,
            "request {n}: {:?}",
            reply.header("retry-after")
        );
        assert_eq!(reply.header("x-ratelimit-limit"), Some("1000"));
    }
    drop(make);
}
