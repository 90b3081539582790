//! Accepting connections: hyper's HTTP/1.1 and HTTP/2 server around the
//! route table (`router.rs`), with graceful shutdown, the peer address for the client
//! key, the access log, and JSON bodies on the errors hyper answers itself.
//!
//! hyper answers a request it cannot parse (400), a target over 64 KiB (414)
//! and headers over its buffer (431) before any route runs, with an empty
//! body. Section 4.5 wants every error of the API as a JSON error body, so
//! the connection's writer recognises exactly those automatic answers (a
//! 400, 414 or 431 head with `content-length: 0` and nothing after it, which
//! no route ever sends) and writes them with the JSON error body instead.
//! This is one reason the server runs its own accept loop (hyper-util's
//! connection builder) rather than a framework's, whose acceptor cannot
//! wrap the connection.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};

use super::deadline::{Activity, TimedBody, Tracked};
use super::gate::{ConnectionGate, ConnectionLimits, Ticket, BUSY_RESPONSE, MIN_HEAD_BYTES};
use super::head::one_host;
use super::hyper_io::HyperIo;
use super::stream_conn::{self, Answered, Opening};
use crate::api::clients::{ClientKey, ClientKeys};
use crate::api::conditional::Conditionals;
use crate::api::errors::ApiError;
use crate::api::routes::RouteLabel;

/// A service that answers requests with bodies of type `B`.
pub(crate) trait Answers<B>:
    tower_service::Service<
    hyper::Request<B>,
    Response = warp::reply::Response,
    Error = Infallible,
    Future: Send,
>
{
}

impl<B, S> Answers<B> for S where
    S: tower_service::Service<
        hyper::Request<B>,
        Response = warp::reply::Response,
        Error = Infallible,
        Future: Send,
    >
{
}

/// What the accept loop serves: the routes, for the bodies hyper reads
/// and for a stream's opening read without hyper.
pub(crate) trait Routes:
    Answers<TimedBody> + Answers<http_body_util::Empty<bytes::Bytes>> + Clone + Send + Sync + 'static
{
}

impl<S> Routes for S where
    S: Answers<TimedBody>
        + Answers<http_body_util::Empty<bytes::Bytes>>
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// A connection's view of the server's shutdown: it changes once, when the
/// server stops accepting; the server waits until every connection has
/// dropped its receiver.
type Shutdown = tokio::sync::watch::Receiver<()>;

/// The peer of a connection, as a request extension (the client key reads it).
#[derive(Clone, Copy, Debug)]
pub struct PeerAddr(pub SocketAddr);

/// A request target that is not a path: the route table looks up paths
/// only, so the router answers it from this mark before any lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetForm {
    /// `host:port` (CONNECT's form).
    Authority,
    /// `*` (the server as a whole, for OPTIONS).
    Asterisk,
    /// A path, but an HTTP/1.1 request without exactly one `Host` header
    /// (RFC 9112 section 3.2: a 400).
    BadHost,
}

impl TargetForm {
    fn of<B>(request: &hyper::Request<B>) -> Option<Self> {
        let uri = request.uri();
        if uri.path_and_query().is_none() {
            Some(TargetForm::Authority)
        } else if uri.path() == "*" {
            Some(TargetForm::Asterisk)
        } else if request.version() == hyper::Version::HTTP_11 && !one_host(request.headers()) {
            Some(TargetForm::BadHost)
        } else {
            None
        }
    }
}

/// The header list HTTP/2 decodes (RFC 9113 `SETTINGS_MAX_HEADER_LIST_SIZE`,
/// which also counts 32 bytes a field): four times the head limit, so a
/// head over `max_head` reaches [`RequestContext::answer`], which answers
/// the documented JSON 431 as HTTP/1.1 does. h2 itself answers a list past
/// this cap with an empty 431 (it resets the stream below hyper); the cap
/// bounds what one request's head may hold in memory.
fn h2_header_list_cap(max_head: usize) -> u32 {
    u32::try_from(max_head.saturating_mul(4)).unwrap_or(u32::MAX)
}

/// The size of `request`'s head as HTTP/1.1 writes it (request line,
/// `Host` from the authority, each header line, the blank line): what
/// `--max-head-bytes` limits on every path and in either protocol.
fn head_size<B>(request: &hyper::Request<B>) -> usize {
    let target = request
        .uri()
        .path_and_query()
        .map_or(1, |p| p.as_str().len());
    let line = request.method().as_str().len() + 1 + target + " HTTP/1.1\r\n".len();
    let host = match request.uri().authority() {
        Some(authority) if !request.headers().contains_key(hyper::header::HOST) => {
            "host: \r\n".len() + authority.as_str().len()
        }
        _ => 0,
    };
    let fields: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + ": \r\n".len() + value.len())
        .sum();
    line + host + fields + "\r\n".len()
}

/// Serves `routes` on `listener` until `shutdown` resolves, then
/// waits for in-flight connections to finish. Connections past the caps of
/// `limits` are refused at accept ([`ConnectionGate`]); a connection must
/// deliver each request head within `limits.header_timeout` of being ready
/// for it (hyper's header read timeout, which restarts after each
/// response), and its first one within that time of accept whatever it
/// sends (before hyper knows whether it speaks HTTP/1 or HTTP/2).
pub(crate) async fn run(
    listener: TcpListener,
    routes: impl Routes,
    current_keys: Arc<arc_swap::ArcSwap<ClientKeys>>,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let gate = ConnectionGate::new(limits);
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_head_bytes.max(MIN_HEAD_BYTES));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(h2_header_list_cap(
            limits.max_head_bytes.max(MIN_HEAD_BYTES),
        ))
        .keep_alive_interval(Some(Duration::from_secs(20)))
        .keep_alive_timeout(limits.header_timeout);
    let builder = Arc::new(builder);
    let (draining, _) = tokio::sync::watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of file descriptors and the like: wait, do not spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // The rules in force at accept place the connection under the
        // caps; each request is keyed by the rules in force when it comes.
        let keys = current_keys.load_full();
        let exempt = keys.trusts(peer.ip());
        // Keyed like the quota: an IPv6 client by its prefix, so one /64 cannot
        // multiply the per-address cap by rotating addresses.
        let ticket = match gate.admit(keys.of_peer(peer.ip()), exempt) {
            Ok(ticket) => ticket,
            Err(_) => {
                crate::metrics::refused("connection_cap");
                // One write that cannot wait, then close: refusing stays cheap.
                let _ = stream.try_write(BUSY_RESPONSE);
                continue;
            }
        };
        let connection = Connection {
            service: routes.clone(),
            keys: current_keys.clone(),
            builder: builder.clone(),
            peer,
            header_timeout: limits.header_timeout,
            body_timeout: limits.body_timeout,
            max_head: limits.max_head_bytes.max(MIN_HEAD_BYTES),
            ticket,
        };
        let watcher = draining.subscribe();
        tokio::spawn(connection.serve(stream, watcher));
    }
    drop(listener);
    // Every connection shuts down gracefully, then drops its receiver.
    let _ = draining.send(());
    draining.closed().await;
}

/// One accepted connection and what serving it needs.
struct Connection<S> {
    service: S,
    /// How clients are keyed, as a reload leaves it.
    keys: Arc<arc_swap::ArcSwap<ClientKeys>>,
    builder: Arc<hyper_util::server::conn::auto::Builder<TokioExecutor>>,
    peer: SocketAddr,
    header_timeout: Duration,
    body_timeout: Duration,
    max_head: usize,
    /// The connection's place under the caps, held until its socket is
    /// closed (a lingering close included).
    ticket: Ticket,
}

impl<S: Routes> Connection<S> {
    /// Reads the first request head; a stream request is answered by
    /// [`stream_conn`], everything else (and whatever follows a counted
    /// refusal of a stream) by hyper. The first head must arrive within
    /// the header timeout of accept, whatever the peer sends.
    async fn serve(self, mut stream: TcpStream, watcher: Shutdown) {
        let peer = self.peer;
        let mut deadline = tokio::time::Instant::now() + self.header_timeout;
        let first =
            tokio::time::timeout_at(deadline, stream_conn::read_opening(&stream, self.max_head))
                .await;
        let first = match first {
            Err(_) => {
                return tracing::debug!(
                    "connection from {peer}: no request within {:?}; closed",
                    self.header_timeout
                )
            }
            Ok(Err(e)) => return tracing::debug!("connection from {peer}: {e}"),
            Ok(Ok(Opening::Closed)) => return,
            Ok(Ok(Opening::Other(first))) => first,
            Ok(Ok(Opening::Stream(mut request))) => {
                let started = Instant::now();
                prepare(&self.keys.load(), peer, &mut request);
                let client = request.extensions().get::<ClientKey>().map(|k| k.0);
                let path = request.uri().path().to_owned();
                let close = stream_conn::asks_close(request.headers());
                // Boxed: the routes' future is large, and a stream's task
                // lives for hours after it has finished.
                let mut service = self.service.clone();
                let call = Box::pin(tower_service::Service::call(&mut service, *request));
                let Ok(response) = call.await;
                if let Some(client) = client {
                    access_log(
                        &hyper::Method::GET,
                        &path,
                        label_of(&response),
                        response.status(),
                        started,
                        client,
                    );
                }
                match stream_conn::write_answer(&mut stream, response, close).await {
                    Ok(Answered::KeepAlive) => {
                        // The next request gets the whole header timeout again.
                        deadline = tokio::time::Instant::now() + self.header_timeout;
                        bytes::Bytes::new()
                    }
                    Ok(Answered::Done) => return,
                    Err(e) => return tracing::debug!("connection from {peer}: {e}"),
                }
            }
        };
        // Boxed, so a stream connection's task does not carry hyper's size.
        Box::pin(self.serve_with_hyper(stream, first, deadline, watcher)).await;
    }

    /// hyper's HTTP/1.1 and HTTP/2 on `stream`, `first` read before it.
    /// Its first request must start before `deadline`; after that, the
    /// connection is shut down gracefully when the server stops, when a
    /// request body runs out of time, or when no request has been in
    /// flight for the header timeout ([`Activity`]).
    async fn serve_with_hyper(
        self,
        stream: TcpStream,
        first: bytes::Bytes,
        deadline: tokio::time::Instant,
        mut shutdown: Shutdown,
    ) {
        let Connection {
            service,
            keys,
            builder,
            peer,
            header_timeout,
            body_timeout,
            max_head,
            ticket,
        } = self;
        // Bytes of a request already read: the shutdown waits for it to be
        // answered (a restart drops no request a client has sent).
        let request_in_hand = !first.is_empty();
        let first_request = Arc::new(tokio::sync::Notify::new());
        let seen = first_request.clone();
        let activity = Activity::new();
        let request_context = RequestContext {
            service,
            keys,
            peer,
            body_timeout,
            max_head,
            activity: activity.clone(),
        };
        let per_request = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            seen.notify_one();
            request_context.answer(request)
        });
        let io = HyperIo::new(first, TokioIo::new(stream), activity.clone(), ticket);
        let mut connection =
            std::pin::pin!(builder.serve_connection_with_upgrades(io, per_request));
        let mut closing = false;
        // Client-caused connection errors are the client's business: debug only.
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!("connection from {peer}: {e}");
                }
                return;
            }
            () = first_request.notified() => {}
            _ = shutdown.changed(), if !request_in_hand => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            () = tokio::time::sleep_until(deadline) => {
                tracing::debug!("connection from {peer}: no request within {header_timeout:?}; closed");
                return;
            }
        }
        // Once closing, a connection gets this long to finish; a client that
        // never reads its answer cannot hold it (or the server's shutdown).
        let grace = header_timeout + body_timeout;
        let mut hard_stop = None;
        loop {
            if closing && hard_stop.is_none() {
                hard_stop = Some(tokio::time::Instant::now() + grace);
            }
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!("connection from {peer}: {e}");
                    }
                    return;
                }
                _ = shutdown.changed(), if !closing => {
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
                () = activity.until_done(header_timeout), if !closing => {
                    tracing::debug!("connection from {peer}: idle or out of time; closing");
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
                () = tokio::time::sleep_until(hard_stop.unwrap_or_else(tokio::time::Instant::now)), if hard_stop.is_some() => {
                    tracing::debug!("connection from {peer}: did not finish within {grace:?} of closing; dropped");
                    return;
                }
            }
        }
    }
}

/// What each request of a hyper connection is answered with.
struct RequestContext<S> {
    service: S,
    /// How clients are keyed, read again for each request (a reload
    /// reaches kept-alive and HTTP/2 connections at their next request).
    keys: Arc<arc_swap::ArcSwap<ClientKeys>>,
    peer: SocketAddr,
    body_timeout: Duration,
    /// The largest request head (HTTP/1.1's is hyper's buffer; HTTP/2's is
    /// measured here, [`head_size`]).
    max_head: usize,
    /// The connection's requests in flight (its idle deadline).
    activity: Arc<Activity>,
}

impl<S: Routes> RequestContext<S> {
    /// One request: prepared, its body read under the body timeout (an
    /// expired body is a 408 that closes the connection; an unread one
    /// closes an HTTP/1.1 connection after the answer), answered by the
    /// routes and logged. An HTTP/2 head over the head limit is the JSON
    /// 431 that hyper's HTTP/1.1 answer gets, and no route sees it.
    fn answer(
        &self,
        mut request: hyper::Request<Incoming>,
    ) -> impl Future<
        Output = Result<
            hyper::Response<
                Tracked<
                    impl hyper::body::Body<Data = bytes::Bytes, Error = warp::Error>
                        + Unpin
                        + Send
                        + 'static,
                >,
            >,
            Infallible,
        >,
    > + Send
           + 'static {
        let in_flight = self.activity.begin();
        prepare(&self.keys.load(), self.peer, &mut request);
        let client = request.extensions().get::<ClientKey>().map(|k| k.0);
        let method = request.method().clone();
        let http1 = request.version() < hyper::Version::HTTP_2;
        let too_large = !http1 && head_size(&request) > self.max_head;
        let path = request.uri().path().to_owned();
        let started = Instant::now();
        let body_timeout = self.body_timeout;
        let (request, outcome) = {
            let (parts, body) = request.into_parts();
            let (body, outcome) = TimedBody::new(body, body_timeout);
            (hyper::Request::from_parts(parts, body), outcome)
        };
        let mut service = self.service.clone();
        let requests = self.activity.clone();
        async move {
            let mut response = if too_large {
                ApiError::HeadersTooLarge.response()
            } else {
                tower_service::Service::call(&mut service, request).await?
            };
            if let Some(outcome) = outcome {
                if outcome.expired() {
                    // Whatever the handler made of the broken body.
                    response = ApiError::RequestTimeout(body_timeout).response();
                    if http1 {
                        response.headers_mut().insert(
                            hyper::header::CONNECTION,
                            hyper::header::HeaderValue::from_static("close"),
                        );
                    }
                    requests.close();
                } else if http1 && !outcome.finished() {
                    // The rest of the body is not waited for.
                    response.headers_mut().insert(
                        hyper::header::CONNECTION,
                        hyper::header::HeaderValue::from_static("close"),
                    );
                    requests.linger();
                }
            }
            if let Some(client) = client {
                access_log(
                    &method,
                    &path,
                    label_of(&response),
                    response.status(),
                    started,
                    client,
                );
            }
            Ok::<_, Infallible>(response.map(|body| Tracked::new(body, in_flight)))
        }
    }
}

/// What every request carries before the routes see it: its conditional
/// headers, its peer, its client key (computed once, here) and the form
/// of a target that is not a path.
fn prepare<B>(keys: &ClientKeys, peer: SocketAddr, request: &mut hyper::Request<B>) {
    let client = keys.of_request(peer.ip(), request.headers());
    let conditionals = Conditionals::of(request.headers());
    request.extensions_mut().insert(conditionals);
    request.extensions_mut().insert(PeerAddr(peer));
    request.extensions_mut().insert(ClientKey(client));
    if let Some(form) = TargetForm::of(request) {
        request.extensions_mut().insert(form);
    }
}

/// The metrics label the router gave an answer (every answer has one).
fn label_of(response: &warp::reply::Response) -> &'static str {
    response
        .extensions()
        .get::<RouteLabel>()
        .map_or(crate::api::routes::OTHER_LABEL, |label| label.0)
}

/// One structured line per request; `client` is the key the quota used
/// (computed once per request by [`ClientKeys::of_request`]).
fn access_log(
    method: &hyper::Method,
    path: &str,
    label: &'static str,
    status: hyper::StatusCode,
    started: Instant,
    client: std::net::IpAddr,
) {
    crate::metrics::http_request(label, status.as_u16(), started.elapsed());
    tracing::info!(
        target: "resetctl::access",
        method = %method,
        path = path,
        status = status.as_u16(),
        latency_us = started.elapsed().as_micros() as u64,
        client = %client,
    );
}
