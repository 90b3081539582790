//! Durable file writes shared by every writer of the data dir.
//!
//! One writer per file, and every write is atomic: a temp file in the same
//! directory, fsync, rename over the target, fsync the directory; a new
//! directory or a removal is synced into its parent too. Writers
//! serialise on one exclusive lock file per data dir, which also records who
//! holds it so that a waiting command can say so.

mod atomic;
mod lock;

pub use atomic::{
    create_dir_durable, remove_durable, sync_dir, write_atomic, write_private, AtomicWriteError,
    TEMP_PREFIX,
};
pub use lock::{DataDirLock, LockError};
