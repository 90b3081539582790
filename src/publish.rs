//! The one publish step, for every command that publishes (`sync`, `seed`,
//! `publish`, `record …`, `mark-checked`, the server's republisher) and for
//! `snapshots rollback`: the new version written durably, then its changes
//! appended to the webhook outbox, then the pointer moved, then retention.
//!
//! The first version of a data dir that nothing was measured against (a
//! mirror's first sync; history seeded into an empty standalone data dir)
//! is a baseline: endpoints added before it are told what changes after
//! it, never the whole history as new.
//!
//! The order is the promise. A crash before the pointer moves leaves the
//! previous version served; the outbox holds the changes before any reader
//! can see the version they lead to, so a receiver is never told less than
//! was served (a change announced for a version that never became current
//! is at worst sent again, as the outbox's at-least-once delivery allows).
//! The caller holds the data-dir lock for the whole step.

use crate::durable::DataDirLock;
use crate::model::Timestamp;
use crate::snapshot::{Draft, Snapshot, SnapshotError, SnapshotStore};
use crate::webhook::outbox::{Outbox, OutboxError};

/// Why a publish (or a rollback) failed; the previous version stays served.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The snapshot store failed (writing the version, the pointer, retention).
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The webhook outbox could not be appended to: nothing was published.
    #[error(transparent)]
    Outbox(#[from] OutboxError),
}

/// Why a version is published, as its changes are told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Anything that changes records: an operator's action, a sync, a seed.
    Change,
    /// `resetctl restore`: the records are a backup's, whose data was last
    /// changed at `backup_of`; what it withdraws is told as such.
    Restore {
        /// When the backup's data was last changed.
        backup_of: Timestamp,
    },
}

/// Publishes `draft` as a new version and makes it current; returns it.
pub fn publish(
    store: &SnapshotStore,
    lock: &DataDirLock,
    draft: Draft,
    now: Timestamp,
    keep: usize,
) -> Result<Snapshot, PublishError> {
    publish_as(store, lock, draft, (now, keep), Cause::Change)
}

/// [`publish`], telling its changes as `cause`.
pub fn publish_as(
    store: &SnapshotStore,
    lock: &DataDirLock,
    draft: Draft,
    (now, keep): (Timestamp, usize),
    cause: Cause,
) -> Result<Snapshot, PublishError> {
    let base = diff_base(store);
    // Nothing served or told before: a mirror's first sync, or history
    // seeded into an empty standalone data dir, is the baseline, not news
    // (an operator's recorded actions always are).
    let baseline = base.is_none()
        && (draft.mode == crate::model::Mode::Upstream || draft.ledger_entry.is_none());
    let snapshot = store.write_version(lock, draft, now)?;
    let base = if baseline {
        Base::Baseline
    } else {
        Base::Told(base.as_ref())
    };
    announce(store, lock, (base, cause), &snapshot, snapshot.published_at)?;
    store.set_pointer(lock, snapshot.sequence)?;
    crate::testhook::reached("publish:pointer-moved");
    store.prune(lock, keep)?;
    Ok(snapshot)
}

/// Makes an existing, valid version current again. The changes from what
/// receivers were last told to the target go to the outbox first, as for
/// any publish.
pub fn rollback(
    store: &SnapshotStore,
    lock: &DataDirLock,
    sequence: u64,
    now: Timestamp,
) -> Result<(), PublishError> {
    let target = store.load(sequence)?;
    let base = diff_base(store);
    announce(
        store,
        lock,
        (Base::Told(base.as_ref()), Cause::Change),
        &target,
        now,
    )?;
    Ok(store.set_pointer(lock, sequence)?)
}

/// `snapshots rollback`: [`rollback`] under the data-dir lock, waited
/// for at most `lock_timeout`.
pub fn roll_back_to(
    store: &SnapshotStore,
    sequence: u64,
    now: Timestamp,
    lock_timeout: std::time::Duration,
) -> Result<(), PublishError> {
    let lock = store.lock(lock_timeout, "resetctl snapshots rollback")?;
    rollback(store, &lock, sequence, now)
}

/// `snapshots prune`: keeps the newest `keep` versions (and the current
/// one), under the data-dir lock; returns the versions removed.
pub fn prune_to(
    store: &SnapshotStore,
    keep: usize,
    lock_timeout: std::time::Duration,
) -> Result<Vec<u64>, SnapshotError> {
    let lock = store.lock(lock_timeout, "resetctl snapshots prune")?;
    store.prune(&lock, keep)
}

/// What a publish's changes are measured against.
enum Base<'a> {
    /// Nothing: the version is the baseline, no news.
    Baseline,
    /// The version receivers were last told of (none: every record is new).
    Told(Option<&'a Snapshot>),
}

/// Appends the changes from `base` to `to` to the webhook outbox (what
/// the endpoints still need of them).
fn announce(
    store: &SnapshotStore,
    lock: &DataDirLock,
    (base, cause): (Base, Cause),
    to: &Snapshot,
    published_at: Timestamp,
) -> Result<(), OutboxError> {
    let restored = match cause {
        Cause::Change => None,
        Cause::Restore { backup_of } => Some(backup_of),
    };
    let old = match base {
        Base::Baseline => None,
        Base::Told(base) => Some(base.map_or(&[][..], |b| &b.records[..])),
    };
    Outbox::new(store.data_dir())
        .append(
            lock,
            old,
            &to.records,
            to.sequence,
            to.generated_at,
            (published_at, restored),
            crate::webhook::needed(store.data_dir()),
        )
        .map(|_| ())
}

/// What the next publish's changes are measured against: the version the
/// outbox last led receivers to (a publish killed after its outbox append
/// but before the pointer moved was announced, so it counts), else the
/// current one, else nothing (every record is new).
///
/// A publish of the very same records appends nothing, so the version
/// named by the outbox may be older than the current one; its records are
/// then the same, and if retention deleted it the current one stands in. An
/// unreadable version counts as none.
fn diff_base(store: &SnapshotStore) -> Option<Snapshot> {
    let told = Outbox::new(store.data_dir())
        .index()
        .ok()
        .and_then(|c| c.last_sequence)
        .and_then(|seq| store.load(seq).ok());
    told.or_else(|| store.load_current().ok().flatten())
}
