//! Connection discipline: how many connections the server holds, in all
//! and per client address, and how long a connection may take to send a
//! request head.
//!
//! A connection past a cap is refused at accept, before any parsing: one
//! non-blocking write of a fixed JSON 503 (`too_many_connections`), then
//! close. Everyone else keeps being served. Refusals are logged at most
//! once per [`REPORT_EVERY`], with a count, so a flood cannot flood the log.
//! Trusted proxies are exempt from the per-address cap (every client
//! behind them shares their address); the total cap holds for all.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Limits on connections (`serve --header-timeout` and friends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Time for a request head to arrive, counted from the moment the
    /// connection is ready for one: just after accept, and (HTTP/1) after
    /// each response, so it is also HTTP/1's idle keep-alive timeout. An
    /// HTTP/2 connection is held to it for its first request, then pinged.
    pub header_timeout: Duration,
    /// Connections held at once, in all.
    pub max_connections: usize,
    /// Connections held at once from one client (an IPv6 client by its
    /// prefix, as the quota keys it; trusted proxies exempt).
    pub max_connections_per_ip: usize,
    /// Largest request head (request line and headers), in bytes.
    pub max_head_bytes: usize,
    /// Time for a request body to arrive whole, from its head
    /// (see the `deadline` module): past it, a JSON 408 and the connection closed.
    pub body_timeout: Duration,
}

/// The smallest head buffer hyper accepts.
pub const MIN_HEAD_BYTES: usize = 8192;

/// How often refusals are reported.
pub const REPORT_EVERY: Duration = Duration::from_secs(10);

/// The answer to a connection past a cap, written once without waiting.
pub const BUSY_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: application/json\r\n\
x-content-type-options: nosniff\r\n\
access-control-allow-origin: *\r\n\
retry-after: 1\r\n\
connection: close\r\n\
content-length: 120\r\n\
\r\n\
{\"ok\":false,\"error\":\"too_many_connections\",\"detail\":\"the server holds too many connections; retry later\",\"retryAfter\":1}";

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The total cap was reached.
    Total,
    /// The address's cap was reached.
    PerIp,
}

/// Counts open connections; hands out a [`Ticket`] per admitted one.
#[derive(Debug)]
pub struct ConnectionGate {
    limits: ConnectionLimits,
    open: AtomicUsize,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
    report: Mutex<Report>,
}

#[derive(Debug)]
struct Report {
    last: Option<Instant>,
    refused: usize,
}

/// An admitted connection; the counts go down when it is dropped.
#[derive(Debug)]
pub struct Ticket {
    gate: Arc<ConnectionGate>,
    ip: Option<IpAddr>,
}

impl ConnectionGate {
    /// A gate for `limits`.
    pub fn new(limits: ConnectionLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            open: AtomicUsize::new(0),
            per_ip: Mutex::new(HashMap::new()),
            report: Mutex::new(Report {
                last: None,
                refused: 0,
            }),
        })
    }

    /// Connections open now.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Admits a connection from `ip` (`exempt`: a trusted proxy, no per-address cap).
    pub fn admit(self: &Arc<Self>, ip: IpAddr, exempt: bool) -> Result<Ticket, Refusal> {
        if self.open.fetch_add(1, Ordering::Relaxed) >= self.limits.max_connections {
            self.open.fetch_sub(1, Ordering::Relaxed);
            return Err(self.refused(Refusal::Total));
        }
        if exempt {
            return Ok(Ticket {
                gate: self.clone(),
                ip: None,
            });
        }
        let mut per_ip = self.per_ip.lock().unwrap_or_else(|p| p.into_inner());
        let count = per_ip.entry(ip).or_insert(0);
        if *count >= self.limits.max_connections_per_ip {
            drop(per_ip);
            self.open.fetch_sub(1, Ordering::Relaxed);
            return Err(self.refused(Refusal::PerIp));
        }
        *count += 1;
        Ok(Ticket {
            gate: self.clone(),
            ip: Some(ip),
        })
    }

    /// Counts a refusal and reports at most once per [`REPORT_EVERY`].
    fn refused(&self, why: Refusal) -> Refusal {
        let mut report = self.report.lock().unwrap_or_else(|p| p.into_inner());
        report.refused += 1;
        if report.last.is_none_or(|t| t.elapsed() >= REPORT_EVERY) {
            let cap = match why {
                Refusal::Total => format!(
                    "{} connections open in all (--max-connections)",
                    self.limits.max_connections
                ),
                Refusal::PerIp => format!(
                    "{} connections open from one address (--max-connections-per-ip)",
                    self.limits.max_connections_per_ip
                ),
            };
            tracing::warn!(
                "refusing connections at the cap of {cap}; {} refused since the last report",
                report.refused
            );
            report.refused = 0;
            report.last = Some(Instant::now());
        }
        why
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.gate.open.fetch_sub(1, Ordering::Relaxed);
        if let Some(ip) = self.ip {
            let mut per_ip = self.gate.per_ip.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(count) = per_ip.get_mut(&ip) {
                *count -= 1;
                if *count == 0 {
                    per_ip.remove(&ip);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_answer_declares_its_body_length() {
        let text = std::str::from_utf8(BUSY_RESPONSE).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"], "too_many_connections");
    }

    #[test]
    fn caps_in_all_and_per_address() {
        let gate = ConnectionGate::new(ConnectionLimits {
            max_connections: 3,
            max_connections_per_ip: 2,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            max_head_bytes: MIN_HEAD_BYTES,
        });
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let a1 = gate.admit(a, false).unwrap();
        let _a2 = gate.admit(a, false).unwrap();
        assert_eq!(gate.admit(a, false).unwrap_err(), Refusal::PerIp);
        let _b1 = gate.admit(b, true).unwrap();
        assert_eq!(gate.admit(b, true).unwrap_err(), Refusal::Total);
        drop(a1);
        assert_eq!(gate.open(), 2);
        assert!(gate.admit(a, false).is_ok());
    }
}
