//! Schedule states, evaluated when a snapshot is published
//! (docs/spec/decisions.md, "Schedule states").
//!
//! The clock is a parameter: callers pass `now`, so tests and the CLI's
//! `--now` choose the instant and nothing here reads the system time.

use crate::model::{Record, ScheduleState, Timestamp};

/// The state a schedule has at `now`, from its own fields.
///
/// - `fulfilled`: a completion is confirmed (`completedAt` and an origin set);
/// - `unknown`: no window is known;
/// - `pending`: the window's end has not passed (`now <= endAt`);
/// - `elapsed`: the window ended with no confirmed completion.
pub fn schedule_state_at(record: &Record, now: Timestamp) -> ScheduleState {
    if record.completed_at.is_some() && record.fulfillment_origin.is_some() {
        return ScheduleState::Fulfilled;
    }
    match record.schedule_window {
        None => ScheduleState::Unknown,
        Some(window) if now <= window.end_at => ScheduleState::Pending,
        Some(_) => ScheduleState::Elapsed,
    }
}

/// Sets `scheduleState` on every schedule; completions keep `null`.
pub fn evaluate_states(records: &mut [Record], now: Timestamp) {
    for record in records.iter_mut().filter(|r| r.is_schedule()) {
        record.schedule_state = Some(schedule_state_at(record, now));
    }
}

/// Whether people are told at `now` that the schedule `record` was not
/// confirmed: it is neither fulfilled nor without a window (served
/// `pending` or `elapsed`), and the matcher's tolerance after its
/// window's end has passed ([`crate::remind::unconfirmed_at`], the instant
/// every push message says so). The served `scheduleState` turns `elapsed`
/// at the window's end (the API's rule); what people read waits for this
/// instant: the status page, the badge and the feeds ask here.
pub fn told_unconfirmed(record: &Record, tolerance_ms: i64, now: Timestamp) -> bool {
    matches!(
        record.schedule_state,
        Some(ScheduleState::Pending | ScheduleState::Elapsed)
    ) && crate::remind::unconfirmed_at(record, tolerance_ms).is_some_and(|at| now >= at)
}
