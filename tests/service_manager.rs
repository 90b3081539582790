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
use std::time::Duration;

use crate::util::nginx::Nginx;
use crate::util::server::Server;
use crate::util::{bin, World};

const LATEST: &str = "/openapi/v1/records/latest";

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

/// `resetctl … serve ARGS` with `listener` passed as a service manager
/// passes it: fd 3, `LISTEN_FDS=1`, `LISTEN_FDNAMES=api` and `LISTEN_PID`
/// naming the process (a shell sets it to its own pid and execs, so the
/// pid is resetctl's; the socket arrives as the shell's stdin).
fn serve_on_passed(w: &World, listener: &std::net::TcpListener, args: &[&str]) -> Server {
    let mut cmd = Command::new("sh");
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", w.path("home"))
        .env("LISTEN_FDS", "1")
        .env("LISTEN_FDNAMES", "api")
        .args([
            "-c",
            r#"LISTEN_PID=$$; export LISTEN_PID; exec "$@" 3<&0 </dev/null"#,
            "sh",
            bin(),
            "--data-dir",
        ])
        .arg(w.data_dir())
        .stdin(Stdio::from(OwnedFd::from(listener.try_clone().unwrap())));
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
        let pid = s.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success());
        let reloading = next_notice(&socket, what);
        assert!(
            reloading.starts_with("RELOADING=1\nMONOTONIC_USEC="),
            "{reloading:?}"
        );
        assert_eq!(
            next_notice(&socket, "READY=1 after the reload"),
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
    let log = s.log_text();
    assert!(
        log.contains(
            "settings read again: applied quota (counted afresh) and flood guard, site-name"
        ),
        "{log}"
    );
    assert!(
        page().contains("id=\"site-name\">Resets<"),
        "the pages are named anew"
    );
    assert!(
        log.contains(
            "header-timeout changed to 20; it applies at the next restart (serving with 10)"
        ),
        "{log}"
    );

    // A file that does not pass changes nothing.
    std::fs::write(&config, "rate-limit = \"not-a-rate\"\n").unwrap();
    hangup("RELOADING=1 for the bad file");
    assert_eq!(counted_get(&me, &url), Ok((200, "5/3".to_owned())));
    let log = s.log_text();
    assert!(
        log.contains("reload refused, the running settings are kept: ")
            && log.contains("rate-limit"),
        "{log}"
    );

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
