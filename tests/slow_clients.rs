//! Clients that send slowly or not at all cannot hold the server: a request
//! body must arrive whole within `--body-timeout` of its head (a JSON 408,
//! then the connection is closed), on HTTP/1 and HTTP/2 (hyper's own client
//! here), and an HTTP/2 connection without a request in flight is closed
//! after `--header-timeout` although it answers every ping.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::{Body, Frame};

use crate::util::server::Server;
use crate::util::within;
use crate::util::World;

const HEAD: &str = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";

/// Starts sending a body one byte every 300 ms on a connection from
/// `local`; the thread stops when the server closes the connection.
fn trickle(server: SocketAddr, local: &str, chunked: bool) -> TcpStream {
    let mut stream = connect_from(local, server);
    let framing = if chunked {
        "Transfer-Encoding: chunked\r\n\r\n"
    } else {
        "Content-Length: 65000\r\n\r\n"
    };
    stream
        .write_all(format!("{HEAD}{framing}").as_bytes())
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    std::thread::spawn(move || loop {
        let piece: &[u8] = if chunked { b"1\r\n{\r\n" } else { b"{" };
        if writer.write_all(piece).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(300));
    });
    stream
}

fn connect_from(local: &str, server: SocketAddr) -> TcpStream {
    if local == "127.0.0.1" {
        return TcpStream::connect(server).unwrap();
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
        within(10, "connect", socket.connect(server)).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// Everything the server sends until it closes, waiting at most `within`.
fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, bool) {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (String::from_utf8_lossy(&out).into_owned(), false);
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&out).into_owned(), true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return (String::from_utf8_lossy(&out).into_owned(), true)
            }
            Err(_) => return (String::from_utf8_lossy(&out).into_owned(), false),
        }
    }
}

fn get(server: SocketAddr, local: &str, path: &str) -> String {
    let mut stream = connect_from(local, server);
    // A server at its cap may answer 503 and close before the request is
    // written; what it said is still read below.
    let _ = write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    );
    read_until_closed(&mut stream, Duration::from_secs(10)).0
}

fn assert_timed_out(answer: &str) {
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    let lower = answer.to_ascii_lowercase();
    assert!(lower.contains("\r\nconnection: close\r\n"), "{answer}");
    assert!(
        lower.contains("\r\ncontent-type: application/json\r\n"),
        "{answer}"
    );
    let body: serde_json::Value =
        serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(
        body,
        serde_json::json!({
            "ok": false,
            "error": "request_timeout",
            "detail": "the request body did not arrive within 1 s of its head; the connection is closed",
            "retryAfter": null
        })
    );
}

#[test]
fn trickled_http1_bodies_get_408_and_lose_their_connections_while_others_are_served() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(
        &w,
        &[
            "--body-timeout",
            "1",
            "--header-timeout",
            "30",
            "--max-connections",
            "5",
        ],
        &[],
    );
    let started = Instant::now();
    let mut held: Vec<TcpStream> = (0..4)
        .map(|n| trickle(s.addr, "127.0.0.1", n % 2 == 1))
        .collect();
    // The fifth place serves another client while the four trickle.
    let meanwhile = get(s.addr, "127.0.0.2", "/healthz");
    assert!(meanwhile.starts_with("HTTP/1.1 200 "), "{meanwhile}");
    for (n, stream) in held.iter_mut().enumerate() {
        let (answer, closed) = read_until_closed(stream, Duration::from_secs(6));
        assert!(
            closed,
            "connection {n} still open after {:?}: {answer}",
            started.elapsed()
        );
        assert_timed_out(&answer);
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(5),
        "answered after {elapsed:?}"
    );
    // Their places are free again: five clients at once are served (the
    // server may see the closes a moment late, so this is retried).
    crate::util::wait_until(Duration::from_secs(10), "five places free again", || {
        let addr = s.addr;
        let clients: Vec<_> = (0..5)
            .map(|n| {
                std::thread::spawn(move || get(addr, &format!("127.0.0.{}", n + 3), "/healthz"))
            })
            .collect();
        clients
            .into_iter()
            .all(|c| c.join().unwrap().starts_with("HTTP/1.1 200 "))
    });
}

/// A request body that sends one byte each time the test says so.
struct Trickle(tokio::sync::mpsc::Receiver<Bytes>);

impl Body for Trickle {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|piece| piece.map(|bytes| Ok(Frame::data(bytes))))
    }
}

/// An HTTP/2 (h2c) connection to `addr`: the sender, and the connection's
/// task, which ends when the server closes the connection.
async fn h2(
    addr: SocketAddr,
) -> (
    hyper::client::conn::http2::SendRequest<Trickle>,
    tokio::task::JoinHandle<Result<(), hyper::Error>>,
) {
    let tcp = within(10, "connect", tokio::net::TcpStream::connect(addr))
        .await
        .unwrap();
    let (sender, connection) = within(
        10,
        "the HTTP/2 handshake",
        hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(tcp),
        ),
    )
    .await
    .unwrap();
    (sender, tokio::spawn(connection))
}

async fn body_of(response: hyper::Response<hyper::body::Incoming>) -> serde_json::Value {
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = within(
        10,
        "the next frame of a body",
        std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)),
    )
    .await
    {
        if let Ok(data) = frame.unwrap().into_data() {
            bytes.extend_from_slice(&data);
        }
    }
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn a_trickled_http2_body_gets_408_and_an_idle_http2_connection_is_closed() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--body-timeout", "1", "--header-timeout", "1"], &[]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // A body that trickles.
        let (mut sender, connection) = h2(s.addr).await;
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        // The trickle ends when the request does (its receiver dropped).
        tokio::spawn(async move {
            while tx.send(Bytes::from_static(b"{")).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        });
        let request = hyper::Request::post(format!("http://{}/mcp", s.addr))
            .header("content-type", "application/json")
            .header("content-length", "65000")
            .body(Trickle(rx))
            .unwrap();
        let started = Instant::now();
        let response = within(10, "the 408", sender.send_request(request))
            .await
            .unwrap();
        assert_eq!(response.status(), 408);
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(body_of(response).await["error"], "request_timeout");
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(4),
            "answered after {elapsed:?}"
        );
        // The server closes the connection (GOAWAY, then close).
        tokio::time::timeout(Duration::from_secs(5), connection)
            .await
            .expect("the connection is closed after the 408")
            .unwrap()
            .ok();

        // A connection that answers pings but sends no request.
        let (mut sender, connection) = h2(s.addr).await;
        let (_tx, rx) = tokio::sync::mpsc::channel(1);
        drop(_tx);
        let request = hyper::Request::get(format!("http://{}/healthz", s.addr))
            .body(Trickle(rx))
            .unwrap();
        let answer = within(10, "the healthz answer", sender.send_request(request)).await;
        assert_eq!(answer.unwrap().status(), 200);
        let idle_since = Instant::now();
        tokio::time::timeout(Duration::from_secs(6), connection)
            .await
            .expect("the idle HTTP/2 connection is closed")
            .unwrap()
            .ok();
        let idle = idle_since.elapsed();
        assert!(
            idle >= Duration::from_millis(800) && idle < Duration::from_secs(5),
            "closed after {idle:?}"
        );
    });
}
