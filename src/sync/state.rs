//! The sync state, `<data-dir>/sync-state.json`: written atomically by
//! `resetctl sync` under the data-dir lock, read by `serve` and `status`.
//! It carries the source settings too, so the server can build the 17
//! fields of `meta.dataSource` without being told how sync was run.

use std::path::{Path, PathBuf};

use crate::durable::{read_data_file, write_atomic, AtomicWriteError, Cap, DataDirLock, ReadError};
pub use crate::model::{
    feed_digest, newest, SourceSettings, SyncState, UpstreamMonitor, UpstreamOrigin,
};
use crate::model::{DataSourceStatus, Timestamp};

/// The largest sync state read (a few kilobytes in use).
pub const SYNC_STATE_CAP: Cap = Cap::mib(1);

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
    /// Reading failed, or the file is unfit to read.
    #[error(transparent)]
    Read(#[from] ReadError),
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

/// Reads the sync state, `None` before the first sync.
pub fn load_sync_state(data_dir: &Path) -> Result<Option<SyncState>, SyncStateError> {
    let path = crate::data_dir::DataDir::of(data_dir).sync_state();
    let Some(bytes) = read_data_file(&path, SYNC_STATE_CAP)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| SyncStateError::Corrupt {
            path,
            message: e.to_string(),
        })
}

/// Writes the sync state atomically; the caller holds the data-dir lock.
pub fn save_sync_state(
    _lock: &DataDirLock,
    data_dir: &Path,
    state: &SyncState,
) -> Result<(), SyncStateError> {
    let path = crate::data_dir::DataDir::of(data_dir).sync_state();
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
    use crate::model::DataSource;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    /// A mirror's state after a good sync at 12:00 (max age 15 minutes).
    fn mirror(origin: Option<UpstreamOrigin>) -> SyncState {
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
        let origin = UpstreamOrigin {
            data_source: Some(writers()),
        };
        let state = mirror(Some(origin));
        let now = at("2026-11-24T12:01:00.000Z");
        assert_eq!(state.data_source(now, true), Some(writers()));
        assert!(!state.data_source(now, false).unwrap().cached);
    }

    #[test]
    fn a_mirror_that_cannot_reach_its_origin_says_stale_with_its_own_error() {
        let mut state = mirror(Some(UpstreamOrigin {
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
        let quiet = mirror(Some(UpstreamOrigin {
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
        let state = mirror(Some(UpstreamOrigin { data_source: None }));
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
