//! A standalone instance: seeding history and publishing what it holds.
//!
//! The records of a standalone snapshot are the seeded history (plus, once
//! the operator ledger exists, what the ledger derives), with schedule
//! states evaluated at the publish time. Every entry point takes the
//! data-dir lock for the whole read-modify-publish, so two operators never
//! interleave.

use std::path::Path;
use std::time::Duration;

use crate::document::{parse_seed, DocumentError};
use crate::history::{
    load_history, mark_seeded, plan_seed, save_history, HistoryError, SeedConflict,
};
use crate::model::validate::validate_records;
use crate::model::Timestamp;
use crate::snapshot::{Draft, Mode, Snapshot, SnapshotError, SnapshotStore};
use crate::state::evaluate_states;
use crate::store::DataDirLock;

/// Settings every publishing command shares.
#[derive(Debug, Clone, Copy)]
pub struct PublishSettings {
    /// The publish time (the injectable clock).
    pub now: Timestamp,
    /// Retention: how many versions to keep.
    pub keep: usize,
    /// How long to wait for the data-dir lock.
    pub lock_timeout: Duration,
}

/// Why seeding or publishing failed; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum StandaloneError {
    /// The seed file is not a valid records document or array.
    #[error("{source_name}: {reason}")]
    BadSeed {
        /// The seed file's name.
        source_name: String,
        /// What is wrong.
        reason: DocumentError,
    },
    /// Records in the seed file conflict with stored ones.
    #[error("{} record(s) conflict with stored history, nothing was imported: {}", .0.len(), describe_conflicts(.0))]
    Conflicts(Vec<SeedConflict>),
    /// The data dir's history is unreadable.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// The snapshot store failed.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The merged records break a rule (for example a reference to a seeded id).
    #[error("the merged records are invalid: {0}")]
    Invalid(#[from] crate::model::validate::ValidationError),
}

fn describe_conflicts(conflicts: &[SeedConflict]) -> String {
    conflicts
        .iter()
        .map(|c| format!("record {} (id {:?}) differs in {}", c.index, c.id, c.field))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a seed run did.
#[derive(Debug, Clone)]
pub struct SeedReport {
    /// Newly imported records.
    pub added: usize,
    /// Records already present and identical.
    pub unchanged: usize,
    /// The current snapshot afterwards (a new one unless nothing was added).
    pub snapshot: Snapshot,
}

/// Imports the seed file's bytes (named `source_name` in errors) and publishes.
pub fn seed(
    store: &SnapshotStore,
    source_name: &str,
    bytes: &[u8],
    settings: PublishSettings,
) -> Result<SeedReport, StandaloneError> {
    let (_, records) = parse_seed(bytes).map_err(|reason| StandaloneError::BadSeed {
        source_name: source_name.to_owned(),
        reason,
    })?;
    let lock = store.lock(settings.lock_timeout, "resetctl seed")?;
    let stored = load_history(store.data_dir())?;
    let plan = plan_seed(stored, records.into_iter().map(mark_seeded).collect());
    if !plan.conflicts.is_empty() {
        return Err(StandaloneError::Conflicts(plan.conflicts));
    }
    validate_records(&plan.merged)?;
    // An idempotent re-run changes nothing: no history write, no new version.
    let current = store.load_current()?;
    let snapshot = match current {
        Some(snapshot) if plan.added == 0 => snapshot,
        _ => {
            save_history(&lock, store.data_dir(), &plan.merged)?;
            publish_locked(store, &lock, settings)?
        }
    };
    Ok(SeedReport {
        added: plan.added,
        unchanged: plan.unchanged,
        snapshot,
    })
}

/// Republishes the standalone records at `settings.now`.
pub fn publish(
    store: &SnapshotStore,
    settings: PublishSettings,
) -> Result<Snapshot, StandaloneError> {
    let lock = store.lock(settings.lock_timeout, "resetctl publish")?;
    publish_locked(store, &lock, settings)
}

/// Builds and publishes the standalone records; the caller holds the lock.
pub fn publish_locked(
    store: &SnapshotStore,
    lock: &DataDirLock,
    settings: PublishSettings,
) -> Result<Snapshot, StandaloneError> {
    let mut records = load_history(store.data_dir())?;
    evaluate_states(&mut records, settings.now);
    validate_records(&records)?;
    let draft = Draft {
        mode: Mode::Standalone,
        generated_at: settings.now,
        last_successful_check_at: None,
        records,
    };
    Ok(store.publish(lock, draft, settings.now, settings.keep)?)
}

/// Whether `data_dir` holds a published snapshot.
pub fn is_published(data_dir: &Path) -> bool {
    SnapshotStore::new(data_dir)
        .current_sequence()
        .ok()
        .flatten()
        .is_some()
}
