//! What a running `serve` takes anew when its settings are read again
//! (SIGHUP, `systemctl reload`) and checked as `serve --check` checks them
//! ([`crate::preflight`]): the keys it applies while serving, and those
//! that wait for a restart (each named, with the value kept).

use super::Settings;

/// Whether a running server applies a new value of `key` (snake or kebab
/// case): the row's [`Mark::Live`](crate::config::Mark::Live). Those are
/// the log filter, the quota (a new policy or store counts afresh, as after
/// a restart; a new flood guard or store size keeps every client's count),
/// how clients are told apart (from every connection's next request on),
/// and the pages' name. (Webhook delivery settings are kept with each
/// endpoint and change with `webhook set`, which the deliverer sees at
/// once.)
pub fn applies_live(key: &str) -> bool {
    crate::config::setting(key).is_some_and(|s| s.has(crate::config::Mark::Live))
}

/// What changed between the running settings and those read again.
#[derive(Debug, Default, PartialEq)]
pub struct Changes {
    /// The log filter (`log`).
    pub log: bool,
    /// How requests are counted: the policy, the store or its TLS files
    /// (a new quota counts afresh, as after a restart).
    pub limiter: bool,
    /// The flood guard (every client keeps its quota's count).
    pub flood: bool,
    /// The in-process store's size (every client keeps its count).
    pub max_clients: bool,
    /// How clients are keyed (trusted proxies, the header, the IPv6 prefix).
    pub client_keys: bool,
    /// The pages' name.
    pub site_name: bool,
    /// Keys that changed but apply only at a restart: (key, running value, new value).
    pub kept: Vec<(String, String, String)>,
}

impl Changes {
    /// Whether anything is applied.
    pub fn applies_any(&self) -> bool {
        self.log
            || self.limiter
            || self.flood
            || self.max_clients
            || self.client_keys
            || self.site_name
    }
}

/// What changed from `running` to `read`.
pub fn changes(running: &Settings, read: &Settings) -> Changes {
    let (old, new) = (&running.serve.options.limits, &read.serve.options.limits);
    let kept = super::effective::effective(running, None)
        .into_iter()
        .zip(super::effective::effective(read, None))
        .filter(|(a, b)| a.value != b.value && !applies_live(&a.key))
        .map(|(a, b)| (a.key, a.value, b.value))
        .collect();
    Changes {
        log: running.log != read.log,
        limiter: (old.policy, &old.redis_url, &old.redis_tls)
            != (new.policy, &new.redis_url, &new.redis_tls),
        flood: old.flood != new.flood,
        max_clients: old.max_clients != new.max_clients,
        client_keys: old.client_keys != new.client_keys,
        site_name: running.serve.options.site_name != read.serve.options.site_name,
        kept,
    }
}
