//! A standalone instance: seeding history, recording operator actions and
//! publishing what it holds.
//!
//! The records of a standalone snapshot are the seeded history plus what
//! the operator ledger derives, with schedule states evaluated at the
//! publish time. Every entry point takes the data-dir lock for the whole
//! read-modify-publish, so two operators never interleave; ids that depend
//! on the ledger are allocated under that lock. An action is appended only
//! when the records it leads to would publish, and the ledger is the source
//! of truth: a snapshot records the last entry it includes, and any
//! standalone command (and `serve --republish`) publishes entries that a
//! failed or killed command left unpublished.
//!
//! - [`actions`]: building new records and actions from operator input;
//! - `check`: the refusals of operator actions.
//!
//! A data dir belongs to one mode: these commands refuse a data dir that
//! `sync` fills.

pub mod actions;
mod check;
pub mod restore;

use std::time::Duration;

use crate::document::{parse_seed, DocumentError};
use crate::history::{
    load_history, mark_seeded, plan_seed, save_history, HistoryError, SeedConflict,
};
use crate::model::validate::validate_records;
use crate::model::Timestamp;
use crate::publish::Cause;
use crate::snapshot::{Draft, Mode, Snapshot, SnapshotError, SnapshotStore};

use crate::durable::DataDirLock;
use crate::ledger::{append, derive_records, read_ledger, BadLine, Derived, Entry, LedgerError};

pub use actions::Request;

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
    /// Publishing failed (the snapshot store or the webhook outbox).
    #[error(transparent)]
    Publish(#[from] crate::publish::PublishError),
    /// The merged records break a rule (for example a reference to a seeded id).
    #[error("the merged records are invalid: {0}")]
    Invalid(#[from] crate::model::validate::ValidationError),
    /// The ledger cannot be read or appended to.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// An operator action was refused; nothing was recorded.
    #[error("{0}")]
    Refused(String),
    /// The data dir belongs to upstream-sync mode.
    #[error("{0}")]
    WrongMode(String),
    /// The directory named as a backup holds none (`resetctl restore`).
    #[error("{0}")]
    NoBackup(String),
    /// The entry is in the ledger but the snapshot could not be written.
    #[error("entry {entry} recorded; publishing failed: {source}; run `resetctl publish` (or any standalone command) to publish it")]
    Unpublished {
        /// The entry that was recorded.
        entry: u64,
        /// Why publishing failed.
        source: Box<StandaloneError>,
    },
}

/// Refuses a data dir that `sync` fills: a standalone command would replace
/// the mirrored records with its own, and one that reads the ledger
/// (`record list`, `show`, `log`) would answer about a ledger the mirror
/// does not have. Every standalone command refuses the same way (exit 64).
pub fn refuse_upstream(store: &SnapshotStore) -> Result<(), StandaloneError> {
    let data_dir = store.data_dir();
    // An unreadable current snapshot says nothing of the mode; publishing
    // a good one is what repairs it.
    let holds = crate::data_dir::DataDir::of(data_dir).holds(store.current_mode().unwrap_or(None));
    if matches!(
        holds,
        crate::data_dir::Holds::Mirror | crate::data_dir::Holds::Both
    ) {
        return Err(StandaloneError::WrongMode(format!(
            "{} is an upstream mirror (filled by resetctl sync); standalone commands would replace its records. \
             Run a standalone instance in a separate data dir: resetctl --data-dir DIR seed",
            data_dir.display()
        )));
    }
    Ok(())
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
    refuse_upstream(store)?;
    // Read (and checked) before anything is written: a corrupt ledger
    // refuses the seed whole, history included.
    let last = last_entry_number(store)?;
    let stored = load_history(store.data_dir())?;
    let plan = plan_seed(stored, records.into_iter().map(mark_seeded).collect());
    if !plan.conflicts.is_empty() {
        return Err(StandaloneError::Conflicts(plan.conflicts));
    }
    validate_records(&plan.merged)?;
    // An idempotent re-run changes nothing (no history write, no new
    // version) unless ledger entries are waiting to be published.
    let current = store.load_current()?;
    let behind = current
        .as_ref()
        .is_some_and(|s| last > s.ledger_entry.unwrap_or(0));
    let snapshot = match current {
        Some(snapshot) if plan.added == 0 && !behind => snapshot,
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
    refuse_upstream(store)?;
    publish_locked(store, &lock, settings)
}

/// The highest number of an intact ledger entry (0 when none): what a
/// publish records as included, so "behind" compares like with like.
fn last_entry_number(store: &SnapshotStore) -> Result<u64, LedgerError> {
    Ok(read_ledger(store.data_dir())?
        .checked()?
        .entries
        .iter()
        .map(|e| e.entry)
        .max()
        .unwrap_or(0))
}

/// Everything a standalone data dir holds, derived at `now`.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The ledger entries, in order.
    pub entries: Vec<Entry>,
    /// Ledger lines that are not entries (a torn append), reported not dropped.
    pub torn: Vec<BadLine>,
    /// The number the next entry gets (past every number on disk).
    pub next_entry_number: u64,
    /// Whether some ledger lines carry no check (written before checks,
    /// or by hand): the next append rewrites the ledger with them.
    pub unchecked_lines: bool,
    /// The derived records (published or not).
    pub derived: Derived,
    /// The last ledger entry the current snapshot includes (`None`: no
    /// snapshot, or one written before snapshots recorded it).
    pub published_entry: Option<u64>,
}

/// The ids of the records the current snapshot serves.
pub fn published_ids(
    store: &SnapshotStore,
) -> Result<std::collections::HashSet<String>, StandaloneError> {
    Ok(store
        .load_current()?
        .map(|s| s.records.into_iter().map(|r| r.id).collect())
        .unwrap_or_default())
}

impl Instance {
    /// The entries newer than the current snapshot: recorded, not yet published.
    pub fn unpublished_entries(&self) -> impl Iterator<Item = &Entry> {
        let published = self.published_entry.unwrap_or(0);
        self.entries.iter().filter(move |e| e.entry > published)
    }
}

/// Reads history and ledger and derives the records at `settings.now`.
pub fn load_instance(
    store: &SnapshotStore,
    settings: &PublishSettings,
) -> Result<Instance, StandaloneError> {
    instance_of(store, load_history(store.data_dir())?, settings)
}

/// The instance of `history` and the data dir's ledger, derived at `settings.now`.
fn instance_of(
    store: &SnapshotStore,
    history: Vec<crate::model::Record>,
    settings: &PublishSettings,
) -> Result<Instance, StandaloneError> {
    // A corrupt line refuses the whole ledger: skipping it would drop an
    // operator's action and announce its record's removal.
    let ledger = read_ledger(store.data_dir())?.checked()?;
    let derived = derive_records(
        history,
        &ledger.entries,
        settings.now,
        settings.match_tolerance_ms,
    );
    // An unreadable current snapshot publishes nothing: every entry is then
    // unpublished, and the next publish (which repairs it) includes them.
    let published_entry = store
        .current_head()
        .unwrap_or(None)
        .map(|head| head.ledger_entry.unwrap_or(0));
    Ok(Instance {
        next_entry_number: ledger.next_entry_number(),
        unchecked_lines: ledger.unchecked > 0,
        entries: ledger.entries,
        torn: ledger.torn,
        derived,
        published_entry,
    })
}

/// Builds and publishes the standalone records; the caller holds the lock.
pub fn publish_locked(
    store: &SnapshotStore,
    lock: &DataDirLock,
    settings: PublishSettings,
) -> Result<Snapshot, StandaloneError> {
    publish_records_as(store, lock, settings, Cause::Change)
}

/// [`publish_locked`], telling its changes as `cause`.
fn publish_records_as(
    store: &SnapshotStore,
    lock: &DataDirLock,
    settings: PublishSettings,
    cause: Cause,
) -> Result<Snapshot, StandaloneError> {
    let instance = load_instance(store, &settings)?;
    let records = instance.derived.published();
    validate_records(&records)?;
    publish_records(
        store,
        lock,
        (records, &instance.derived, &instance.entries),
        settings,
        cause,
    )
}

/// Publishes `records` (valid, derived as `derived` from `entries`) as the
/// standalone snapshot; the caller holds the lock.
fn publish_records(
    store: &SnapshotStore,
    lock: &DataDirLock,
    (records, derived, entries): (Vec<crate::model::Record>, &Derived, &[Entry]),
    settings: PublishSettings,
    cause: Cause,
) -> Result<Snapshot, StandaloneError> {
    let draft = Draft {
        mode: Mode::Standalone,
        generated_at: settings.now,
        last_successful_check_at: derived.last_successful_check_at,
        ledger_entry: entries.iter().map(|e| e.entry).max(),
        sync: None,
        records,
    };
    Ok(crate::publish::publish_as(
        store,
        lock,
        draft,
        (settings.now, settings.keep),
        cause,
    )?)
}

/// Records one operator request and republishes. Under the lock: the
/// entry number (and any id made from it) is allocated, the action is
/// checked against the current records, and the records it leads to are
/// derived and validated; only an action whose result publishes is
/// appended, and those records are what is published. History and ledger
/// are read once, the records derived once before the entry and once
/// after it. A failure after the append says so
/// ([`StandaloneError::Unpublished`]).
pub fn record_action(
    store: &SnapshotStore,
    settings: PublishSettings,
    actor: &str,
    request: Request,
) -> Result<(Entry, Snapshot), StandaloneError> {
    let lock = store.lock(settings.lock_timeout, "resetctl record")?;
    refuse_upstream(store)?;
    let history = load_history(store.data_dir())?;
    let instance = instance_of(store, history.clone(), &settings)?;
    let number = instance.next_entry_number;
    let entry = Entry {
        entry: number,
        at: settings.now,
        actor: actor.to_owned(),
        action: request.into_action(number),
    };
    check::check_action(&instance, &entry.action, settings.now)?;
    let mut entries = instance.entries.clone();
    entries.push(entry.clone());
    let (records, derived) = would_publish(history, &entries, &entry, &settings)?;
    append(
        &lock,
        store.data_dir(),
        &entry,
        instance.unchecked_lines.then_some(&instance.entries[..]),
    )?;
    let snapshot = publish_records(
        store,
        &lock,
        (records, &derived, &entries),
        settings,
        Cause::Change,
    )
    .map_err(|e| StandaloneError::Unpublished {
        entry: entry.entry,
        source: Box::new(e),
    })?;
    Ok((entry, snapshot))
}

/// The records `history` and `entries` (the last of them `entry`, not yet
/// appended) lead to, refused unless they would publish (the same check a
/// publish and a load make).
fn would_publish(
    history: Vec<crate::model::Record>,
    entries: &[Entry],
    entry: &Entry,
    settings: &PublishSettings,
) -> Result<(Vec<crate::model::Record>, Derived), StandaloneError> {
    let refused =
        |problem: String| StandaloneError::Refused(format!("nothing was recorded: {problem}"));
    serde_json::to_vec(entry).map_err(|e| refused(e.to_string()))?;
    let derived = derive_records(history, entries, settings.now, settings.match_tolerance_ms);
    let records = derived.published();
    validate_records(&records)
        .map_err(|e| refused(format!("the records would be invalid: {e}")))?;
    Ok((records, derived))
}

/// Republishes when the records derived now differ from the current
/// standalone snapshot (a pending window ended, say); returns the new
/// snapshot if one was published. An upstream snapshot is left alone.
/// Decided under the data-dir lock, as [`record_action`] decides: a first
/// look without it finds most calls have nothing to do, and the look is
/// made again under the lock before anything is published, so a writer
/// that published meanwhile (another mode's version among them) is seen.
pub fn republish_if_changed(
    store: &SnapshotStore,
    settings: PublishSettings,
) -> Result<Option<Snapshot>, StandaloneError> {
    if !needs_republish(store, &settings)? {
        return Ok(None);
    }
    let lock = store.lock(settings.lock_timeout, "resetctl serve --republish")?;
    if !needs_republish(store, &settings)? {
        return Ok(None);
    }
    publish_locked(store, &lock, settings).map(Some)
}

/// Whether the records derived at `settings.now` differ from the current
/// snapshot's (or entries are unpublished), when it is a standalone one or
/// there is none.
fn needs_republish(
    store: &SnapshotStore,
    settings: &PublishSettings,
) -> Result<bool, StandaloneError> {
    let current = store.load_current()?;
    if current.as_ref().is_some_and(|s| s.mode != Mode::Standalone) {
        return Ok(false);
    }
    let instance = load_instance(store, settings)?;
    let records = instance.derived.published();
    let unchanged = current.as_ref().is_some_and(|s| {
        s.records == records
            && s.last_successful_check_at == instance.derived.last_successful_check_at
            && instance.unpublished_entries().next().is_none()
    });
    Ok(!(unchanged || (current.is_none() && records.is_empty())))
}

/// Republishes whenever the derived records change (a pending window
/// ended, an entry left unpublished), checking every `every` on `clock`;
/// runs until its task is aborted. `serve --republish` starts it beside the
/// server: the server itself only reads the data dir.
pub async fn republish_periodically(
    store: SnapshotStore,
    settings: PublishSettings,
    every: Duration,
    clock: std::sync::Arc<dyn crate::clock::Clock>,
) {
    loop {
        let settings = PublishSettings {
            now: clock.now(),
            ..settings
        };
        let store = store.clone();
        match tokio::task::spawn_blocking(move || republish_if_changed(&store, settings)).await {
            Ok(Ok(Some(snapshot))) => {
                tracing::info!(sequence = snapshot.sequence, "republished: states changed")
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!("republish failed: {e}"),
            Err(e) => tracing::error!("republish task failed: {e}"),
        }
        tokio::time::sleep(every).await;
    }
}
