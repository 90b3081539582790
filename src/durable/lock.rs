//! The exclusive lock of a data dir.
//!
//! The standard library's `File::try_lock` (stable since Rust 1.89, so no
//! extra crate is needed) takes an OS advisory lock (`flock`), released by
//! the kernel when the holder dies, so a `kill -9` never leaves a stale lock behind. The lock
//! file's content names the holder (pid and command) for error messages; it
//! is informational only.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::fs::TryLockError;

/// A held exclusive lock; released on drop.
#[derive(Debug)]
pub struct DataDirLock {
    file: File,
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process held it for the whole timeout.
    #[error("{path} is locked by {holder} (waited {}); try again later", seconds(*.waited))]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// Who holds it, as it wrote itself down.
        holder: String,
        /// How long this process waited.
        waited: Duration,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// A wait as a person reads it: seconds to a tenth ("0.5 s", "10 s").
fn seconds(waited: Duration) -> String {
    let tenths = (waited.as_secs_f64() * 10.0).round() / 10.0;
    format!("{tenths} s")
}

impl DataDirLock {
    /// Takes the exclusive lock at `path`, waiting up to `timeout`.
    /// `purpose` is written into the file so others can say who holds it.
    pub fn acquire(path: &Path, timeout: Duration, purpose: &str) -> Result<Self, LockError> {
        let io_err = |source| LockError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            super::create_dir_durable(dir).map_err(io_err)?;
        }
        let mut file = super::open_data_file(
            path,
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false),
        )
        .map_err(|e| io_err(e.at(path).into_io()))?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => return Err(io_err(e)),
            }
            if started.elapsed() >= timeout {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(LockError::Busy {
                    path: path.to_owned(),
                    holder: if holder.is_empty() {
                        "another process".into()
                    } else {
                        holder.to_owned()
                    },
                    waited: started.elapsed(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let note = format!("pid {} ({purpose})", std::process::id());
        let _ = file
            .set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| file.write_all(note.as_bytes()));
        Ok(Self { file })
    }
}

impl Drop for DataDirLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}
