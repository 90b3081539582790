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
