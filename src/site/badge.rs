//! The README badge: the verdict for today (UTC) in the shields.io
//! endpoint format (`schemaVersion`, `label`, `message`, `color`).

use serde::Serialize;

use super::verdict::{self, next_reset, Day, HitKind, Trust, Verdict};
use crate::model::Record;
use crate::model::Timestamp;

/// The shields.io endpoint document.
#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Badge {
    /// Always 1.
    pub schema_version: u8,
    /// Left side.
    pub label: &'static str,
    /// Right side.
    pub message: String,
    /// Right side's colour.
    pub color: &'static str,
}

/// The badge of `records` (visible under `all`) as of `now`, the
/// matcher's tolerance `tolerance_ms`: what the status page says, in the
/// badge's words (a schedule not confirmed yet, or not confirmed, says so).
pub fn badge<'a>(
    records: impl IntoIterator<Item = &'a Record> + Clone,
    trust: Trust,
    now: Timestamp,
    tolerance_ms: i64,
) -> Badge {
    let verdict = verdict::verdict(records.clone(), trust, Day::utc_of(now), now, tolerance_ms);
    let (message, color) = match verdict {
        Verdict::Unknown(_) => ("unknown".to_owned(), "lightgrey"),
        Verdict::Yes(hit) => match hit.kind {
            HitKind::Completed | HitKind::Fulfilled => ("reset today".to_owned(), "brightgreen"),
            HitKind::Due => ("reset due today, not confirmed yet".to_owned(), "green"),
            HitKind::Elapsed => ("reset due today, not confirmed".to_owned(), "yellow"),
        },
        Verdict::No => ("no reset today".to_owned(), "blue"),
    };
    let message = match (
        verdict,
        next_reset(records, now).and_then(|r| r.schedule_window),
    ) {
        (Verdict::Unknown(_), _) | (_, None) => message,
        (_, Some(window)) => format!(
            "{message} · next {}",
            window.start_at.to_datetime().format("%Y-%m-%d %H:%M UTC")
        ),
    };
    Badge {
        schema_version: 1,
        label: "usage reset",
        message,
        color,
    }
}
