//! One sync attempt (the daemon that repeats it is `daemon`).
//!
//! One pipeline: take the sync lock (so a cron run and a daemon never
//! overlap) and respect back-off; **fetch** (conditional only when this
//! upstream's own validators are at hand); **decide** without touching the
//! data dir (decode, convert, and check that the result is exactly what a
//! load accepts); then **commit** under the data-dir lock: a failure
//! records the error and the back-off, a success keeps the good feed,
//! publishes when the content changed (the snapshot carries the sync
//! outcome, so the pointer and `dataSource` move together) and saves the
//! sync state. Nothing here ever removes the last good snapshot, and a body
//! that cannot be published is a failed sync like any other.

use std::path::Path;
use std::time::Duration;

use super::backoff::{backoff_delay, random_jitter};
use super::error::{Rejected, SyncError};
use super::fetch::{fetch, FetchError, FetchSettings, Fetched, UpstreamRequest};
use super::state::{
    load_sync_state, newest, save_sync_state, SourceSettings, SyncState, UpstreamOrigin,
};
use super::stored_feed::{read_stored_feed, store_feed};
use crate::clock::Clock;
use crate::data_dir::{DataDir, Holds};
use crate::document::DocumentError;
use crate::durable::{DataDirLock, LockError};
use crate::model::validate::validate_records;
use crate::model::{DataSourceStatus, Record, Timestamp};
use crate::snapshot::{Draft, Mode, Snapshot, SnapshotError, SnapshotStore};
use crate::upstream::{decode_upstream, UpstreamDocument};

/// Everything one sync needs to know.
#[derive(Clone, Debug)]
pub struct SyncSettings {
    /// How the upstream is shown in `dataSource` (its public URL among them).
    pub source: SourceSettings,
    /// What is fetched: the real URL and headers, possibly secret.
    pub upstream: UpstreamRequest,
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

/// What an answer amounts to, decided before anything is written.
enum Decision {
    /// A 304 for this upstream's validators; with a kept feed, its records
    /// re-derived now (a window may have ended while the feed stayed the same).
    NotModified(Option<Content>),
    /// A new body, checked.
    Fetched {
        content: Content,
        /// The body, when it is a feed (kept for later 304s).
        feed: Option<Vec<u8>>,
        etag: Option<String>,
        last_modified: Option<String>,
    },
}

/// Why a sync failed, before it is recorded.
enum Failure {
    Fetch(FetchError),
    Rejected(Rejected),
    /// The data dir could not take a good answer (a full disk, say).
    Local(SyncError),
}

impl Failure {
    fn text(&self) -> String {
        match self {
            Failure::Fetch(e) => e.to_string(),
            Failure::Rejected(e) => e.to_string(),
            Failure::Local(e) => e.to_string(),
        }
    }

    /// A 4xx answer to a conditional request may be the validators' fault
    /// (too large, say): they are dropped so the next attempt is plain.
    /// A kept feed that no longer decodes needs a plain GET to be replaced.
    fn drops_validators(&self, conditional: bool) -> bool {
        conditional
            && match self {
                Failure::Fetch(FetchError::Status { code, .. }) => (400..500).contains(code),
                Failure::Rejected(Rejected::StoredFeed(_)) => true,
                _ => false,
            }
    }

    /// The text recorded as `lastError`, which the API publishes: the kind
    /// of problem only. It never quotes the upstream's body or names a
    /// host, an address or a local path; the whole text ([`Failure::text`])
    /// goes to the local state, `status` and the command's own output.
    fn public_text(&self) -> String {
        match self {
            Failure::Local(_) => {
                "a local storage error while recording the sync (see the sync's own output)".into()
            }
            Failure::Fetch(e) => e.public_text(),
            Failure::Rejected(e) => e.public_text(),
        }
    }

    fn into_error(self, status: DataSourceStatus, next_attempt_at: Timestamp) -> SyncError {
        match self {
            Failure::Fetch(error) => SyncError::Fetch {
                error,
                status,
                next_attempt_at,
            },
            Failure::Rejected(error) => SyncError::Invalid {
                error,
                status,
                next_attempt_at,
            },
            Failure::Local(error) => error,
        }
    }
}

/// The sync outcome as last recorded: the state file, or the one the served
/// snapshot carries (its `head`, already read) when that is newer (a sync
/// killed before saving its state).
fn current_sync_state(
    store: &SnapshotStore,
    head: Option<&crate::snapshot::SnapshotHead>,
) -> Result<Option<SyncState>, SyncError> {
    let file = load_sync_state(store.data_dir())?;
    Ok(newest(file, head.and_then(|head| head.sync.clone())))
}

/// The current snapshot's head, or `None` when there is none or it cannot
/// be read (logged): a good sync publishing over it is the repair.
fn readable_head(store: &SnapshotStore) -> Option<crate::snapshot::SnapshotHead> {
    store.current_head().unwrap_or_else(|e| {
        tracing::warn!("the current snapshot cannot be read ({e}); the next good sync replaces it");
        None
    })
}

/// Refuses to sync into a data dir that holds a standalone instance
/// (`head`: the current snapshot's, already read).
fn refuse_standalone(
    store: &SnapshotStore,
    head: Option<&crate::snapshot::SnapshotHead>,
) -> Result<(), SyncError> {
    let holds = DataDir::of(store.data_dir()).holds(head.map(|head| head.mode));
    if matches!(holds, Holds::Standalone | Holds::Both) {
        return Err(SyncError::WrongMode(format!(
            "{} holds a standalone instance (seeded history or an operator ledger); syncing would replace its records. \
             Mirror the upstream into a separate data dir: resetctl --data-dir DIR sync ...",
            store.data_dir().display()
        )));
    }
    Ok(())
}

/// The sync state this attempt starts from (`fingerprint`: the
/// upstream's): the last one recorded, with its validators dropped when
/// they came from another upstream, and its failures and back-off too
/// (a sync pointed at another upstream starts afresh).
fn starting_state(
    store: &SnapshotStore,
    head: Option<&crate::snapshot::SnapshotHead>,
    settings: &SyncSettings,
    fingerprint: &str,
) -> Result<SyncState, SyncError> {
    let mut state = current_sync_state(store, head)?
        .unwrap_or_else(|| SyncState::pending(settings.source.clone()));
    if state.validators_for.as_deref() != Some(fingerprint) {
        // Validators belong to the upstream they came from.
        state.etag = None;
        state.last_modified = None;
    }
    // Failures and their back-off belong to the upstream they happened
    // at: pointed at another one, a sync starts afresh.
    if state
        .attempts_for
        .as_deref()
        .is_some_and(|before| before != fingerprint)
    {
        state.consecutive_failures = 0;
        state.next_attempt_at = None;
        state.last_error = None;
        state.last_error_detail = None;
        if head.map(|head| head.mode) != Some(Mode::Upstream) {
            state.status = DataSourceStatus::Pending;
        }
    }
    state.attempts_for = Some(fingerprint.to_owned());
    state.source = settings.source.clone();
    Ok(state)
}

/// The upstream's answer, asked with `state`'s validators when there is
/// an upstream cache they describe (`cached`), and whether it was asked
/// conditionally.
async fn fetch_with_validators(
    settings: &SyncSettings,
    state: &SyncState,
    cached: bool,
) -> (Result<Fetched, FetchError>, bool) {
    let (etag, last_modified) = if cached {
        (state.etag.clone(), state.last_modified.clone())
    } else {
        (None, None)
    };
    let conditional = etag.is_some() || last_modified.is_some();
    let fetched = fetch(
        &settings.upstream,
        etag.as_deref(),
        last_modified.as_deref(),
        &settings.fetch,
    )
    .await;
    (fetched, conditional)
}

/// One sync attempt at `clock.now()`.
pub async fn sync_once(
    data_dir: &Path,
    settings: &SyncSettings,
    clock: &dyn Clock,
) -> Result<SyncOutcome, SyncError> {
    let store = SnapshotStore::new(data_dir);
    let _sync_lock = DataDir::of(data_dir)
        .lock_sync(settings.lock_timeout, "resetctl sync")
        .map_err(|e| match e {
            LockError::Busy { .. } => SyncError::Busy(e),
            LockError::Io { .. } => SyncError::Lock(e),
        })?;
    // The head is read once here (a snapshot can be large) and once more
    // under the data-dir lock.
    let head = readable_head(&store);
    refuse_standalone(&store, head.as_ref())?;
    let now = clock.now();
    let fingerprint = settings.upstream.fingerprint();
    let mut state = starting_state(&store, head.as_ref(), settings, &fingerprint)?;
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
    let cached = head.as_ref().map(|head| head.mode) == Some(Mode::Upstream);
    let (fetched, conditional) = fetch_with_validators(settings, &state, cached).await;
    state.last_attempt_at = Some(now);
    let decided = decide(fetched, conditional, data_dir, now);
    let lock = store.lock(settings.lock_timeout, "resetctl sync")?;
    // Checked again under the data-dir lock: a first `seed` may have raced us.
    refuse_standalone(&store, readable_head(&store).as_ref())?;
    // The commit works on a copy: a commit that fails half-way must not
    // leave the new validators behind (a later 304 would then hide the
    // update that was never published).
    let mut next = state.clone();
    let committed = match decided {
        Ok(decision) => commit(
            &store,
            &lock,
            settings,
            &mut next,
            fingerprint,
            decision,
            now,
        ),
        Err(failure) => Err(failure),
    };
    match committed {
        Ok(outcome) => {
            save_sync_state(&lock, data_dir, &next)?;
            Ok(outcome)
        }
        Err(failure) => {
            if failure.drops_validators(conditional) {
                state.etag = None;
                state.last_modified = None;
            }
            let (status, next_attempt_at) = fail(
                &mut state,
                now,
                settings,
                cached,
                failure.public_text(),
                failure.text(),
            );
            save_sync_state(&lock, data_dir, &state)?;
            Err(failure.into_error(status, next_attempt_at))
        }
    }
}

/// Decides what the answer amounts to, writing nothing.
fn decide(
    fetched: Result<Fetched, FetchError>,
    conditional: bool,
    data_dir: &Path,
    now: Timestamp,
) -> Result<Decision, Failure> {
    let reject = Failure::Rejected;
    match fetched.map_err(Failure::Fetch)? {
        Fetched::NotModified if !conditional => Err(reject(Rejected::UnexpectedNotModified)),
        Fetched::NotModified => match read_stored_feed(data_dir) {
            Ok(None) => Ok(Decision::NotModified(None)),
            Err(e) => Err(reject(Rejected::StoredFeed(e.to_string()))),
            Ok(Some(bytes)) => {
                let doc = decode_upstream(&bytes, now)
                    .map_err(|e| reject(Rejected::StoredFeed(e.to_string())))?;
                let content = Content::checked(doc)
                    .map_err(|e| reject(Rejected::StoredFeed(e.to_string())))?;
                Ok(Decision::NotModified(Some(content)))
            }
        },
        Fetched::Body {
            bytes,
            etag,
            last_modified,
        } => {
            let doc = decode_upstream(&bytes, now).map_err(|e| reject(Rejected::Document(e)))?;
            let is_feed = matches!(doc, UpstreamDocument::Feed(_));
            let content = Content::checked(doc).map_err(reject)?;
            Ok(Decision::Fetched {
                content,
                feed: is_feed.then_some(bytes),
                etag,
                last_modified,
            })
        }
    }
}

/// Writes what a good answer decided, under the data-dir lock; the caller
/// saves the sync state afterwards. The kept feed is written before the
/// pointer moves, so a later 304 never re-derives from an older feed.
fn commit(
    store: &SnapshotStore,
    lock: &DataDirLock,
    settings: &SyncSettings,
    state: &mut SyncState,
    fingerprint: String,
    decision: Decision,
    now: Timestamp,
) -> Result<SyncOutcome, Failure> {
    let data_dir = store.data_dir();
    let fetched = matches!(decision, Decision::Fetched { .. });
    let content = match decision {
        Decision::NotModified(content) => {
            state.synced_at = Some(now);
            succeed(state);
            match content {
                Some(content) => content,
                None => return Ok(SyncOutcome::NotModified),
            }
        }
        Decision::Fetched {
            content,
            feed,
            etag,
            last_modified,
        } => {
            state.validators_for = Some(fingerprint);
            state.etag = etag;
            state.last_modified = last_modified;
            state.synced_at = Some(now);
            state.fetched_at = Some(now);
            state.upstream_generated_at = Some(content.generated_at);
            state.upstream_monitor = content.monitor.clone();
            state.skipped = content.skipped.clone();
            state.feed_sha256 = feed.as_deref().map(crate::sync::state::feed_digest);
            state.origin = content.origin.clone();
            succeed(state);
            store_feed(lock, data_dir, feed.as_deref()).map_err(local)?;
            content
        }
    };
    // An unreadable current snapshot compares as none: publishing repairs it.
    let current = store
        .load_current()
        .unwrap_or(None)
        .filter(|s| s.mode == Mode::Upstream);
    if content.same_as(current.as_ref()) {
        return Ok(if fetched {
            SyncOutcome::Unchanged
        } else {
            SyncOutcome::NotModified
        });
    }
    let records = content.records.len();
    match content.publish(store, lock, state, now, settings.keep) {
        Ok(sequence) => {
            crate::testhook::reached("sync:published");
            Ok(SyncOutcome::Published { sequence, records })
        }
        Err(crate::publish::PublishError::Snapshot(SnapshotError::Corrupt { reason, .. })) => {
            Err(Failure::Rejected(Rejected::Unpublishable(reason)))
        }
        Err(e) => Err(local(e)),
    }
}

/// A local failure while committing: not the upstream's fault, reported as is.
fn local(e: impl Into<SyncError>) -> Failure {
    Failure::Local(e.into())
}

/// What a good upstream document amounts to, whichever kind it was.
struct Content {
    generated_at: Timestamp,
    last_successful_check_at: Option<Timestamp>,
    records: Vec<Record>,
    monitor: Option<crate::model::UpstreamMonitor>,
    skipped: Vec<String>,
    /// The upstream instance's own `dataSource`, when it sent one.
    origin: Option<UpstreamOrigin>,
}

impl Content {
    /// The content of `doc`, refused when its records break a rule that
    /// loading checks (the same [`validate_records`] a load runs).
    fn checked(doc: UpstreamDocument) -> Result<Self, Rejected> {
        let content = match doc {
            UpstreamDocument::Records(d) => {
                let d = *d;
                Content {
                    generated_at: d.generated_at,
                    last_successful_check_at: d.last_successful_check_at,
                    records: d.records,
                    monitor: None,
                    skipped: Vec::new(),
                    origin: d
                        .data_source
                        .map(|data_source| UpstreamOrigin { data_source }),
                }
            }
            UpstreamDocument::Feed(f) => Content {
                generated_at: f.generated_at,
                last_successful_check_at: f.last_successful_check_at,
                records: f.records,
                monitor: f.monitor,
                skipped: f.skipped.iter().map(ToString::to_string).collect(),
                origin: None,
            },
        };
        validate_records(&content.records)
            .map_err(|e| Rejected::Unpublishable(DocumentError::Record(e)))?;
        Ok(content)
    }

    fn same_as(&self, current: Option<&Snapshot>) -> bool {
        current.is_some_and(|s| {
            s.generated_at == self.generated_at
                && s.last_successful_check_at == self.last_successful_check_at
                && s.records == self.records
        })
    }

    /// Publishes the records with the sync outcome that produced them.
    fn publish(
        self,
        store: &SnapshotStore,
        lock: &DataDirLock,
        state: &SyncState,
        now: Timestamp,
        keep: usize,
    ) -> Result<u64, crate::publish::PublishError> {
        let draft = Draft {
            mode: Mode::Upstream,
            generated_at: self.generated_at,
            last_successful_check_at: self.last_successful_check_at,
            ledger_entry: None,
            sync: Some(state.clone()),
            records: self.records,
        };
        Ok(crate::publish::publish(store, lock, draft, now, keep)?.sequence)
    }
}

fn succeed(state: &mut SyncState) {
    state.status = DataSourceStatus::Ok;
    state.last_error = None;
    state.last_error_detail = None;
    state.consecutive_failures = 0;
    state.next_attempt_at = None;
}

/// Records a failure and the back-off; returns the new status and next attempt.
fn fail(
    state: &mut SyncState,
    now: Timestamp,
    settings: &SyncSettings,
    cached: bool,
    public_error: String,
    error: String,
) -> (DataSourceStatus, Timestamp) {
    state.consecutive_failures += 1;
    let interval = Duration::from_secs(u64::from(settings.source.interval_minutes) * 60);
    let delay = backoff_delay(
        interval,
        settings.backoff_cap,
        state.consecutive_failures,
        random_jitter(),
    );
    // Never past the last writable instant, however large the cap.
    let next = now
        .add_millis(i64::try_from(delay.as_millis()).unwrap_or(i64::MAX))
        .min(Timestamp::MAX);
    state.next_attempt_at = Some(next);
    state.last_error_detail = (error != public_error).then_some(error);
    state.last_error = Some(public_error);
    state.status = if cached {
        DataSourceStatus::Stale
    } else {
        DataSourceStatus::Error
    };
    (state.status, next)
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
            upstream: UpstreamRequest::new(source.url.clone()),
            fetch: FetchSettings {
                connect_timeout: Duration::from_secs(10),
                timeout: Duration::from_secs(30),
                max_body_bytes: 1 << 20,
                max_redirects: 5,
                contact: None,
            },
            backoff_cap: Duration::from_secs(6 * 3600),
            force: false,
            lock_timeout: Duration::from_secs(1),
            keep: 5,
        };
        let now = Timestamp::parse("2026-11-20T10:00:00.000Z").unwrap();
        let mut state = SyncState::pending(source);
        let (status, next) = fail(
            &mut state,
            now,
            &settings,
            false,
            "boom".into(),
            "boom".into(),
        );
        assert_eq!(status, DataSourceStatus::Error);
        let delay = next.as_millis() - now.as_millis();
        assert!(
            (150_000..=300_000).contains(&delay),
            "first back-off is the interval with jitter: {delay}"
        );
        let (status, next) = fail(
            &mut state,
            now,
            &settings,
            true,
            "boom again".into(),
            "boom again: the whole story".into(),
        );
        assert_eq!(status, DataSourceStatus::Stale);
        let delay = next.as_millis() - now.as_millis();
        assert!(
            (300_000..=600_000).contains(&delay),
            "second back-off doubles: {delay}"
        );
        assert_eq!(state.consecutive_failures, 2);
        assert_eq!(state.last_error.as_deref(), Some("boom again"));
        assert_eq!(
            state.last_error_detail.as_deref(),
            Some("boom again: the whole story")
        );
    }
}
