//! What `resetctl status` reports: the mode, the current snapshot, its
//! freshness and record counts. Built here as data; the CLI renders it as
//! text or JSON.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::model::{Kind, ScheduleState, Timestamp};
use crate::snapshot::{SnapshotError, SnapshotStore};
use crate::sync::state::{load_sync_state, SyncState};

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

/// Builds the report for the store at `now`. An unreadable sync state is
/// logged and left out rather than hiding the rest of the report.
pub fn status_report(store: &SnapshotStore, now: Timestamp) -> Result<StatusReport, SnapshotError> {
    let sync = match load_sync_state(store.data_dir()) {
        Ok(state) => state.map(|mut state| {
            state.status = state.effective_status(now);
            state
        }),
        Err(e) => {
            tracing::warn!("{e}");
            None
        }
    };
    let Some(snapshot) = store.load_current()? else {
        return Ok(StatusReport {
            data_dir: store.data_dir().to_owned(),
            mode: None,
            snapshot: None,
            sync,
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
    })
}
