//! Time limits on a connection after its first request: the request
//! body's deadline, and how long a connection may sit without a request
//! in flight. (The head's deadline is hyper's header read timeout and the
//! accept loop's first-request deadline, in [`super::conn`].)
//!
//! - **Body**: a request body must arrive whole within `--body-timeout` of
//!   its head, on HTTP/1 and HTTP/2 alike. A body that trickles past it
//!   yields an error to whoever reads it, the request is answered with a
//!   JSON 408 (`request_timeout`, `Connection: close`) whatever the handler
//!   made of the error, and the connection is closed (HTTP/2: `GOAWAY`,
//!   then closed once its other streams are done). One overall limit, not
//!   a minimum rate: bodies here are at most 64 KiB, so a deadline bounds
//!   what a slow client can hold without judging its speed.
//! - **Idle**: a connection with no request in flight for
//!   `--header-timeout` is shut down gracefully. HTTP/1 gets this from
//!   hyper's header read timeout already; HTTP/2, whose pings keep a
//!   connection alive, gets it only here.
//!
//! A request without a body (every GET) gets no timer and no shared state
//! of its own: a counter increment and decrement, a clock reading when it
//! ends, and a reference to its connection's [`Activity`].

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::{Instant, Sleep};

/// What the requests of one connection tell the connection's task.
#[derive(Debug)]
pub struct Activity {
    started: Instant,
    /// Requests whose response body has not been dropped yet.
    active: AtomicUsize,
    /// When the last request ended (or the connection started), in
    /// milliseconds since `started`.
    last_ms: AtomicU64,
    /// A body ran out of time: the connection is to be closed.
    close: AtomicBool,
    /// The connection closes with a request body unread: its socket is
    /// drained for a moment before it is closed ([`LINGER`]).
    linger: AtomicBool,
    changed: tokio::sync::Notify,
}

impl Activity {
    /// The activity of a connection starting now.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            started: Instant::now(),
            active: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
            close: AtomicBool::new(false),
            linger: AtomicBool::new(false),
            changed: tokio::sync::Notify::new(),
        })
    }

    /// A request begins; the guard ends it when dropped (with its response body).
    pub fn begin(self: &Arc<Self>) -> InFlight {
        self.active.fetch_add(1, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// Asks the connection to close (a body ran out of time), lingering.
    pub fn close(&self) {
        self.linger();
        self.close.store(true, Ordering::Relaxed);
        self.changed.notify_one();
    }

    /// The connection will close with a request body unread: linger then.
    pub fn linger(&self) {
        self.linger.store(true, Ordering::Relaxed);
    }

    /// Whether the connection's socket should linger when it closes.
    pub fn lingers(&self) -> bool {
        self.linger.load(Ordering::Relaxed)
    }

    /// Resolves when the connection should be shut down: a body ran out of
    /// time, or no request has been in flight for `idle`.
    pub async fn until_done(&self, idle: Duration) {
        loop {
            let changed = self.changed.notified();
            if self.close.load(Ordering::Relaxed) {
                return;
            }
            if self.active.load(Ordering::Relaxed) == 0 {
                let last =
                    self.started + Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
                let at = last + idle;
                if Instant::now() >= at {
                    return;
                }
                tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = changed => {}
                }
            } else {
                changed.await;
            }
        }
    }
}

/// How long a socket closed with a request body unread is drained first:
/// closing a socket with unread bytes resets the connection, and a reset
/// can destroy the answer (the 408) before the client has read it. The
/// write side is shut down at once, so the client sees the answer's end.
pub const LINGER: Duration = Duration::from_secs(2);

/// Shuts down `stream`'s write side, reads and discards until the peer
/// closes or [`LINGER`] passes, then closes it.
pub async fn linger(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = stream.shutdown().await;
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(LINGER, async {
        while let Ok(1..) = stream.read(&mut buf).await {}
    })
    .await;
}

/// One request in flight; dropped with its response body.
#[derive(Debug)]
pub struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let activity = &self.0;
        let ms = activity.started.elapsed().as_millis() as u64;
        activity.last_ms.store(ms, Ordering::Relaxed);
        if activity.active.fetch_sub(1, Ordering::Relaxed) == 1 {
            activity.changed.notify_one();
        }
    }
}

/// A response body that holds its request's [`InFlight`] until it is
/// dropped, so a long stream counts as activity for as long as it runs.
#[derive(Debug)]
pub struct Tracked<B> {
    inner: B,
    _in_flight: InFlight,
}

impl<B> Tracked<B> {
    /// `inner`, counted as in flight.
    pub fn new(inner: B, in_flight: InFlight) -> Self {
        Self {
            inner,
            _in_flight: in_flight,
        }
    }
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Whether a request's body ran out of time, and whether it ended.
#[derive(Debug, Default)]
pub struct BodyOutcome {
    expired: AtomicBool,
    finished: AtomicBool,
}

impl BodyOutcome {
    /// The body ran out of time.
    pub fn expired(&self) -> bool {
        self.expired.load(Ordering::Relaxed)
    }

    /// The body was read to its end.
    pub fn finished(&self) -> bool {
        self.finished.load(Ordering::Relaxed)
    }
}

/// A request body with a deadline. A request without a body carries no
/// timer and no shared state.
#[derive(Debug)]
pub struct TimedBody {
    inner: Incoming,
    timer: Option<Timer>,
}

#[derive(Debug)]
struct Timer {
    deadline: Instant,
    /// Made at the first read that has to wait.
    sleep: Option<Pin<Box<Sleep>>>,
    outcome: Arc<BodyOutcome>,
}

impl TimedBody {
    /// `inner`, due whole within `timeout` from now; the outcome to look at
    /// after the response, unless the request has no body.
    pub fn new(inner: Incoming, timeout: Duration) -> (Self, Option<Arc<BodyOutcome>>) {
        if inner.is_end_stream() {
            return (Self { inner, timer: None }, None);
        }
        let outcome = Arc::new(BodyOutcome::default());
        let timer = Timer {
            deadline: Instant::now() + timeout,
            sleep: None,
            outcome: outcome.clone(),
        };
        (
            Self {
                inner,
                timer: Some(timer),
            },
            Some(outcome),
        )
    }
}

/// The error a body that ran out of time yields to its reader.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
pub struct BodyTimedOut;

impl Body for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            if let (None, Some(timer)) = (&frame, &this.timer) {
                timer.outcome.finished.store(true, Ordering::Relaxed);
            }
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let Some(timer) = &mut this.timer else {
            return Poll::Pending;
        };
        let deadline = timer.deadline;
        let sleep = timer
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => {
                timer.outcome.expired.store(true, Ordering::Relaxed);
                Poll::Ready(Some(Err(Box::new(BodyTimedOut))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
