//! Who a request counts against: the peer IP (IPv6 by its /64 by default),
//! or, only when the peer is a trusted proxy, the right-most address that
//! is not itself a trusted proxy in the ONE forwarding header the operator
//! named ([`ClientIpHeader`], `X-Forwarded-For` by default). Every other
//! forwarding header is ignored: a client can send any header it likes, and
//! a proxy passes through what it does not set, so only the proxy's own
//! header is vouched for.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::SettingError;

/// An address range (`10.0.0.0/8`, `2001:db8::/32`, or a bare address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `ADDR/LEN` or a bare address, as a range of trusted proxies:
    /// a range that holds every address (`0.0.0.0/0`, `::/0`) is refused,
    /// since trusting it lets every client choose its own quota key.
    pub fn parse(text: &str) -> Result<Self, SettingError> {
        let fail = || SettingError::Range(text.to_owned());
        let (addr, len) = match text.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (text, None),
        };
        let network: IpAddr = addr.trim().parse().map_err(|_| fail())?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match len {
            Some(l) => l
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(fail)?,
            None => max,
        };
        if prefix == 0 {
            return Err(SettingError::TrustsEveryone(text.to_owned()));
        }
        // An IPv4-mapped range (`::ffff:10.0.0.0/104`) is the IPv4 range
        // it maps: a peer is keyed by its canonical address, IPv4 for a
        // mapped one, so only then can the range ever match.
        if let (IpAddr::V6(v6), Some(v4)) = (network, network_v4(network)) {
            if prefix >= 96 && v6.segments()[5] == 0xffff {
                return Self::parse(&format!("{v4}/{}", prefix - 96));
            }
        }
        Ok(Self {
            network: mask(network, prefix),
            prefix,
        })
    }

    /// Whether `ip` is inside the range (IPv4-mapped IPv6 counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        ip.is_ipv4() == self.network.is_ipv4() && mask(ip, self.prefix) == self.network
    }

    /// The first and last address of the range, as numbers of its family.
    fn bounds(&self) -> (u128, u128) {
        let (bits, start) = match self.network {
            IpAddr::V4(v4) => (32, u128::from(u32::from(v4))),
            IpAddr::V6(v6) => (128, u128::from(v6)),
        };
        let size_bits = bits - u32::from(self.prefix);
        let last = if size_bits >= 128 {
            u128::MAX
        } else {
            start | ((1u128 << size_bits) - 1)
        };
        (start, last)
    }
}

/// `network` as the IPv4 address an IPv4-mapped IPv6 address maps.
fn network_v4(network: IpAddr) -> Option<Ipv4Addr> {
    match network {
        IpAddr::V6(v6) => v6.to_ipv4_mapped(),
        IpAddr::V4(_) => None,
    }
}

/// Checks a set of trusted-proxy ranges: refused when together they hold
/// every IPv4 or every IPv6 address (`0.0.0.0/1` with `128.0.0.0/1`), since
/// then every client may name its own quota key, as with `0.0.0.0/0`.
pub fn check_trusted(ranges: &[Cidr]) -> Result<(), SettingError> {
    for (v4, last) in [(true, u128::from(u32::MAX)), (false, u128::MAX)] {
        let mut spans: Vec<(u128, u128)> = ranges
            .iter()
            .filter(|r| r.network.is_ipv4() == v4)
            .map(Cidr::bounds)
            .collect();
        spans.sort_unstable();
        // Walk up from zero: `next` is the first address not yet covered.
        let mut next: u128 = 0;
        let mut everything = false;
        for (start, end) in spans {
            if start > next {
                break;
            }
            if end >= last {
                everything = true;
                break;
            }
            next = next.max(end + 1);
        }
        if everything {
            let listed: Vec<String> = ranges
                .iter()
                .filter(|r| r.network.is_ipv4() == v4)
                .map(ToString::to_string)
                .collect();
            return Err(SettingError::TrustsEveryone(listed.join(", ")));
        }
    }
    Ok(())
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// `ip`, with an IPv4-mapped IPv6 address as the IPv4 address it maps.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// `ip` with all but the first `prefix` bits cleared.
pub fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let bits = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(prefix.min(32)))
            };
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & bits))
        }
        IpAddr::V6(v6) => {
            let bits = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(prefix.min(128)))
            };
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & bits))
        }
    }
}

/// The forwarding header a trusted proxy sets (`--client-ip-header`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum ClientIpHeader {
    /// `X-Forwarded-For: client, proxy1, …` (the default).
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=…`.
    Forwarded,
    /// Another header with an address or a comma-separated list (`X-Real-IP`);
    /// the name in lower case.
    Other(String),
}

impl ClientIpHeader {
    /// Parses a header name (any case).
    pub fn parse(text: &str) -> Result<Self, SettingError> {
        let name = text.trim().to_ascii_lowercase();
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        if !valid {
            return Err(SettingError::Header(text.to_owned()));
        }
        Ok(match name.as_str() {
            "x-forwarded-for" => Self::XForwardedFor,
            "forwarded" => Self::Forwarded,
            _ => Self::Other(name),
        })
    }

    /// The header's name in lower case.
    pub fn name(&self) -> &str {
        match self {
            Self::XForwardedFor => "x-forwarded-for",
            Self::Forwarded => "forwarded",
            Self::Other(name) => name,
        }
    }
}

/// How client keys are derived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientKeyPolicy {
    /// IPv6 clients are keyed by this prefix (default 64).
    pub ipv6_prefix: u8,
    /// Proxies whose forwarding header is believed.
    pub trusted_proxies: Vec<Cidr>,
    /// The one forwarding header those proxies set.
    pub header: ClientIpHeader,
}

impl Default for ClientKeyPolicy {
    fn default() -> Self {
        Self {
            ipv6_prefix: 64,
            trusted_proxies: Vec::new(),
            header: ClientIpHeader::default(),
        }
    }
}

impl ClientKeyPolicy {
    fn trusted(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.iter().any(|c| c.contains(ip))
    }

    /// Whether a forwarding header from `peer` is believed.
    pub fn trusts(&self, peer: IpAddr) -> bool {
        self.trusted(canonical(peer))
    }

    /// The key for a request from `peer` whose [`header`](Self::header)
    /// has `value` (its lines joined with `, `).
    pub fn client_key(&self, peer: IpAddr, value: Option<&str>) -> IpAddr {
        let mut client = canonical(peer);
        if let Some(value) = value.filter(|_| self.trusted(client)) {
            let hops: Vec<Option<IpAddr>> = match self.header {
                ClientIpHeader::Forwarded => forwarded_for_values(value).map(parse_node).collect(),
                _ => value.split(',').map(|v| parse_node(v.trim())).collect(),
            };
            // Walk from the nearest hop outwards; stop at the first address a
            // trusted proxy did not add, or at anything unreadable.
            for hop in hops.into_iter().rev() {
                match hop.map(canonical) {
                    Some(ip) => {
                        client = ip;
                        if !self.trusted(ip) {
                            break;
                        }
                    }
                    None => break,
                }
            }
        }
        match client {
            IpAddr::V6(_) => mask(client, self.ipv6_prefix),
            v4 => v4,
        }
    }
}

/// Forwarding headers that are a sign of a proxy in front of the server.
pub const FORWARDING_HEADERS: [&str; 3] = ["x-forwarded-for", "forwarded", "x-real-ip"];

/// Peers that sent forwarding headers without being trusted, each reported
/// once: usually a proxy the operator forgot to trust, which makes every
/// client behind it share one quota. Bounded, so a client cannot grow it.
#[derive(Debug, Default)]
pub struct UntrustedForwarders(std::sync::Mutex<std::collections::HashSet<IpAddr>>);

impl UntrustedForwarders {
    /// The most peers remembered; later ones are not reported.
    pub const MAX_PEERS: usize = 256;

    /// Whether `peer` is reported for the first time now.
    pub fn first_time(&self, peer: IpAddr) -> bool {
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        seen.len() < Self::MAX_PEERS && seen.insert(canonical(peer))
    }
}

/// The `for=` values of a `Forwarded` header, in order.
fn forwarded_for_values(header: &str) -> impl Iterator<Item = &str> {
    header
        .split(',')
        .flat_map(|element| element.split(';'))
        .filter_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("for")
                .then(|| value.trim().trim_matches('"'))
        })
}

/// An address from a forwarding header: `1.2.3.4`, `1.2.3.4:80`, `[2001:db8::1]:80`, `2001:db8::1`.
fn parse_node(value: &str) -> Option<IpAddr> {
    if let Ok(ip) = value.parse() {
        return Some(ip);
    }
    if let Some(rest) = value.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    value
        .rsplit_once(':')
        .and_then(|(host, _)| host.parse::<Ipv4Addr>().ok())
        .map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn ipv6_is_keyed_by_its_prefix() {
        let p = ClientKeyPolicy::default();
        assert_eq!(
            p.client_key(ip("2001:db8:1:2:aaaa::1"), None),
            ip("2001:db8:1:2::")
        );
        let p48 = ClientKeyPolicy {
            ipv6_prefix: 48,
            ..ClientKeyPolicy::default()
        };
        assert_eq!(
            p48.client_key(ip("2001:db8:1:2::1"), None),
            ip("2001:db8:1::")
        );
        assert_eq!(p.client_key(ip("::ffff:192.0.2.7"), None), ip("192.0.2.7"));
    }

    #[test]
    fn forwarding_headers_count_only_behind_a_trusted_proxy() {
        let untrusted = ClientKeyPolicy::default();
        assert_eq!(
            untrusted.client_key(ip("203.0.113.9"), Some("198.51.100.1")),
            ip("203.0.113.9")
        );
        let p = ClientKeyPolicy {
            trusted_proxies: vec![Cidr::parse("10.0.0.0/8").unwrap()],
            ..ClientKeyPolicy::default()
        };
        assert_eq!(
            p.client_key(ip("203.0.113.9"), Some("198.51.100.1")),
            ip("203.0.113.9")
        );
        // Right-most untrusted address wins; a spoofed left-most entry changes nothing.
        assert_eq!(
            p.client_key(ip("10.0.0.1"), Some("1.1.1.1, 198.51.100.1, 10.0.0.2")),
            ip("198.51.100.1")
        );
        assert_eq!(
            p.client_key(ip("10.0.0.1"), Some("192.0.2.5:1234")),
            ip("192.0.2.5")
        );
        // Garbage stops the walk at the last trusted hop.
        assert_eq!(
            p.client_key(ip("10.0.0.1"), Some("198.51.100.1, unknown")),
            ip("10.0.0.1")
        );
        assert_eq!(p.client_key(ip("10.0.0.1"), None), ip("10.0.0.1"));
        let forwarded = ClientKeyPolicy {
            header: ClientIpHeader::Forwarded,
            ..p.clone()
        };
        assert_eq!(
            forwarded.client_key(
                ip("10.0.0.1"),
                Some("for=192.0.2.60;proto=http, for=\"[2001:db8:cafe::17]:4711\"")
            ),
            ip("2001:db8:cafe::")
        );
    }

    #[test]
    fn header_names() {
        assert_eq!(
            ClientIpHeader::parse("X-Forwarded-For"),
            Ok(ClientIpHeader::XForwardedFor)
        );
        assert_eq!(
            ClientIpHeader::parse("Forwarded"),
            Ok(ClientIpHeader::Forwarded)
        );
        assert_eq!(
            ClientIpHeader::parse("X-Real-IP").map(|h| h.name().to_owned()),
            Ok("x-real-ip".to_owned())
        );
        assert!(ClientIpHeader::parse("x real ip").is_err());
        assert!(ClientIpHeader::parse("").is_err());
    }

    #[test]
    fn cidr_parsing() {
        assert_eq!(Cidr::parse("10.1.2.3/8").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(Cidr::parse("::1").unwrap().to_string(), "::1/128");
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert!(Cidr::parse("ten").is_err());
        for everything in ["0.0.0.0/0", "::/0", "10.0.0.0/0"] {
            let refused = Cidr::parse(everything).unwrap_err();
            assert!(
                refused.to_string().contains("holds every address"),
                "{refused}"
            );
        }
        assert!(Cidr::parse("0.0.0.0/1").is_ok());
        assert_eq!(
            Cidr::parse("::ffff:10.0.0.0/104").unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert!(Cidr::parse("::ffff:0:0/96").is_err());
    }

    #[test]
    fn a_set_of_ranges_that_holds_every_address_is_refused() {
        let set = |texts: &[&str]| -> Vec<Cidr> {
            texts.iter().map(|t| Cidr::parse(t).unwrap()).collect()
        };
        for everyone in [
            &["0.0.0.0/1", "128.0.0.0/1"][..],
            &["128.0.0.0/1", "10.0.0.0/8", "0.0.0.0/2", "64.0.0.0/2"],
            &["::/1", "8000::/1"],
            &["0.0.0.0/1", "192.168.0.0/16", "128.0.0.0/2", "192.0.0.0/2"],
        ] {
            assert!(check_trusted(&set(everyone)).is_err(), "{everyone:?}");
        }
        for some in [
            &["0.0.0.0/1", "128.0.0.0/2"][..],
            &["0.0.0.0/1", "::/1", "8000::/2"],
            &["10.0.0.0/8", "192.168.0.0/16", "fc00::/7"],
            &["0.0.0.0/1", "128.0.0.1/32", "128.0.0.2/31", "192.0.0.0/2"],
        ] {
            assert!(check_trusted(&set(some)).is_ok(), "{some:?}");
        }
    }
}
