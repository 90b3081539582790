//! Stream connections: a connection whose first request is a plain
//! `GET /openapi/v1/records/stream` is answered here, without hyper.
//!
//! Why: an idle record stream is a connection held open for hours, and
//! hyper keeps two 8 KiB buffers (its read buffer and its head buffer,
//! `INIT_BUFFER_SIZE`, not a setting) and its dispatcher for every
//! connection it serves, whatever the connection does. 10,000 idle streams
//! cost 21 KiB each that way; issue 17 asks for at most 16. Served here, a
//! stream holds its socket, its event state and a small task, nothing else.
//!
//! The accept loop reads the first bytes of every connection
//! ([`read_opening`]) and hands everything that is not exactly such a
//! request to hyper with those bytes replayed in front of the socket
//! (`HyperIo`, `hyper_io.rs`), so hyper sees the connection byte for byte as sent: any
//! other method, path, version, a request with a body, `Expect` or
//! `Upgrade`, a pipelined second request, HTTP/2, a head too large or not
//! yet complete within the header timeout. Only the HTTP/1.1 framing of the
//! answer is written here; the answer itself (caps, quota, headers, events)
//! comes from the same route table every request goes through. A stream's
//! answer is chunked and ends the connection when the stream ends; any
//! other answer (429, 422, 503) has a length and the connection goes on
//! under hyper, keep-alive as usual, unless the request said
//! `Connection: close` (then it ends after the answer, as hyper's would).
//! The head is read up to `--max-head-bytes`, like every other path's: a
//! larger one is hyper's, which answers 431.

use std::io;

use bytes::{Buf, Bytes, BytesMut};
use http_body_util::BodyExt;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use warp::http::{self, header, HeaderName, HeaderValue};

/// The method every stream request starts with; its path is
/// [`crate::paths::STREAM`], the route table's.
const STREAM_METHOD: &[u8] = b"GET ";

/// The path of the stream (the target without its query).
const STREAM_PATH: &str = crate::paths::STREAM;

/// Whether `bytes` may still be the start of `GET <stream path>`.
fn may_be_stream(bytes: &[u8]) -> bool {
    let target = STREAM_METHOD.iter().chain(STREAM_PATH.as_bytes());
    bytes.iter().zip(target).all(|(a, b)| a == b)
}
/// How many header lines a stream request may have before it is left to
/// hyper (which answers 431 past its own limit).
const MAX_HEADERS: usize = 64;

/// What the first bytes of a connection turned out to be.
pub(crate) enum Opening {
    /// A whole stream request, and nothing after it (boxed: the other
    /// variants are small, and this one is made once per stream).
    Stream(Box<http::Request<http_body_util::Empty<Bytes>>>),
    /// Anything else: the bytes read so far, for hyper.
    Other(Bytes),
    /// The peer closed the connection before sending anything.
    Closed,
}

/// Reads the first request head of `stream`, as far as needed to tell
/// whether it is a stream request: one read for nearly every other
/// request, since its first bytes already differ from a stream's request line.
/// At most `max_head` bytes are read (a buffer's spare room may be
/// larger than asked for, so each read is limited to what is left): a
/// head that does not fit is hyper's, which answers 431 as for any path.
pub(crate) async fn read_opening(stream: &TcpStream, max_head: usize) -> io::Result<Opening> {
    use bytes::BufMut;
    let mut buf = BytesMut::with_capacity(1024.min(max_head));
    loop {
        stream.readable().await?;
        if buf.len() == buf.capacity() {
            buf.reserve(max_head.saturating_sub(buf.len()).clamp(1, 4096));
        }
        let room = max_head.saturating_sub(buf.len()).max(1);
        match stream.try_read_buf(&mut (&mut buf).limit(room)) {
            Ok(0) if buf.is_empty() => return Ok(Opening::Closed),
            Ok(0) => return Ok(Opening::Other(buf.freeze())),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
        if !may_be_stream(&buf) {
            return Ok(Opening::Other(buf.freeze()));
        }
        match parse_stream_request(&buf) {
            Parsed::Stream(request) => return Ok(Opening::Stream(request)),
            Parsed::Other => return Ok(Opening::Other(buf.freeze())),
            Parsed::Partial if buf.len() >= max_head => return Ok(Opening::Other(buf.freeze())),
            Parsed::Partial => {}
        }
    }
}

enum Parsed {
    Stream(Box<http::Request<http_body_util::Empty<Bytes>>>),
    Other,
    Partial,
}

/// A whole request head that is a plain stream request, and nothing more.
fn parse_stream_request(bytes: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut head = httparse::Request::new(&mut headers);
    let len = match head.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Other,
    };
    let (Some("GET"), Some(target), Some(1)) = (head.method, head.path, head.version) else {
        return Parsed::Other;
    };
    // Pipelined bytes belong to hyper, and so does any other path.
    if len != bytes.len() || target.split('?').next() != Some(STREAM_PATH) {
        return Parsed::Other;
    }
    let Ok(uri) = target.parse::<http::Uri>() else {
        return Parsed::Other;
    };
    let mut request = http::Request::new(http_body_util::Empty::new());
    *request.uri_mut() = uri;
    *request.version_mut() = http::Version::HTTP_11;
    let map = request.headers_mut();
    for line in head.headers.iter() {
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(line.name.as_bytes()),
            HeaderValue::from_bytes(line.value),
        ) else {
            return Parsed::Other;
        };
        // A body, an expectation or a protocol switch: hyper's business.
        if [
            header::CONTENT_LENGTH,
            header::TRANSFER_ENCODING,
            header::EXPECT,
            header::UPGRADE,
        ]
        .contains(&name)
        {
            return Parsed::Other;
        }
        map.append(name, value);
    }
    // Without exactly one Host, hyper's path answers the 400.
    if !super::head::one_host(request.headers()) {
        return Parsed::Other;
    }
    Parsed::Stream(Box::new(request))
}

/// Whether a request's `Connection` headers ask to close the connection
/// after the answer (RFC 9112 section 9.6: the `close` option, in any case).
pub(crate) fn asks_close(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|option| option.trim().eq_ignore_ascii_case("close"))
}

/// How a stream connection's answer ended.
pub(crate) enum Answered {
    /// A whole answer with a length: the connection can go on (under hyper).
    KeepAlive,
    /// The stream ended, or the peer went: the connection is done.
    Done,
}

/// Writes `response` to `stream` as HTTP/1.1: chunked when its length is
/// not known in advance (the stream), with `content-length` otherwise. A
/// chunked answer ends when the body ends (the server shuts down) or when
/// the peer closes the connection or sends anything more; one with a
/// length ends the connection too when `close` (the request asked so),
/// saying `connection: close`.
pub(crate) async fn write_answer(
    stream: &mut TcpStream,
    response: warp::reply::Response,
    close: bool,
) -> io::Result<Answered> {
    let (parts, mut body) = response.into_parts();
    let length = http_body::Body::size_hint(&body).exact();
    let mut head = Vec::with_capacity(512);
    head.extend_from_slice(b"HTTP/1.1 ");
    head.extend_from_slice(parts.status.as_str().as_bytes());
    head.push(b' ');
    head.extend_from_slice(parts.status.canonical_reason().unwrap_or("").as_bytes());
    head.extend_from_slice(b"\r\n");
    for (name, value) in &parts.headers {
        if name == header::CONTENT_LENGTH || name == header::TRANSFER_ENCODING {
            continue;
        }
        push_header(&mut head, name.as_str(), value.as_bytes());
    }
    if !parts.headers.contains_key(header::DATE) {
        let now = httpdate::fmt_http_date(std::time::SystemTime::now());
        push_header(&mut head, "date", now.as_bytes());
    }
    match length {
        Some(length) => push_header(&mut head, "content-length", length.to_string().as_bytes()),
        None => push_header(&mut head, "transfer-encoding", b"chunked"),
    }
    if close && length.is_some() {
        push_header(&mut head, "connection", b"close");
    }
    head.extend_from_slice(b"\r\n");
    if let Some(length) = length {
        let body = body
            .collect()
            .await
            .map_err(|e| io::Error::other(e.to_string()))?
            .to_bytes();
        debug_assert_eq!(body.len() as u64, length);
        head.extend_from_slice(&body);
        stream.write_all(&head).await?;
        if close {
            stream.shutdown().await?;
            return Ok(Answered::Done);
        }
        return Ok(Answered::KeepAlive);
    }
    stream.write_all(&head).await?;
    drop(head);
    let mut probe = [0u8; 16];
    loop {
        tokio::select! {
            frame = body.frame() => match frame {
                Some(Ok(frame)) => {
                    let Ok(mut data) = frame.into_data() else { continue };
                    if !data.has_remaining() {
                        continue;
                    }
                    let mut chunk = Vec::with_capacity(data.remaining() + 12);
                    chunk.extend_from_slice(format!("{:x}\r\n", data.remaining()).as_bytes());
                    while data.has_remaining() {
                        let part = data.chunk();
                        chunk.extend_from_slice(part);
                        let n = part.len();
                        data.advance(n);
                    }
                    chunk.extend_from_slice(b"\r\n");
                    stream.write_all(&chunk).await?;
                }
                Some(Err(e)) => return Err(io::Error::other(e.to_string())),
                None => {
                    stream.write_all(b"0\r\n\r\n").await?;
                    return Ok(Answered::Done);
                }
            },
            // The peer closed the connection (or, against the protocol,
            // sent more while its stream runs): the stream ends now, so
            // its place under the caps is free for a reconnect at once.
            readable = stream.readable() => {
                readable?;
                match stream.try_read(&mut probe) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    _ => return Ok(Answered::Done),
                }
            }
        }
    }
}

fn push_header(head: &mut Vec<u8>, name: &str, value: &[u8]) {
    head.extend_from_slice(name.as_bytes());
    head.extend_from_slice(b": ");
    head.extend_from_slice(value);
    head.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::{parse_stream_request, Parsed};

    fn kind(head: &str) -> &'static str {
        match parse_stream_request(head.as_bytes()) {
            Parsed::Stream(_) => "stream",
            Parsed::Other => "other",
            Parsed::Partial => "partial",
        }
    }

    #[test]
    fn only_a_whole_plain_stream_request_is_taken() {
        let get = "GET /openapi/v1/records/stream?kind=all HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(kind(get), "stream");
        assert_eq!(
            kind("GET /openapi/v1/records/stream HTTP/1.1\r\nHost: x\r\n"),
            "partial"
        );
        for other in [
            "GET /openapi/v1/records/streams HTTP/1.1\r\n\r\n",
            "GET /openapi/v1/records/stream HTTP/1.0\r\n\r\n",
            "GET /openapi/v1/records/stream HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
            "GET /openapi/v1/records/stream HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /openapi/v1/records/stream HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET /openapi/v1/records/stream HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
            "GET /openapi/v1/records/stream HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
            "GET /openapi/v1/records/stream HTTP/1.1\r\nBad Header\r\n\r\n",
        ] {
            assert_eq!(kind(other), "other", "{other:?}");
        }
    }
}
