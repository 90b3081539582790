//! What kind of network an IP address reaches: the one classification
//! behind every outbound check (webhook targets, upstream redirects).
//!
//! An IPv6 address that carries an IPv4 address (IPv4-mapped, the
//! deprecated IPv4-compatible form, NAT64's well-known prefix, 6to4 and
//! Teredo) is classified by the IPv4 address it leads to, since that is
//! where a packet to it ends up; the local-use NAT64 prefix and the
//! deprecated site-local range are private whatever they carry.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kind of network an address reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddressKind {
    /// Reachable on the public internet.
    Public,
    /// This host (`127.0.0.0/8`, `::1`).
    Loopback,
    /// A private or shared network: RFC 1918, carrier-grade NAT
    /// (`100.64.0.0/10`), benchmarking (`198.18.0.0/15`), unique-local
    /// (`fc00::/7`), deprecated site-local (`fec0::/10`), local-use NAT64
    /// (`64:ff9b:1::/48`).
    Private,
    /// Link-local, where cloud metadata services answer (`169.254.0.0/16`,
    /// `fe80::/10`).
    LinkLocal,
    /// Not a destination at all, or not a unicast one on the internet:
    /// unspecified (`0.0.0.0/8`, `::`; Linux connects it to this host),
    /// multicast, broadcast, reserved, documentation and protocol ranges.
    Special,
}

impl AddressKind {
    /// How the kind reads in a sentence ("a loopback address").
    pub fn describe(self) -> &'static str {
        match self {
            AddressKind::Public => "a public address",
            AddressKind::Loopback => "a loopback address",
            AddressKind::Private => "a private address",
            AddressKind::LinkLocal => "a link-local (metadata) address",
            AddressKind::Special => "a special-purpose address",
        }
    }
}

/// The kind of network `ip` reaches.
pub fn classify(ip: IpAddr) -> AddressKind {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressKind {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (127, ..) => AddressKind::Loopback,
        (10, ..) | (172, 16..=31, _) | (192, 168, _) | (100, 64..=127, _) | (198, 18..=19, _) => {
            AddressKind::Private
        }
        (169, 254, _) => AddressKind::LinkLocal,
        (0, ..) | (192, 0, 0 | 2) | (198, 51, 100) | (203, 0, 113) | (224..=255, ..) => {
            AddressKind::Special
        }
        _ => AddressKind::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressKind {
    let s = ip.segments();
    let low32 = Ipv4Addr::from(((u32::from(s[6])) << 16) | u32::from(s[7]));
    if ip.is_loopback() {
        return AddressKind::Loopback;
    }
    if ip.is_unspecified() {
        return AddressKind::Special;
    }
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d).
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        return classify_v4(low32);
    }
    // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765): not a destination here.
    if s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return AddressKind::Special;
    }
    // NAT64, well-known prefix 64:ff9b::/96 (RFC 6052).
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(low32);
    }
    // Local-use NAT64, 64:ff9b:1::/48 (RFC 8215): a network of its operator's.
    if s[..3] == [0x64, 0xff9b, 1] {
        return AddressKind::Private;
    }
    match s[0] {
        // 6to4 (RFC 3056): the IPv4 address follows the prefix.
        0x2002 => classify_v4(Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2]))),
        // Teredo (RFC 4380): the client's IPv4 address, inverted, at the end.
        0x2001 if s[1] == 0 => classify_v4(Ipv4Addr::from(!u32::from(low32))),
        // Documentation (2001:db8::/32).
        0x2001 if s[1] == 0xdb8 => AddressKind::Special,
        first if first & 0xfe00 == 0xfc00 => AddressKind::Private,
        first if first & 0xffc0 == 0xfec0 => AddressKind::Private,
        first if first & 0xffc0 == 0xfe80 => AddressKind::LinkLocal,
        first if first & 0xff00 == 0xff00 => AddressKind::Special,
        // Discard-only (100::/64).
        0x0100 if s[1..4] == [0, 0, 0] => AddressKind::Special,
        _ => AddressKind::Public,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_is_classified_by_where_it_leads() {
        use AddressKind::*;
        let table = [
            ("127.0.0.1", Loopback),
            ("127.255.0.9", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", Private),
            ("100.100.100.200", Private),
            ("198.18.0.1", Private),
            ("169.254.169.254", LinkLocal),
            ("0.0.0.0", Special),
            ("0.1.2.3", Special),
            ("192.0.2.10", Special),
            ("224.0.0.1", Special),
            ("255.255.255.255", Special),
            ("93.184.216.34", Public),
            ("8.8.8.8", Public),
            ("172.32.0.1", Public),
            ("100.128.0.1", Public),
            ("::1", Loopback),
            ("::", Special),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:10.0.0.1", Private),
            ("::ffff:93.184.216.34", Public),
            ("::ffff:0:7f00:1", Special),
            // The forms of issue 26, item 8.
            ("::127.0.0.1", Loopback),
            ("64:ff9b::7f00:1", Loopback),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("64:ff9b::5db8:d822", Public),
            ("64:ff9b:1::a00:1", Private),
            ("64:ff9b:1::5db8:d822", Private),
            ("2002:7f00:1::1", Loopback),
            ("2002:a9fe:a9fe::1", LinkLocal),
            ("2002:a00:1::1", Private),
            ("2002:5db8:d822::1", Public),
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", Loopback),
            ("2001:0:4136:e378:8000:63bf:a247:d7dd", Public),
            ("fec0::1", Private),
            ("fd00::1", Private),
            ("fd00:ec2::254", Private),
            ("fe80::1", LinkLocal),
            ("ff02::1", Special),
            ("2001:db8::1", Special),
            ("100::1", Special),
            ("2606:4700::1111", Public),
        ];
        for (text, kind) in table {
            assert_eq!(classify(text.parse().unwrap()), kind, "{text}");
        }
    }
}
