//! The admin listener (`serve --admin-listen ADDR`), for a private network:
//! `GET /metrics` (Prometheus), `GET /healthz` (as on the public listener)
//! and `GET /export.json` (the current snapshot as a records document, for
//! replicas that `sync` from this instance). Nothing here is counted,
//! flood-guarded or in the request metrics: the listener is the
//! operator's, not the public's. It shares the public listener's state
//! and shutdown.

use std::future::Future;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use warp::http::{header, HeaderValue, StatusCode};
use warp::reply::Response;
use warp::Filter;

use super::conditional::Conditionals;
use super::errors::ApiError;
use super::handlers::Data;
use super::stream::StreamSlots;
use crate::metrics::{Scrape, OPENMETRICS_TEXT, PROMETHEUS_TEXT};
use crate::model::DataSource;
use crate::snapshot::SnapshotStore;

/// What the admin routes read: the served data, the snapshots on disk
/// (the export, the sync state beside them), the open streams, and the
/// last export built.
#[derive(Debug)]
pub struct Admin {
    /// The served view, the clock, the quota (its tracked clients).
    pub data: Data,
    /// The data dir's snapshots.
    pub snapshots: SnapshotStore,
    /// The open record streams (a gauge).
    pub streams: Arc<StreamSlots>,
    /// The last `/export.json` built.
    pub export: ExportCache,
    /// The webhook outbox as the last scrape read it: the next reads only
    /// what was appended since (a backlog of 32 MiB is decoded once, not
    /// at every scrape).
    pub outbox: Arc<Mutex<crate::webhook::outbox::Committed>>,
}

/// The last export built: what it was built from (a snapshot's sequence
/// and the `dataSource` served with it), its bytes and their strong ETag.
#[derive(Debug, Default)]
pub struct ExportCache(Mutex<Option<ExportBuilt>>);

#[derive(Debug, Clone)]
struct ExportBuilt {
    sequence: u64,
    data_source: Option<DataSource>,
    body: Bytes,
    etag: HeaderValue,
}

/// Serves the admin routes on `listener` until `shutdown` resolves.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: Arc<Admin>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    warp::serve(routes(state))
        .incoming(listener)
        .graceful(shutdown)
        .run()
        .await;
}

fn routes(
    state: Arc<Admin>,
) -> impl Filter<Extract = (Response,), Error = std::convert::Infallible> + Clone {
    let with_state = warp::any().map(move || state.clone());
    let metrics = warp::path!("metrics")
        .and(warp::get())
        .and(warp::header::optional::<String>("accept"))
        .and(with_state.clone())
        .and_then(|accept: Option<String>, state: Arc<Admin>| async move {
            Ok::<_, std::convert::Infallible>(metrics(accept.as_deref(), &state).await)
        });
    let healthz = warp::path!("healthz")
        .and(warp::get())
        .and(warp::query::raw().or(warp::any().map(String::new)).unify())
        .and(with_state.clone())
        .map(|query: String, state: Arc<Admin>| {
            super::handlers::healthz(&query, &state.data, state.snapshots.data_dir())
        });
    let export = warp::path!("export.json")
        .and(warp::get())
        .and(warp::header::headers_cloned())
        .and(with_state)
        .and_then(
            |headers: warp::http::HeaderMap, state: Arc<Admin>| async move {
                let conditionals = Conditionals::of(&headers);
                Ok::<_, std::convert::Infallible>(export(&conditionals, &state).await)
            },
        );
    metrics
        .or(healthz)
        .unify()
        .or(export)
        .unify()
        .or(warp::any().map(|| ApiError::NotFound.response()))
        .unify()
        .map(|mut response: Response| {
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        })
}

/// `GET /metrics`: OpenMetrics when the scraper's `Accept` names it, else
/// the classic text format.
async fn metrics(accept: Option<&str>, state: &Admin) -> Response {
    let openmetrics = accept.is_some_and(|a| a.contains("application/openmetrics-text"));
    let scrape = scrape(state).await;
    let Some(text) = crate::metrics::render(&scrape, openmetrics) else {
        return ApiError::NotFound.response();
    };
    let mut response = Response::new(text.into());
    let kind = if openmetrics {
        OPENMETRICS_TEXT
    } else {
        PROMETHEUS_TEXT
    };
    super::responses::typed(response.headers_mut(), HeaderValue::from_static(kind));
    response
}

/// The state the metrics read when scraped.
async fn scrape(state: &Admin) -> Scrape {
    let now = state.data.now();
    let served = state.data.view.load_full();
    let snapshot = served.as_ref().map(|view| {
        let age = (now.as_millis() - view.generated_at().as_millis()).max(0) as f64 / 1000.0;
        (view.sequence(), age)
    });
    let last_check = served
        .as_ref()
        .and_then(|view| view.last_successful_check_at())
        .map(|at| at.as_millis() as f64 / 1000.0);
    let quota_clients = match &*state.data.quota().limiter {
        crate::limit::Limiter::Memory(memory) => memory.tracked_clients() as u64,
        _ => 0,
    };
    let data_dir = state.snapshots.data_dir().to_owned();
    let outbox = state.outbox.clone();
    // Files, and what was appended to the outbox: off the request threads.
    let (sync, backlog, outbox_bytes) = tokio::task::spawn_blocking(move || {
        let sync = crate::sync::state::load_sync_state(&data_dir)
            .ok()
            .flatten()
            .map(|s| {
                let secs =
                    |t: Option<crate::model::Timestamp>| t.map(|t| t.as_millis() as f64 / 1000.0);
                (
                    s.effective_status(now).as_str(),
                    u64::from(s.consecutive_failures),
                    secs(s.synced_at),
                    secs(s.fetched_at),
                )
            });
        let mut committed = outbox.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = crate::webhook::Outbox::new(&data_dir).read_from(&mut committed) {
            tracing::debug!("/metrics: {e}");
        }
        let backlog = crate::webhook::summaries_of(&data_dir, &committed)
            .map(|all| all.iter().filter(|e| e.enabled).map(|e| e.pending).sum())
            .unwrap_or(0);
        let outbox_bytes =
            std::fs::metadata(crate::webhook::Outbox::new(&data_dir).path()).map_or(0, |m| m.len());
        (sync, backlog, outbox_bytes)
    })
    .await
    .unwrap_or((None, 0, 0));
    Scrape {
        snapshot,
        last_check,
        quota_clients,
        streams_open: state.streams.open_total() as u64,
        sync,
        webhook_backlog: backlog,
        webhook_outbox_bytes: outbox_bytes,
        view_bodies_bytes: state.data.body_bytes() as u64,
        view_bodies_memory_bytes: state.data.body_memory() as u64,
    }
}

/// `GET /export.json`: the served snapshot as a records document (what
/// `resetctl export` writes) with the served `dataSource` beside it (`null`
/// for a standalone instance), so an instance syncing from here serves the
/// same meta; a strong ETag, and 304 when `If-None-Match` names it (weakly,
/// as every route compares: [`Conditionals::names`]), so a
/// replica's poll costs nothing while nothing changed.
async fn export(conditionals: &Conditionals, state: &Admin) -> Response {
    let Some((sequence, data_source)) = state
        .data
        .view
        .load()
        .as_deref()
        .map(|v| (v.sequence(), v.data_source().cloned()))
    else {
        return ApiError::DataUnavailable.response();
    };
    let cached = state
        .export
        .0
        .lock()
        .expect("not poisoned")
        .clone()
        .filter(|built| built.sequence == sequence && built.data_source == data_source);
    let ExportBuilt { body, etag, .. } = match cached {
        Some(built) => built,
        None => {
            let store = state.snapshots.clone();
            let loaded = tokio::task::spawn_blocking(move || store.load(sequence)).await;
            let Ok(Ok(snapshot)) = loaded else {
                return ApiError::DataUnavailable.response();
            };
            let document = crate::document::RecordsDocument {
                data_source: Some(data_source.clone()),
                ..snapshot.to_document()
            };
            let body = Bytes::from(serde_json::to_vec(&document).expect("records serialise"));
            let etag = HeaderValue::from_maybe_shared(crate::query::entity_tag_of(&body))
                .expect("hex digits");
            let built = ExportBuilt {
                sequence,
                data_source,
                body,
                etag,
            };
            *state.export.0.lock().expect("not poisoned") = Some(built.clone());
            built
        }
    };
    let mut response = if conditionals.names(etag.as_bytes()) {
        // No CORS here: the admin listener is not the public's.
        let mut r = Response::new(Bytes::new().into());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(body.into());
        super::responses::typed(
            r.headers_mut(),
            HeaderValue::from_static("application/json"),
        );
        r
    };
    response.headers_mut().insert(header::ETAG, etag);
    response
}
