//! Why a feed item yields no record ([`SkipReason`]), and where it is
//! ([`SkippedRecord`]): what a conversion reports beside its records.

use std::fmt;

/// A feed item that yields no record, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRecord {
    /// Where it is in the feed (`events[3]`, `resetTimeline.fulfilledSchedules[0].schedule`).
    pub location: String,
    /// Its post id, when it has one.
    pub post_id: Option<String>,
    /// Why it was skipped.
    pub reason: String,
}

/// Why a feed item yields no record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    /// The item does not have the shape of its kind (`event`, `heatmap source`, …).
    #[error("unreadable {what}: {why}")]
    Unreadable {
        /// What the item should be.
        what: &'static str,
        /// The parser's words.
        why: String,
    },
    /// Another item already gave this id.
    #[error("duplicate id {0:?}: an earlier item has the same id; this later copy is dropped")]
    Duplicate(String),
    /// The record breaks a rule of the model.
    #[error("{field}: {problem}")]
    Invalid {
        /// The field.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// An event kind this version does not know.
    #[error("unknown event kind {0:?}")]
    UnknownKind(String),
    /// A reset type this version does not know.
    #[error("unknown resetType {0:?}")]
    UnknownResetType(String),
    /// A schedule precision this version does not know.
    #[error("unknown schedulePrecision {0:?}")]
    UnknownPrecision(String),
    /// A schedule basis this version does not know.
    #[error("unknown scheduleBasis {0:?}")]
    UnknownBasis(String),
    /// A schedule without a time.
    #[error("a schedule with no effectiveAt and no window")]
    NoScheduleTime,
    /// A post id that is neither numeric nor `op_…` (heatmap items: numeric only).
    #[error("post id {id:?} follows no known id scheme ({expected})")]
    UnknownIdScheme {
        /// The id.
        id: String,
        /// The schemes the item may use.
        expected: &'static str,
    },
}

impl fmt::Display for SkippedRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.post_id {
            Some(id) => write!(f, "{} (post {id}): {}", self.location, self.reason),
            None => write!(f, "{}: {}", self.location, self.reason),
        }
    }
}
