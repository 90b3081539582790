//! Atomic file replacement: temp file, fsync, rename, fsync the directory.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A failed atomic write, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct AtomicWriteError {
    /// The file that was being written.
    pub path: PathBuf,
    /// The underlying I/O error.
    #[source]
    pub source: io::Error,
}

/// The name prefix of every temp file, so leftovers can be found and removed.
pub const TEMP_PREFIX: &str = ".tmp-";

/// Replaces `path` with `bytes` so that a reader (or a crash) sees either the
/// old file or the new one, never a mix. The temp file lives beside the
/// target (same filesystem, so the rename is atomic) and is named
/// `.tmp-<name>-<pid>`; leftovers of killed writers are removed whenever
/// the data-dir lock is taken ([`SnapshotStore::lock`](crate::snapshot::SnapshotStore::lock)).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), AtomicWriteError> {
    let wrap = |source| AtomicWriteError {
        path: path.to_owned(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!("{TEMP_PREFIX}{name}-{}", std::process::id()));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(wrap)
}

/// Makes a rename or create in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
