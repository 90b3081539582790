//! The sync state, `<data-dir>/sync-state.json`: written atomically by
//! `resetctl sync` under the data-dir lock, read by `serve` and `status`.
//! It carries the source settings too, so the server can build the 17
//! fields of `meta.dataSource` without being told how sync was run.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::feed::UpstreamMonitor;
use crate::model::{DataSource, DataSourceStatus, Timestamp, TranslationStatus};
use crate::store::{write_atomic, AtomicWriteError, DataDirLock};

/// The file name of the sync state.
pub const SYNC_STATE_FILE: &str = "sync-state.json";

/// Where the upstream is and how often it is synced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceSettings {
    /// `dataSource.sourceId`.
    pub source_id: String,
    /// `dataSource.name`.
    pub name: String,
    /// The upstream document's URL.
    pub url: String,
    /// The upstream's public page.
    pub page_url: String,
    /// Sync interval (≥ 5).
    pub interval_minutes: u32,
    /// After this long without a good sync the cache is `stale`.
    pub max_age_minutes: u32,
}

/// Everything a sync remembers between runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncState {
    /// The source settings of the last run.
    pub source: SourceSettings,
    /// Which upstream request the validators belong to: a fingerprint of
    /// the fetch URL and headers (never the URL itself, which may carry a
    /// secret). A validator is only sent to the upstream it came from.
    #[serde(default)]
    pub validators_for: Option<String>,
    /// The validator to send as `If-None-Match`.
    pub etag: Option<String>,
    /// The validator to send as `If-Modified-Since`.
    pub last_modified: Option<String>,
    /// Last fetch or successful conditional validation.
    pub synced_at: Option<Timestamp>,
    /// Last time a body was fetched.
    pub fetched_at: Option<Timestamp>,
    /// The upstream document's `generatedAt`.
    pub upstream_generated_at: Option<Timestamp>,
    /// Status as of the last run.
    pub status: DataSourceStatus,
    /// The last error as published (`dataSource.lastError`): the kind of
    /// problem only, never upstream content; null after a good sync.
    pub last_error: Option<String>,
    /// The whole text of the last error, when it says more than the
    /// published one (the field's value, the host, the library's detail):
    /// for `status` and the operator, never served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error_detail: Option<String>,
    /// Failures in a row.
    pub consecutive_failures: u32,
    /// While backing off: the next permitted attempt.
    pub next_attempt_at: Option<Timestamp>,
    /// When the last attempt (good or bad) ran.
    pub last_attempt_at: Option<Timestamp>,
    /// The feed's own monitor status (public feed only).
    #[serde(default)]
    pub upstream_monitor: Option<UpstreamMonitor>,
    /// Records the last document yielded but that could not be converted.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// SHA-256 (hex) of the kept public feed (`upstream-feed.json`) this
    /// state was derived from; none for a records document. The server
    /// mirrors that file only while its bytes have this digest, so a feed
    /// written ahead of its snapshot (or left by a killed sync) is never served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed_sha256: Option<String>,
    /// What the upstream serves as its own `dataSource`, when the upstream
    /// is another resetctl instance's `/export.json`: this instance then
    /// serves the same (see [`SyncState::data_source`]). From the last
    /// fetched body; none for a feed or a plain records document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// The `dataSource` an upstream resetctl instance serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    /// Its `meta.dataSource`; `None` when it serves none (a standalone
    /// instance), and then neither does its mirror.
    pub data_source: Option<DataSource>,
}

/// The digest [`SyncState::feed_sha256`] records for `bytes`.
pub fn feed_digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl SyncState {
    /// The state before the first sync.
    pub fn pending(source: SourceSettings) -> Self {
        Self {
            source,
            validators_for: None,
            etag: None,
            last_modified: None,
            synced_at: None,
            fetched_at: None,
            upstream_generated_at: None,
            status: DataSourceStatus::Pending,
            last_error: None,
            last_error_detail: None,
            consecutive_failures: 0,
            next_attempt_at: None,
            last_attempt_at: None,
            upstream_monitor: None,
            skipped: Vec::new(),
            feed_sha256: None,
            origin: None,
        }
    }

    /// The status at `now`: an `ok` cache older than its maximum age is `stale`.
    pub fn effective_status(&self, now: Timestamp) -> DataSourceStatus {
        let max_age_ms = i64::from(self.source.max_age_minutes) * 60_000;
        match (self.status, self.synced_at) {
            (DataSourceStatus::Ok, Some(at)) if now.as_millis() - at.as_millis() > max_age_ms => {
                DataSourceStatus::Stale
            }
            (status, _) => status,
        }
    }

    /// `meta.dataSource` (section 2.8) at `now`; `cached` says whether a
    /// usable upstream snapshot is being served.
    ///
    /// A mirror of another resetctl instance (an [`Origin`]) serves the
    /// origin's, so its bodies and entity tags are the origin's byte for
    /// byte: the origin's own `dataSource`, or none when it serves none.
    /// While this instance's own sync is not `ok` (the origin cannot be
    /// reached, or was last reached longer ago than the maximum age) the
    /// origin's is served with `status` `stale` and this instance's own
    /// `lastError` and `nextAttemptAt`: its copy may be behind.
    pub fn data_source(&self, now: Timestamp, cached: bool) -> Option<DataSource> {
        let own = self.effective_status(now);
        if let Some(origin) = &self.origin {
            return origin.data_source.clone().map(|mut relayed| {
                if own != DataSourceStatus::Ok {
                    relayed.status = DataSourceStatus::Stale;
                    relayed.last_error = self.last_error.clone();
                    relayed.next_attempt_at = self.next_attempt_at;
                }
                relayed.cached = cached;
                relayed
            });
        }
        Some(DataSource {
            type_: "upstream".into(),
            mode: "upstream".into(),
            source_id: self.source.source_id.clone(),
            name: self.source.name.clone(),
            url: self.source.url.clone(),
            page_url: self.source.page_url.clone(),
            synced_at: self.synced_at,
            last_synced_at: self.synced_at,
            fetched_at: self.fetched_at,
            upstream_generated_at: self.upstream_generated_at,
            status: own,
            last_error: self.last_error.clone(),
            next_attempt_at: self.next_attempt_at,
            interval_minutes: self.source.interval_minutes,
            cached,
            translation_status: TranslationStatus::Ok,
            translation_error: None,
        })
    }
}

/// The newer of two records of the sync outcome: the state file and the
/// one the served snapshot carries. They differ only when a sync was
/// killed between publishing and saving its state (the snapshot's is then
/// newer) or when later syncs only revalidated or failed (the file's is).
pub fn newest(file: Option<SyncState>, snapshot: Option<SyncState>) -> Option<SyncState> {
    match (file, snapshot) {
        (Some(f), Some(s)) if s.last_attempt_at > f.last_attempt_at => Some(s),
        (Some(f), _) => Some(f),
        (None, s) => s,
    }
}

/// The sync status of `data_dir` as of `now` (`stale` once an `ok` is
/// older than its maximum age), from its sync state file; `None` when there
/// is none or it cannot be read.
pub fn status_now(data_dir: &Path, now: Timestamp) -> Option<DataSourceStatus> {
    load_sync_state(data_dir)
        .ok()
        .flatten()
        .map(|state| state.effective_status(now))
}

/// Why the sync state could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SyncStateError {
    /// Reading failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file is not a sync state.
    #[error("{path} is corrupt: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        message: String,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
}

/// The sync-state file of `data_dir`.
pub fn sync_state_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SYNC_STATE_FILE)
}

/// Reads the sync state, `None` before the first sync.
pub fn load_sync_state(data_dir: &Path) -> Result<Option<SyncState>, SyncStateError> {
    let path = sync_state_path(data_dir);
    match fs::read(&path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| SyncStateError::Corrupt {
                    path,
                    message: e.to_string(),
                })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(SyncStateError::Read { path, source }),
    }
}

/// Writes the sync state atomically; the caller holds the data-dir lock.
pub fn save_sync_state(
    _lock: &DataDirLock,
    data_dir: &Path,
    state: &SyncState,
) -> Result<(), SyncStateError> {
    let path = sync_state_path(data_dir);
    let bytes = serde_json::to_vec_pretty(state).map_err(|e| SyncStateError::Corrupt {
        path: path.clone(),
        message: format!("cannot be written: {e}"),
    })?;
    write_atomic(&path, &bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    /// A mirror's state after a good sync at 12:00 (max age 15 minutes).
    fn mirror(origin: Option<Origin>) -> SyncState {
        let mut state = SyncState::pending(SourceSettings {
            source_id: "writer".into(),
            name: "The writer".into(),
            url: "http://10.0.0.10:9090/export.json".into(),
            page_url: "http://10.0.0.10:9090/".into(),
            interval_minutes: 5,
            max_age_minutes: 15,
        });
        state.status = DataSourceStatus::Ok;
        state.synced_at = Some(at("2026-11-24T12:00:00.000Z"));
        state.fetched_at = state.synced_at;
        state.origin = origin;
        state
    }

    /// What the writer serves: synced hourly from the public feed.
    fn writers() -> DataSource {
        let mut writer = mirror(None);
        writer.source.source_id = "didcodexreset".into();
        writer.source.name = "Did Codex Reset".into();
        writer.source.url = "https://didcodexreset.com/api/status.json".into();
        writer.source.interval_minutes = 60;
        writer.synced_at = Some(at("2026-11-24T11:10:00.000Z"));
        writer
            .data_source(at("2026-11-24T11:10:00.000Z"), true)
            .unwrap()
    }

    #[test]
    fn a_mirror_of_an_instance_serves_the_origins_data_source() {
        let origin = Origin {
            data_source: Some(writers()),
        };
        let state = mirror(Some(origin));
        let now = at("2026-11-24T12:01:00.000Z");
        assert_eq!(state.data_source(now, true), Some(writers()));
        assert!(!state.data_source(now, false).unwrap().cached);
    }

    #[test]
    fn a_mirror_that_cannot_reach_its_origin_says_stale_with_its_own_error() {
        let mut state = mirror(Some(Origin {
            data_source: Some(writers()),
        }));
        state.status = DataSourceStatus::Stale;
        state.last_error = Some("cannot connect to the upstream".into());
        state.next_attempt_at = Some(at("2026-11-24T12:10:00.000Z"));
        let served = state
            .data_source(at("2026-11-24T12:06:00.000Z"), true)
            .unwrap();
        let mut expected = writers();
        expected.status = DataSourceStatus::Stale;
        expected.last_error = state.last_error.clone();
        expected.next_attempt_at = state.next_attempt_at;
        assert_eq!(served, expected);

        // Good syncs that stopped long ago are stale too, errorless.
        let quiet = mirror(Some(Origin {
            data_source: Some(writers()),
        }));
        let served = quiet
            .data_source(at("2026-11-24T12:16:00.000Z"), true)
            .unwrap();
        assert_eq!(served.status, DataSourceStatus::Stale);
        assert_eq!(served.last_error, None);
        assert_eq!(served.synced_at, writers().synced_at);
    }

    #[test]
    fn a_mirror_of_a_standalone_instance_serves_no_data_source() {
        let state = mirror(Some(Origin { data_source: None }));
        assert_eq!(
            state.data_source(at("2026-11-24T13:00:00.000Z"), true),
            None
        );
        // Its own data source when the upstream sent none at all.
        let own = mirror(None)
            .data_source(at("2026-11-24T12:01:00.000Z"), true)
            .unwrap();
        assert_eq!(own.url, "http://10.0.0.10:9090/export.json");
        assert_eq!(own.status, DataSourceStatus::Ok);
    }
}
