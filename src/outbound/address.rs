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

/// One block of an IANA special-purpose address registry (or of the
/// multicast or reserved space), what it is, and the kind it is classified
/// as.
struct Block<A> {
    /// The network's first address.
    network: A,
    /// Its prefix length.
    prefix: u8,
    /// The kind of network it reaches ([`AddressKind::Public`] for the
    /// blocks the registry marks globally reachable inside a larger one
    /// that is not).
    kind: AddressKind,
    /// The registry's name for it, and where it is defined.
    name: &'static str,
}

use AddressKind::{LinkLocal, Loopback, Private, Public, Special};

const fn v4(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    prefix: u8,
    kind: AddressKind,
    name: &'static str,
) -> Block<u32> {
    Block {
        network: u32::from_be_bytes([a, b, c, d]),
        prefix,
        kind,
        name,
    }
}

/// The IPv4 blocks that are not globally reachable: the IANA IPv4
/// Special-Purpose Address Registry (every block whose "Globally Reachable"
/// is False or N/A), with its globally reachable exceptions inside them,
/// and the multicast and reserved space. The longest matching prefix
/// decides; an address in none is public.
const V4_BLOCKS: &[Block<u32>] = &[
    v4(0, 0, 0, 0, 8, Special, "\"this network\" (RFC 791)"),
    v4(10, 0, 0, 0, 8, Private, "private use (RFC 1918)"),
    v4(
        100,
        64,
        0,
        0,
        10,
        Private,
        "shared address space (RFC 6598)",
    ),
    v4(127, 0, 0, 0, 8, Loopback, "loopback (RFC 1122)"),
    v4(169, 254, 0, 0, 16, LinkLocal, "link local (RFC 3927)"),
    v4(172, 16, 0, 0, 12, Private, "private use (RFC 1918)"),
    v4(
        192,
        0,
        0,
        0,
        24,
        Special,
        "IETF protocol assignments (RFC 6890)",
    ),
    v4(
        192,
        0,
        0,
        9,
        32,
        Public,
        "port control protocol anycast (RFC 7723)",
    ),
    v4(
        192,
        0,
        0,
        10,
        32,
        Public,
        "traversal using relays around NAT anycast (RFC 8155)",
    ),
    v4(
        192,
        0,
        2,
        0,
        24,
        Special,
        "documentation, TEST-NET-1 (RFC 5737)",
    ),
    v4(
        192,
        88,
        99,
        0,
        24,
        Special,
        "deprecated 6to4 relay anycast (RFC 7526)",
    ),
    v4(192, 168, 0, 0, 16, Private, "private use (RFC 1918)"),
    v4(198, 18, 0, 0, 15, Private, "benchmarking (RFC 2544)"),
    v4(
        198,
        51,
        100,
        0,
        24,
        Special,
        "documentation, TEST-NET-2 (RFC 5737)",
    ),
    v4(
        203,
        0,
        113,
        0,
        24,
        Special,
        "documentation, TEST-NET-3 (RFC 5737)",
    ),
    v4(224, 0, 0, 0, 4, Special, "multicast (RFC 5771)"),
    v4(240, 0, 0, 0, 4, Special, "reserved (RFC 1112)"),
    v4(
        255,
        255,
        255,
        255,
        32,
        Special,
        "limited broadcast (RFC 919)",
    ),
];

const fn v6(segments: [u16; 8], prefix: u8, kind: AddressKind, name: &'static str) -> Block<u128> {
    let mut network = 0u128;
    let mut i = 0;
    while i < 8 {
        network = (network << 16) | segments[i] as u128;
        i += 1;
    }
    Block {
        network,
        prefix,
        kind,
        name,
    }
}

/// The IPv6 blocks that are not globally reachable: the IANA IPv6
/// Special-Purpose Address Registry (as [`V4_BLOCKS`]), the deprecated
/// site-local range and multicast. The forms that carry an IPv4 address
/// (IPv4-mapped, IPv4-compatible, NAT64's well-known prefix, 6to4, Teredo)
/// are classified by that address before this table is read.
const V6_BLOCKS: &[Block<u128>] = &[
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        128,
        Special,
        "unspecified (RFC 4291)",
    ),
    v6(
        [0, 0, 0, 0, 0, 0, 0, 1],
        128,
        Loopback,
        "loopback (RFC 4291)",
    ),
    v6(
        [0, 0, 0, 0, 0xffff, 0, 0, 0],
        96,
        Special,
        "IPv4-translated (RFC 2765)",
    ),
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        Private,
        "local-use IPv4/IPv6 translation (RFC 8215)",
    ),
    v6(
        [0x100, 0, 0, 0, 0, 0, 0, 0],
        64,
        Special,
        "discard-only (RFC 6666)",
    ),
    v6(
        [0x100, 0, 0, 1, 0, 0, 0, 0],
        64,
        Special,
        "dummy IPv6 prefix (RFC 9780)",
    ),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        23,
        Special,
        "IETF protocol assignments (RFC 2928)",
    ),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 1],
        128,
        Public,
        "port control protocol anycast (RFC 7723)",
    ),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 2],
        128,
        Public,
        "traversal using relays around NAT anycast (RFC 8155)",
    ),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 3],
        128,
        Public,
        "DNS-SD service registration protocol anycast (RFC 9665)",
    ),
    v6(
        [0x2001, 2, 0, 0, 0, 0, 0, 0],
        48,
        Private,
        "benchmarking (RFC 5180)",
    ),
    v6([0x2001, 3, 0, 0, 0, 0, 0, 0], 32, Public, "AMT (RFC 7450)"),
    v6(
        [0x2001, 4, 0x112, 0, 0, 0, 0, 0],
        48,
        Public,
        "AS112-v6 (RFC 7535)",
    ),
    v6(
        [0x2001, 0x10, 0, 0, 0, 0, 0, 0],
        28,
        Special,
        "deprecated ORCHID (RFC 4843)",
    ),
    v6(
        [0x2001, 0x20, 0, 0, 0, 0, 0, 0],
        28,
        Public,
        "ORCHIDv2 (RFC 7343)",
    ),
    v6(
        [0x2001, 0x30, 0, 0, 0, 0, 0, 0],
        28,
        Public,
        "drone remote ID entity tags (RFC 9374)",
    ),
    v6(
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        Special,
        "documentation (RFC 3849)",
    ),
    v6(
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        Special,
        "documentation (RFC 9637)",
    ),
    v6(
        [0x5f00, 0, 0, 0, 0, 0, 0, 0],
        16,
        Special,
        "segment routing SIDs (RFC 9602)",
    ),
    v6(
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        Private,
        "unique-local (RFC 4193)",
    ),
    v6(
        [0xfe80, 0, 0, 0, 0, 0, 0, 0],
        10,
        LinkLocal,
        "link-local unicast (RFC 4291)",
    ),
    v6(
        [0xfec0, 0, 0, 0, 0, 0, 0, 0],
        10,
        Private,
        "deprecated site-local (RFC 3879)",
    ),
    v6(
        [0xff00, 0, 0, 0, 0, 0, 0, 0],
        8,
        Special,
        "multicast (RFC 4291)",
    ),
];

/// The block of `table` with the longest prefix that holds `address` of
/// `bits` bits.
fn longest_match(table: &[Block<u128>], address: u128, bits: u32) -> Option<&Block<u128>> {
    table
        .iter()
        .filter(|block| {
            let host_bits = bits - u32::from(block.prefix);
            host_bits >= 128 || (address >> host_bits) == (block.network >> host_bits)
        })
        .max_by_key(|block| block.prefix)
}

/// [`V4_BLOCKS`] widened, for [`longest_match`].
fn v4_table() -> &'static [Block<u128>] {
    static TABLE: std::sync::OnceLock<Vec<Block<u128>>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        V4_BLOCKS
            .iter()
            .map(|b| Block {
                network: u128::from(b.network),
                prefix: b.prefix,
                kind: b.kind,
                name: b.name,
            })
            .collect()
    })
}

fn classify_v4(ip: Ipv4Addr) -> AddressKind {
    longest_match(v4_table(), u128::from(u32::from(ip)), 32).map_or(Public, |b| b.kind)
}

fn classify_v6(ip: Ipv6Addr) -> AddressKind {
    let s = ip.segments();
    let low32 = Ipv4Addr::from(((u32::from(s[6])) << 16) | u32::from(s[7]));
    // The forms that carry an IPv4 address lead where that address leads:
    // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible
    // (::a.b.c.d, but not :: and ::1, which are the table's).
    if s[..5] == [0; 5] && (s[5] == 0xffff || (s[5] == 0 && u32::from(low32) > 1)) {
        return classify_v4(low32);
    }
    // NAT64, well-known prefix 64:ff9b::/96 (RFC 6052).
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(low32);
    }
    // 6to4 (RFC 3056): the IPv4 address follows the prefix.
    if s[0] == 0x2002 {
        return classify_v4(Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2])));
    }
    // Teredo, 2001::/32 (RFC 4380): the client's IPv4 address, inverted, at the end.
    if s[0] == 0x2001 && s[1] == 0 {
        return classify_v4(Ipv4Addr::from(!u32::from(low32)));
    }
    longest_match(V6_BLOCKS, u128::from(ip), 128).map_or(Public, |b| b.kind)
}

/// Every block of both tables, with its kind and name, as `10.0.0.0/8`
/// or `fc00::/7` (what the tests and the docs list).
pub fn special_blocks() -> Vec<(String, AddressKind, &'static str)> {
    let v4 = V4_BLOCKS.iter().map(|b| {
        (
            format!("{}/{}", Ipv4Addr::from(b.network), b.prefix),
            b.kind,
            b.name,
        )
    });
    let v6 = V6_BLOCKS.iter().map(|b| {
        (
            format!("{}/{}", Ipv6Addr::from(b.network), b.prefix),
            b.kind,
            b.name,
        )
    });
    v4.chain(v6).collect()
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

    /// Each block's first and last address, and the addresses just
    /// outside it, are classified by the block (or, outside, by what holds
    /// them): the table is what decides.
    #[test]
    fn every_block_of_the_registries_decides_its_addresses() {
        for (cidr, kind, name) in special_blocks() {
            let (network, prefix) = cidr.split_once('/').unwrap();
            let prefix: u32 = prefix.parse().unwrap();
            let network: IpAddr = network.parse().unwrap();
            let (first, last) = match network {
                IpAddr::V4(v4) => {
                    let n = u32::from(v4);
                    let size = u32::MAX.checked_shr(prefix).unwrap_or(0);
                    (IpAddr::V4(n.into()), IpAddr::V4((n | size).into()))
                }
                IpAddr::V6(v6) => {
                    let n = u128::from(v6);
                    let size = u128::MAX.checked_shr(prefix).unwrap_or(0);
                    (IpAddr::V6(n.into()), IpAddr::V6((n | size).into()))
                }
            };
            // Teredo (2001::/32) leads where its IPv4 address does.
            let teredo =
                |ip: IpAddr| matches!(ip, IpAddr::V6(v6) if v6.segments()[..2] == [0x2001, 0]);
            for ip in [first, last] {
                if !teredo(ip) {
                    assert_eq!(classify(ip), kind, "{ip} in {cidr} ({name})");
                }
            }
        }
        // The blocks the registry marks not globally reachable are never
        // public, whatever else the address spells.
        for text in [
            "192.88.99.1",
            "192.0.0.8",
            "192.0.0.170",
            "100:0:0:1::1",
            "2001:2::1",
            "2001:10::1",
            "3fff::1",
            "5f00::1",
            "64:ff9b::c058:6301",
            "2002:c058:6301::1",
        ] {
            assert_ne!(
                classify(text.parse().unwrap()),
                AddressKind::Public,
                "{text}"
            );
        }
        // And what the registry marks reachable inside them is public.
        for text in [
            "192.0.0.9",
            "192.0.0.10",
            "2001:1::1",
            "2001:3::1",
            "2001:4:112::1",
            "2001:20::1",
            "2001:30::1",
            "192.31.196.1",
            "192.52.193.1",
            "192.175.48.1",
        ] {
            assert_eq!(
                classify(text.parse().unwrap()),
                AddressKind::Public,
                "{text}"
            );
        }
    }
}
