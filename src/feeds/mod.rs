//! Renderers of a published view into the subscription formats: the Atom
//! feed ([`atom`]) and the iCalendar calendar ([`ics`]).
//!
//! Renderers are pure functions of a [`PublishedView`], a parsed query and
//! (for the feed's links) a [`BaseUrl`]: no I/O, no clock. What they make of
//! a record (an Atom entry, a calendar event) is kept in the view, so it is
//! rendered once per snapshot and a request copies bytes; see each module
//! for what is memoised and what is rendered per request.
//!
//! This module owns what both formats share: which records a feed shows,
//! the stable identity of a record ([`record_uuid`]), when a record last
//! changed ([`record_updated`]), the one-line headline a person reads at a
//! glance ([`headline`]) and the details line, and the public base URL.

pub mod atom;
pub mod ics;

use std::borrow::Cow;

use uuid::Uuid;

pub use crate::model::BaseUrl;
use crate::model::{concerns_plan, KindFilter, PlanId};
use crate::model::{Record, ResetType, ScheduleState, Scope, Timestamp};
use crate::query::PublishedView;

/// The namespace of the name-based (v5) UUIDs this project derives from
/// record ids. Fixed forever: changing it would change every entry id and
/// calendar UID that subscribers have stored.
const NAMESPACE: Uuid = Uuid::from_u128(0x754694ed_f97f_407f_9f9d_610864c69d78);

/// The stable identity of the record `id`: a name-based (v5) UUID, the same
/// across publishes, snapshots and instances serving the same records.
/// The Atom entry id is its `urn:uuid:` form, the calendar `UID` the UUID.
pub fn record_uuid(id: &str) -> Uuid {
    let mut name = Vec::with_capacity(7 + id.len());
    name.extend_from_slice(b"record:");
    name.extend_from_slice(id.as_bytes());
    Uuid::new_v5(&NAMESPACE, &name)
}

/// The stable identity of a feed variant (`records.atom?kind=all&plan=pro`).
fn feed_uuid(name: &str) -> Uuid {
    Uuid::new_v5(&NAMESPACE, format!("feed:{name}").as_bytes())
}

/// When the record last changed what it says, from its own timestamps
/// (so it is the same in every publish until the record itself changes):
///
/// - `announcedAt`: when the record was said;
/// - `completedAt`: a fulfilment confirmed (schedules), the reset (completions);
/// - the window's `endAt` when the schedule is `elapsed`: a schedule
///   becomes elapsed exactly when its window ends (docs/spec/decisions.md, "Schedule
///   states"), so that is when its state changed;
///
/// the latest of these; else `effectiveAt`; else the Unix epoch (a record
/// with no time at all, which validation allows for no shape this project
/// writes). A change no timestamp records (an operator correcting the text
/// or the window of a pending schedule) does not move it: the record does
/// not say when that happened, and a feed must not invent a time.
pub fn record_updated(record: &Record) -> Timestamp {
    let elapsed_at = match (record.schedule_state, record.schedule_window) {
        (Some(ScheduleState::Elapsed), Some(window)) => Some(window.end_at),
        _ => None,
    };
    [record.announced_at, record.completed_at, elapsed_at]
        .into_iter()
        .flatten()
        .max()
        .or(record.effective_at)
        .unwrap_or(Timestamp::from_millis(0))
}

/// The records a feed shows: `kind`'s list in the API's order, keeping
/// only those that concern `plan` when one is given.
pub fn selected<'v>(
    view: &'v PublishedView,
    kind: KindFilter,
    plan: Option<&'v PlanId>,
) -> impl Iterator<Item = u32> + 'v {
    view.ordered(kind)
        .iter()
        .copied()
        .filter(move |&i| plan.is_none_or(|p| concerns_plan(view.record(i), p.as_str())))
}

/// A feed's title: which records, for which plan.
fn feed_title(kind: KindFilter, plan: Option<&PlanId>) -> String {
    let what = match kind {
        KindFilter::All => "Usage-limit resets",
        KindFilter::Scheduled => "Scheduled usage-limit resets",
        KindFilter::Completed => "Completed usage-limit resets",
    };
    match plan {
        Some(plan) => format!("{what} (plan {})", plan.as_str()),
        None => what.to_owned(),
    }
}

/// The canonical query of a feed variant: `kind` unless `all`, then `plan`.
fn canonical_query(kind: KindFilter, plan: Option<&PlanId>, alarm: Option<u16>) -> String {
    let mut query = String::new();
    let mut push = |name: &str, value: &str| {
        query.push(if query.is_empty() { '?' } else { '&' });
        query.push_str(name);
        query.push('=');
        query.push_str(value);
    };
    if kind != KindFilter::All {
        push("kind", kind.as_str());
    }
    if let Some(plan) = plan {
        push("plan", plan.as_str());
    }
    if let Some(alarm) = alarm {
        push("alarm", &alarm.to_string());
    }
    query
}

/// The headline of a record, readable at a glance: what happened, for
/// which plans, when (a schedule's window in UTC) and, for a schedule,
/// its state. "Global reset scheduled for all plans: 2026-11-24 18:00 UTC (pending)".
pub fn headline(record: &Record) -> String {
    let what = match record.reset_type {
        ResetType::Global => "Global reset",
        ResetType::Banked => "Banked reset",
        ResetType::GlobalAndBanked => "Global and banked reset",
    };
    let whom = plans_phrase(record.scope.as_ref());
    if record.is_schedule() {
        let when = match record.schedule_window {
            Some(w) if w.start_at == w.end_at => utc_minute(w.start_at) + " UTC",
            Some(w) => format!("{} to {} UTC", utc_minute(w.start_at), utc_minute(w.end_at)),
            None => "time unknown".to_owned(),
        };
        let state = record
            .schedule_state
            .map_or("state unknown", ScheduleState::as_str);
        format!("{what} scheduled for {whom}: {when} ({state})")
    } else {
        let when = match record.completed_at.or(record.effective_at) {
            Some(at) => utc_minute(at) + " UTC",
            None => "time unknown".to_owned(),
        };
        format!("{what} completed for {whom}: {when}")
    }
}

/// The record's facts in one line: state, precision, basis, scope,
/// confidence, how a fulfilment was established, links between records.
pub fn details(record: &Record) -> String {
    let mut out = String::new();
    let mut field = |name: &str, value: &str| {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(name);
        out.push_str(": ");
        out.push_str(value);
    };
    if record.is_schedule() {
        if let Some(state) = record.schedule_state {
            field("state", state.as_str());
        }
        if let Some(precision) = record.schedule_precision {
            field("precision", precision.as_str());
        }
        if let Some(basis) = record.schedule_basis {
            field("basis", basis.as_str());
        }
        if let Some(w) = record.schedule_window {
            field(
                "window",
                &format!("{} to {}", iso(w.start_at), iso(w.end_at)),
            );
        }
    }
    field("reset type", record.reset_type.as_str());
    if let Some(scope) = &record.scope {
        field("plans", &scope.plans.join(", "));
        field("quota windows", &scope.windows.join(", "));
    }
    if let Some(confidence) = record.confidence {
        field("confidence", &confidence.to_string());
    }
    if let Some(at) = record.completed_at {
        field("completed at", &iso(at));
    }
    if let Some(origin) = record.fulfillment_origin {
        field("fulfilment", origin.as_str());
    }
    if let Some(id) = &record.completion_record_id {
        field("completion record", id);
    }
    if !record.related_record_ids.is_empty() {
        field("related records", &record.related_record_ids.join(", "));
    }
    field("record id", &record.id);
    out
}

/// "all plans", "unspecified plans", or the named plans ("plus, pro").
fn plans_phrase(scope: Option<&Scope>) -> String {
    let Some(scope) = scope else {
        return "unspecified plans".to_owned();
    };
    if scope.plans.iter().any(|p| p == "all") {
        return "all plans".to_owned();
    }
    let named: Vec<&str> = scope
        .plans
        .iter()
        .map(String::as_str)
        .filter(|p| *p != "unknown")
        .collect();
    match named.as_slice() {
        [] => "unspecified plans".to_owned(),
        [one] => format!("plan {one}"),
        many => format!("plans {}", many.join(", ")),
    }
}

/// `2026-11-24 18:00` (seconds shown only when not zero).
fn utc_minute(at: Timestamp) -> String {
    let ascii = at.to_ascii();
    let text = std::str::from_utf8(&ascii).expect("timestamps are ASCII");
    let mut out = String::with_capacity(19);
    out.push_str(&text[..10]);
    out.push(' ');
    out.push_str(&text[11..16]);
    if &text[16..23] != ":00.000" {
        out.push_str(&text[16..19]);
    }
    out
}

/// The one timestamp form (`2026-11-24T18:00:00.000Z`).
fn iso(at: Timestamp) -> String {
    String::from_utf8_lossy(&at.to_ascii()).into_owned()
}

/// `text` with every character XML 1.0 cannot carry (C0 controls but tab,
/// line feed and carriage return; U+FFFE, U+FFFF) replaced by U+FFFD, so
/// an upstream's stray control character cannot make a feed unreadable;
/// and every bidirectional control, so none can reorder what a feed reader
/// shows ([`crate::model::is_bidi_control`]).
fn xml_safe(text: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
            || crate::model::is_bidi_control(c)
    };
    if text.chars().any(bad) {
        Cow::Owned(
            text.chars()
                .map(|c| if bad(c) { '\u{fffd}' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests;
