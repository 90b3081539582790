//! The README badge: the verdict for today (UTC) in the shields.io
//! endpoint format (`schemaVersion`, `label`, `message`, `color`).
//!
//! Its messages (docs/api.md, "The badge", and the OpenAPI document):
//!
//! | verdict | message | color |
//! |---|---|---|
//! | a confirmed reset today | `reset today` | brightgreen |
//! | none confirmed; a schedule of today due, within the tolerance | `reset due today, not confirmed yet` | green |
//! | none confirmed; a schedule of today past the tolerance | `reset due today, not confirmed` | yellow |
//! | no reset yet, one announced later today | `not yet today` | blue |
//! | no reset today, none announced for later today | `no reset today` | blue |
//! | the data cannot be trusted | `unknown` | lightgrey |
//!
//! Each but `unknown` is followed by ` · next HH:MM UTC` when the next
//! announced reset starts later today, or ` · next YYYY-MM-DD HH:MM UTC`
//! when it starts on a later day: never a date for today, never a time
//! that has passed (a window open now is the verdict's, not next).

use serde::Serialize;

use super::verdict::{self, next_start, Day, HitKind, Trust, Verdict};
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
    let today = Day::utc_of(now);
    let verdict = verdict::verdict(records.clone(), trust, today, now, tolerance_ms);
    let next = next_start(records, now)
        .and_then(|r| r.schedule_window)
        .map(|w| w.start_at);
    let later_today = next.is_some_and(|at| today.contains(at));
    let (message, color) = match verdict {
        Verdict::Unknown(_) => {
            return Badge {
                schema_version: 1,
                label: "usage reset",
                message: "unknown".to_owned(),
                color: "lightgrey",
            }
        }
        Verdict::Yes { hit, .. } => match hit.kind {
            HitKind::Completed | HitKind::Fulfilled => ("reset today", "brightgreen"),
            HitKind::Due => ("reset due today, not confirmed yet", "green"),
            HitKind::Elapsed => ("reset due today, not confirmed", "yellow"),
        },
        // "No reset today" is not true of a day with one still to come.
        Verdict::No if later_today => ("not yet today", "blue"),
        Verdict::No => ("no reset today", "blue"),
    };
    let message = match next {
        None => message.to_owned(),
        Some(at) => {
            let form = if later_today {
                "%H:%M UTC"
            } else {
                "%Y-%m-%d %H:%M UTC"
            };
            format!("{message} · next {}", at.to_datetime().format(form))
        }
    };
    Badge {
        schema_version: 1,
        label: "usage reset",
        message,
        color,
    }
}
