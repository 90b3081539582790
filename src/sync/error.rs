//! Why a sync did not succeed: the errors a sync returns, and why an
//! upstream's answer cannot be published (in full for the operator, and
//! as the kind of problem only for the published `lastError`).

use super::fetch::FetchError;
use super::state::SyncStateError;
use crate::data_dir::STORED_FEED;
use crate::document::DocumentError;
use crate::durable::LockError;
use crate::model::{DataSourceStatus, Timestamp};
use crate::snapshot::SnapshotError;

/// `failures` in words: "1 failed sync", "3 failed syncs in a row".
fn failed_syncs(failures: u32) -> String {
    match failures {
        1 => "1 failed sync".to_owned(),
        n => format!("{n} failed syncs in a row"),
    }
}

/// Why a sync did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// Back-off is in force; nothing was attempted.
    #[error("backing off after {}; the next attempt is allowed at {until} (use --force to try now)", failed_syncs(*.failures))]
    BackingOff {
        /// The next permitted attempt.
        until: Timestamp,
        /// Failures in a row so far.
        failures: u32,
    },
    /// Another sync holds the sync lock.
    #[error("another sync is running: {0}")]
    Busy(LockError),
    /// This data dir holds a standalone instance; syncing would replace it.
    #[error("{0}")]
    WrongMode(String),
    /// The sync lock cannot be taken at all (a read-only or broken data
    /// dir): an I/O error, not contention.
    #[error("cannot take the sync lock: {0}")]
    Lock(LockError),
    /// The upstream could not be fetched; the failure is recorded.
    #[error("sync failed: {error}; {} (status {status}, next attempt at {next_attempt_at})", served(*.status))]
    Fetch {
        /// The fetch error.
        error: FetchError,
        /// The status now recorded.
        status: DataSourceStatus,
        /// When back-off allows the next attempt.
        next_attempt_at: Timestamp,
    },
    /// The body cannot be published; the failure is recorded.
    #[error("sync failed: {error}; {} (status {status}, next attempt at {next_attempt_at})", served(*.status))]
    Invalid {
        /// Why the document was refused.
        error: Rejected,
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
    /// Publishing failed (the snapshot store or the webhook outbox).
    #[error(transparent)]
    Publish(#[from] crate::publish::PublishError),
}

/// What a failed sync leaves served, in words that fit: the last good
/// data, or (never synced, or a new upstream) nothing yet.
fn served(status: DataSourceStatus) -> &'static str {
    match status {
        DataSourceStatus::Ok | DataSourceStatus::Stale => "the last good data stays served",
        DataSourceStatus::Error | DataSourceStatus::Pending => {
            "nothing from this upstream is served until a sync succeeds"
        }
    }
}

/// Why an answer of the upstream cannot be published.
#[derive(Debug, thiserror::Error)]
pub enum Rejected {
    /// The body is not a valid upstream document.
    #[error("invalid upstream document: {0}")]
    Document(DocumentError),
    /// The document is valid but what it yields would not load back.
    #[error("the upstream document yields records that cannot be published: {0}")]
    Unpublishable(DocumentError),
    /// A 304 to a request that carried no validator of this upstream.
    #[error("the upstream answered 304 Not Modified to a request without validators of its own; nothing to revalidate")]
    UnexpectedNotModified,
    /// The kept feed, re-derived after a 304, no longer decodes.
    #[error("the upstream answered 304, but the kept feed ({STORED_FEED}) cannot be used: {0}")]
    StoredFeed(String),
}

impl Rejected {
    /// The refusal as it may be published: where in the document and what
    /// kind of problem, never a value the upstream sent.
    pub fn public_text(&self) -> String {
        match self {
            Rejected::Document(e) => format!("invalid upstream document: {}", e.public_text()),
            Rejected::Unpublishable(e) => format!(
                "the upstream document yields records that cannot be published: {}",
                e.public_text()
            ),
            Rejected::StoredFeed(_) => format!(
                "the upstream answered 304, but the kept feed ({STORED_FEED}) cannot be used"
            ),
            e @ Rejected::UnexpectedNotModified => e.to_string(),
        }
    }
}
