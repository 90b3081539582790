//! Upstream-sync mode: fetch the upstream document with a conditional GET,
//! validate it whole, publish it as a snapshot when it changed, and keep the
//! sync state (ETag, times, status, errors, back-off) next to the snapshots.
//!
//! - [`fetch`]: the HTTP client (limits, timeouts, redirects, conditional headers);
//! - [`state`]: the sync-state file and the `dataSource` object built from it;
//! - [`backoff`]: exponential back-off with jitter after failures;
//! - `run`: one sync attempt from start to finish;
//! - `error`: why a sync did not succeed, for the operator and as published;
//! - `stored_feed`: the last good public feed, kept in the data dir;
//! - `daemon`: the loop that repeats it.

pub mod backoff;
mod daemon;
mod error;
pub mod fetch;
mod run;
pub mod state;
mod stored_feed;

pub use daemon::run_daemon;
pub use error::{Rejected, SyncError};
pub use run::{sync_once, SyncOutcome, SyncSettings};
pub use stored_feed::{read_stored_feed, STORED_FEED_CAP};
