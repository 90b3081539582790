//! Running the server: shared state, a bound listener and a shutdown future
//! (so tests bind port 0 and nothing panics on a bind failure).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::clock::Clock;
use crate::limit::client::ClientKeyPolicy;
use crate::limit::flood::FloodGuard;
use crate::limit::{Limiter, MemoryLimiter, QuotaPolicy, RedisLimiter};
use crate::reload::{spawn_reloader, ViewHandle, WatchMode};

/// What every handler can reach.
#[derive(Debug)]
pub struct AppState {
    /// The published view, swapped atomically by the reloader.
    pub view: ViewHandle,
    /// The clock (`/healthz` ages).
    pub clock: Arc<dyn Clock>,
    /// Test hook: a data request with exactly this raw query panics (to
    /// prove a panic becomes a clean 500). `None` in production.
    pub panic_on_query: Option<String>,
    /// The quota.
    pub limiter: Limiter,
    /// How a request's client key is found.
    pub client_keys: ClientKeyPolicy,
    /// The burst guard of uncounted routes (`None`: off).
    pub flood: Option<FloodGuard>,
    /// Origins allowed to call `/mcp` (requests with any other `Origin` are refused).
    pub mcp_allowed_origins: Vec<String>,
    /// Untrusted peers already warned about for sending forwarding headers.
    pub untrusted_forwarders: crate::limit::client::UntrustedForwarders,
}

/// The quota settings of a server (and of `resetctl status`).
#[derive(Debug, Clone, PartialEq)]
pub struct LimiterSettings {
    /// `None` with `--no-rate-limit`.
    pub policy: Option<QuotaPolicy>,
    /// `None` for the in-process store, else the Redis URL.
    pub redis_url: Option<String>,
    /// Client keys.
    pub client_keys: ClientKeyPolicy,
    /// Flood guard: (per second, burst), `None` when off.
    pub flood: Option<(std::num::NonZeroU32, std::num::NonZeroU32)>,
    /// The in-process store tracks at most this many clients.
    pub max_clients: usize,
}

impl Default for LimiterSettings {
    fn default() -> Self {
        Self {
            policy: Some(QuotaPolicy::default()),
            redis_url: None,
            client_keys: ClientKeyPolicy::default(),
            flood: Some((
                std::num::NonZeroU32::new(50).unwrap(),
                std::num::NonZeroU32::new(200).unwrap(),
            )),
            max_clients: crate::limit::DEFAULT_MAX_CLIENTS,
        }
    }
}

impl LimiterSettings {
    /// One line per setting, for `resetctl status` and the startup log.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        let quota = match (&self.policy, &self.redis_url) {
            (None, _) => "off".to_owned(),
            (Some(p), None) => format!(
                "{} requests per {} s per client, in process (at most {} clients tracked)",
                p.limit, p.window_seconds, self.max_clients
            ),
            (Some(p), Some(url)) => format!(
                "{} requests per {} s per client, in Redis at {}",
                p.limit,
                p.window_seconds,
                crate::redact::redact_url(url)
            ),
        };
        let proxies = if self.client_keys.trusted_proxies.is_empty() {
            "none (forwarding headers ignored)".to_owned()
        } else {
            self.client_keys
                .trusted_proxies
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let flood = self.flood.map_or("off".to_owned(), |(rate, burst)| {
            format!("{rate}/s per client, burst {burst}")
        });
        vec![
            ("quota", quota),
            (
                "client key",
                format!("peer IP, IPv6 by /{}", self.client_keys.ipv6_prefix),
            ),
            (
                "proxy header",
                format!(
                    "{} (read only from trusted proxies)",
                    self.client_keys.header.name()
                ),
            ),
            ("trusted proxies", proxies),
            ("flood guard", flood),
        ]
    }

    /// Builds the limiter these settings describe.
    pub fn build(&self) -> Result<Limiter, String> {
        Ok(match (&self.policy, &self.redis_url) {
            (None, _) => Limiter::Off,
            (Some(p), None) => {
                Limiter::Memory(MemoryLimiter::with_max_clients(*p, self.max_clients))
            }
            (Some(p), Some(url)) => Limiter::Redis(RedisLimiter::new(url, *p)?),
        })
    }
}

/// How to run the server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The data dir to serve and watch.
    pub data_dir: PathBuf,
    /// File watching or polling.
    pub watch: WatchMode,
    /// See [`AppState::panic_on_query`].
    pub panic_on_query: Option<String>,
    /// The quota and related guards.
    pub limits: LimiterSettings,
    /// Origins allowed to call `/mcp`.
    pub mcp_allowed_origins: Vec<String>,
    /// Standalone mode: republish as states change (`serve --republish`), checking this often.
    pub republish: Option<(crate::standalone::PublishSettings, std::time::Duration)>,
    /// Connection caps and timeouts.
    pub connections: super::ConnectionLimits,
}

/// Republishes a standalone instance whenever its derived records change.
async fn republish_loop(
    data_dir: std::path::PathBuf,
    settings: crate::standalone::PublishSettings,
    every: std::time::Duration,
    clock: Arc<dyn Clock>,
) {
    loop {
        let settings = crate::standalone::PublishSettings {
            now: clock.now(),
            ..settings
        };
        let store = crate::snapshot::SnapshotStore::new(&data_dir);
        match tokio::task::spawn_blocking(move || {
            crate::standalone::republish_if_changed(&store, settings)
        })
        .await
        {
            Ok(Ok(Some(snapshot))) => {
                tracing::info!(sequence = snapshot.sequence, "republished: states changed")
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!("republish failed: {e}"),
            Err(e) => tracing::error!("republish task failed: {e}"),
        }
        tokio::time::sleep(every).await;
    }
}

/// How often idle quota entries are dropped.
const EVICT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// Serves until `shutdown` resolves, then lets in-flight requests finish.
pub async fn serve(
    listener: TcpListener,
    options: ServeOptions,
    clock: Arc<dyn Clock>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let limiter = options.limits.build()?;
    let view = ViewHandle::default();
    let reloader = spawn_reloader(
        options.data_dir.clone(),
        view.clone(),
        options.watch,
        clock.clone(),
    )
    .await;
    let state = Arc::new(AppState {
        view,
        clock,
        panic_on_query: options.panic_on_query,
        limiter,
        client_keys: options.limits.client_keys.clone(),
        flood: options
            .limits
            .flood
            .map(|(rate, burst)| FloodGuard::new(rate, burst)),
        mcp_allowed_origins: options.mcp_allowed_origins.clone(),
        untrusted_forwarders: Default::default(),
    });
    let evictor = tokio::spawn(evict_idle(state.clone()));
    let republisher = options.republish.map(|(settings, every)| {
        tokio::spawn(republish_loop(
            options.data_dir.clone(),
            settings,
            every,
            state.clock.clone(),
        ))
    });
    super::conn::run(listener, state, options.connections, shutdown).await;
    reloader.abort();
    evictor.abort();
    if let Some(task) = republisher {
        task.abort();
    }
    Ok(())
}

/// Keeps quota memory bounded by the clients active in the last window.
async fn evict_idle(state: Arc<AppState>) {
    loop {
        tokio::time::sleep(EVICT_INTERVAL).await;
        if let Limiter::Memory(memory) = &state.limiter {
            let left = memory.evict_idle(state.clock.now());
            tracing::debug!(clients = left, "evicted idle quota entries");
        }
        if let Some(flood) = &state.flood {
            flood.evict_idle();
        }
    }
}
