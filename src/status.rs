//! What `resetctl status` reports: the mode, the current snapshot, its
//! freshness and record counts. Built here as data; the CLI renders it as
//! text or JSON.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::ledger::read_ledger;
use crate::model::{Kind, ScheduleState, Timestamp};
use crate::snapshot::{SnapshotError, SnapshotStore};
use crate::sync::state::{load_sync_state, newest, SyncState};

/// The whole report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    /// The data dir.
    pub data_dir: PathBuf,
    /// `standalone` or `upstream` (the mode of the served snapshot), or null.
    pub mode: Option<&'static str>,
    /// The current snapshot, or null when nothing is published.
    pub snapshot: Option<SnapshotStatus>,
    /// The upstream sync state, or null when this data dir was never synced.
    pub sync: Option<SyncReport>,
    /// The upstream the settings name now (its public URL), when one is
    /// configured: what the next sync fetches, which may not be the one
    /// `sync` last ran against.
    pub configured_upstream: Option<String>,
    /// The operator ledger, or null when there is none.
    pub ledger: Option<LedgerReport>,
    /// Whether what is served is stale: an upstream mirror whose sync
    /// status, as of now, is `stale` (no successful sync or revalidation
    /// within the sync's maximum age) or `error`. A standalone instance is
    /// as fresh as its operator keeps it and is never stale here. The age
    /// of `generatedAt` does not decide: a mirror's is the upstream's own,
    /// which may rightly not change for days.
    pub stale: bool,
    /// Whether a standalone instance's last successful check is older than
    /// the status page's trust limit (30 hours), so its page says
    /// "Unknown": its operator checks the source and runs `resetctl
    /// mark-checked`. Never checked is not overdue (a new instance); a
    /// mirror's check is its upstream's, and `stale` judges the mirror.
    pub check_overdue: bool,
    /// Files of the data dir that could not be read (not a regular file,
    /// over their cap, an I/O error): the rest of the report stands, and
    /// `status` exits non-zero naming each.
    pub unreadable: Vec<Unreadable>,
}

/// A file `status` could not read.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unreadable {
    /// What was wrong, naming the file.
    pub problem: String,
    /// Whether the file itself is unfit (exit 65) rather than unreadable
    /// for an I/O failure (exit 74).
    #[serde(skip)]
    pub unfit: bool,
}

impl Unreadable {
    fn from_read(e: &crate::durable::ReadError) -> Self {
        Self {
            problem: e.to_string(),
            unfit: e.is_unfit(),
        }
    }
}

impl StatusReport {
    fn judge(mut self) -> Self {
        self.stale = self.mode == Some("upstream")
            && self.sync.as_ref().is_some_and(|s| s.status.is_behind());
        self
    }
}

/// The operator ledger as `status` shows it: how far publishing got.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerReport {
    /// Readable entries.
    pub entries: usize,
    /// The highest number of an intact entry.
    pub last_entry: u64,
    /// The last entry the current snapshot includes (null: none).
    pub published_through: Option<u64>,
    /// Entries recorded but not yet published (run `resetctl publish`).
    pub unpublished: usize,
    /// Lines that are not complete entries (an interrupted append).
    pub torn_lines: usize,
    /// The first corrupt line, described with what to do: nothing is
    /// published from the ledger while it is there.
    pub corrupt: Option<String>,
}

/// The sync state as `status` shows it: the file's content, with `status`
/// as of now (an `ok` cache past its maximum age shows `stale`).
pub type SyncReport = SyncState;

/// The current snapshot.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotStatus {
    /// Its sequence number.
    pub sequence: u64,
    /// Its file.
    pub path: PathBuf,
    /// `meta.generatedAt`.
    pub generated_at: Timestamp,
    /// When it was written.
    pub published_at: Timestamp,
    /// Seconds since `generatedAt` (how fresh the data is).
    pub age_seconds: i64,
    /// `meta.lastSuccessfulCheckAt`.
    pub last_successful_check_at: Option<Timestamp>,
    /// Number of records.
    pub records: usize,
    /// Counts by kind (every kind listed, zero included).
    pub by_kind: BTreeMap<&'static str, usize>,
    /// Counts of schedules by state (every state listed, zero included).
    pub by_schedule_state: BTreeMap<&'static str, usize>,
    /// How many versions are on disk.
    pub versions_on_disk: usize,
}

/// Builds the report for the store at `now`. An unreadable sync state or
/// ledger is reported in [`StatusReport::unreadable`] and left out rather
/// than hiding the rest of the report.
pub fn status_report(
    store: &SnapshotStore,
    now: Timestamp,
    configured_upstream: Option<&str>,
) -> Result<StatusReport, SnapshotError> {
    let configured_upstream = configured_upstream.map(str::to_owned);
    let mut unreadable = Vec::new();
    // A file that cannot be read is reported; one that reads but does not
    // decode is logged, and the state the snapshot carries stands in.
    let file = load_sync_state(store.data_dir()).unwrap_or_else(|e| {
        match &e {
            crate::sync::state::SyncStateError::Read(e) => {
                unreadable.push(Unreadable::from_read(e))
            }
            other => tracing::warn!("{other}"),
        }
        None
    });
    let current = store.load_current_explained()?;
    // A sync killed before saving its state left its outcome in the snapshot.
    let carried = current.as_ref().and_then(|s| s.sync.clone());
    let sync = newest(file, carried).map(|mut state| {
        state.status = state.effective_status(now);
        state
    });
    let published = current.as_ref().map(|s| s.ledger_entry.unwrap_or(0));
    let ledger = match read_ledger(store.data_dir()) {
        Ok(read) => ledger_report(read, published),
        Err(e) => {
            unreadable.push(match &e {
                crate::ledger::LedgerError::Unfit(e) => Unreadable::from_read(e),
                other => Unreadable {
                    problem: other.to_string(),
                    unfit: false,
                },
            });
            None
        }
    };
    let Some(snapshot) = current else {
        return Ok(StatusReport {
            data_dir: store.data_dir().to_owned(),
            mode: None,
            snapshot: None,
            sync,
            configured_upstream,
            ledger,
            stale: false,
            check_overdue: false,
            unreadable,
        });
    };
    let mut by_kind: BTreeMap<&'static str, usize> =
        Kind::ALL.iter().map(|k| (k.as_str(), 0)).collect();
    let mut by_state: BTreeMap<&'static str, usize> =
        ScheduleState::ALL.iter().map(|s| (s.as_str(), 0)).collect();
    for record in &snapshot.records {
        *by_kind.entry(record.kind.as_str()).or_default() += 1;
        if let Some(state) = record.schedule_state {
            *by_state.entry(state.as_str()).or_default() += 1;
        }
    }
    let versions_on_disk = store.list()?.len();
    Ok(StatusReport {
        data_dir: store.data_dir().to_owned(),
        mode: Some(snapshot.mode.as_str()),
        snapshot: Some(SnapshotStatus {
            sequence: snapshot.sequence,
            path: store.path_of(snapshot.sequence),
            generated_at: snapshot.generated_at,
            published_at: snapshot.published_at,
            age_seconds: (now.as_millis() - snapshot.generated_at.as_millis()).div_euclid(1000),
            last_successful_check_at: snapshot.last_successful_check_at,
            records: snapshot.records.len(),
            by_kind,
            by_schedule_state: by_state,
            versions_on_disk,
        }),
        sync,
        configured_upstream,
        ledger,
        unreadable,
        stale: false,
        check_overdue: snapshot.mode == crate::model::Mode::Standalone
            && snapshot
                .last_successful_check_at
                .is_some_and(|at| crate::site::verdict::check_overdue(at, now)),
    }
    .judge())
}

/// The ledger's entries against what the current snapshot includes.
fn ledger_report(
    ledger: crate::ledger::LedgerRead,
    published: Option<u64>,
) -> Option<LedgerReport> {
    if ledger.entries.is_empty() && ledger.torn.is_empty() && ledger.corrupt.is_empty() {
        return None;
    }
    let last_entry = ledger.entries.iter().map(|e| e.entry).max().unwrap_or(0);
    let published_through = published.filter(|n| *n > 0);
    Some(LedgerReport {
        entries: ledger.entries.len(),
        last_entry,
        published_through,
        unpublished: ledger
            .entries
            .iter()
            .filter(|e| e.entry > published.unwrap_or(0))
            .count(),
        torn_lines: ledger.torn.len(),
        corrupt: ledger.corrupt_error().map(|e| e.to_string()),
    })
}
