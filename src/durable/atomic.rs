//! Atomic file replacement: temp file, fsync, rename, fsync the directory;
//! directories made and files removed durably (synced into their parent);
//! and for a file that holds secrets ([`write_private`]), a temp file that
//! is owner-only (0600) from its creation, before any byte is written, so
//! no moment (and no kill) ever leaves the secrets readable by others.

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
    write(path, bytes, None)
}

/// [`write_atomic`] for a file that holds secrets: the temp file is
/// created owner-read/write only (0600) and set so explicitly before any
/// byte is written (a failure to set it is an error), so the file is never
/// readable by others, not even for a moment or after a kill.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), AtomicWriteError> {
    write(path, bytes, Some(0o600))
}

fn write(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<(), AtomicWriteError> {
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
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        if let Some(mode) = mode {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            // A leftover temp file would keep its own mode: start afresh.
            match fs::remove_file(&tmp) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            options.create_new(true).mode(mode);
            let file = options.open(&tmp)?;
            file.set_permissions(fs::Permissions::from_mode(mode))?;
            crate::testhook::reached("private:created");
            return finish(file, &tmp, path, dir, bytes, true);
        }
        finish(options.open(&tmp)?, &tmp, path, dir, bytes, false)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(wrap)
}

/// Writes, syncs and renames the open temp file into place (a private
/// file's steps are traced for the tests that kill at each of them).
fn finish(
    mut file: File,
    tmp: &Path,
    path: &Path,
    dir: &Path,
    bytes: &[u8],
    private: bool,
) -> io::Result<()> {
    let step = |name| {
        if private {
            crate::testhook::reached(name);
        }
    };
    file.write_all(bytes)?;
    step("private:written");
    file.sync_all()?;
    drop(file);
    fs::rename(tmp, path)?;
    step("private:renamed");
    sync_dir(dir)
}

/// Makes a rename or create in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Creates `dir` and any missing parents so that they survive a power
/// loss: each directory made here is synced into its parent (a new
/// directory's name lives in its parent, which `create_dir_all` never
/// syncs, so a power loss could take a whole new data dir away with every
/// file that was synced into it).
pub fn create_dir_durable(dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    for ancestor in dir.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        if ancestor.is_dir() {
            break;
        }
        missing.push(ancestor);
    }
    for made in missing.into_iter().rev() {
        match fs::create_dir(made) {
            // Made meanwhile by another process: fine, if it is a directory.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && made.is_dir() => {}
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        let parent = made
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        sync_dir(parent)?;
    }
    Ok(())
}

/// Removes the files `paths` (all in the directory `dir`; missing ones are
/// skipped) and syncs `dir` once, so that a removal a command reported
/// stays removed after a power loss.
pub fn remove_durable<'a>(
    dir: &Path,
    paths: impl IntoIterator<Item = &'a Path>,
) -> Result<(), AtomicWriteError> {
    for path in paths {
        match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(AtomicWriteError {
                    path: path.to_owned(),
                    source: e,
                })
            }
            _ => {}
        }
    }
    sync_dir(dir).map_err(|source| AtomicWriteError {
        path: dir.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_made_with_their_parents_and_a_file_in_the_way_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a/b/c");
        create_dir_durable(&deep).unwrap();
        assert!(deep.is_dir());
        // Again: nothing to do.
        create_dir_durable(&deep).unwrap();
        fs::write(tmp.path().join("file"), b"x").unwrap();
        assert!(create_dir_durable(&tmp.path().join("file")).is_err());
        assert!(create_dir_durable(&tmp.path().join("file/sub")).is_err());
    }

    #[test]
    fn removals_skip_missing_files_and_name_the_failing_one() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::write(&a, b"x").unwrap();
        remove_durable(tmp.path(), [a.as_path(), b.as_path()]).unwrap();
        assert!(!a.exists());
        // A directory cannot be removed as a file: the error names it.
        let dir = tmp.path().join("d");
        fs::create_dir(&dir).unwrap();
        let err = remove_durable(tmp.path(), [dir.as_path()]).unwrap_err();
        assert_eq!(err.path, dir);
    }
}
