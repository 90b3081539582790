//! The record of section 2.1 and the objects inside it.
//!
//! Serialisation is exact: camelCase names in the order of the spec, every
//! field always written (`null`, never omitted), no extra fields. Reading is
//! strict about presence (a missing field is an error, `null` must be
//! written) and lenient about unknown fields, which upstream documents may
//! add without notice (docs/spec/decisions.md, "forward compatible").

use serde::{Deserialize, Deserializer, Serialize};

use super::Timestamp;

/// Deserialises an `Option` field that must be present (possibly `null`).
///
/// serde treats a missing `Option` field as `None`; naming a
/// `deserialize_with` function turns that into a "missing field" error.
fn required<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value as written on the wire.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }

            /// Parses the wire spelling (case-sensitive, exact).
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($wire => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum!(
    /// Whether a record announces a reset or reports one.
    Kind { /** An announced, scheduled reset. */ Scheduled = "reset_scheduled", /** A reset that happened. */ Completed = "reset_completed" }
);
wire_enum!(
    /// Which limits a reset touches; independent of [`Kind`].
    ResetType { /** Every usage limit. */ Global = "global", /** Banked resets only. */ Banked = "banked", /** Both. */ GlobalAndBanked = "global_and_banked" }
);
wire_enum!(
    /// How precisely a schedule names its time.
    SchedulePrecision { /** A civil day. */ Date = "date", /** An exact instant. */ Datetime = "datetime", /** A window (listed by the machine-readable schema). */ Window = "window" }
);
wire_enum!(
    /// Whether the schedule was stated or inferred.
    ScheduleBasis { /** Stated by the source. */ Explicit = "explicit", /** Inferred from context. */ ContextualInference = "contextual_inference" }
);
wire_enum!(
    /// The state of a schedule (docs/spec/decisions.md, "Schedule states").
    ScheduleState { /** The window has not ended. */ Pending = "pending", /** The window ended unconfirmed. */ Elapsed = "elapsed", /** A completion is confirmed. */ Fulfilled = "fulfilled", /** No window is known. */ Unknown = "unknown" }
);
wire_enum!(
    /// How a fulfilment was established.
    FulfillmentOrigin { /** Matched by the collector. */ Auto = "auto", /** Linked by an operator. */ Link = "link", /** Recorded by an operator as a manual completion. */ Manual = "manual" }
);
wire_enum!(
    /// Where a record's source lives.
    Origin { /** A post on the social platform. */ X = "x", /** An operator note or manual completion. */ Operator = "operator", /** A feed item. */ Rss = "rss", /** A GitHub item. */ Github = "github" }
);

/// The source object of section 2.2.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// Where the source lives.
    pub origin: Origin,
    /// The original post id; null for an independent manual completion.
    #[serde(deserialize_with = "required")]
    pub post_id: Option<String>,
    /// The account handle for social-platform sources.
    #[serde(deserialize_with = "required")]
    pub handle: Option<String>,
    /// The canonical URL of the source post.
    #[serde(deserialize_with = "required")]
    pub url: Option<String>,
}

impl Source {
    /// The source of an operator note (`op_…`): origin `operator`, the note's
    /// id as `postId`, no handle or URL.
    pub fn operator_note(id: &str) -> Self {
        Source {
            origin: Origin::Operator,
            post_id: Some(id.to_owned()),
            handle: None,
            url: None,
        }
    }
}

/// The scope object of section 2.3.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// Affected plan ids (`all`, `unknown`, or plan names).
    pub plans: Vec<String>,
    /// Affected quota-window ids (`five_hour`, `weekly`, `unknown`, …).
    pub windows: Vec<String>,
}

/// The schedule window of section 2.4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleWindow {
    /// UTC start of the window.
    pub start_at: Timestamp,
    /// UTC end of the window; equal to `start_at` for an exact time.
    pub end_at: Timestamp,
}

/// A record of section 2.1, exactly as published.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// Numeric post id, `op_…` operator note or `manual:…` completion (maybe `seed:`-prefixed).
    pub id: String,
    /// Schedule or completion.
    pub kind: Kind,
    /// Which limits the reset touches.
    pub reset_type: ResetType,
    /// When the source was announced.
    #[serde(deserialize_with = "required")]
    pub announced_at: Option<Timestamp>,
    /// Planned or actual reset time; never filled from `announced_at`.
    #[serde(deserialize_with = "required")]
    pub effective_at: Option<Timestamp>,
    /// Public post text or operator copy.
    #[serde(deserialize_with = "required")]
    pub text: Option<String>,
    /// 0..=1 when known.
    #[serde(deserialize_with = "required")]
    pub confidence: Option<f64>,
    /// Plans and quota windows affected, when known.
    #[serde(deserialize_with = "required")]
    pub scope: Option<Scope>,
    /// Where the record comes from.
    pub source: Source,
    /// Schedules only.
    #[serde(deserialize_with = "required")]
    pub schedule_precision: Option<SchedulePrecision>,
    /// Schedules only.
    #[serde(deserialize_with = "required")]
    pub schedule_basis: Option<ScheduleBasis>,
    /// Schedules only: the known window.
    #[serde(deserialize_with = "required")]
    pub schedule_window: Option<ScheduleWindow>,
    /// Schedules only.
    #[serde(deserialize_with = "required")]
    pub schedule_state: Option<ScheduleState>,
    /// When a fulfilment was confirmed (schedules), or when the reset happened (completions).
    #[serde(deserialize_with = "required")]
    pub completed_at: Option<Timestamp>,
    /// On a fulfilled schedule: the completion that fulfilled it.
    #[serde(deserialize_with = "required")]
    pub completion_record_id: Option<String>,
    /// How the fulfilment was established.
    #[serde(deserialize_with = "required")]
    pub fulfillment_origin: Option<FulfillmentOrigin>,
    /// On completions: the schedules they fulfil. Always an array.
    pub related_record_ids: Vec<String>,
}

impl Record {
    /// Whether this record is a schedule.
    pub fn is_schedule(&self) -> bool {
        self.kind == Kind::Scheduled
    }

    /// A manual completion in the shape of section 2.5: an operator's record
    /// that the reset happened `at`, fulfilling `schedule_ids`.
    pub fn manual_completion(
        id: &str,
        at: Timestamp,
        schedule_ids: &[String],
        reset_type: ResetType,
    ) -> Self {
        Record {
            id: id.to_owned(),
            kind: Kind::Completed,
            reset_type,
            announced_at: None,
            effective_at: Some(at),
            text: None,
            confidence: None,
            scope: None,
            source: Source {
                origin: Origin::Operator,
                post_id: None,
                handle: None,
                url: None,
            },
            schedule_precision: None,
            schedule_basis: None,
            schedule_window: None,
            schedule_state: None,
            completed_at: Some(at),
            completion_record_id: None,
            fulfillment_origin: Some(FulfillmentOrigin::Manual),
            related_record_ids: schedule_ids.to_vec(),
        }
    }
}

impl ResetType {
    /// The union of reset types (`global` and `banked` give
    /// `global_and_banked`); `global` when there are none.
    pub fn union(types: &[ResetType]) -> ResetType {
        let global = types
            .iter()
            .any(|t| matches!(t, ResetType::Global | ResetType::GlobalAndBanked));
        let banked = types
            .iter()
            .any(|t| matches!(t, ResetType::Banked | ResetType::GlobalAndBanked));
        match (global, banked) {
            (true, true) => ResetType::GlobalAndBanked,
            (false, true) => ResetType::Banked,
            _ => ResetType::Global,
        }
    }
}
