//! Resolves the quota flags (flag > env > config file > default) into the
//! library's `LimiterSettings`.

use std::num::NonZeroU32;

use resetctl::config::FileConfig;
use resetctl::limit::client::{Cidr, ClientIpHeader, ClientKeyPolicy};
use resetctl::limit::LimiterSettings;
use resetctl::limit::QuotaPolicy;

use crate::args::LimiterArgs;
use crate::exit::{CliError, Code};

fn usage(message: String) -> CliError {
    CliError::new(Code::Usage, message)
}

/// Builds the settings; every bad value is a usage error naming the setting.
pub fn resolve(args: &LimiterArgs, file: &FileConfig) -> Result<LimiterSettings, CliError> {
    let defaults = LimiterSettings::default();
    let off = args.no_rate_limit || (args.rate_limit.is_none() && file.no_rate_limit == Some(true));
    let policy = match (args.rate_limit, &file.rate_limit) {
        (Some(p), _) => Some(p),
        (None, Some(text)) => Some(
            QuotaPolicy::parse(text).map_err(|e| usage(format!("config file: rate-limit: {e}")))?,
        ),
        (None, None) => defaults.policy,
    };
    let store = args
        .rate_limit_store
        .clone()
        .or_else(|| file.rate_limit_store.clone());
    let redis_url = match store.as_deref() {
        None | Some("memory") => None,
        Some(url)
            if ["redis://", "rediss://"].iter().any(|scheme| {
                url.get(..scheme.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
            }) =>
        {
            Some(url.to_owned())
        }
        Some(other) => {
            // The value may hold a password: it is named by its redacted form only.
            return Err(usage(format!(
                "rate-limit-store {} must be \"memory\" or a redis:// URL",
                resetctl::redact::redact_url(other)
            )));
        }
    };
    let trusted_proxies = if args.trust_proxy.is_empty() {
        file.trust_proxy
            .iter()
            .flatten()
            .map(|c| Cidr::parse(c).map_err(|e| usage(format!("config file: trust-proxy: {e}"))))
            .collect::<Result<_, _>>()?
    } else {
        args.trust_proxy.clone()
    };
    let ipv6_prefix = args
        .ipv6_prefix_len
        .or(file.ipv6_prefix_len)
        .unwrap_or(defaults.client_keys.ipv6_prefix);
    if !(1..=128).contains(&ipv6_prefix) {
        return Err(usage(format!(
            "ipv6-prefix-len must be 1 to 128, got {ipv6_prefix}"
        )));
    }
    let header = match (&args.client_ip_header, &file.client_ip_header) {
        (Some(header), _) => header.clone(),
        (None, Some(text)) => ClientIpHeader::parse(text)
            .map_err(|e| usage(format!("config file: client-ip-header: {e}")))?,
        (None, None) => ClientIpHeader::default(),
    };
    let flood = match args.flood_guard.as_deref().or(file.flood_guard.as_deref()) {
        None => defaults.flood,
        Some("off") => None,
        Some(text) => Some(parse_flood(text)?),
    };
    let max_clients = args
        .rate_limit_max_clients
        .or(file.rate_limit_max_clients)
        .map_or(defaults.max_clients, |n| n as usize);
    if max_clients == 0 {
        return Err(usage("rate-limit-max-clients must be at least 1".into()));
    }
    let settings = LimiterSettings {
        policy: if off { None } else { policy },
        redis_url,
        client_keys: ClientKeyPolicy {
            ipv6_prefix,
            trusted_proxies,
            header,
        },
        flood,
        max_clients,
    };
    // Checked here, before any listener is bound.
    settings.check().map_err(|e| usage(e.to_string()))?;
    Ok(settings)
}

fn parse_flood(text: &str) -> Result<(NonZeroU32, NonZeroU32), CliError> {
    let fail = || {
        usage(format!(
            "flood-guard {text:?} must be PER_SECOND/BURST (both at least 1) or \"off\""
        ))
    };
    let (rate, burst) = text.split_once('/').ok_or_else(fail)?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or_else(fail)
    };
    Ok((parse(rate)?, parse(burst)?))
}
