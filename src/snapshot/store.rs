//! The snapshot store: publish, load, list, prune and roll back.
//!
//! Writers hold the data-dir lock ([`DataDirLock`]) for the whole publish,
//! so sequence numbers are never lost or duplicated; the pointer moves only
//! after the new version is durable, so a crash at any moment leaves the
//! pointer on a complete version. Readers take no lock.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::document::DocumentError;
use crate::model::{Record, Timestamp};
use crate::store::{write_atomic, AtomicWriteError, DataDirLock, LockError};

use super::format::{Mode, Snapshot, SNAPSHOT_FORMAT};

/// How many versions retention keeps by default.
pub const DEFAULT_KEEP: usize = 50;

const POINTER: &str = "CURRENT";

/// Why a snapshot operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading a file or directory failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// What was being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
    /// The lock could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A snapshot file is truncated, corrupt or invalid.
    #[error("snapshot {path} is unusable: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: DocumentError,
    },
    /// The pointer file does not hold a sequence number.
    #[error("the pointer {path} is corrupt (content {content:?})")]
    BadPointer {
        /// The pointer file.
        path: PathBuf,
        /// What it holds.
        content: String,
    },
    /// No version with that sequence number exists.
    #[error("no snapshot with sequence {0}")]
    NoSuchSequence(u64),
    /// A request that would make nothing current.
    #[error("{0}")]
    Refused(String),
}

/// One version on disk, as `snapshots list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotEntry {
    /// Its sequence number.
    pub sequence: u64,
    /// Its file.
    pub path: PathBuf,
    /// File size in bytes.
    pub bytes: u64,
    /// Whether the pointer names it.
    pub current: bool,
}

/// What a publisher hands the store: everything but the sequence number.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Standalone or upstream-sync.
    pub mode: Mode,
    /// `meta.generatedAt`.
    pub generated_at: Timestamp,
    /// `meta.lastSuccessfulCheckAt`.
    pub last_successful_check_at: Option<Timestamp>,
    /// The records, states evaluated and validated.
    pub records: Vec<Record>,
}

/// The versions of one data dir.
#[derive(Debug, Clone)]
pub struct SnapshotStore {
    data_dir: PathBuf,
    dir: PathBuf,
}

impl SnapshotStore {
    /// The store of `data_dir` (nothing is created until the first publish).
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let data_dir = data_dir.into();
        let dir = data_dir.join("snapshots");
        Self { data_dir, dir }
    }

    /// The data dir.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The snapshots directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The pointer file.
    pub fn pointer_path(&self) -> PathBuf {
        self.dir.join(POINTER)
    }

    /// The file of version `sequence`.
    pub fn path_of(&self, sequence: u64) -> PathBuf {
        self.dir.join(format!("{sequence:012}.json"))
    }

    /// Takes the data dir's exclusive writer lock.
    pub fn lock(&self, timeout: Duration, purpose: &str) -> Result<DataDirLock, SnapshotError> {
        Ok(DataDirLock::acquire(
            &self.data_dir.join("resetctl.lock"),
            timeout,
            purpose,
        )?)
    }

    /// The sequence the pointer names, or `None` before the first publish.
    pub fn current_sequence(&self) -> Result<Option<u64>, SnapshotError> {
        let path = self.pointer_path();
        match fs::read_to_string(&path) {
            Ok(content) => content
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| SnapshotError::BadPointer { path, content }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(SnapshotError::Read { path, source }),
        }
    }

    /// Loads and validates version `sequence`.
    pub fn load(&self, sequence: u64) -> Result<Snapshot, SnapshotError> {
        let path = self.path_of(sequence);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(SnapshotError::NoSuchSequence(sequence))
            }
            Err(source) => return Err(SnapshotError::Read { path, source }),
        };
        let snapshot = Snapshot::from_slice(&bytes).map_err(|reason| SnapshotError::Corrupt {
            path: path.clone(),
            reason,
        })?;
        if snapshot.sequence != sequence {
            return Err(SnapshotError::Corrupt {
                path,
                reason: DocumentError::Document {
                    field: "sequence".into(),
                    problem: format!("file says {}, its name says {sequence}", snapshot.sequence),
                },
            });
        }
        Ok(snapshot)
    }

    /// The mode of the current version, without building its records.
    pub fn current_mode(&self) -> Result<Option<Mode>, SnapshotError> {
        #[derive(serde::Deserialize)]
        struct ModeOnly {
            mode: Mode,
        }
        let Some(sequence) = self.current_sequence()? else {
            return Ok(None);
        };
        let path = self.path_of(sequence);
        let bytes = fs::read(&path).map_err(|source| SnapshotError::Read {
            path: path.clone(),
            source,
        })?;
        serde_json::from_slice::<ModeOnly>(&bytes)
            .map(|m| Some(m.mode))
            .map_err(|e| SnapshotError::Corrupt {
                path,
                reason: DocumentError::Syntax(e.to_string()),
            })
    }

    /// Loads the current version, or `None` before the first publish.
    pub fn load_current(&self) -> Result<Option<Snapshot>, SnapshotError> {
        self.current_sequence()?
            .map(|seq| self.load(seq))
            .transpose()
    }

    /// Every version on disk, oldest first.
    pub fn list(&self) -> Result<Vec<SnapshotEntry>, SnapshotError> {
        let current = self.current_sequence()?;
        let mut entries = Vec::new();
        for (sequence, path) in self.sequences()? {
            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            entries.push(SnapshotEntry {
                sequence,
                path,
                bytes,
                current: current == Some(sequence),
            });
        }
        Ok(entries)
    }

    /// Publishes a new version and makes it current; returns it.
    ///
    /// The caller holds `_lock`, which is what makes "next sequence = newest
    /// on disk + 1" safe against a concurrent publisher.
    pub fn publish(
        &self,
        _lock: &DataDirLock,
        draft: Draft,
        now: Timestamp,
        keep: usize,
    ) -> Result<Snapshot, SnapshotError> {
        let Draft {
            mode,
            generated_at,
            last_successful_check_at,
            records,
        } = draft;
        fs::create_dir_all(&self.dir).map_err(|source| SnapshotError::Read {
            path: self.dir.clone(),
            source,
        })?;
        self.remove_stale_temps();
        let newest_on_disk = self.sequences()?.last().map(|(seq, _)| *seq);
        let pointer = self.current_sequence().unwrap_or(None);
        let sequence = newest_on_disk.max(pointer).unwrap_or(0) + 1;
        let snapshot = Snapshot {
            format: SNAPSHOT_FORMAT.to_owned(),
            sequence,
            published_at: now,
            mode,
            generated_at,
            last_successful_check_at,
            records,
        };
        // Refuse to write what we could not read back (defence in depth: callers validate too).
        crate::model::validate::validate_records(&snapshot.records).map_err(|e| {
            SnapshotError::Corrupt {
                path: self.path_of(sequence),
                reason: e.into(),
            }
        })?;
        let bytes = serde_json::to_vec(&snapshot).expect("records always serialise");
        crate::testhook::reached("publish:begin");
        write_atomic(&self.path_of(sequence), &bytes)?;
        crate::testhook::reached("publish:written");
        self.set_pointer(sequence)?;
        crate::testhook::reached("publish:pointer-moved");
        self.prune_unlocked(keep)?;
        Ok(snapshot)
    }

    /// Makes an existing, valid version current again.
    pub fn rollback(&self, _lock: &DataDirLock, sequence: u64) -> Result<(), SnapshotError> {
        self.load(sequence)?;
        self.set_pointer(sequence)
    }

    /// Deletes all but the newest `keep` versions (never the current one);
    /// returns the deleted sequence numbers.
    pub fn prune(&self, _lock: &DataDirLock, keep: usize) -> Result<Vec<u64>, SnapshotError> {
        self.prune_unlocked(keep)
    }

    fn prune_unlocked(&self, keep: usize) -> Result<Vec<u64>, SnapshotError> {
        if keep == 0 {
            return Err(SnapshotError::Refused("--keep must be at least 1".into()));
        }
        let current = self.current_sequence()?;
        let all = self.sequences()?;
        let cut = all.len().saturating_sub(keep);
        let mut removed = Vec::new();
        for (sequence, path) in &all[..cut] {
            if Some(*sequence) == current {
                continue;
            }
            fs::remove_file(path).map_err(|source| SnapshotError::Read {
                path: path.clone(),
                source,
            })?;
            removed.push(*sequence);
        }
        Ok(removed)
    }

    fn set_pointer(&self, sequence: u64) -> Result<(), SnapshotError> {
        Ok(write_atomic(
            &self.pointer_path(),
            format!("{sequence}\n").as_bytes(),
        )?)
    }

    /// Sequence numbers and files on disk, ascending.
    fn sequences(&self) -> Result<Vec<(u64, PathBuf)>, SnapshotError> {
        let read_dir = match fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(SnapshotError::Read {
                    path: self.dir.clone(),
                    source,
                })
            }
        };
        let mut found: Vec<(u64, PathBuf)> = read_dir
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name();
                let stem = name.to_str()?.strip_suffix(".json")?;
                (stem.len() == 12)
                    .then(|| stem.parse().ok())
                    .flatten()
                    .map(|seq| (seq, entry.path()))
            })
            .collect();
        found.sort_unstable_by_key(|(seq, _)| *seq);
        Ok(found)
    }

    /// Removes temp files left by writers that were killed mid-write.
    /// Only called under the lock, so no live writer owns them.
    fn remove_stale_temps(&self) {
        if let Ok(read_dir) = fs::read_dir(&self.dir) {
            for entry in read_dir.filter_map(Result::ok) {
                if entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(".tmp-"))
                {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
    }
}
