//! Versioned snapshots on disk: the file format, the store that publishes
//! them atomically, and the loader that refuses anything corrupt.
//!
//! Layout under `<data-dir>/snapshots/`:
//! - `000000000042.json`: one published version, never rewritten;
//! - `CURRENT`: the sequence number of the version being served.
//!
//! Every snapshot file is also a valid records document, so a static file
//! server can publish it as the upstream of another instance.

mod format;
mod store;

pub use format::{Mode, Snapshot, SNAPSHOT_FORMAT};
pub use store::{encode, Draft, SnapshotEntry, SnapshotError, SnapshotHead, SnapshotStore};
