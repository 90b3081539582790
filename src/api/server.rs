//! The composition root of the server: it builds each feature's state
//! ([`Api`], [`Admin`]), starts the reloader and the evictor, and runs the
//! transport's accept loop given a bound listener and a shutdown future
//! (so tests bind port 0 and nothing panics on a bind failure). The quota
//! settings live in [`crate::limit`]; the standalone republisher in
//! [`crate::standalone`], started beside the server by the CLI.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::clock::Clock;
use crate::limit::flood::FloodGuard;
use crate::reload::{spawn_reloader, ViewHandle, WatchMode};
use crate::snapshot::SnapshotStore;

use super::admin::Admin;
use super::admission::Quota;
use super::clients::ClientKeys;
use super::handlers::Data;
use super::router::{routes, Api};
use super::site::Site;
use super::stream::{StreamLimits, StreamSlots, Streams};

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
    pub connections: super::transport::ConnectionLimits,
    /// The base of the Atom feed's links; `None`: the request's `Host`.
    pub public_base_url: Option<crate::model::BaseUrl>,
    /// Record stream caps and heartbeat.
    pub streams: StreamLimits,
    /// Whether to serve the status page and the record pages.
    pub site: bool,
    /// The pages' name (`--site-name`).
    pub site_name: String,
    /// The matcher's tolerance, in milliseconds: when an unconfirmed
    /// schedule is announced so, on the stream and the pages alike.
    pub match_tolerance_ms: i64,
}

/// How often idle quota entries are dropped.
const EVICT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// Serves until `shutdown` resolves, then lets in-flight requests finish;
/// calls `ready` once the newest snapshot is loaded and requests are taken,
/// with the handle that applies settings read again ([`LiveSettings`]).
/// `admin`, when bound, serves the admin routes (`/metrics`, `/healthz`,
/// `/export.json`) until the same shutdown; metrics are recorded only with
/// an admin listener.
pub async fn serve(
    listener: TcpListener,
    admin: Option<TcpListener>,
    options: ServeOptions,
    limiter: crate::limit::Limiter,
    clock: Arc<dyn Clock>,
    ready: impl FnOnce(LiveSettings),
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    if admin.is_some() {
        // Before the reloader's first load, so it is counted too.
        crate::metrics::enable();
    }
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
    let view = ViewHandle::default();
    let reloader = spawn_reloader(
        options.data_dir.clone(),
        view.clone(),
        options.watch,
        clock.clone(),
    )
    .await;
    let quota = Arc::new(quota_of(&options.limits, limiter, clock));
    let data = Data::new(view, quota, options.match_tolerance_ms);
    let slots = Arc::new(StreamSlots::new(options.streams));
    let snapshots = SnapshotStore::new(&options.data_dir);
    let api = Api {
        data: Arc::new(data.clone()),
        keys: Arc::new(arc_swap::ArcSwap::from_pointee(ClientKeys::new(
            options.limits.client_keys.clone(),
        ))),
        site: Arc::new(Site {
            pages: options.site,
            site_name: arc_swap::ArcSwap::from_pointee(options.site_name.clone()),
            public_base_url: options.public_base_url.clone(),
            cache: Default::default(),
        }),
        streams: Arc::new(Streams {
            slots: slots.clone(),
            closing: closing_rx.clone(),
            snapshots: snapshots.clone(),
        }),
        mcp_allowed_origins: Arc::new(options.mcp_allowed_origins.clone()),
        data_dir: Arc::new(options.data_dir.clone()),
    };
    let evictor = tokio::spawn(evict_idle(api.data.clone()));
    let warmer = tokio::spawn(warm_bodies(api.data.clone(), api.site.clone()));
    // Streams never end by themselves: on shutdown they are told to, so
    // the accept loop's drain waits only for ordinary requests.
    let shutdown = async move {
        shutdown.await;
        let _ = closing_tx.send(true);
    };
    let admin = admin.map(|listener| {
        let mut closing = closing_rx.clone();
        let closed = async move {
            let _ = closing.wait_for(|closing| *closing).await;
        };
        let state = Arc::new(Admin {
            data,
            snapshots,
            streams: slots,
            export: Default::default(),
            outbox: Default::default(),
        });
        tokio::spawn(super::admin::run(listener, state, closed))
    });
    let service = routes(&api);
    // The listeners accept (the kernel queues until the loop takes them)
    // and the view is loaded: what a service manager waits for.
    ready(LiveSettings {
        data: api.data.clone(),
        keys: api.keys.clone(),
        site: api.site.clone(),
    });
    super::transport::run(listener, service, api.keys, options.connections, shutdown).await;
    if let Some(admin) = admin {
        let _ = admin.await;
    }
    reloader.abort();
    evictor.abort();
    warmer.abort();
}

/// How long a newly served view must stay before its hot set is made: a
/// burst of publishes is compressed once, at its end.
const WARM_AFTER: std::time::Duration = std::time::Duration::from_millis(200);

/// Makes the fixed documents' coded forms at start, and the hot set of
/// every view that stays served (off the request path, one view at a
/// time: a view replaced meanwhile is skipped for the newest). Until its
/// hot set is made, a view answers those bodies as they are.
async fn warm_bodies(data: Arc<Data>, site: Arc<Site>) {
    let mut stored = data.view.stored();
    let _ = tokio::task::spawn_blocking(super::handlers::warm_documents).await;
    loop {
        stored.borrow_and_update();
        if let Some(view) = data.view.load_full() {
            let (data, site) = (data.clone(), site.clone());
            let _ = tokio::task::spawn_blocking(move || {
                super::handlers::warm(&data, &view, site.links());
            })
            .await;
        }
        if stored.changed().await.is_err() {
            return;
        }
        tokio::time::sleep(WARM_AFTER).await;
    }
}

/// Keeps quota memory bounded by the clients active in the last window.
async fn evict_idle(data: Arc<Data>) {
    loop {
        tokio::time::sleep(EVICT_INTERVAL).await;
        data.quota().evict_idle();
    }
}

/// The quota of `limits` counted by `limiter` (connected by the caller),
/// with its flood guard, going by `clock`.
fn quota_of(
    limits: &crate::limit::LimiterSettings,
    limiter: crate::limit::Limiter,
    clock: Arc<dyn Clock>,
) -> Quota {
    Quota {
        limiter: Arc::new(limiter),
        clock,
        flood: flood_of(limits),
    }
}

/// The flood guard of `limits`, empty (`None`: off).
fn flood_of(limits: &crate::limit::LimiterSettings) -> Option<Arc<FloodGuard>> {
    limits
        .flood
        .map(|(rate, burst)| Arc::new(FloodGuard::new(rate, burst)))
}

/// What of the quota a reload changes ([`crate::settings::reload::Changes`]).
#[derive(Debug)]
pub enum QuotaChange {
    /// A new policy, store or TLS files: `limiter` (connected by the
    /// caller) counts afresh, as after a restart.
    Limiter(crate::limit::Limiter),
    /// Only the flood guard, the in-process store's size, or both (each
    /// `true` when it changed): every client keeps its count.
    Guards {
        /// The flood guard changed: it starts full again.
        flood: bool,
        /// The in-process store's size changed.
        max_clients: bool,
    },
}

/// The settings a running server takes anew ([`crate::settings::reload`]),
/// handed to `serve`'s `ready`: each applies to the requests that arrive
/// from then on, on every connection (a kept-alive one too); one in
/// flight finishes under the settings it started with, so nothing is
/// counted twice.
#[derive(Clone)]
pub struct LiveSettings {
    data: Arc<Data>,
    keys: Arc<arc_swap::ArcSwap<ClientKeys>>,
    site: Arc<Site>,
}

impl LiveSettings {
    /// Puts in force the quota and flood guard of `limits` as `change`
    /// says: a new limiter counts afresh; a new flood guard or store size
    /// alone keeps every client's count.
    pub fn set_quota(&self, limits: &crate::limit::LimiterSettings, change: QuotaChange) {
        let running = self.data.quota();
        let quota = match change {
            QuotaChange::Limiter(limiter) => quota_of(limits, limiter, running.clock.clone()),
            QuotaChange::Guards { flood, max_clients } => {
                if let (true, crate::limit::Limiter::Memory(memory)) =
                    (max_clients, &*running.limiter)
                {
                    memory.set_max_clients(limits.max_clients);
                }
                Quota {
                    limiter: running.limiter.clone(),
                    clock: running.clock.clone(),
                    flood: match flood {
                        true => flood_of(limits),
                        false => running.flood.clone(),
                    },
                }
            }
        };
        self.data.set_quota(Arc::new(quota));
    }

    /// Names the pages `name` (`site-name`): the pages are made again.
    pub fn set_site_name(&self, name: String) {
        self.site.set_site_name(name);
    }

    /// Puts in force how clients are keyed (trusted proxies, their header,
    /// the IPv6 prefix), from every connection's next request on.
    pub fn set_client_keys(&self, policy: crate::limit::client::ClientKeyPolicy) {
        self.keys.store(Arc::new(ClientKeys::new(policy)));
    }
}
