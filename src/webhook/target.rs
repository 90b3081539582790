//! Which target URLs an endpoint may have: http(s) only, and (unless the
//! operator allows it) never a host that resolves to a loopback, private or
//! link-local address. The check runs when an endpoint is added and again
//! at each delivery, and the delivery connects to exactly the addresses
//! checked, so a name that changes its answer in between (DNS rebinding)
//! gains nothing.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;

/// Why a target URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not a URL at all.
    #[error("{0:?} is not a URL: {1}")]
    NotAUrl(String, String),
    /// Not http or https, or without a host.
    #[error("{0:?} is not an http:// or https:// URL")]
    Scheme(String),
    /// The host does not resolve.
    #[error("cannot resolve {host}: {why}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        why: String,
    },
    /// The host resolves to a loopback, private or link-local address.
    #[error("{host} resolves to {address}, a loopback, private or link-local address; refused (allow such targets with --allow-private-targets)")]
    Private {
        /// The host.
        host: String,
        /// The address.
        address: IpAddr,
    },
}

/// Parses a target URL: http or https with a host.
pub fn parse_url(text: &str) -> Result<Url, TargetError> {
    let url = Url::parse(text).map_err(|e| TargetError::NotAUrl(text.to_owned(), e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(TargetError::Scheme(text.to_owned()));
    }
    Ok(url)
}

/// Resolves the URL's host and checks every address; returns them.
pub async fn resolve(url: &Url, allow_private: bool) -> Result<Vec<SocketAddr>, TargetError> {
    let host = url.host_str().unwrap_or_default().to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| TargetError::Resolve {
                host: host.clone(),
                why: e.to_string(),
            })?
            .collect(),
    };
    if addresses.is_empty() {
        return Err(TargetError::Resolve {
            host,
            why: "no address".into(),
        });
    }
    if !allow_private {
        if let Some(bad) = addresses.iter().find(|a| is_private(a.ip())) {
            return Err(TargetError::Private {
                host,
                address: bad.ip(),
            });
        }
    }
    Ok(addresses)
}

/// Loopback, private, link-local, unspecified, shared (CGNAT) or
/// unique-local: addresses that reach the operator's own network.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_private_v4(v4),
            None => is_private_v6(v6),
        },
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || (a == 100 && (64..128).contains(&b))
        || a == 0
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_ranges() {
        for text in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(text.parse().unwrap()), "{text}");
        }
        for text in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(!is_private(text.parse().unwrap()), "{text}");
        }
    }

    #[test]
    fn only_http_and_https() {
        assert!(parse_url("https://example.com/hook").is_ok());
        assert!(matches!(
            parse_url("ftp://example.com/"),
            Err(TargetError::Scheme(_))
        ));
        assert!(matches!(
            parse_url("file:///etc/passwd"),
            Err(TargetError::Scheme(_))
        ));
    }
}
