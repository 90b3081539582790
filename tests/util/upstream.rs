//! A real HTTP server on loopback that plays the upstream, with faults on
//! demand. It honours `If-None-Match` for its ETag (304) and records the
//! request headers it saw.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the upstream does with the next requests.
#[derive(Clone, Debug)]
pub enum Behavior {
    /// 200 with the body and validators (304 when `If-None-Match` matches the ETag).
    Serve {
        body: Vec<u8>,
        etag: Option<String>,
        last_modified: Option<String>,
    },
    /// This status with a small body.
    Status(u16),
    /// Wait, then serve nothing useful (for timeouts).
    Hang(Duration),
    /// Declare `declared` bytes but send only the body, then close.
    Truncated { body: Vec<u8>, declared: usize },
    /// Redirect to itself forever.
    RedirectLoop,
    /// Stream `bytes` bytes chunked, with no Content-Length.
    Huge { bytes: usize },
    /// 304 Not Modified to every request, validators or not.
    AlwaysNotModified,
    /// 200 declaring `declared` bytes, then one byte a second, for as long as the client stays.
    Drip { declared: usize },
    /// 431 to a request with `If-None-Match`, else 200 with the body and this ETag.
    RefuseConditional { body: Vec<u8>, etag: String },
    /// 200 with `body` sent as is (already compressed) and `Content-Encoding: encoding`.
    Encoded { body: Vec<u8>, encoding: String },
    /// `/hopN` redirects to `/hop(N-1)`; `/hop0` serves `body`: a chain of exactly N redirects.
    Chain { body: Vec<u8> },
    /// 302 to `location` for every path but `serve_path`, which gets `body`.
    Redirect {
        location: String,
        serve_path: String,
        body: Vec<u8>,
    },
}

/// The headers of one request.
type Headers = Vec<(String, String)>;

pub struct Upstream {
    pub addr: SocketAddr,
    behavior: Arc<Mutex<Behavior>>,
    requests: Arc<Mutex<Vec<Headers>>>,
}

impl Upstream {
    pub fn start(behavior: Behavior) -> Self {
        Self::start_on("127.0.0.1", behavior)
    }

    /// Starts on `ip`, port 0 (the port the system gave is in `addr`).
    pub fn start_on(ip: &str, behavior: Behavior) -> Self {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let behavior = Arc::new(Mutex::new(behavior));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (b, r) = (behavior.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (b, r) = (b.clone(), r.clone());
                std::thread::spawn(move || handle(stream, &b, &r));
            }
        });
        Upstream {
            addr,
            behavior,
            requests,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn set(&self, behavior: Behavior) {
        *self.behavior.lock().unwrap() = behavior;
    }

    /// Serves `body` with an ETag and Last-Modified.
    pub fn serve(&self, body: &str, etag: &str) {
        self.set(Behavior::Serve {
            body: body.as_bytes().to_vec(),
            etag: Some(etag.to_owned()),
            last_modified: Some("Fri, 20 Nov 2026 10:00:00 GMT".to_owned()),
        });
    }

    /// The headers of every request so far, in order (each with its
    /// request target as the pseudo-header `:path`).
    pub fn requests(&self) -> Vec<Vec<(String, String)>> {
        self.requests.lock().unwrap().clone()
    }

    /// The headers of the last request.
    pub fn last_request(&self) -> Vec<(String, String)> {
        self.requests
            .lock()
            .unwrap()
            .last()
            .cloned()
            .unwrap_or_default()
    }

    pub fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn handle(
    mut stream: TcpStream,
    behavior: &Mutex<Behavior>,
    requests: &Mutex<Vec<Vec<(String, String)>>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let mut logged = headers.clone();
    logged.push((":path".to_owned(), path.clone()));
    requests.lock().unwrap().push(logged);
    let behavior = behavior.lock().unwrap().clone();
    let _ = match behavior {
        Behavior::Serve { body, etag, last_modified } => {
            if let Some(tag) = etag.as_deref().filter(|t| header(&headers, "if-none-match") == Some(*t)) {
                write!(stream, "HTTP/1.1 304 Not Modified\r\nETag: {tag}\r\nConnection: close\r\n\r\n")
            } else {
                let mut head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
                if let Some(etag) = etag {
                    head.push_str(&format!("ETag: {etag}\r\n"));
                }
                if let Some(lm) = last_modified {
                    head.push_str(&format!("Last-Modified: {lm}\r\n"));
                }
                head.push_str("\r\n");
                stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&body))
            }
        }
        Behavior::RefuseConditional { body, etag } => {
            if header(&headers, "if-none-match").is_some() {
                write!(stream, "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            } else {
                write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: {etag}\r\nConnection: close\r\n\r\n", body.len()).and_then(|_| stream.write_all(&body))
            }
        }
        Behavior::Drip { declared } => {
            let mut result = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\nConnection: close\r\n\r\n");
            let mut sent = 0;
            while result.is_ok() && sent < declared {
                result = stream.write_all(b" ").and_then(|_| stream.flush());
                sent += 1;
                std::thread::sleep(Duration::from_secs(1));
            }
            result
        }
        Behavior::AlwaysNotModified => write!(stream, "HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n"),
        Behavior::Status(code) => write!(stream, "HTTP/1.1 {code} Oops\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops"),
        Behavior::Hang(d) => {
            std::thread::sleep(d);
            Ok(())
        }
        Behavior::Truncated { body, declared } => {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {declared}\r\nConnection: close\r\n\r\n").and_then(|_| stream.write_all(&body))
        }
        Behavior::RedirectLoop => write!(stream, "HTTP/1.1 302 Found\r\nLocation: {path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        Behavior::Encoded { body, encoding } => {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: {encoding}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
                .and_then(|_| stream.write_all(&body))
        }
        Behavior::Chain { body } => match path.strip_prefix("/hop").and_then(|n| n.parse::<u32>().ok()) {
            Some(0) => write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
                .and_then(|_| stream.write_all(&body)),
            Some(n) => write!(stream, "HTTP/1.1 302 Found\r\nLocation: /hop{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", n - 1),
            None => write!(stream, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        },
        Behavior::Redirect { location, serve_path, body } => {
            if path == serve_path {
                write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
                    .and_then(|_| stream.write_all(&body))
            } else {
                write!(stream, "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            }
        }
        Behavior::Huge { bytes } => {
            let chunk = vec![b' '; 64 * 1024];
            let mut result = write!(stream, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
            let mut sent = 0;
            while result.is_ok() && sent < bytes {
                result = write!(stream, "{:x}\r\n", chunk.len()).and_then(|_| stream.write_all(&chunk)).and_then(|_| stream.write_all(b"\r\n"));
                sent += chunk.len();
            }
            result.and_then(|_| stream.write_all(b"0\r\n\r\n"))
        }
    };
    let _ = stream.flush();
}
