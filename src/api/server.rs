//! The composition root of the server: the shared state, the reloader, the
//! evictor and the accept loop, given a bound listener and a shutdown
//! future (so tests bind port 0 and nothing panics on a bind failure). The
//! quota settings live in [`crate::limit`]; the standalone republisher in
//! [`crate::standalone`], started beside the server by the CLI.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::clock::Clock;
use crate::limit::client::ClientKeyPolicy;
use crate::limit::flood::FloodGuard;
use crate::limit::Limiter;
use crate::reload::{spawn_reloader, ViewHandle, WatchMode};
use crate::snapshot::SnapshotStore;

use super::stream::{StreamLimits, StreamSlots};

/// What every handler can reach.
#[derive(Debug)]
pub struct AppState {
    /// The published view, swapped atomically by the reloader.
    pub view: ViewHandle,
    /// The clock (`/healthz` ages).
    pub clock: Arc<dyn Clock>,
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
    /// The base of the Atom feed's links (`--public-base-url`); `None`: the request's `Host`.
    pub public_base_url: Option<crate::model::BaseUrl>,
    /// The open record streams and their caps.
    pub streams: Arc<StreamSlots>,
    /// Turns true when the server shuts down: streams end at once.
    pub closing: tokio::sync::watch::Receiver<bool>,
    /// The snapshots on disk (a resumed stream catches up from an older one).
    pub snapshots: SnapshotStore,
    /// Whether the status page and the record pages are served (`--no-site`: not).
    pub site_enabled: bool,
    /// The pages rendered from the served view.
    pub site: super::site::SiteCache,
    /// The admin listener's `/export.json` of the served snapshot.
    pub export: super::admin::ExportCache,
}

impl AppState {
    /// The base of the record pages the feeds link to: the configured
    /// public base URL, while the pages are served (a base taken from a
    /// request's `Host` is not fixed, and the feeds keep their entries).
    pub fn record_pages(&self) -> Option<&crate::model::BaseUrl> {
        self.public_base_url.as_ref().filter(|_| self.site_enabled)
    }
}

/// How to run the server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The data dir to serve and watch.
    pub data_dir: PathBuf,
    /// File watching or polling.
    pub watch: WatchMode,
    /// The quota and related guards.
    pub limits: crate::limit::LimiterSettings,
    /// Origins allowed to call `/mcp`.
    pub mcp_allowed_origins: Vec<String>,
    /// Connection caps and timeouts.
    pub connections: super::ConnectionLimits,
    /// The base of the Atom feed's links; `None`: the request's `Host`.
    pub public_base_url: Option<crate::model::BaseUrl>,
    /// Record stream caps and heartbeat.
    pub streams: StreamLimits,
    /// Whether to serve the status page and the record pages.
    pub site: bool,
}

/// How often idle quota entries are dropped.
const EVICT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// Serves until `shutdown` resolves, then lets in-flight requests finish.
/// `admin`, when bound, serves the admin routes (`/metrics`, `/healthz`,
/// `/export.json`) until the same shutdown; metrics are recorded only with
/// an admin listener.
pub async fn serve(
    listener: TcpListener,
    admin: Option<TcpListener>,
    options: ServeOptions,
    clock: Arc<dyn Clock>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    if admin.is_some() {
        // Before the reloader's first load, so it is counted too.
        crate::metrics::enable();
    }
    let limiter = options.limits.build()?;
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
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
        limiter,
        client_keys: options.limits.client_keys.clone(),
        flood: options
            .limits
            .flood
            .map(|(rate, burst)| FloodGuard::new(rate, burst)),
        mcp_allowed_origins: options.mcp_allowed_origins.clone(),
        untrusted_forwarders: Default::default(),
        public_base_url: options.public_base_url.clone(),
        streams: Arc::new(StreamSlots::new(options.streams)),
        closing: closing_rx,
        snapshots: SnapshotStore::new(&options.data_dir),
        site_enabled: options.site,
        site: Default::default(),
        export: Default::default(),
    });
    let evictor = tokio::spawn(evict_idle(state.clone()));
    // Streams never end by themselves: on shutdown they are told to, so
    // the accept loop's drain waits only for ordinary requests.
    let shutdown = async move {
        shutdown.await;
        let _ = closing_tx.send(true);
    };
    let admin = admin.map(|listener| {
        let mut closing = state.closing.clone();
        let closed = async move {
            let _ = closing.wait_for(|closing| *closing).await;
        };
        tokio::spawn(super::admin::run(listener, state.clone(), closed))
    });
    super::conn::run(listener, state, options.connections, shutdown).await;
    if let Some(admin) = admin {
        let _ = admin.await;
    }
    reloader.abort();
    evictor.abort();
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
