//! `serve` and its service manager, in systemd's protocols, with the test
//! in the manager's place: readiness and stopping on a `NOTIFY_SOCKET` the
//! test listens on, and socket activation (`LISTEN_FDS`) with the test
//! holding the socket across a restart behind a real nginx, as a `.socket`
//! unit holds it.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::util::nginx::Nginx;
use crate::util::server::Server;
use crate::util::{bin, Run, World};

const LATEST: &str = "/openapi/v1/records/latest";

mod reloads;

/// Sends `s` a raw SIGHUP (`kill -HUP`, not `systemctl reload`: no
/// `--check` runs first) and returns the two notices it answers with, the
/// first (`RELOADING=1…`, waited for as `what`), then `READY=1…`.
fn hang_up(s: &Server, socket: &UnixDatagram, what: &str) -> (String, String) {
    let pid = s.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap()
        .success());
    let reloading = next_notice(socket, what);
    (reloading, next_notice(socket, "READY=1 after the reload"))
}

/// The next datagram on `socket`, as text; panics after 10 s with `what`.
fn next_notice(socket: &UnixDatagram, what: &str) -> String {
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 4096];
    let n = socket
        .recv(&mut buf)
        .unwrap_or_else(|e| panic!("no notice ({what}) on NOTIFY_SOCKET within 10 s: {e}"));
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn serve_says_it_is_ready_once_it_answers_and_says_it_stops() {
    let w = World::new();
    w.seed_bundled();
    let path = w.path("notify.sock");
    let socket = UnixDatagram::bind(&path).unwrap();
    let mut s = Server::start(&w, &[], &[("NOTIFY_SOCKET", path.to_str().unwrap())]);
    let ready = next_notice(&socket, "READY=1");
    assert_eq!(
        ready,
        format!("READY=1\nSTATUS=serving on http://{}\n", s.addr),
        "the first notice"
    );
    // Ready means answering, with the published records: no retry, no 503.
    let reply = s.get(LATEST);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(s.terminate().success());
    assert_eq!(
        next_notice(&socket, "STOPPING=1"),
        "STOPPING=1\nSTATUS=stopping: finishing in-flight requests\n"
    );
}

/// `resetctl --data-dir DIR` (a subcommand to add) with `socket` passed
/// as a service manager passes it: fd 3, `LISTEN_FDS=1`,
/// `LISTEN_FDNAMES=name` and `LISTEN_PID` naming the process (a shell sets
/// it to its own pid and execs, so the pid is resetctl's; the socket
/// arrives as the shell's stdin), or `listen_pid` when given (another
/// process's, as a wrapper that runs resetctl without `exec` passes it).
fn passing(w: &World, socket: OwnedFd, name: &str, listen_pid: Option<&str>) -> Command {
    let script = match listen_pid {
        None => r#"LISTEN_PID=$$; export LISTEN_PID; exec "$@" 3<&0 </dev/null"#.to_owned(),
        Some(pid) => format!(r#"LISTEN_PID={pid}; export LISTEN_PID; exec "$@" 3<&0 </dev/null"#),
    };
    let mut cmd = Command::new("sh");
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", w.path("home"))
        .env(
            "RESETCTL_CONFIG",
            crate::util::own_config_path(w.tmp.path()),
        )
        .env("LISTEN_FDS", "1")
        .env("LISTEN_FDNAMES", name)
        .args(["-c", &script, "sh", bin(), "--data-dir"])
        .arg(w.data_dir())
        .stdin(Stdio::from(socket));
    cmd
}

/// `resetctl … serve ARGS` with `listener` passed as the API's socket.
fn serve_on_passed(w: &World, listener: &std::net::TcpListener, args: &[&str]) -> Server {
    let cmd = passing(w, listener.try_clone().unwrap().into(), "api", None);
    let s = Server::start_with(cmd, args);
    assert_eq!(
        s.addr,
        listener.local_addr().unwrap(),
        "serve listens on the socket it was passed, not on --listen"
    );
    s
}

#[test]
fn a_restart_on_a_passed_socket_drops_nothing_through_nginx() {
    let w = World::new();
    w.seed_bundled();
    // The socket unit's socket: it outlives every serve process.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let args = ["--no-rate-limit", "--flood-guard", "off"];
    let mut first = serve_on_passed(&w, &listener, &args);
    let nginx = Nginx::proxy_to(listener.local_addr().unwrap(), "127.0.0.2");
    let url = nginx.url(LATEST);
    // Four clients polling through nginx until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (stop, seen, url) = (stop.clone(), seen.clone(), url.clone());
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::builder()
                    .timeout(Duration::from_secs(20))
                    .build()
                    .unwrap();
                while !stop.load(Ordering::Relaxed) {
                    let answer = match client.get(&url).send() {
                        Ok(reply) => reply.status().as_u16().to_string(),
                        Err(e) => format!("error: {e}"),
                    };
                    seen.lock().unwrap().push(answer);
                }
            })
        })
        .collect();
    let mut answered = Vec::new();
    // Three times systemctl restart: stop (SIGTERM, drain, exit), then
    // start anew, while requests keep arriving and queue on the socket.
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(400));
        assert!(first.terminate().success());
        answered.push(seen.lock().unwrap().len());
        std::thread::sleep(Duration::from_millis(200));
        first = serve_on_passed(&w, &listener, &args);
    }
    std::thread::sleep(Duration::from_millis(400));
    stop.store(true, Ordering::Relaxed);
    clients.into_iter().for_each(|c| c.join().unwrap());
    let seen = seen.lock().unwrap();
    let not_ok: Vec<&String> = seen.iter().filter(|a| *a != "200").collect();
    assert!(
        not_ok.is_empty(),
        "{} of {} requests across three restarts were not answered 200: {:?}",
        not_ok.len(),
        seen.len(),
        &not_ok[..not_ok.len().min(10)]
    );
    answered.push(seen.len());
    assert!(
        answered[0] > 0 && answered.windows(2).all(|w| w[1] > w[0]),
        "requests answered by each of the four processes (running totals: {answered:?})"
    );
}

/// `GET /openapi/v1/records/latest` from `from` (a loopback address):
/// the status and the quota headers, or the error.
fn counted_get(client: &reqwest::blocking::Client, url: &str) -> Result<(u16, String), String> {
    let reply = client.get(url).send().map_err(|e| e.to_string())?;
    let header = |name: &str| {
        reply
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned()
    };
    Ok((
        reply.status().as_u16(),
        format!(
            "{}/{}",
            header("x-ratelimit-limit"),
            header("x-ratelimit-remaining")
        ),
    ))
}

fn client_from(address: &str) -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .local_address(address.parse::<std::net::IpAddr>().unwrap())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

#[test]
fn a_sighup_applies_a_new_quota_under_load_refuses_a_bad_file_and_names_what_waits() {
    let w = World::new();
    w.seed_bundled();
    let config = w.path("config.toml");
    std::fs::write(&config, "rate-limit = \"20/3600\"\n").unwrap();
    let notify = w.path("notify.sock");
    let socket = UnixDatagram::bind(&notify).unwrap();
    let mut cmd = w.cmd();
    cmd.arg("--config")
        .arg(&config)
        .env("NOTIFY_SOCKET", &notify);
    let mut s = Server::start_with(cmd, &["--flood-guard", "off"]);
    assert!(next_notice(&socket, "READY=1").starts_with("READY=1\n"));
    let url = s.url(LATEST);
    let me = client_from("127.0.0.1");
    for left in (15..20).rev() {
        assert_eq!(counted_get(&me, &url), Ok((200, format!("20/{left}"))));
    }
    // Another client polls all along: nothing it sends is dropped.
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let load = {
        let (stop, sent, url) = (stop.clone(), sent.clone(), url.clone());
        std::thread::spawn(move || {
            let other = client_from("127.0.0.3");
            let mut seen = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                seen.push(counted_get(&other, &url));
                sent.fetch_add(1, Ordering::Relaxed);
            }
            seen
        })
    };
    // Waits until the load has sent 20 more requests.
    let more_load = || {
        let from = sent.load(Ordering::Relaxed);
        crate::util::wait_until(
            Duration::from_secs(20),
            "20 more requests of the load",
            || sent.load(Ordering::Relaxed) >= from + 20,
        );
    };
    let hangup = |what: &str| {
        more_load();
        let (reloading, ready) = hang_up(&s, &socket, what);
        assert!(
            reloading.starts_with("RELOADING=1\nMONOTONIC_USEC="),
            "{reloading:?}"
        );
        assert_eq!(
            ready,
            format!("READY=1\nSTATUS=serving on http://{}\n", s.addr)
        );
    };

    // A new policy, a new name for the pages, and a key that waits for a restart.
    let page = || s.get("/en/").text();
    assert!(
        page().contains("id=\"site-name\">resetctl<"),
        "the pages' name before"
    );
    std::fs::write(
        &config,
        "rate-limit = \"5/60\"\nsite-name = \"Resets\"\nheader-timeout = 20\n",
    )
    .unwrap();
    hangup("RELOADING=1");
    assert_eq!(
        counted_get(&me, &url),
        Ok((200, "5/4".to_owned())),
        "the new quota, counted afresh"
    );
    // The log reaches the test through a reader thread: waited for, not
    // read at once (on a busy machine it lags the READY=1 notice).
    let said = |line: &str| s.wait_for_log(line, Duration::from_secs(10));
    said("settings read again: applied quota (counted afresh) and flood guard, site-name");
    assert!(
        page().contains("id=\"site-name\">Resets<"),
        "the pages are named anew"
    );
    said("header-timeout changed to 20; it applies at the next restart (serving with 10)");

    // A file that does not pass changes nothing.
    std::fs::write(&config, "rate-limit = \"not-a-rate\"\n").unwrap();
    hangup("RELOADING=1 for the bad file");
    assert_eq!(counted_get(&me, &url), Ok((200, "5/3".to_owned())));
    said("reload refused, the running settings are kept: ");
    assert!(s.log_text().contains("rate-limit"), "{}", s.log_text());

    more_load();
    stop.store(true, Ordering::Relaxed);
    let seen = load.join().unwrap();
    let bad: Vec<_> = seen
        .iter()
        .filter(|r| !matches!(r, Ok((200 | 429, q)) if q.starts_with("20/") || q.starts_with("5/")))
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {} requests under the reloads went wrong: {bad:?}",
        bad.len(),
        seen.len()
    );
    assert!(s.child.try_wait().unwrap().is_none(), "serve still runs");
}

/// Runs `cmd` to its end, which must come within 20 s (else it is killed
/// and reported as exit code -1: it served instead of refusing).
fn finished(mut cmd: Command) -> Run {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn resetctl");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    Run::from(child.wait_with_output().unwrap())
}

/// The line of `stderr` that is the exit message (`resetctl: …`).
fn exit_message(run: &Run) -> &str {
    run.stderr
        .lines()
        .find(|l| l.starts_with("resetctl: "))
        .unwrap_or_else(|| panic!("no exit message (exit {}):\n{}", run.code, run.stderr))
}

/// `f()` on a thread of its own, which must return within `limit`; panics
/// naming `what` otherwise.
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what}: nothing within {limit:?}"))
}

#[test]
fn socket_activation_variables_of_another_process_are_ignored() {
    let w = World::new();
    w.seed_bundled();
    // A wrapper that runs resetctl without `exec`: LISTEN_PID is the
    // wrapper's (here pid 1's), so fd 3 and the names are not ours.
    let theirs = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let cmd = passing(&w, theirs.try_clone().unwrap().into(), "api", Some("1"));
    let s = Server::start_with(cmd, &[]);
    assert_ne!(
        s.addr,
        theirs.local_addr().unwrap(),
        "serve listens on --listen, not on a socket passed to another process"
    );
    let reply = s.get(LATEST);
    assert_eq!(reply.status, 200, "{}", reply.text());
    let log = s.log_text();
    assert!(
        log.contains(
            "LISTEN_FDS=1 names process 1, not this one (",
        ) && log.contains("): ignored, as sd_listen_fds(3) says; a wrapper script must `exec resetctl` for socket activation"),
        "{log}"
    );
}

/// What `serve` does with `socket` passed as the API's: it must refuse to
/// start, with exit 71 (which `Restart=on-failure` retries; 64 is in the
/// unit's `RestartPreventExitStatus=`), and never say READY=1.
fn refused_socket(socket: OwnedFd) -> (Run, Option<String>) {
    let w = World::new();
    w.seed_bundled();
    let notify = w.path("notify.sock");
    let manager = UnixDatagram::bind(&notify).unwrap();
    let mut cmd = passing(&w, socket, "api", None);
    cmd.env("NOTIFY_SOCKET", &notify)
        .args(["serve", "--listen", "127.0.0.1:0"]);
    let run = finished(cmd);
    manager.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    let notice = manager
        .recv(&mut buf)
        .ok()
        .map(|n| String::from_utf8_lossy(&buf[..n]).into_owned());
    (run, notice)
}

#[test]
fn a_passed_connection_is_refused_not_served_on() {
    // An Accept=yes socket unit passes each connection, not the listener.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (connection, _) = listener.accept().unwrap();
    let (run, notice) = refused_socket(connection.into());
    assert_eq!(run.code, 71, "{}", run.stderr);
    assert_eq!(
        exit_message(&run),
        "resetctl: the socket passed as fd 3 (api) is a connection, not a listening socket: \
         the .socket unit needs Accept=no (an Accept=yes unit passes each connection)"
    );
    assert_eq!(notice, None, "nothing is told to the service manager");
}

#[test]
fn a_passed_socket_that_does_not_listen_is_refused_not_served_on() {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
    let (run, notice) = refused_socket(socket.into());
    assert_eq!(run.code, 71, "{}", run.stderr);
    assert_eq!(
        exit_message(&run),
        "resetctl: the socket passed as fd 3 (api) is not listening (no listen(2) on it): \
         nothing could connect to it"
    );
    assert_eq!(notice, None, "nothing is told to the service manager");
}

#[test]
fn a_passed_admin_socket_alone_is_the_admin_listener() {
    let w = World::new();
    w.seed_bundled();
    let admin = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let admin_at = admin.local_addr().unwrap();
    let mut cmd = passing(&w, admin.try_clone().unwrap().into(), "admin", None);
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut s = Server {
        child: cmd.spawn().expect("spawn resetctl serve"),
        addr: "0.0.0.0:0".parse().unwrap(),
        admin: None,
        log: Default::default(),
    };
    let mut stdout = std::io::BufReader::new(s.child.stdout.take().unwrap());
    let mut line = || {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        line
    };
    let api_line = line();
    assert_ne!(
        api_line,
        format!("listening on http://{admin_at}\n"),
        "the API listens on the socket named \"admin\""
    );
    s.addr = api_line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("{api_line:?}"))
        .parse()
        .unwrap();
    assert_eq!(line(), format!("admin listening on http://{admin_at}\n"));
    s.admin = Some(admin_at);
    assert_eq!(
        s.admin_get("/export.json", &[]).status,
        200,
        "the admin routes on the admin socket"
    );
    assert_eq!(s.get("/export.json").status, 404, "and not on the API's");
    assert_eq!(s.get(LATEST).status, 200);
}

#[test]
fn ready_is_said_only_once_the_data_is_loaded() {
    let w = World::new();
    w.seed_bundled();
    let notify = w.path("notify.sock");
    let manager = UnixDatagram::bind(&notify).unwrap();
    let trace = w.path("trace");
    // The first load of the published snapshot stops where it has loaded
    // it, before serve goes on.
    let _s = Server::start(
        &w,
        &[],
        &[
            ("NOTIFY_SOCKET", notify.to_str().unwrap()),
            ("RESETCTL_TEST_TRACE", trace.to_str().unwrap()),
            ("RESETCTL_TEST_PAUSE_AT", "reload:applied"),
        ],
    );
    crate::util::wait_until(Duration::from_secs(20), "the first load", || {
        std::fs::read_to_string(&trace).is_ok_and(|t| t.contains("reload:applied"))
    });
    manager.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    if let Ok(n) = manager.recv(&mut buf) {
        panic!(
            "said before the data was loaded: {:?}",
            String::from_utf8_lossy(&buf[..n])
        );
    }
}

#[test]
fn a_service_manager_that_does_not_read_never_stops_serving() {
    let w = World::new();
    w.seed_bundled();
    let notify = w.path("notify.sock");
    let _manager = UnixDatagram::bind(&notify).unwrap();
    // The manager's queue, filled up, as a stuck service manager's is.
    let filler = UnixDatagram::unbound().unwrap();
    filler.set_nonblocking(true).unwrap();
    let mut queued = 0;
    loop {
        match filler.send_to(b"STATUS=filler\n", &notify) {
            Ok(_) => queued += 1,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("filling the queue: {e}"),
        }
    }
    assert!(queued > 0);
    let mut s = Server::start(&w, &[], &[("NOTIFY_SOCKET", notify.to_str().unwrap())]);
    let addr = s.addr;
    let reply = within(
        Duration::from_secs(10),
        "GET with NOTIFY_SOCKET's queue full",
        move || crate::util::server::raw_request(addr, "GET", LATEST, &[]),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    s.wait_for_log(
        "cannot tell the service manager READY=1 (NOTIFY_SOCKET ",
        Duration::from_secs(10),
    );
    assert!(
        s.log_text().contains(
            "notify.sock): its queue is full (the service manager is not reading); dropped, serving goes on"
        ),
        "{}",
        s.log_text()
    );
    let pid = s.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "serve did not stop within 15 s of SIGTERM with NOTIFY_SOCKET's queue full"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn the_sync_daemon_refuses_a_standalone_data_dir_as_sync_once_does() {
    let w = World::new();
    w.seed_bundled();
    let upstream = ["--upstream", "http://127.0.0.1:9/records.json"];
    let once = w.run_refused(&[&["sync", "--once"][..], &upstream].concat());
    let daemon = w.run_refused(&[&["sync", "--daemon"][..], &upstream].concat());
    assert_eq!(once.code, 64, "{}", once.stderr);
    assert_eq!(daemon.code, 64, "sync --daemon: {}", daemon.stderr);
    assert_eq!(exit_message(&daemon), exit_message(&once));
    assert!(
        exit_message(&once).starts_with("resetctl: ")
            && exit_message(&once)
                .contains(" holds a standalone instance (seeded history or an operator ledger)"),
        "{}",
        once.stderr
    );
}
