//! Who a request is: the client key the quota, the connection caps and the
//! access log all use, computed once per request by the accept loop from
//! the peer and the one forwarding header a trusted proxy sets (the rules
//! themselves are [`crate::limit::client`]'s).

use std::net::IpAddr;

use crate::limit::client::{canonical, ClientKeyPolicy, UntrustedForwarders, FORWARDING_HEADERS};

/// The client key of a request, computed once by the accept loop and
/// carried as a request extension.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClientKey(pub IpAddr);

/// How requests are keyed, and which untrusted forwarders were warned about.
#[derive(Debug, Default)]
pub struct ClientKeys {
    /// Trusted proxies, their header, the IPv6 prefix.
    policy: ClientKeyPolicy,
    /// Untrusted peers already warned about for sending forwarding headers.
    untrusted_forwarders: UntrustedForwarders,
}

impl ClientKeys {
    /// Keys requests by `policy`.
    pub fn new(policy: ClientKeyPolicy) -> Self {
        Self {
            policy,
            untrusted_forwarders: Default::default(),
        }
    }

    /// Whether `peer` is a trusted proxy (exempt from the connection caps).
    pub(crate) fn trusts(&self, peer: IpAddr) -> bool {
        self.policy.trusts(peer)
    }

    /// The key of a peer by its address alone (connection caps; in-process
    /// requests without an accept loop).
    pub(crate) fn of_peer(&self, peer: IpAddr) -> IpAddr {
        self.policy.client_key(peer, None)
    }

    /// The key of a request from `peer` with `headers`, for the quota and
    /// the access log alike: what a trusted proxy vouched for in the one
    /// header the operator named (every line of it, joined in order: a
    /// proxy may add a line instead of appending), IPv6 by its prefix. A
    /// peer that sends forwarding headers without being trusted is warned
    /// about once: it is usually a proxy the operator forgot to trust, and
    /// every client behind it then shares one quota.
    pub(crate) fn of_request(&self, peer: IpAddr, headers: &warp::http::HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        let keys = &self.policy;
        if keys.trusts(peer) {
            let parts: Vec<&str> = headers
                .get_all(keys.header.name())
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            let value = (!parts.is_empty()).then(|| parts.join(", "));
            return keys.client_key(peer, value.as_deref());
        }
        let sent = FORWARDING_HEADERS
            .iter()
            .find(|name| headers.contains_key(**name));
        if let Some(name) = sent.filter(|_| self.untrusted_forwarders.first_time(peer)) {
            tracing::warn!(
                "peer {peer} sends {name} but is not a trusted proxy, so every client behind it shares one quota; \
                 if it is your proxy, add it with --trust-proxy (and name its header with --client-ip-header)"
            );
        }
        keys.client_key(peer, None)
    }
}
