//! A running `resetctl serve` owned by a test: started on port 0, its log
//! relayed with a prefix, killed and waited for on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::World;

pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    /// The admin listener's address, when `--admin-listen` was given.
    pub admin: Option<SocketAddr>,
    pub log: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `resetctl serve` with extra args and env, and waits until it listens.
    pub fn start(world: &World, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = world.cmd();
        for (k, v) in env {
            cmd.env(k, v);
        }
        Self::start_with(cmd, args)
    }

    /// Starts `cmd` (a prepared `resetctl` command) as `serve` with extra
    /// args (listening on `127.0.0.1:0` unless they say `--listen`).
    pub fn start_with(mut cmd: std::process::Command, args: &[&str]) -> Self {
        cmd.arg("serve");
        if !args.contains(&"--listen") {
            cmd.arg("--listen").arg("127.0.0.1:0");
        }
        cmd.args(args);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn resetctl serve");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[serve] {line}");
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout
            .read_line(&mut first)
            .expect("read the listening line");
        let addr = first
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| {
                panic!(
                    "unexpected first line {first:?}; log:\n{}",
                    log.lock().unwrap()
                )
            })
            .parse()
            .unwrap();
        let admin = args.contains(&"--admin-listen").then(|| {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("read the admin line");
            line.trim()
                .strip_prefix("admin listening on http://")
                .unwrap_or_else(|| panic!("unexpected second line {line:?}"))
                .parse()
                .unwrap()
        });
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = stdout.read_to_string(&mut rest);
        });
        Server {
            child,
            addr,
            admin,
            log,
        }
    }

    /// `GET path` on the admin listener, with `headers`.
    pub fn admin_get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        raw_request(
            self.admin.expect("started with --admin-listen"),
            "GET",
            path,
            headers,
        )
    }

    /// `http://ADMIN/PATH` on the admin listener.
    pub fn admin_url(&self, path: &str) -> String {
        format!(
            "http://{}{path}",
            self.admin.expect("started with --admin-listen")
        )
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// `GET path` over a fresh connection, bytes exactly as given.
    pub fn get(&self, path: &str) -> Reply {
        self.request("GET", path, &[])
    }

    /// Any request, raw HTTP/1.1 with `Connection: close`.
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
        raw_request(self.addr, method, path, headers)
    }

    /// Waits until `check` holds for the reply to `GET path`, or panics after `timeout`.
    pub fn wait_for(&self, path: &str, timeout: Duration, check: impl Fn(&Reply) -> bool) -> Reply {
        let start = Instant::now();
        loop {
            let reply = self.get(path);
            if check(&reply) {
                return reply;
            }
            assert!(
                start.elapsed() < timeout,
                "condition not met within {timeout:?}; last reply: {reply:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits until the server has finished its start-up work (the coded
    /// forms of the fixed documents and of the served view's hot set): no
    /// CPU used in two consecutive 300 ms spans. For tests that measure
    /// what an idle server costs, or that race a short store timeout.
    pub fn settle(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let cpu = || {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
            let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
            fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
        };
        let (mut quiet, mut last) = (0, cpu());
        while quiet < 2 {
            assert!(
                Instant::now() < deadline,
                "the server kept working for 30 s after it started"
            );
            std::thread::sleep(Duration::from_millis(300));
            let now = cpu();
            quiet = if now == last { quiet + 1 } else { 0 };
            last = now;
        }
    }

    /// Waits until the server's log holds `needle`; panics after `timeout`.
    #[track_caller]
    pub fn wait_for_log(&self, needle: &str, timeout: Duration) {
        super::wait_until(timeout, &format!("{needle:?} in the server's log"), || {
            self.log.lock().unwrap().contains(needle)
        });
    }

    pub fn log_text(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A minimal HTTP/1.1 client: the request line goes out byte for byte.
pub fn raw_request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
    raw_request_with_body(addr, method, path, headers, b"")
}

/// [`raw_request`] with a body (its Content-Length is the caller's to send).
pub fn raw_request_with_body(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // The caller's own `Host` (one, several or an empty name) replaces
    // the default, which names the address connected to.
    let host = if headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        String::new()
    } else {
        format!("Host: {addr}\r\n")
    };
    let mut request = format!("{method} {path} HTTP/1.1\r\n{host}Connection: close\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read reply");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().trim(), 16)
                .unwrap();
        data = &data[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}
