//! Where the served records come from: the vocabulary of the snapshot, the
//! server, the pages and the sync.

use serde::{Deserialize, Serialize};

/// Where a snapshot's records come from; decides whether `meta.dataSource` is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Records collected locally (seed history and the operator ledger).
    Standalone,
    /// Records of the last good upstream document.
    Upstream,
}

impl Mode {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Standalone => "standalone",
            Mode::Upstream => "upstream",
        }
    }
}
