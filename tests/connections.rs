//! Connections and resources: a server no idle loop or hostile client can
//! exhaust (an idle server rests, caps refuse cheaply, slow clients are cut).

use std::time::Duration;

use crate::util::server::Server;
use crate::util::World;

/// (CPU seconds used, read syscalls made) by `pid` so far, from /proc.
fn cpu_and_reads(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces) start after ") ".
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    let reads = io
        .lines()
        .find_map(|l| l.strip_prefix("syscr: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (ticks as f64 / 100.0, reads)
}

#[test]
fn an_idle_server_rests() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--log", "warn"], &[]);
    assert_eq!(s.get("/healthz").status, 200);
    s.settle();
    let (cpu_before, reads_before) = cpu_and_reads(s.child.id());
    std::thread::sleep(Duration::from_secs(10));
    let (cpu_after, reads_after) = cpu_and_reads(s.child.id());
    let (cpu, reads) = (cpu_after - cpu_before, reads_after - reads_before);
    // The safety poll checks every 2 s (a read or two of the pointer and the sync state).
    assert!(reads <= 40, "{reads} read syscalls in 10 idle seconds");
    assert!(cpu < 0.05, "{cpu:.3} s of CPU in 10 idle seconds");
    // A publish is still noticed at once (file events still work).
    let published = w
        .run(&["--now", "2026-11-21T10:00:00.000Z", "publish"])
        .success();
    assert!(
        published.stdout.contains("snapshot 2"),
        "{}",
        published.stdout
    );
    s.wait_for("/healthz", Duration::from_millis(500), |r| {
        r.json()["sequence"] == 2
    });
}

/// Resident memory of `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap()
}

#[test]
fn a_full_quota_table_refuses_new_clients_only() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(
        &w,
        &[
            "--log",
            "warn",
            "--rate-limit",
            "5/3600",
            "--rate-limit-max-clients",
            "2",
            "--trust-proxy",
            "127.0.0.1",
        ],
        &[],
    );
    let get = |client: &str| {
        crate::util::server::raw_request(
            s.addr,
            "GET",
            "/openapi/v1/records",
            &[("X-Forwarded-For", client)],
        )
    };
    assert_eq!(get("198.51.100.1").status, 200);
    assert_eq!(get("198.51.100.2").status, 200);
    let refused = get("198.51.100.3");
    assert_eq!(refused.status, 503);
    let body = refused.json();
    assert_eq!(body["error"], "rate_limit_unavailable");
    assert_eq!(refused.header("x-ratelimit-remaining"), None);
    // Clients already tracked are counted as usual.
    assert_eq!(
        get("198.51.100.1").header("x-ratelimit-remaining"),
        Some("3")
    );
    // Thousands of new clients: refused, logged once, and memory stays flat.
    s.settle();
    let before = rss_kib(s.child.id());
    for n in 0..3000u32 {
        let ip = format!("10.{}.{}.{}", n >> 16, (n >> 8) & 255, n & 255);
        assert_eq!(get(&ip).status, 503);
    }
    let grown = rss_kib(s.child.id()).saturating_sub(before);
    assert!(grown < 2048, "RSS grew by {grown} KiB for refused clients");
    let log = s.log_text();
    assert_eq!(
        log.matches("(2 clients, --rate-limit-max-clients): new clients get 503")
            .count(),
        1,
        "{log}"
    );
    assert!(
        log.lines().count() < 10,
        "no line per refused request:\n{log}"
    );
}

/// A connection to `server` from the local address `local` (another loopback address).
fn connect_from(local: &str, server: std::net::SocketAddr) -> std::net::TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
        crate::util::within(10, "connect", socket.connect(server))
            .await
            .unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// `GET path` on `stream`, the whole answer (the server closes after it).
fn get_on(mut stream: std::net::TcpStream, path: &str) -> String {
    use std::io::{Read, Write};
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
}

/// `GET path` on `stream`, keeping it open: (the answer, the stream).
fn get_keep_alive(mut stream: std::net::TcpStream, path: &str) -> (String, std::net::TcpStream) {
    use std::io::{Read, Write};
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    (head + &String::from_utf8_lossy(&body), stream)
}

/// What the server says to a connection it refuses at accept (without a request).
fn refusal(mut stream: std::net::TcpStream) -> String {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
}

/// Whether the server closed `stream` (EOF or reset) within `within`.
fn closed_within(stream: &mut std::net::TcpStream, within: Duration) -> bool {
    use std::io::Read;
    stream.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn two_client_addresses_get_two_quotas_under_the_accept_loop() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--rate-limit", "1/60"], &[]);
    let status = |reply: &str| reply.split(' ').nth(1).unwrap_or("").to_owned();
    assert_eq!(
        status(&get_on(
            connect_from("127.0.0.1", s.addr),
            "/openapi/v1/records"
        )),
        "200"
    );
    assert_eq!(
        status(&get_on(
            connect_from("127.0.0.1", s.addr),
            "/openapi/v1/records"
        )),
        "429"
    );
    assert_eq!(
        status(&get_on(
            connect_from("127.0.0.2", s.addr),
            "/openapi/v1/records"
        )),
        "200"
    );
}

#[test]
fn slow_and_silent_connections_are_cut_and_others_served_meanwhile() {
    use std::io::Write;
    // The test holds 2,500 sockets itself.
    rlimit::increase_nofile_limit(8192).unwrap();
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(
        &w,
        &[
            "--header-timeout",
            "2",
            "--max-connections-per-ip",
            "5000",
            "--no-rate-limit",
        ],
        &[],
    );
    let started = std::time::Instant::now();
    let mut attackers: Vec<std::net::TcpStream> = (0..2500)
        .map(|n| {
            let mut stream = std::net::TcpStream::connect(s.addr).unwrap();
            // 2,000 send a request line and one header, then nothing; 500 send nothing.
            if n < 2000 {
                stream
                    .write_all(b"GET /openapi/v1/records HTTP/1.1\r\nHost: x\r\n")
                    .unwrap();
            }
            stream
        })
        .collect();
    // A normal client is answered during the attack.
    let reply = get_on(connect_from("127.0.0.2", s.addr), "/healthz");
    assert!(reply.starts_with("HTTP/1.1 200 "), "{reply}");
    let all_closed_by = started + Duration::from_secs(2) + Duration::from_secs(4);
    for (n, stream) in attackers.iter_mut().enumerate() {
        let left = all_closed_by.saturating_duration_since(std::time::Instant::now());
        assert!(
            closed_within(stream, left.max(Duration::from_millis(1))),
            "connection {n} still open {:?} after the attack began",
            started.elapsed()
        );
    }
    let log = s.log_text();
    assert!(
        log.lines().filter(|l| l.contains("ERROR")).count() < 5,
        "no error line per connection:\n{log}"
    );
}

#[test]
fn idle_keep_alive_connections_close_after_the_header_timeout() {
    use std::io::{Read, Write};
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--header-timeout", "1"], &[]);
    let mut stream = std::net::TcpStream::connect(s.addr).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut first = [0u8; 17];
    stream.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200 OK\r\n");
    let idle_since = std::time::Instant::now();
    assert!(
        closed_within(&mut stream, Duration::from_secs(5)),
        "the idle connection stayed open"
    );
    let idle = idle_since.elapsed();
    assert!(
        idle >= Duration::from_millis(800) && idle < Duration::from_secs(4),
        "closed after {idle:?}"
    );
}

#[test]
fn connection_caps_refuse_cheaply_and_serve_everyone_else() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(
        &w,
        // A long header timeout: the held connections stay open however slow the run.
        &[
            "--max-connections-per-ip",
            "3",
            "--max-connections",
            "5",
            "--header-timeout",
            "120",
        ],
        &[],
    );
    let held: Vec<_> = (0..3)
        .map(|_| std::net::TcpStream::connect(s.addr).unwrap())
        .collect();
    // Let the server accept the three before the fourth.
    std::thread::sleep(Duration::from_millis(200));
    let refused = refusal(std::net::TcpStream::connect(s.addr).unwrap());
    assert!(refused.starts_with("HTTP/1.1 503 "), "{refused}");
    let body: serde_json::Value =
        serde_json::from_str(refused.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["error"], "too_many_connections");
    assert_eq!(body["retryAfter"], 1);
    // Another address is still served; then the total cap (5) is reached.
    let other = connect_from("127.0.0.2", s.addr);
    let (reply, fifth) = get_keep_alive(connect_from("127.0.0.3", s.addr), "/healthz");
    assert!(reply.starts_with("HTTP/1.1 200 "), "{reply}");
    let over_total = refusal(connect_from("127.0.0.5", s.addr));
    assert!(over_total.starts_with("HTTP/1.1 503 "), "{over_total}");
    drop((held, other, fifth));
    // Until the server has seen those closes it may still refuse (an empty
    // or cheap 503 answer): retry, never read a refusal as a failure.
    crate::util::wait_until(
        Duration::from_secs(10),
        "a connection served once the held ones closed",
        || {
            use std::io::{Read, Write};
            let mut c = std::net::TcpStream::connect(s.addr).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let _ = c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut reply = Vec::new();
            let _ = c.read_to_end(&mut reply);
            reply.starts_with(b"HTTP/1.1 200 ")
        },
    );
    let log = s.log_text();
    assert!(
        log.contains("refusing connections at the cap of 3 connections open from one address"),
        "{log}"
    );
}

#[test]
fn an_open_file_limit_below_the_connection_cap_is_raised_or_named() {
    let w = World::new();
    w.seed_bundled();
    // Soft 256, hard 512: raised to the hard limit, and the log says what to set.
    let mut cmd = std::process::Command::new("/usr/bin/prlimit");
    cmd.args(["--nofile=256:512", "--"]).arg(crate::util::bin());
    cmd.env_clear()
        .env("HOME", w.path("home"))
        .arg("--data-dir")
        .arg(w.data_dir());
    crate::util::own_config(&mut cmd, w.tmp.path());
    let s = Server::start_with(cmd, &["--max-connections", "10000"]);
    assert_eq!(s.get("/healthz").status, 200);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", s.child.id())).unwrap();
    let open_files = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    assert!(
        open_files.contains(" 512 "),
        "soft limit raised to the hard one: {open_files}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let expected = "the open-file limit is 512, below the 10064 that --max-connections 10000 needs";
    while !s.log_text().contains(expected) {
        assert!(std::time::Instant::now() < deadline, "{}", s.log_text());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        s.log_text().contains("LimitNOFILE=10064"),
        "{}",
        s.log_text()
    );
}
