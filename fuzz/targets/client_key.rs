//! Forwarding headers and the client key: every header form, from a
//! trusted proxy, never panics, and the key of an IPv6 client is its prefix.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/client_key.rs`, `make fuzz`)
//! and the replay of its corpus in `make test` (`tests/fuzz_corpora.rs`).

use std::net::IpAddr;

use resetctl::limit::client::{mask, Cidr, ClientIpHeader, ClientKeyPolicy};

/// One input: never a panic, and the properties above hold.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Cidr::parse(text);
    let _ = ClientIpHeader::parse(text);
    for header in [
        ClientIpHeader::XForwardedFor,
        ClientIpHeader::Forwarded,
        ClientIpHeader::Other("x-real-ip".into()),
    ] {
        let policy = ClientKeyPolicy {
            ipv6_prefix: 64,
            trusted_proxies: vec![Cidr::parse("10.0.0.0/8").unwrap()],
            header,
        };
        let key = policy.client_key(IpAddr::from([10, 0, 0, 1]), Some(text));
        if key.is_ipv6() {
            assert_eq!(key, mask(key, 64), "{text:?}");
        }
    }
}
