//! `resetctl restore DIR`: a standalone instance's ledger and seeded
//! history put back from a backup (an extracted archive of its data dir),
//! published as a new version through the one publish step.
//!
//! What receivers were told stays the live data dir's (its `webhooks/`,
//! snapshots and sequence numbers go on), so what the backup no longer
//! has is told once, as withdrawn "restored from a backup of …", and what
//! it has again as announced; nothing told is told again under another
//! id. The restored ledger ends with a `restore` entry numbered past every
//! entry the live ledger held, so no entry number (nor a `manual:entry-N`
//! id made from one) is issued twice. Each file is replaced atomically
//! under the data-dir lock; a restore interrupted between the two files
//! is finished by running it again.

use std::path::Path;

use super::{publish_records_as, refuse_upstream, PublishSettings, StandaloneError};
use crate::history::{load_history, save_history};
use crate::ledger::{derive_records, read_ledger, Action, Entry};
use crate::model::validate::validate_records;
use crate::model::Timestamp;
use crate::snapshot::{Snapshot, SnapshotStore};

/// What a restore did.
#[derive(Debug, Clone)]
pub struct RestoreReport {
    /// When the backup's data was last changed (its newest ledger entry,
    /// else its history file's modification).
    pub backup_of: Timestamp,
    /// The ledger entries put back.
    pub entries: usize,
    /// The seeded records put back.
    pub history: usize,
    /// The version published.
    pub snapshot: Snapshot,
}

/// Restores the standalone instance of `store` from the data dir `backup`.
pub fn restore(
    store: &SnapshotStore,
    backup: &Path,
    actor: &str,
    settings: PublishSettings,
) -> Result<RestoreReport, StandaloneError> {
    let refuse = |why: String| Err(StandaloneError::Refused(why));
    if same_dir(backup, store.data_dir()) {
        return refuse(format!(
            "{} is the data dir itself; name the directory a backup was extracted into",
            backup.display()
        ));
    }
    let read = read_ledger(backup)?.checked()?;
    let history = load_history(backup)?;
    let history_file = crate::data_dir::DataDir::of(backup).history();
    if read.entries.is_empty() && history.is_empty() {
        return Err(StandaloneError::NoBackup(format!(
            "{} holds no ledger.jsonl or history.json of a standalone instance; \
             extract the backup there first (tar -C DIR -xzf ARCHIVE)",
            backup.display()
        )));
    }
    let modified = std::fs::metadata(&history_file)
        .and_then(|m| m.modified())
        .ok()
        .map(|t| Timestamp::from_datetime(&chrono::DateTime::<chrono::Utc>::from(t)));
    let Some(backup_of) = read.entries.iter().map(|e| e.at).max().or(modified) else {
        return refuse(format!(
            "{}: cannot tell when it was made",
            backup.display()
        ));
    };
    // What it leads to must publish, before anything is replaced.
    let derived = derive_records(
        history.clone(),
        &read.entries,
        settings.now,
        settings.match_tolerance_ms,
    );
    validate_records(&derived.published())?;
    let lock = store.lock(settings.lock_timeout, "resetctl restore")?;
    refuse_upstream(store)?;
    let live = read_ledger(store.data_dir())?;
    let next = live.next_entry_number().max(read.next_entry_number());
    let mut entries = read.entries;
    let count = entries.len();
    entries.push(Entry {
        entry: next,
        at: settings.now,
        actor: actor.to_owned(),
        action: Action::Restore { backup_of },
    });
    save_history(&lock, store.data_dir(), &history)?;
    crate::ledger::replace(&lock, store.data_dir(), &entries)?;
    let snapshot = publish_records_as(
        store,
        &lock,
        settings,
        crate::publish::Cause::Restore { backup_of },
    )?;
    Ok(RestoreReport {
        backup_of,
        entries: count,
        history: history.len(),
        snapshot,
    })
}

/// Whether `a` and `b` name one directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
