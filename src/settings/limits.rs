//! The quota's settings: the policy (or none), the store kind (in process
//! or a Redis URL), client keys, the flood guard, the in-process table's
//! size. The Redis URL is checked here, before anything binds.

use std::num::NonZeroU32;

use super::{Raw, SettingsError};
use crate::limit::client::{Cidr, ClientIpHeader, ClientKeyPolicy};
use crate::limit::redis::address::is_store_url;
use crate::limit::{LimiterSettings, QuotaPolicy, RedisTlsFiles};

pub(super) fn build(raw: &Raw) -> Result<LimiterSettings, SettingsError> {
    let v = raw.values();
    let settings = LimiterSettings {
        policy: policy(raw)?,
        redis_url: store_url(raw)?,
        redis_tls: RedisTlsFiles {
            ca_file: v.redis_ca_file.clone(),
            cert_file: v.redis_cert_file.clone(),
            key_file: v.redis_key_file.clone(),
        },
        client_keys: client_keys(raw)?,
        flood: flood(raw)?,
        max_clients: raw.count("rate_limit_max_clients", v.rate_limit_max_clients())?,
    };
    let checked = if raw.across_keys() {
        settings.check()
    } else {
        settings.check_values()
    };
    checked.map_err(|e| match e {
        crate::limit::SettingError::RedisTlsFile { unfit: true, .. } => {
            SettingsError::UnfitFile(e.to_string())
        }
        e => raw.invalid("rate_limit_store", e.to_string()),
    })?;
    Ok(settings)
}

/// The quota's policy: `rate-limit`'s, or none when `no-rate-limit` is
/// given on a layer at least as high.
fn policy(raw: &Raw) -> Result<Option<QuotaPolicy>, SettingsError> {
    let v = raw.values();
    let policy = QuotaPolicy::parse(&v.rate_limit())
        .map_err(|e| raw.invalid("rate_limit", format!("rate-limit: {e}")))?;
    // `no-rate-limit` turns the quota off unless a rate limit was given on
    // a higher layer; both on one layer contradict each other. (Not a clap
    // conflict: clap would also refuse a flag beside the other's variable,
    // which is a lower layer.)
    let both = (raw.source("rate_limit"), raw.source("no_rate_limit"));
    if let (Some(rate), Some(off)) = both {
        if rate == off && v.no_rate_limit == Some(true) {
            return Err(raw.invalid(
                "no_rate_limit",
                "rate-limit and no-rate-limit are both given; give one",
            ));
        }
    }
    let outranked = matches!(both, (Some(rate), Some(off)) if rate < off);
    let off = v.no_rate_limit == Some(true) && !outranked;
    Ok(if off { None } else { Some(policy) })
}

/// The Redis URL of the quota's store, or `None` for the in-process one.
fn store_url(raw: &Raw) -> Result<Option<String>, SettingsError> {
    match raw.values().rate_limit_store().as_str() {
        "memory" => Ok(None),
        url if is_store_url(url) => Ok(Some(url.to_owned())),
        other => {
            // The value may hold a password: it is named by its redacted form only.
            Err(raw.invalid(
                "rate_limit_store",
                format!(
                    "rate-limit-store {} must be \"memory\" or a Redis URL (redis://, rediss://, \
                     redis+cluster://, redis+sentinel://, …)",
                    crate::redact::redact_url(other)
                ),
            ))
        }
    }
}

/// How a request's client key is made: the trusted proxies, the header
/// they set, the IPv6 prefix a key covers.
fn client_keys(raw: &Raw) -> Result<ClientKeyPolicy, SettingsError> {
    let v = raw.values();
    let trusted_proxies: Vec<Cidr> = v
        .trust_proxy
        .iter()
        .flatten()
        .map(|c| {
            Cidr::parse(c).map_err(|e| raw.invalid("trust_proxy", format!("trust-proxy: {e}")))
        })
        .collect::<Result<_, _>>()?;
    crate::limit::client::check_trusted(&trusted_proxies)
        .map_err(|e| raw.invalid("trust_proxy", format!("trust-proxy: {e}")))?;
    let ipv6_prefix = raw.whole("ipv6_prefix_len", u64::from(v.ipv6_prefix_len()))? as u8;
    let header = ClientIpHeader::parse(&v.client_ip_header())
        .map_err(|e| raw.invalid("client_ip_header", format!("client-ip-header: {e}")))?;
    Ok(ClientKeyPolicy {
        ipv6_prefix,
        trusted_proxies,
        header,
    })
}

/// The flood guard of the uncounted routes: `PER_SECOND/BURST`, or none.
fn flood(raw: &Raw) -> Result<Option<(NonZeroU32, NonZeroU32)>, SettingsError> {
    Ok(match raw.values().flood_guard().as_str() {
        "off" => None,
        text => Some(flood_guard(text).ok_or_else(|| {
            raw.invalid(
                "flood_guard",
                format!(
                    "flood-guard {text:?} must be PER_SECOND/BURST (both at least 1) or \"off\""
                ),
            )
        })?),
    })
}

/// `PER_SECOND/BURST`, both at least 1.
fn flood_guard(text: &str) -> Option<(NonZeroU32, NonZeroU32)> {
    let (rate, burst) = text.split_once('/')?;
    let parse = |v: &str| v.trim().parse::<u32>().ok().and_then(NonZeroU32::new);
    Some((parse(rate)?, parse(burst)?))
}
