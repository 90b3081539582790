//! A reload is `serve --check` then apply, whatever sends the signal
//! (issue 50, item 2): a file the check refuses changes nothing, keys that
//! could apply alone included, and says why in one log line; what applies
//! reaches every connection at its next request (a kept-alive HTTP/1.1 and
//! an HTTP/2 one too); a reload that keeps the quota's policy keeps every
//! client's count.

use std::net::SocketAddr;
use std::os::unix::net::UnixDatagram;

use bytes::Bytes;
use http_body_util::Empty;

use super::next_notice;
use crate::util::server::Server;
use crate::util::World;

const LATEST: &str = "/openapi/v1/records/latest";

/// A server on `config` (its text written first) that tells `notify` its
/// states, started with `args`.
fn serving(w: &World, config: &str, args: &[&str]) -> (Server, UnixDatagram) {
    let path = w.path("config.toml");
    std::fs::write(&path, config).unwrap();
    let notify = w.path("notify.sock");
    let socket = UnixDatagram::bind(&notify).unwrap();
    let mut cmd = w.cmd();
    cmd.arg("--config").arg(&path).env("NOTIFY_SOCKET", &notify);
    let s = Server::start_with(cmd, args);
    assert!(next_notice(&socket, "READY=1").starts_with("READY=1\n"));
    (s, socket)
}

/// Writes `config` and sends the server a raw SIGHUP (`kill -HUP`, not
/// `systemctl reload`: no `--check` runs first); returns once it says it
/// is ready again, with the log lines the reload wrote.
fn reload(w: &World, s: &Server, socket: &UnixDatagram, config: &str) -> String {
    std::fs::write(w.path("config.toml"), config).unwrap();
    let before = s.log_text().len();
    let (reloading, ready) = super::hang_up(s, socket, "RELOADING=1");
    assert!(reloading.starts_with("RELOADING=1\n"), "{reloading:?}");
    assert!(ready.starts_with("READY=1\n"));
    // The reload's lines are written before READY=1; the relay may lag.
    crate::util::wait_until(
        std::time::Duration::from_secs(10),
        "the reload's log line",
        || {
            s.log_text()[before..].contains("settings read again")
                || s.log_text()[before..].contains("reload refused")
        },
    );
    s.log_text()[before..].to_owned()
}

/// The quota headers of `GET LATEST` (`LIMIT/REMAINING`, or the status).
fn quota(s: &Server) -> String {
    let reply = s.get(LATEST);
    match reply.status {
        200 => format!(
            "{}/{}",
            reply.header("x-ratelimit-limit").unwrap_or("-"),
            reply.header("x-ratelimit-remaining").unwrap_or("-")
        ),
        status => status.to_string(),
    }
}

/// The pages' name as the page shows it.
fn site_name(s: &Server) -> String {
    // (A flood guard a test set may answer 429 for a moment.)
    let page = s
        .wait_for("/en/", std::time::Duration::from_secs(10), |r| {
            r.status == 200
        })
        .text();
    let start = page.find("id=\"site-name\">").expect("the name") + "id=\"site-name\">".len();
    page[start..].split('<').next().unwrap().to_owned()
}

#[test]
fn a_file_that_check_refuses_changes_nothing_whatever_sends_the_signal() {
    let w = World::new();
    w.seed_bundled();
    let (s, socket) = serving(&w, "rate-limit = \"20/3600\"\n", &["--flood-guard", "off"]);
    assert_eq!(quota(&s), "20/19");
    // A listen address start would refuse, beside keys that could apply
    // alone. (`listen` itself is the test server's flag, which wins over
    // the file; the admin listener's is the file's.)
    let log = reload(
        &w,
        &s,
        &socket,
        "admin-listen = \"nonsense\"\nrate-limit = \"5/60\"\nsite-name = \"Resets\"\n",
    );
    assert_eq!(quota(&s), "20/18", "the quota is the running one");
    assert_eq!(site_name(&s), "resetctl", "the pages keep their name");
    let refused: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("reload refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{log}");
    assert!(
        refused[0].ends_with(
            "reload refused, the running settings are kept: admin-listen \"nonsense\" is not \
             an address like 127.0.0.1:8080 or localhost:8080: invalid socket address"
        ),
        "{log}"
    );
    // A quota store that does not answer, beside a new name for the pages.
    let log = reload(
        &w,
        &s,
        &socket,
        "rate-limit-store = \"redis://:S3cretPw@127.0.0.1:1/0\"\nsite-name = \"Resets\"\n",
    );
    assert_eq!(
        site_name(&s),
        "resetctl",
        "refused whole: the pages keep their name"
    );
    assert_eq!(quota(&s), "20/17");
    assert!(
        log.lines().any(|l| l.ends_with(
            "reload refused, the running settings are kept: the quota store at \
             redis://127.0.0.1:1/0 does not answer: Connection refused (os error 111)"
        )),
        "{log}"
    );
    assert!(!log.contains("S3cretPw"), "{log}");
    // The same file without the store applies.
    let log = reload(
        &w,
        &s,
        &socket,
        "rate-limit = \"20/3600\"\nsite-name = \"Resets\"\n",
    );
    assert!(
        log.contains("settings read again: applied site-name"),
        "{log}"
    );
    assert_eq!(site_name(&s), "Resets");
}

#[test]
fn a_reload_that_keeps_the_quota_policy_keeps_every_count() {
    let w = World::new();
    w.seed_bundled();
    let base = "rate-limit = \"6/3600\"\nflood-guard = \"off\"\n";
    let (s, socket) = serving(&w, base, &[]);
    assert_eq!(quota(&s), "6/5");
    assert_eq!(quota(&s), "6/4");
    // Uncounted answers pass while the flood guard is off.
    for _ in 0..5 {
        assert_eq!(s.get("/healthz").status, 200);
    }
    // The flood guard alone: it applies, and every count stays.
    let guarded = "rate-limit = \"6/3600\"\nflood-guard = \"1/1\"\n";
    let log = reload(&w, &s, &socket, guarded);
    assert_eq!(quota(&s), "6/3", "the count goes on");
    let statuses: Vec<u16> = (0..3).map(|_| s.get("/healthz").status).collect();
    assert!(
        statuses.contains(&429),
        "the new flood guard holds: {statuses:?}"
    );
    assert!(
        log.contains("settings read again: applied flood-guard (every client's quota kept)"),
        "{log}"
    );
    // The in-process store's size alone: every count stays.
    let log = reload(
        &w,
        &s,
        &socket,
        &format!("{guarded}rate-limit-max-clients = 1000\n"),
    );
    assert_eq!(quota(&s), "6/2", "the count goes on");
    assert!(
        log.contains(
            "settings read again: applied rate-limit-max-clients (every client's quota kept)"
        ),
        "{log}"
    );
    // The pages' name alone: applied, and not also said to wait for a restart.
    let log = reload(
        &w,
        &s,
        &socket,
        &format!("{guarded}rate-limit-max-clients = 1000\nsite-name = \"Resets\"\n"),
    );
    assert_eq!(site_name(&s), "Resets");
    assert!(
        log.contains("settings read again: applied site-name"),
        "{log}"
    );
    assert!(!log.contains("site-name changed"), "{log}");
    // A new policy counts afresh, as documented.
    let log = reload(
        &w,
        &s,
        &socket,
        "rate-limit = \"7/3600\"\nflood-guard = \"off\"\n",
    );
    assert_eq!(quota(&s), "7/6");
    assert!(log.contains("applied quota (counted afresh)"), "{log}");
}

/// One kept connection from `local` to `server`, HTTP/2 (h2c) or HTTP/1.1.
enum Kept {
    H1(hyper::client::conn::http1::SendRequest<Empty<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Empty<Bytes>>),
}

impl Kept {
    async fn open(server: SocketAddr, local: &str, h2: bool) -> Self {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
        let io = hyper_util::rt::TokioIo::new(socket.connect(server).await.unwrap());
        if h2 {
            let (sender, connection) =
                hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), io)
                    .await
                    .unwrap();
            tokio::spawn(connection);
            Kept::H2(sender)
        } else {
            let (sender, connection) = hyper::client::conn::http1::handshake(io).await.unwrap();
            tokio::spawn(connection);
            Kept::H1(sender)
        }
    }

    /// `GET LATEST` forwarded for `client`: the status and the remaining count.
    async fn get(&mut self, client: &str) -> (u16, String) {
        // HTTP/2 takes its authority from the URI; HTTP/1.1 sends the path alone.
        let uri = match self {
            Kept::H1(_) => LATEST.to_owned(),
            Kept::H2(_) => format!("http://localhost{LATEST}"),
        };
        let request = hyper::Request::get(uri)
            .header("host", "localhost")
            .header("x-forwarded-for", client)
            .body(Empty::<Bytes>::new())
            .unwrap();
        let response = match self {
            Kept::H1(sender) => sender.send_request(request).await,
            Kept::H2(sender) => sender.send_request(request).await,
        }
        .expect("the same connection answers");
        let remaining = response
            .headers()
            .get("x-ratelimit-remaining")
            .map_or("-".to_owned(), |v| v.to_str().unwrap().to_owned());
        let status = response.status().as_u16();
        // Read the body to its end, so the connection takes the next request.
        use http_body_util::BodyExt;
        response.into_body().collect().await.unwrap();
        (status, remaining)
    }
}

/// Removing a `trust-proxy` range stops a kept-alive HTTP/1.1 and an
/// HTTP/2 connection from that peer choosing their own quota key at their
/// next request (10 of 10 were answered 200 on a 3/3600 quota before).
#[test]
fn a_removed_trusted_proxy_stops_choosing_keys_on_the_connections_it_kept() {
    let w = World::new();
    w.seed_bundled();
    let trusting =
        "rate-limit = \"3/3600\"\nflood-guard = \"off\"\ntrust-proxy = [\"127.0.0.0/8\"]\n";
    let (s, socket) = serving(&w, trusting, &[]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut h1, mut h2) = runtime.block_on(async {
        (
            Kept::open(s.addr, "127.0.0.1", false).await,
            Kept::open(s.addr, "127.0.0.2", true).await,
        )
    });
    // Trusted: each forwarded client has a quota of its own.
    for i in 0..3 {
        for (kept, peer) in [(&mut h1, 1), (&mut h2, 2)] {
            let client = format!("198.51.{peer}.{i}");
            assert_eq!(runtime.block_on(kept.get(&client)), (200, "2".to_owned()));
        }
    }
    let log = reload(
        &w,
        &s,
        &socket,
        "rate-limit = \"3/3600\"\nflood-guard = \"off\"\n",
    );
    // Untrusted now: the peer is the client, whatever it forwards.
    for (kept, name) in [(&mut h1, "HTTP/1.1"), (&mut h2, "HTTP/2")] {
        let got: Vec<(u16, String)> = (10..14)
            .map(|i| runtime.block_on(kept.get(&format!("203.0.113.{i}"))))
            .collect();
        let expected: Vec<(u16, String)> = [(200, "2"), (200, "1"), (200, "0"), (429, "0")]
            .iter()
            .map(|(status, left)| (*status, left.to_string()))
            .collect();
        assert_eq!(
            got, expected,
            "{name}: the peer's own quota after the reload"
        );
    }
    assert!(
        log.contains("applied client keys (from every connection's next request)"),
        "{log}"
    );
}
