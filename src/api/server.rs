//! Running the server: shared state, a bound listener and a shutdown future
//! (so tests bind port 0 and nothing panics on a bind failure).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;

use super::routes;
use crate::clock::Clock;
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
}

/// Serves until `shutdown` resolves, then lets in-flight requests finish.
pub async fn serve(
    listener: TcpListener,
    options: ServeOptions,
    clock: Arc<dyn Clock>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let view = ViewHandle::default();
    let reloader = spawn_reloader(options.data_dir.clone(), view.clone(), options.watch).await;
    let state = Arc::new(AppState {
        view,
        clock,
        panic_on_query: options.panic_on_query,
    });
    warp::serve(routes(state))
        .incoming(listener)
        .graceful(shutdown)
        .run()
        .await;
    reloader.abort();
}
