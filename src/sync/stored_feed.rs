//! The last good public feed, kept in the data dir (`upstream-feed.json`)
//! so a 304 can derive states again, and mirrored by the server at
//! `/api/status.json`: its name, its cap, reading and keeping it.

use std::path::Path;

use super::state::SyncStateError;
use crate::durable::DataDirLock;

/// The largest kept feed read (a fetched body is capped by
/// `--max-body-bytes`, 16 MiB by default).
pub const STORED_FEED_CAP: crate::durable::Cap = crate::durable::Cap::mib(1024);

/// The kept feed, `None` when there is none.
pub fn read_stored_feed(data_dir: &Path) -> Result<Option<Vec<u8>>, crate::durable::ReadError> {
    crate::durable::read_data_file(
        &crate::data_dir::DataDir::of(data_dir).stored_feed(),
        STORED_FEED_CAP,
    )
}

/// Keeps (or, for a records document, removes) the stored feed.
pub(super) fn store_feed(
    _lock: &DataDirLock,
    data_dir: &Path,
    feed: Option<&[u8]>,
) -> Result<(), SyncStateError> {
    let path = crate::data_dir::DataDir::of(data_dir).stored_feed();
    match feed {
        Some(bytes) => crate::durable::write_atomic(&path, bytes).map_err(SyncStateError::Write),
        None if path.exists() => crate::durable::remove_durable(data_dir, [path.as_path()])
            .map_err(SyncStateError::Write),
        None => Ok(()),
    }
}
