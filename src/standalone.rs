//! A standalone instance: seeding history and publishing what it holds.
//!
//! The records of a standalone snapshot are the seeded history (plus, once
//! the operator ledger exists, what the ledger derives), with schedule
//! states evaluated at the publish time. Every entry point takes the
//! data-dir lock for the whole read-modify-publish, so two operators never
//! interleave.

use std::time::Duration;

use crate::document::{parse_seed, DocumentError};
use crate::history::{
    load_history, mark_seeded, plan_seed, save_history, HistoryError, SeedConflict,
};
use crate::model::validate::validate_records;
use crate::model::Timestamp;
use crate::snapshot::{Draft, Mode, Snapshot, SnapshotError, SnapshotStore};

use crate::ledger::{
    append, derive_records, read_ledger, Action, Derived, Entry, LedgerError, RecordStatus,
    TornLine,
};
use crate::model::{Kind, Record};
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
    /// How far outside a schedule window a completion still fulfils it (auto), in ms.
    pub match_tolerance_ms: i64,
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
    /// The ledger cannot be read or appended to.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// An operator action was refused; nothing was recorded.
    #[error("{0}")]
    Refused(String),
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
    let records = parse_seed(bytes).map_err(|reason| StandaloneError::BadSeed {
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

/// Everything a standalone data dir holds, derived at `now`.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The ledger entries, in order.
    pub entries: Vec<Entry>,
    /// Ledger lines that are not entries (a torn append), reported not dropped.
    pub torn: Vec<TornLine>,
    /// The derived records (published or not).
    pub derived: Derived,
}

/// Reads history and ledger and derives the records at `settings.now`.
pub fn load_instance(
    store: &SnapshotStore,
    settings: &PublishSettings,
) -> Result<Instance, StandaloneError> {
    let history = load_history(store.data_dir())?;
    let ledger = read_ledger(store.data_dir())?;
    let derived = derive_records(
        history,
        &ledger.entries,
        settings.now,
        settings.match_tolerance_ms,
    );
    Ok(Instance {
        entries: ledger.entries,
        torn: ledger.torn,
        derived,
    })
}

/// Builds and publishes the standalone records; the caller holds the lock.
pub fn publish_locked(
    store: &SnapshotStore,
    lock: &DataDirLock,
    settings: PublishSettings,
) -> Result<Snapshot, StandaloneError> {
    let instance = load_instance(store, &settings)?;
    let records = instance.derived.published();
    validate_records(&records)?;
    let draft = Draft {
        mode: Mode::Standalone,
        generated_at: settings.now,
        last_successful_check_at: instance.derived.last_successful_check_at,
        records,
    };
    Ok(store.publish(lock, draft, settings.now, settings.keep)?)
}

/// Records one operator action and republishes: checked against the
/// current records first, so a refusal changes nothing.
pub fn record_action(
    store: &SnapshotStore,
    settings: PublishSettings,
    actor: &str,
    action: Action,
) -> Result<(Entry, Snapshot), StandaloneError> {
    let lock = store.lock(settings.lock_timeout, "resetctl record")?;
    let instance = load_instance(store, &settings)?;
    check_action(&instance, &action, settings.now)?;
    let entry = append(&lock, store.data_dir(), settings.now, actor, action)?;
    let snapshot = publish_locked(store, &lock, settings)?;
    Ok((entry, snapshot))
}

fn refuse<T>(message: String) -> Result<T, StandaloneError> {
    Err(StandaloneError::Refused(message))
}

/// The refusals of operator actions, each naming the problem.
fn check_action(
    instance: &Instance,
    action: &Action,
    now: Timestamp,
) -> Result<(), StandaloneError> {
    let derived = &instance.derived;
    let existing = |id: &str| derived.get(id);
    let active = |id: &str, kind: Option<Kind>, role: &str| -> Result<&Record, StandaloneError> {
        let Some(r) = existing(id) else {
            return refuse(format!("no record with id {id:?}"));
        };
        match r.status {
            RecordStatus::Dismissed(e) => return refuse(format!("{id} was dismissed (entry {e})")),
            RecordStatus::Undone(e) => return refuse(format!("{id} was undone (entry {e})")),
            RecordStatus::Active => {}
        }
        if let Some(kind) = kind.filter(|k| *k != r.record.kind) {
            return refuse(format!(
                "{id} is a {}, not a {kind} ({role})",
                r.record.kind
            ));
        }
        Ok(&r.record)
    };
    match action {
        Action::Add { record } => {
            if let Some(r) = existing(&record.id) {
                let by = r
                    .added_by
                    .map_or("seeded history".to_owned(), |e| format!("entry {e}"));
                return refuse(format!(
                    "a record with id {} already exists ({by})",
                    record.id
                ));
            }
            let mut probe = (**record).clone();
            crate::state::evaluate_states(std::slice::from_mut(&mut probe), now);
            validate_records(&[probe])
                .map_err(|e| StandaloneError::Refused(format!("{}: {}", e.field, e.problem)))?;
        }
        Action::Complete { schedule_ids, .. } => {
            for id in schedule_ids {
                let r = active(id, Some(Kind::Scheduled), "complete takes schedules")?;
                if r.fulfillment_origin == Some(crate::model::FulfillmentOrigin::Manual) {
                    return refuse(format!(
                        "{id} is already completed manually by {}",
                        r.completion_record_id.as_deref().unwrap_or("?")
                    ));
                }
            }
        }
        Action::Link {
            completion_id,
            schedule_id,
        } => {
            active(
                completion_id,
                Some(Kind::Completed),
                "the first id is the completion",
            )?;
            let s = active(
                schedule_id,
                Some(Kind::Scheduled),
                "the second id is the schedule",
            )?;
            if s.completion_record_id.as_deref() == Some(completion_id)
                && s.fulfillment_origin != Some(crate::model::FulfillmentOrigin::Auto)
            {
                return refuse(format!(
                    "{completion_id} is already linked to {schedule_id}"
                ));
            }
        }
        Action::Unlink {
            completion_id,
            schedule_id,
        } => {
            let s = active(
                schedule_id,
                Some(Kind::Scheduled),
                "the second id is the schedule",
            )?;
            if s.completion_record_id.as_deref() != Some(completion_id.as_str()) {
                return refuse(format!("{schedule_id} is not linked to {completion_id}"));
            }
            if s.fulfillment_origin == Some(crate::model::FulfillmentOrigin::Manual) {
                return refuse(format!(
                    "{schedule_id} was completed manually; undo that entry instead"
                ));
            }
        }
        Action::Dismiss { id } => {
            active(id, None, "dismiss")?;
        }
        Action::Edit { id, changes } => {
            let r = active(id, None, "edit")?;
            if let Some(Some(c)) = changes.confidence {
                if !(0.0..=1.0).contains(&c) {
                    return refuse(format!("--confidence must be between 0 and 1, got {c}"));
                }
            }
            if changes.effective_at.is_some() && r.kind == Kind::Scheduled {
                return refuse(format!("{id} is a schedule: its time comes from its window; record a new schedule instead"));
            }
        }
        Action::Undo { entry } => {
            let Some(target) = instance.entries.iter().find(|e| e.entry == *entry) else {
                return refuse(format!("no ledger entry {entry}"));
            };
            if matches!(target.action, Action::Undo { .. }) {
                return refuse(format!(
                    "entry {entry} is itself an undo; undo entries cannot be undone"
                ));
            }
            if let Some(by) = instance
                .entries
                .iter()
                .find(|e| matches!(e.action, Action::Undo { entry: t } if t == *entry))
            {
                return refuse(format!(
                    "entry {entry} was already undone by entry {}",
                    by.entry
                ));
            }
        }
        Action::Checked { .. } => {}
    }
    Ok(())
}

/// Republishes when the records derived now differ from the current
/// standalone snapshot (a pending window ended, say); returns the new
/// snapshot if one was published. An upstream snapshot is left alone.
pub fn republish_if_changed(
    store: &SnapshotStore,
    settings: PublishSettings,
) -> Result<Option<Snapshot>, StandaloneError> {
    let current = store.load_current()?;
    if current.as_ref().is_some_and(|s| s.mode != Mode::Standalone) {
        return Ok(None);
    }
    let instance = load_instance(store, &settings)?;
    let records = instance.derived.published();
    let unchanged = current.as_ref().is_some_and(|s| {
        s.records == records
            && s.last_successful_check_at == instance.derived.last_successful_check_at
    });
    if unchanged || (current.is_none() && records.is_empty()) {
        return Ok(None);
    }
    let lock = store.lock(settings.lock_timeout, "resetctl serve --republish")?;
    publish_locked(store, &lock, settings).map(Some)
}
