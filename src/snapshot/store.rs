//! The snapshot store: the versions on disk and the pointer to the current
//! one. It knows files and formats only; the order of a publish (version,
//! webhook outbox, pointer, retention) is [`crate::publish`]'s.
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
use crate::durable::{
    read_data_file, write_atomic, AtomicWriteError, Cap, DataDirLock, LockError, OpenError,
    ReadError, TEMP_PREFIX,
};
use crate::model::{Record, SyncState, Timestamp};

use super::format::{Mode, Snapshot, SNAPSHOT_FORMAT};

/// The most of the pointer file ever read: a sequence number and a newline fit with room to spare.
const MAX_POINTER_BYTES: u64 = 32;

/// The largest snapshot file read: about 1.7 million records (a
/// 100,000-record snapshot is 61 MB).
pub const SNAPSHOT_CAP: Cap = Cap::mib(1024);

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
    /// A file is a symlink, a FIFO, a directory, or larger than its cap:
    /// only a regular file of bounded size is read.
    #[error(transparent)]
    Unfit(ReadError),
    /// A directory of the data dir is a symbolic link: nothing in it is
    /// read or written.
    #[error(transparent)]
    LinkedDir(#[from] crate::data_dir::LinkedDir),
    /// The newest sequence number is the largest there is: no version can follow it.
    #[error(
        "snapshot sequence {0} cannot be followed: it is the largest sequence number there is"
    )]
    SequenceExhausted(u64),
    /// No version with that sequence number exists.
    #[error("no snapshot with sequence {0}")]
    NoSuchSequence(u64),
    /// A request that would make nothing current.
    #[error("{0}")]
    Refused(String),
    /// The pointer cannot be followed (it names a missing or broken
    /// version, or is itself broken); `newest` is the newest version that
    /// loads, which `snapshots rollback` can make current.
    #[error("{reason}; {}", match newest {
        Some(n) => format!("the newest snapshot that loads is {n}: make it current with `resetctl snapshots rollback {n}`"),
        None => "no snapshot on disk loads: publish again (`resetctl publish`, `resetctl seed` or `resetctl sync --force`)".to_owned(),
    })]
    BrokenPointer {
        /// Why the pointer cannot be followed.
        reason: Box<SnapshotError>,
        /// The newest version that loads.
        newest: Option<u64>,
    },
}

impl SnapshotError {
    /// A failed guarded read: a file unfit to read, or an I/O error.
    fn from_read(e: ReadError) -> Self {
        match e {
            ReadError::Io { path, source } => SnapshotError::Read { path, source },
            unfit => SnapshotError::Unfit(unfit),
        }
    }
}

/// One version on disk, as `snapshots list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotEntry {
    /// Its sequence number.
    pub sequence: u64,
    /// Its file.
    pub path: PathBuf,
    /// File size in bytes.
    pub bytes: u64,
    /// Whether the pointer names it.
    pub current: bool,
    /// What it holds, read from the file (`None`: unreadable or not a snapshot).
    pub head: Option<SnapshotHead>,
}

/// The length of a JSON array, its elements skipped unbuilt.
fn count_elements<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    struct Count;
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of records")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    deserializer.deserialize_seq(Count)
}

/// A snapshot's fields but its records, which are counted, never built
/// ([`SnapshotStore::current_head`], [`SnapshotStore::list`]).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotHead {
    /// Its sequence number.
    pub sequence: u64,
    /// When it was published.
    pub published_at: Timestamp,
    /// Standalone or upstream-sync.
    pub mode: Mode,
    /// How many records it holds.
    #[serde(deserialize_with = "count_elements")]
    pub records: usize,
    /// Standalone: the last ledger entry its records include.
    #[serde(default)]
    pub ledger_entry: Option<u64>,
    /// Upstream: the sync outcome that published it.
    #[serde(default)]
    pub sync: Option<SyncState>,
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
    /// Standalone: the last ledger entry the records include.
    pub ledger_entry: Option<u64>,
    /// Upstream: the sync outcome that produced the records.
    pub sync: Option<SyncState>,
    /// The records, states evaluated and validated.
    pub records: Vec<Record>,
}

/// Builds version `sequence` of `draft` and its bytes, and proves the bytes
/// load: the check before publishing is exactly the check at load
/// ([`Snapshot::from_slice`]), so nothing is ever made current that a
/// server, `status` or `export` could not read back.
pub fn encode(
    draft: Draft,
    sequence: u64,
    now: Timestamp,
) -> Result<(Snapshot, Vec<u8>), DocumentError> {
    let Draft {
        mode,
        generated_at,
        last_successful_check_at,
        ledger_entry,
        sync,
        records,
    } = draft;
    let snapshot = Snapshot {
        format: SNAPSHOT_FORMAT.to_owned(),
        sequence,
        published_at: now,
        mode,
        generated_at,
        last_successful_check_at,
        ledger_entry,
        sync,
        records,
    };
    let bytes = serde_json::to_vec(&snapshot).map_err(|e| DocumentError::Document {
        field: "(snapshot)".into(),
        problem: e.to_string(),
    })?;
    let loaded = Snapshot::from_slice(&bytes)?;
    debug_assert_eq!(loaded, snapshot, "a snapshot reads back as written");
    Ok((snapshot, bytes))
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
        let dir = crate::data_dir::DataDir::of(&data_dir).snapshots();
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
        crate::data_dir::DataDir::of(&self.data_dir).pointer()
    }

    /// The file of version `sequence`.
    pub fn path_of(&self, sequence: u64) -> PathBuf {
        crate::data_dir::DataDir::of(&self.data_dir).snapshot(sequence)
    }

    /// Takes the data dir's exclusive writer lock, then removes the temp
    /// files that killed writers left in the data dir and in the
    /// directories right under it (`snapshots/`, `webhooks/`): every file
    /// there is written under this lock, so no live writer owns them.
    /// Deeper directories (`webhooks/state/`) belong to a writer with its
    /// own lock and are left alone.
    pub fn lock(&self, timeout: Duration, purpose: &str) -> Result<DataDirLock, SnapshotError> {
        let lock = crate::data_dir::DataDir::of(&self.data_dir).lock(timeout, purpose)?;
        remove_stale_temps(&self.data_dir);
        if let Ok(entries) = fs::read_dir(&self.data_dir) {
            for entry in entries.filter_map(Result::ok) {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    remove_stale_temps(&entry.path());
                }
            }
        }
        Ok(lock)
    }

    /// Refuses a data dir whose directories are links ([`crate::data_dir::LinkedDir`]):
    /// every read and write of the versions asks first.
    fn refuse_links(&self) -> Result<(), SnapshotError> {
        Ok(crate::data_dir::DataDir::of(&self.data_dir).refuse_links()?)
    }

    /// The sequence the pointer names, or `None` before the first publish.
    pub fn current_sequence(&self) -> Result<Option<u64>, SnapshotError> {
        self.refuse_links()?;
        let path = self.pointer_path();
        // Never through a link and never a FIFO or device: a damaged or
        // tampered data dir must not make a reader hang, exhaust memory or
        // print another file. One byte past the cap is read, so an
        // oversized pointer is told apart from a full one.
        use std::io::Read;
        let mut bytes = Vec::new();
        match crate::durable::open_regular(&path) {
            Ok(file) => file
                .take(MAX_POINTER_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|source| SnapshotError::Read {
                    path: path.clone(),
                    source,
                })?,
            Err(OpenError::Missing) => return Ok(None),
            Err(e) => return Err(SnapshotError::from_read(e.at(&path))),
        };
        let content =
            String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_POINTER_BYTES as usize)]);
        match content.trim().parse() {
            Ok(sequence) if bytes.len() as u64 <= MAX_POINTER_BYTES => Ok(Some(sequence)),
            _ => Err(SnapshotError::BadPointer {
                path,
                content: if bytes.len() as u64 > MAX_POINTER_BYTES {
                    format!("{content}…")
                } else {
                    content.into_owned()
                },
            }),
        }
    }

    /// Loads and validates version `sequence`.
    pub fn load(&self, sequence: u64) -> Result<Snapshot, SnapshotError> {
        self.refuse_links()?;
        let path = self.path_of(sequence);
        let bytes = match read_data_file(&path, SNAPSHOT_CAP) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Err(SnapshotError::NoSuchSequence(sequence)),
            Err(e) => return Err(SnapshotError::from_read(e)),
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

    /// The current version's small fields, without building its records
    /// (the records are skipped over, not decoded).
    pub fn current_head(&self) -> Result<Option<SnapshotHead>, SnapshotError> {
        let Some(sequence) = self.current_sequence()? else {
            return Ok(None);
        };
        self.head(sequence).map(Some)
    }

    /// Version `sequence`'s small fields, without building its records.
    pub fn head(&self, sequence: u64) -> Result<SnapshotHead, SnapshotError> {
        let path = self.path_of(sequence);
        let bytes = read_data_file(&path, SNAPSHOT_CAP)
            .and_then(|bytes| bytes.ok_or_else(|| OpenError::Missing.at(&path)))
            .map_err(SnapshotError::from_read)?;
        serde_json::from_slice::<SnapshotHead>(&bytes).map_err(|e| SnapshotError::Corrupt {
            path,
            reason: DocumentError::Syntax(e.to_string()),
        })
    }

    /// The mode of the current version, without building its records.
    pub fn current_mode(&self) -> Result<Option<Mode>, SnapshotError> {
        Ok(self.current_head()?.map(|head| head.mode))
    }

    /// Loads the current version, or `None` before the first publish.
    pub fn load_current(&self) -> Result<Option<Snapshot>, SnapshotError> {
        self.current_sequence()?
            .map(|seq| self.load(seq))
            .transpose()
    }

    /// The current version, or `None` before the first publish; when the
    /// pointer cannot be followed, [`SnapshotError::BrokenPointer`], which
    /// names the newest version that loads (what `status` and `export`
    /// tell an operator to roll back to).
    pub fn load_current_explained(&self) -> Result<Option<Snapshot>, SnapshotError> {
        match self.load_current() {
            Err(
                reason @ (SnapshotError::NoSuchSequence(_)
                | SnapshotError::Corrupt { .. }
                | SnapshotError::BadPointer { .. }
                | SnapshotError::Unfit(_)),
            ) => Err(SnapshotError::BrokenPointer {
                reason: Box::new(reason),
                newest: self.newest_loadable().map(|s| s.sequence),
            }),
            other => other,
        }
    }

    /// The newest version on disk that loads (newest first, each one
    /// validated as a load does): where a server whose pointer names a
    /// missing or broken version starts instead.
    pub fn newest_loadable(&self) -> Option<Snapshot> {
        let sequences = self.sequences().ok()?;
        sequences
            .iter()
            .rev()
            .find_map(|(sequence, _)| self.load(*sequence).ok())
    }

    /// Every version on disk, oldest first.
    pub fn list(&self) -> Result<Vec<SnapshotEntry>, SnapshotError> {
        let current = self.current_sequence()?;
        let mut entries = Vec::new();
        for (sequence, path) in self.sequences()? {
            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let head = read_data_file(&path, SNAPSHOT_CAP)
                .ok()
                .flatten()
                .and_then(|text| serde_json::from_slice::<SnapshotHead>(&text).ok());
            entries.push(SnapshotEntry {
                sequence,
                path,
                bytes,
                current: current == Some(sequence),
                head,
            });
        }
        Ok(entries)
    }

    /// Writes `draft` durably as the next version and returns it, without
    /// making it current: a step of [`crate::publish::publish`], which
    /// owns the order of the publish step.
    ///
    /// The caller holds `_lock`, which is what makes "next sequence = newest
    /// on disk + 1" safe against a concurrent publisher.
    pub fn write_version(
        &self,
        _lock: &DataDirLock,
        draft: Draft,
        now: Timestamp,
    ) -> Result<Snapshot, SnapshotError> {
        self.refuse_links()?;
        crate::durable::create_dir_durable(&self.dir).map_err(|source| SnapshotError::Read {
            path: self.dir.clone(),
            source,
        })?;
        let newest_on_disk = self.sequences()?.last().map(|(seq, _)| *seq);
        let pointer = self.current_sequence().unwrap_or(None);
        let newest = newest_on_disk.max(pointer).unwrap_or(0);
        let sequence = newest
            .checked_add(1)
            .ok_or(SnapshotError::SequenceExhausted(newest))?;
        let (snapshot, bytes) =
            encode(draft, sequence, now).map_err(|reason| SnapshotError::Corrupt {
                path: self.path_of(sequence),
                reason,
            })?;
        crate::testhook::reached("publish:begin");
        write_atomic(&self.path_of(sequence), &bytes)?;
        crate::testhook::reached("publish:written");
        Ok(snapshot)
    }

    /// Deletes all but the newest `keep` versions (never the current one);
    /// returns the deleted sequence numbers.
    pub fn prune(&self, _lock: &DataDirLock, keep: usize) -> Result<Vec<u64>, SnapshotError> {
        if keep == 0 {
            return Err(SnapshotError::Refused("--keep must be at least 1".into()));
        }
        let current = self.current_sequence()?;
        let all = self.sequences()?;
        let cut = all.len().saturating_sub(keep);
        let doomed: Vec<&(u64, PathBuf)> = all[..cut]
            .iter()
            .filter(|(sequence, _)| Some(*sequence) != current)
            .collect();
        if !doomed.is_empty() {
            crate::durable::remove_durable(&self.dir, doomed.iter().map(|(_, p)| p.as_path()))?;
        }
        Ok(doomed.iter().map(|(sequence, _)| *sequence).collect())
    }

    /// Makes version `sequence` current (the pointer, written atomically);
    /// the caller holds `_lock` and has made sure the version is durable.
    pub fn set_pointer(&self, _lock: &DataDirLock, sequence: u64) -> Result<(), SnapshotError> {
        self.refuse_links()?;
        Ok(write_atomic(
            &self.pointer_path(),
            format!("{sequence}\n").as_bytes(),
        )?)
    }

    /// Sequence numbers and files on disk, ascending.
    fn sequences(&self) -> Result<Vec<(u64, PathBuf)>, SnapshotError> {
        self.refuse_links()?;
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
                crate::data_dir::DataDir::sequence_of(name.to_str()?).map(|seq| (seq, entry.path()))
            })
            .collect();
        found.sort_unstable_by_key(|(seq, _)| *seq);
        Ok(found)
    }
}

/// Removes the temp files ([`write_atomic`]'s `.tmp-*`) in `dir`.
fn remove_stale_temps(dir: &Path) {
    let Ok(read_dir) = fs::read_dir(dir) else {
        return;
    };
    for entry in read_dir.filter_map(Result::ok) {
        if entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(TEMP_PREFIX))
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}
