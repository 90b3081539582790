//! Seeded history of a standalone instance (`<data-dir>/history.json`).
//!
//! `resetctl seed` merges records into this file: every id (and every
//! reference to one) gets the `seed:` marker, identical records are skipped
//! so re-runs are idempotent, and a record that differs from the stored one
//! with the same id is a conflict that stops the whole import.

use std::path::{Path, PathBuf};

use crate::document::{decode, DocumentError};
use crate::durable::{read_data_file, write_atomic, AtomicWriteError, Cap, DataDirLock, ReadError};
use crate::model::validate::{validate_records, SEED_PREFIX};
use crate::model::Record;

/// The largest history read (the bundled one is 15 kB).
pub const HISTORY_CAP: Cap = Cap::mib(256);

/// Why history could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Reading failed, or the file is unfit to read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The stored history is corrupt.
    #[error("{path} is corrupt: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: DocumentError,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
}

/// Reads the stored history (empty when there is none yet).
pub fn load_history(data_dir: &Path) -> Result<Vec<Record>, HistoryError> {
    let path = crate::data_dir::DataDir::of(data_dir).history();
    let Some(bytes) = read_data_file(&path, HISTORY_CAP)? else {
        return Ok(Vec::new());
    };
    let records: Vec<Record> = decode(&bytes, "").map_err(|reason| HistoryError::Corrupt {
        path: path.clone(),
        reason,
    })?;
    validate_records(&records).map_err(|e| HistoryError::Corrupt {
        path,
        reason: e.into(),
    })?;
    Ok(records)
}

/// Writes the history; the caller holds the data-dir lock.
pub fn save_history(
    _lock: &DataDirLock,
    data_dir: &Path,
    records: &[Record],
) -> Result<(), HistoryError> {
    let bytes = serde_json::to_vec_pretty(records).expect("records always serialise");
    write_atomic(&crate::data_dir::DataDir::of(data_dir).history(), &bytes)?;
    Ok(())
}

/// Adds the `seed:` marker to an id that lacks it.
pub fn seed_id(id: &str) -> String {
    if id.starts_with(SEED_PREFIX) {
        id.to_owned()
    } else {
        format!("{SEED_PREFIX}{id}")
    }
}

/// The record with the seed marker on its id and on every reference it holds,
/// so links between seeded records still resolve.
pub fn mark_seeded(mut record: Record) -> Record {
    record.id = seed_id(&record.id);
    record.completion_record_id = record.completion_record_id.as_deref().map(seed_id);
    for related in &mut record.related_record_ids {
        *related = seed_id(related);
    }
    record
}

/// A stored record and an incoming one that share an id but differ.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedConflict {
    /// Position in the incoming list.
    pub index: usize,
    /// The (marked) id.
    pub id: String,
    /// The first differing field.
    pub field: &'static str,
}

/// What merging a seed file into the history would do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeedPlan {
    /// The merged history (stored records first, new ones after).
    pub merged: Vec<Record>,
    /// How many records are new.
    pub added: usize,
    /// How many were already stored, identical.
    pub unchanged: usize,
    /// Records that differ from the stored record with the same id.
    pub conflicts: Vec<SeedConflict>,
}

/// Merges `incoming` (already marked) into `stored`.
///
/// `scheduleState` is not compared: it is evaluated at every publish, so an
/// exported-then-reseeded record may differ there without being a conflict.
pub fn plan_seed(stored: Vec<Record>, incoming: Vec<Record>) -> SeedPlan {
    let mut plan = SeedPlan {
        merged: stored,
        ..SeedPlan::default()
    };
    let index_of: std::collections::HashMap<String, usize> = plan
        .merged
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.clone(), i))
        .collect();
    for (index, record) in incoming.into_iter().enumerate() {
        match index_of.get(&record.id) {
            None => {
                plan.merged.push(record);
                plan.added += 1;
            }
            Some(&at) => match first_difference(&plan.merged[at], &record) {
                None => plan.unchanged += 1,
                Some(field) => plan.conflicts.push(SeedConflict {
                    index,
                    id: record.id,
                    field,
                }),
            },
        }
    }
    plan
}

/// The first field (camelCase) in which two records with one id differ.
fn first_difference(a: &Record, b: &Record) -> Option<&'static str> {
    let checks: [(&'static str, bool); 15] = [
        ("kind", a.kind == b.kind),
        ("resetType", a.reset_type == b.reset_type),
        ("announcedAt", a.announced_at == b.announced_at),
        ("effectiveAt", a.effective_at == b.effective_at),
        ("text", a.text == b.text),
        ("confidence", a.confidence == b.confidence),
        ("scope", a.scope == b.scope),
        ("source", a.source == b.source),
        (
            "schedulePrecision",
            a.schedule_precision == b.schedule_precision,
        ),
        ("scheduleBasis", a.schedule_basis == b.schedule_basis),
        ("scheduleWindow", a.schedule_window == b.schedule_window),
        ("completedAt", a.completed_at == b.completed_at),
        (
            "completionRecordId",
            a.completion_record_id == b.completion_record_id,
        ),
        (
            "fulfillmentOrigin",
            a.fulfillment_origin == b.fulfillment_origin,
        ),
        (
            "relatedRecordIds",
            a.related_record_ids == b.related_record_ids,
        ),
    ];
    checks
        .into_iter()
        .find(|(_, same)| !same)
        .map(|(field, _)| field)
}
