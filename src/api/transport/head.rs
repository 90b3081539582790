//! What a request head must hold before anything reads its path: the one
//! rule both ways into a connection ask (hyper's in `conn`, the record
//! stream's own in `stream_conn`), so neither asks the other.

/// Whether `headers` hold exactly one `Host` (what an HTTP/1.1 request
/// must carry, RFC 9112 section 3.2).
pub(super) fn one_host(headers: &hyper::HeaderMap) -> bool {
    let mut hosts = headers.get_all(hyper::header::HOST).iter();
    hosts.next().is_some() && hosts.next().is_none()
}
