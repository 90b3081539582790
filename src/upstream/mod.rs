//! The real upstream: the public status feed (`schemaVersion: 1`), and
//! telling it apart from a records document.
//!
//! [`decode_upstream`] looks at the content: `records` means another
//! instance's records document (published verbatim); `schemaVersion` with
//! `events` means the public feed, whose records and states are derived by
//! [`convert_feed`] at every sync. Anything else is refused whole.

mod convert;
mod rules;
mod skip;
mod wire;

pub use convert::{convert_feed, Converted};
pub use skip::{SkipReason, SkippedRecord};

use crate::document::{DocumentError, RecordsDocument};
use crate::model::Timestamp;

/// What an upstream body turned out to be.
#[derive(Debug, Clone)]
pub enum UpstreamDocument {
    /// Another instance's records document (boxed: it is the larger by far).
    Records(Box<RecordsDocument>),
    /// The public status feed, converted at `now`.
    Feed(Converted),
}

/// Known upstream presets for `--upstream NAME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The preset's name.
    pub name: &'static str,
    /// The feed's URL.
    pub url: &'static str,
    /// The public page.
    pub page_url: &'static str,
    /// `dataSource.sourceId`.
    pub source_id: &'static str,
    /// `dataSource.name`.
    pub source_name: &'static str,
}

/// `--upstream public`: the public status feed (upstream-feed.md).
pub const PUBLIC_FEED: Preset = Preset {
    name: "public",
    url: "https://didcodexreset.com/api/status.json",
    page_url: "https://didcodexreset.com/",
    source_id: "didcodexreset",
    source_name: "Did Codex Reset",
};

/// Decodes an upstream body by content, converting a feed at `now`.
pub fn decode_upstream(bytes: &[u8], now: Timestamp) -> Result<UpstreamDocument, DocumentError> {
    // Look at the top-level keys without building a tree of the whole body.
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Shape {
        records: Option<serde::de::IgnoredAny>,
        schema_version: Option<serde::de::IgnoredAny>,
        events: Option<serde::de::IgnoredAny>,
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        // Valid JSON of another shape, or not JSON at all: say which.
        return Err(
            match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
                Ok(_) => DocumentError::Document {
                    field: "(document)".into(),
                    problem: "is not a JSON object".into(),
                },
                Err(e) => DocumentError::Syntax(e.to_string()),
            },
        );
    }
    let shape: Shape =
        serde_json::from_slice(bytes).map_err(|e| DocumentError::Syntax(e.to_string()))?;
    if shape.records.is_some() {
        return RecordsDocument::from_slice(bytes).map(|d| UpstreamDocument::Records(Box::new(d)));
    }
    if shape.schema_version.is_some() && shape.events.is_some() {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| DocumentError::Syntax(e.to_string()))?;
        return convert_feed(&value, now).map(UpstreamDocument::Feed);
    }
    Err(DocumentError::Document {
        field: "(document)".into(),
        problem: "is neither a records document (with `records`) nor the public status feed (with `schemaVersion` and `events`)".into(),
    })
}
