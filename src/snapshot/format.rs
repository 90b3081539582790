//! The snapshot file format.

use serde::{Deserialize, Serialize};

use crate::document::{decode, DocumentError, RecordsDocument};
use crate::model::validate::validate_records;
pub use crate::model::Mode;
use crate::model::{Record, SyncState, Timestamp};

/// The `format` tag of version 1 snapshot files.
pub const SNAPSHOT_FORMAT: &str = "resetctl-snapshot/1";

/// One published version: the records and the meta they were published with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Always [`SNAPSHOT_FORMAT`]; checked on load.
    pub format: String,
    /// Monotonic version number within one data dir.
    pub sequence: u64,
    /// When this version was written.
    pub published_at: Timestamp,
    /// Standalone or upstream-sync.
    pub mode: Mode,
    /// `meta.generatedAt`.
    pub generated_at: Timestamp,
    /// `meta.lastSuccessfulCheckAt`.
    pub last_successful_check_at: Option<Timestamp>,
    /// Standalone: the last ledger entry these records include, so an entry
    /// that was appended but never published is noticed and published by
    /// the next standalone command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_entry: Option<u64>,
    /// Upstream: the sync outcome that published this version. The pointer
    /// and the sync outcome then move together: a sync killed before it
    /// saved `sync-state.json` still serves the right `dataSource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncState>,
    /// The records, states already evaluated, only the publishable ones.
    pub records: Vec<Record>,
}

impl Snapshot {
    /// Decodes and validates a snapshot file's bytes.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, DocumentError> {
        let snapshot: Snapshot = decode(bytes, "records")?;
        if snapshot.format != SNAPSHOT_FORMAT {
            return Err(DocumentError::Document {
                field: "format".into(),
                problem: format!("expected {SNAPSHOT_FORMAT:?}, got {:?}", snapshot.format),
            });
        }
        validate_records(&snapshot.records)?;
        Ok(snapshot)
    }

    /// The snapshot as a records document (what `export` writes).
    pub fn to_document(&self) -> RecordsDocument {
        RecordsDocument {
            generated_at: self.generated_at,
            last_successful_check_at: self.last_successful_check_at,
            records: self.records.clone(),
            data_source: None,
        }
    }
}
