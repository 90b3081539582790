//! Files on disk: durable writes shared by every writer of the data dir,
//! and the one guarded read of every file the program reads ([`read_file`]).
//!
//! One writer per file, and every write is atomic: a temp file in the same
//! directory, fsync, rename over the target, fsync the directory; a new
//! directory or a removal is synced into its parent too. Writers
//! serialise on one exclusive lock file per data dir, which also records who
//! holds it so that a waiting command can say so.

mod atomic;
mod lock;
mod read;

pub use atomic::{
    create_dir_durable, remove_durable, sync_dir, write_atomic, write_private, AtomicWriteError,
    TEMP_PREFIX,
};
pub use lock::{DataDirLock, LockError};
pub use read::{
    open_data_file, open_regular, read_data_file, read_existing, read_file, Cap, Links, OpenError,
    ReadError,
};
