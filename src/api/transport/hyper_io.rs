//! The connection as hyper sees it ([`HyperIo`]): the bytes read before
//! hyper took over are read first, then the socket; hyper's automatic
//! 400/414/431 answers get the JSON error body on their way out; a
//! connection dropped with a request body unread lingers.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::deadline::Activity;
use super::gate::Ticket;
use crate::api::errors::ApiError;

/// The connection as hyper sees it: the bytes read before hyper took over
/// (the first request's opening) are read first, then the socket; and
/// hyper's automatic 400/414/431 answers get a JSON body on their way out.
/// Dropped while a request body is unread, it lingers ([`linger`](super::deadline::linger)).
pub(super) struct HyperIo {
    /// Read but not yet given to hyper.
    first: Bytes,
    /// The socket; taken only when dropped.
    inner: Option<TokioIo<TcpStream>>,
    /// A rewritten answer not yet fully written, and how much of it is.
    pending: Vec<u8>,
    written: usize,
    activity: Arc<Activity>,
    /// The connection's place under the caps: it goes with a lingering
    /// close, so lingering sockets count against the caps too.
    ticket: Option<Ticket>,
}

impl HyperIo {
    pub(super) fn new(
        first: Bytes,
        inner: TokioIo<TcpStream>,
        activity: Arc<Activity>,
        ticket: Ticket,
    ) -> Self {
        Self {
            first,
            inner: Some(inner),
            pending: Vec::new(),
            written: 0,
            activity,
            ticket: Some(ticket),
        }
    }

    fn socket(inner: &mut Option<TokioIo<TcpStream>>) -> Pin<&mut TokioIo<TcpStream>> {
        Pin::new(inner.as_mut().expect("taken only when dropped"))
    }

    /// Writes what is left of a rewritten answer.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n = ready!(
                Self::socket(&mut self.inner).poll_write(cx, &self.pending[self.written..])
            )?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl Drop for HyperIo {
    fn drop(&mut self) {
        if self.activity.lingers() {
            if let Some(io) = self.inner.take() {
                let ticket = self.ticket.take();
                tokio::spawn(async move {
                    super::deadline::linger(io.into_inner()).await;
                    drop(ticket);
                });
            }
        }
    }
}

impl Read for HyperIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        if self.first.is_empty() {
            return Self::socket(&mut self.inner).poll_read(cx, buf);
        }
        let n = self.first.len().min(buf.remaining());
        buf.put_slice(&self.first[..n]);
        bytes::Buf::advance(&mut self.first, n);
        if self.first.is_empty() {
            // Gives the allocation back at once.
            self.first = Bytes::new();
        }
        Poll::Ready(Ok(()))
    }
}

impl Write for HyperIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_drain(cx))?;
        if let Some(rewritten) = with_json_body(buf) {
            self.pending = rewritten;
            // Whatever is not written now is written before the next write,
            // flush or shutdown; the caller's bytes are accounted for.
            if let Poll::Ready(Err(e)) = self.poll_drain(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Self::socket(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_drain(cx))?;
        Self::socket(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_drain(cx))?;
        Self::socket(&mut self.inner).poll_shutdown(cx)
    }
}

/// hyper's automatic answer to an unparsable request, rewritten with a JSON
/// error body; `None` for anything else. Only a whole head of status 400,
/// 414 or 431 with `content-length: 0` and nothing after it qualifies.
fn with_json_body(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let status = text
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| text.strip_prefix("HTTP/1.0 "))?;
    let error = match status.get(..4)? {
        "400 " => ApiError::MalformedRequest,
        "414 " => ApiError::UriTooLong,
        "431 " => ApiError::HeadersTooLarge,
        _ => return None,
    };
    if !text.ends_with("\r\n\r\n") {
        return None;
    }
    const EMPTY: &str = "\r\ncontent-length: 0\r\n";
    let at = text.to_ascii_lowercase().find(EMPTY)?;
    let body = String::from_utf8(error.body()).expect("error bodies are JSON text");
    let mut out = String::with_capacity(text.len() + body.len() + 128);
    out.push_str(&text[..at]);
    out.push_str(&format!(
        "\r\ncontent-length: {}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\naccess-control-allow-origin: *\r\n",
        body.len()
    ));
    out.push_str(&text[at + EMPTY.len()..]);
    out.push_str(&body);
    Some(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::with_json_body;

    #[test]
    fn only_the_automatic_error_heads_are_rewritten() {
        let head =
            "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let body = r#"{"ok":false,"error":"headers_too_large","detail":"the request head (its target and headers) is larger than the server accepts, or has more than 100 headers","retryAfter":null}"#;
        assert_eq!(
            String::from_utf8(with_json_body(head.as_bytes()).unwrap()).unwrap(),
            format!("HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: {}\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\naccess-control-allow-origin: *\r\ndate: x\r\n\r\n{body}", body.len())
        );
        for other in [
            "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 12\r\n\r\n",
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{}",
        ] {
            assert_eq!(with_json_body(other.as_bytes()), None, "{other}");
        }
    }
}
