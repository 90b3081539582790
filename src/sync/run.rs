//! One sync attempt, and the daemon that repeats it.
//!
//! Order of work: take the sync lock (so a cron run and a daemon never
//! overlap), respect back-off, fetch (conditional when a cache exists),
//! validate the whole body, publish only when the content changed, and
//! record the outcome in the sync state. Nothing here ever removes the last
//! good snapshot: a failed sync changes only the sync state.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::backoff::{backoff_delay, interval_with_jitter, random_jitter, random_unit};
use super::fetch::{build_client, fetch, FetchError, FetchSettings, Fetched};
use super::state::{load_sync_state, save_sync_state, SourceSettings, SyncState, SyncStateError};
use crate::clock::Clock;
use crate::document::DocumentError;
use crate::feed::{decode_upstream, UpstreamDocument};
use crate::model::{DataSourceStatus, Record, Timestamp};
use crate::snapshot::{Draft, Mode, Snapshot, SnapshotError, SnapshotStore};
use crate::store::{DataDirLock, LockError};

/// Everything one sync needs to know.
#[derive(Clone, Debug)]
pub struct SyncSettings {
    /// The upstream and how it is shown in `dataSource`.
    pub source: SourceSettings,
    /// Limits and timeouts of the fetch.
    pub fetch: FetchSettings,
    /// Longest back-off (default 6 h).
    pub backoff_cap: Duration,
    /// Ignore `nextAttemptAt`.
    pub force: bool,
    /// How long to wait for another sync (or publisher) to finish.
    pub lock_timeout: Duration,
    /// Snapshot retention.
    pub keep: usize,
}

/// What a successful sync did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncOutcome {
    /// A changed document was published as this sequence.
    Published {
        /// The new snapshot's sequence.
        sequence: u64,
        /// How many records it holds.
        records: usize,
    },
    /// The body was fetched but its content equals the served snapshot.
    Unchanged,
    /// The upstream answered 304 Not Modified.
    NotModified,
}

/// Why a sync did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// Back-off is in force; nothing was attempted.
    #[error("backing off after {failures} failed sync(s); the next attempt is allowed at {until} (use --force to try now)")]
    BackingOff {
        /// The next permitted attempt.
        until: Timestamp,
        /// Failures in a row so far.
        failures: u32,
    },
    /// Another sync holds the sync lock.
    #[error("another sync is running: {0}")]
    Busy(LockError),
    /// The sync lock cannot be taken at all (a read-only or broken data
    /// dir): an I/O error, not contention.
    #[error("cannot take the sync lock: {0}")]
    Lock(LockError),
    /// The upstream could not be fetched; the failure is recorded.
    #[error("sync failed: {error}; the last good data stays served (status {status}, next attempt at {next_attempt_at})")]
    Fetch {
        /// The fetch error.
        error: FetchError,
        /// The status now recorded.
        status: DataSourceStatus,
        /// When back-off allows the next attempt.
        next_attempt_at: Timestamp,
    },
    /// The body is not a valid upstream document; the failure is recorded.
    #[error("sync failed: invalid upstream document: {error}; the last good data stays served (status {status}, next attempt at {next_attempt_at})")]
    Invalid {
        /// Why the document was refused.
        error: DocumentError,
        /// The status now recorded.
        status: DataSourceStatus,
        /// When back-off allows the next attempt.
        next_attempt_at: Timestamp,
    },
    /// The local sync state cannot be read or written.
    #[error(transparent)]
    State(#[from] SyncStateError),
    /// The local snapshot store failed.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
}

/// One sync attempt at `clock.now()`.
pub async fn sync_once(
    data_dir: &Path,
    settings: &SyncSettings,
    clock: &dyn Clock,
) -> Result<SyncOutcome, SyncError> {
    let store = SnapshotStore::new(data_dir);
    let _sync_lock = DataDirLock::acquire(
        &data_dir.join("sync.lock"),
        settings.lock_timeout,
        "resetctl sync",
    )
    .map_err(|e| match e {
        LockError::Busy { .. } => SyncError::Busy(e),
        LockError::Io { .. } => SyncError::Lock(e),
    })?;
    let now = clock.now();
    let mut state =
        load_sync_state(data_dir)?.unwrap_or_else(|| SyncState::pending(settings.source.clone()));
    if state.source.url != settings.source.url {
        // Validators belong to the URL they came from.
        state.etag = None;
        state.last_modified = None;
    }
    state.source = settings.source.clone();
    if let Some(until) = state
        .next_attempt_at
        .filter(|until| !settings.force && *until > now)
    {
        return Err(SyncError::BackingOff {
            until,
            failures: state.consecutive_failures,
        });
    }
    // Whether an upstream cache exists, cheaply; the records are loaded only to compare.
    let cached = store.current_mode()? == Some(Mode::Upstream);
    let current = || -> Result<Option<Snapshot>, SnapshotError> {
        Ok(if cached {
            store.load_current()?.filter(|s| s.mode == Mode::Upstream)
        } else {
            None
        })
    };
    let client = build_client(&settings.fetch).map_err(|error| SyncError::Fetch {
        error,
        status: state.status,
        next_attempt_at: now,
    })?;
    let (etag, last_modified) = if cached {
        (state.etag.clone(), state.last_modified.clone())
    } else {
        (None, None)
    };
    let fetched = fetch(
        &client,
        &settings.source.url,
        etag.as_deref(),
        last_modified.as_deref(),
        &settings.fetch,
    )
    .await;
    state.last_attempt_at = Some(now);
    match fetched {
        Ok(Fetched::NotModified) => {
            state.synced_at = Some(now);
            succeed(&mut state);
            let lock = store.lock(settings.lock_timeout, "resetctl sync")?;
            // A feed's states depend on the time: re-derive them from the stored
            // feed, so a window that ends while the feed is unchanged turns elapsed.
            let mut outcome = SyncOutcome::NotModified;
            if let Some(bytes) = load_stored_feed(data_dir) {
                if let Ok(doc) = decode_upstream(&bytes, now) {
                    let content = Content::from(doc);
                    if !content.same_as(current()?.as_ref()) {
                        let records = content.records.len();
                        let sequence = content.publish(&store, &lock, now, settings.keep)?;
                        outcome = SyncOutcome::Published { sequence, records };
                    }
                }
            }
            save_sync_state(&lock, data_dir, &state)?;
            Ok(outcome)
        }
        Ok(Fetched::Body {
            bytes,
            etag,
            last_modified,
        }) => match decode_upstream(&bytes, now) {
            Ok(doc) => {
                let is_feed = matches!(doc, UpstreamDocument::Feed(_));
                let content = Content::from(doc);
                state.etag = etag;
                state.last_modified = last_modified;
                state.synced_at = Some(now);
                state.fetched_at = Some(now);
                state.upstream_generated_at = Some(content.generated_at);
                state.upstream_monitor = content.monitor.clone();
                state.skipped = content.skipped.clone();
                succeed(&mut state);
                let lock = store.lock(settings.lock_timeout, "resetctl sync")?;
                store_feed(&lock, data_dir, is_feed.then_some(bytes.as_slice()))?;
                let outcome = if content.same_as(current()?.as_ref()) {
                    SyncOutcome::Unchanged
                } else {
                    let records = content.records.len();
                    let sequence = content.publish(&store, &lock, now, settings.keep)?;
                    SyncOutcome::Published { sequence, records }
                };
                save_sync_state(&lock, data_dir, &state)?;
                Ok(outcome)
            }
            Err(error) => {
                let (status, next_attempt_at) = fail(
                    &mut state,
                    now,
                    settings,
                    cached,
                    &format!("invalid upstream document: {error}"),
                );
                let lock = store.lock(settings.lock_timeout, "resetctl sync")?;
                save_sync_state(&lock, data_dir, &state)?;
                Err(SyncError::Invalid {
                    error,
                    status,
                    next_attempt_at,
                })
            }
        },
        Err(error) => {
            let (status, next_attempt_at) =
                fail(&mut state, now, settings, cached, &error.to_string());
            let lock = store.lock(settings.lock_timeout, "resetctl sync")?;
            save_sync_state(&lock, data_dir, &state)?;
            Err(SyncError::Fetch {
                error,
                status,
                next_attempt_at,
            })
        }
    }
}

/// The last fetched public feed, kept so a 304 can re-derive states.
const STORED_FEED: &str = "upstream-feed.json";

fn load_stored_feed(data_dir: &Path) -> Option<Vec<u8>> {
    std::fs::read(data_dir.join(STORED_FEED)).ok()
}

/// Keeps (or, for a records document, removes) the stored feed.
fn store_feed(
    _lock: &DataDirLock,
    data_dir: &Path,
    feed: Option<&[u8]>,
) -> Result<(), SyncStateError> {
    let path = data_dir.join(STORED_FEED);
    match feed {
        Some(bytes) => crate::store::write_atomic(&path, bytes).map_err(SyncStateError::Write),
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(SyncStateError::Read { path, source: e })
            }
            _ => Ok(()),
        },
    }
}

/// What a good upstream document amounts to, whichever kind it was.
struct Content {
    generated_at: Timestamp,
    last_successful_check_at: Option<Timestamp>,
    records: Vec<Record>,
    monitor: Option<super::state::UpstreamMonitor>,
    skipped: Vec<String>,
}

impl From<UpstreamDocument> for Content {
    fn from(doc: UpstreamDocument) -> Self {
        match doc {
            UpstreamDocument::Records(d) => Content {
                generated_at: d.generated_at,
                last_successful_check_at: d.last_successful_check_at,
                records: d.records,
                monitor: None,
                skipped: Vec::new(),
            },
            UpstreamDocument::Feed(f) => Content {
                generated_at: f.generated_at,
                last_successful_check_at: f.last_successful_check_at,
                records: f.records,
                monitor: f.monitor,
                skipped: f.skipped.iter().map(ToString::to_string).collect(),
            },
        }
    }
}

impl Content {
    fn same_as(&self, current: Option<&Snapshot>) -> bool {
        current.is_some_and(|s| {
            s.generated_at == self.generated_at
                && s.last_successful_check_at == self.last_successful_check_at
                && s.records == self.records
        })
    }

    fn publish(
        self,
        store: &SnapshotStore,
        lock: &DataDirLock,
        now: Timestamp,
        keep: usize,
    ) -> Result<u64, SnapshotError> {
        let draft = Draft {
            mode: Mode::Upstream,
            generated_at: self.generated_at,
            last_successful_check_at: self.last_successful_check_at,
            records: self.records,
        };
        Ok(store.publish(lock, draft, now, keep)?.sequence)
    }
}

fn succeed(state: &mut SyncState) {
    state.status = DataSourceStatus::Ok;
    state.last_error = None;
    state.consecutive_failures = 0;
    state.next_attempt_at = None;
}

/// Records a failure and the back-off; returns the new status and next attempt.
fn fail(
    state: &mut SyncState,
    now: Timestamp,
    settings: &SyncSettings,
    cached: bool,
    error: &str,
) -> (DataSourceStatus, Timestamp) {
    state.consecutive_failures += 1;
    let interval = Duration::from_secs(u64::from(settings.source.interval_minutes) * 60);
    let delay = backoff_delay(
        interval,
        settings.backoff_cap,
        state.consecutive_failures,
        random_jitter(),
    );
    let next = now.add_millis(delay.as_millis() as i64);
    state.next_attempt_at = Some(next);
    state.last_error = Some(error.to_owned());
    state.status = if cached {
        DataSourceStatus::Stale
    } else {
        DataSourceStatus::Error
    };
    (state.status, next)
}

/// Syncs now and then every interval plus a small jitter (or when back-off allows) until
/// `shutdown` resolves. Each outcome goes to `report`.
pub async fn run_daemon(
    data_dir: &Path,
    settings: &SyncSettings,
    clock: Arc<dyn Clock>,
    shutdown: impl Future<Output = ()>,
    mut report: impl FnMut(&Result<SyncOutcome, SyncError>),
) {
    tokio::pin!(shutdown);
    let interval = Duration::from_secs(u64::from(settings.source.interval_minutes) * 60);
    loop {
        let result = sync_once(data_dir, settings, clock.as_ref()).await;
        report(&result);
        let now = clock.now();
        let next = match &result {
            Err(SyncError::BackingOff { until, .. }) => *until,
            Err(
                SyncError::Fetch {
                    next_attempt_at, ..
                }
                | SyncError::Invalid {
                    next_attempt_at, ..
                },
            ) => *next_attempt_at,
            _ => now.add_millis(interval_with_jitter(interval, random_unit()).as_millis() as i64),
        };
        let wait = Duration::from_millis((next.as_millis() - now.as_millis()).max(1000) as u64);
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = &mut shutdown => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_after_a_failure_depends_on_the_cache() {
        let source = SourceSettings {
            source_id: "s".into(),
            name: "S".into(),
            url: "http://127.0.0.1:9/x".into(),
            page_url: "http://127.0.0.1:9/".into(),
            interval_minutes: 5,
            max_age_minutes: 15,
        };
        let settings = SyncSettings {
            source: source.clone(),
            fetch: FetchSettings::default(),
            backoff_cap: Duration::from_secs(6 * 3600),
            force: false,
            lock_timeout: Duration::from_secs(1),
            keep: 5,
        };
        let now = Timestamp::parse("2026-11-20T10:00:00.000Z").unwrap();
        let mut state = SyncState::pending(source);
        let (status, next) = fail(&mut state, now, &settings, false, "boom");
        assert_eq!(status, DataSourceStatus::Error);
        let delay = next.as_millis() - now.as_millis();
        assert!(
            (150_000..=300_000).contains(&delay),
            "first back-off is the interval with jitter: {delay}"
        );
        let (status, next) = fail(&mut state, now, &settings, true, "boom again");
        assert_eq!(status, DataSourceStatus::Stale);
        let delay = next.as_millis() - now.as_millis();
        assert!(
            (300_000..=600_000).contains(&delay),
            "second back-off doubles: {delay}"
        );
        assert_eq!(state.consecutive_failures, 2);
        assert_eq!(state.last_error.as_deref(), Some("boom again"));
    }
}
