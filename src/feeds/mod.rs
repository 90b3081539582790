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
//! glance ([`headline`], in the words of the push messages) and the
//! details line, the public base URL, and the instant the words are for
//! ([`AsOf`]): a schedule is told "not confirmed" at the instant the push
//! messages tell it, so a feed's words turn with the clock between two
//! publishes, and its bytes, tag and `Last-Modified` with them.

pub mod atom;
pub mod ics;

use std::borrow::Cow;

use uuid::Uuid;

pub use crate::model::BaseUrl;
use crate::model::{concerns_plan, KindFilter, PlanId};
use crate::model::{Kind, Record, ScheduleState, ScheduleWindow, Timestamp};
use crate::query::{PublishedView, Variant};
use crate::site::i18n::Lang;

/// The language of the feeds' words (one feed for every reader, as the
/// API is: English, the push messages' default).
const LANG: Lang = Lang::En;

/// The instant a feed's words are for, as far as they depend on it: the
/// matcher's tolerance, and the newest instant, no later than the
/// request, at which a schedule of the view was told "not confirmed"
/// ([`crate::schedule::told_unconfirmed`], the instant the push messages
/// tell it). Two requests between two such instants read the same words,
/// so they share one body and one entity tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AsOf {
    /// The matcher's tolerance in milliseconds.
    pub tolerance_ms: i64,
    /// That newest instant; `None`: no schedule of the view has turned yet.
    pub since: Option<Timestamp>,
}

impl AsOf {
    /// The words of `view` at `now`: O(log n) per call, the schedules
    /// that turn are kept in the view in the order they turn (by their
    /// window's end: each turns the same tolerance after it).
    pub fn of(view: &PublishedView, tolerance_ms: i64, now: Timestamp) -> Self {
        let turns = view.turns(|records| {
            let mut turning: Vec<u32> = (0..records.len() as u32)
                .filter(|&i| AsOf::turns_eventually(&records[i as usize]))
                .collect();
            turning.sort_by_key(|&i| records[i as usize].schedule_window.map(|w| w.end_at));
            turning
        });
        let at = |i: u32| crate::remind::unconfirmed_at(view.record(i), tolerance_ms);
        let turned = turns.partition_point(|&i| at(i).is_some_and(|at| at <= now));
        AsOf {
            tolerance_ms,
            since: turned.checked_sub(1).and_then(|last| at(turns[last])),
        }
    }

    /// Whether `record` is told "not confirmed", and since when.
    pub fn unconfirmed_since(&self, record: &Record) -> Option<Timestamp> {
        let since = self.since?;
        crate::schedule::told_unconfirmed(record, self.tolerance_ms, since)
            .then(|| crate::remind::unconfirmed_at(record, self.tolerance_ms))
            .flatten()
    }

    /// Whether `record` will be told "not confirmed" at some instant (a
    /// schedule neither fulfilled nor without a window).
    fn turns_eventually(record: &Record) -> bool {
        crate::schedule::told_unconfirmed(record, 0, Timestamp::from_millis(i64::MAX))
    }

    /// `record`'s words now and those it ends with, each as the instant
    /// it is told "not confirmed" since (`None`: it is not). A renderer
    /// keeps a record's last words in the view (they are the same on
    /// every later request) and makes the others per body: only a
    /// schedule still waiting for its tolerance has two.
    pub fn words_of(&self, record: &Record) -> (Option<Timestamp>, Option<Timestamp>) {
        let end = Self::turns_eventually(record)
            .then(|| crate::remind::unconfirmed_at(record, self.tolerance_ms))
            .flatten();
        (self.unconfirmed_since(record), end)
    }

    /// Its key among the bodies kept in a view ([`PublishedView::body`]).
    pub fn variant(&self) -> Variant {
        [
            self.tolerance_ms,
            self.since.map_or(i64::MIN, Timestamp::as_millis),
        ]
    }

    /// What the entity tag of a feed covers of it.
    pub fn tag_input(&self) -> [u8; 16] {
        let [tolerance, since] = self.variant();
        let mut bytes = [0; 16];
        bytes[..8].copy_from_slice(&tolerance.to_be_bytes());
        bytes[8..].copy_from_slice(&since.to_be_bytes());
        bytes
    }
}

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
/// - `unconfirmed_since`: when a schedule was told "not confirmed" (its
///   window's end plus the matcher's tolerance, [`AsOf::unconfirmed_since`]),
///   which is when its headline changed;
///
/// the latest of these; else `effectiveAt`; else the Unix epoch (a record
/// with no time at all, which validation allows for no shape this project
/// writes). A change no timestamp records (an operator correcting the text
/// or the window of a pending schedule) does not move it: the record does
/// not say when that happened, and a feed must not invent a time.
pub fn record_updated(record: &Record, unconfirmed_since: Option<Timestamp>) -> Timestamp {
    [record.announced_at, record.completed_at, unconfirmed_since]
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

/// A feed's title: which records, for which plan (in words: "Pro").
fn feed_title(kind: KindFilter, plan: Option<&PlanId>) -> String {
    let what = match kind {
        KindFilter::All => "Usage-limit resets",
        KindFilter::Scheduled => "Scheduled usage-limit resets",
        KindFilter::Completed => "Completed usage-limit resets",
    };
    match plan {
        Some(plan) => format!(
            "{what} ({})",
            LANG.strings().plan_words(&[plan.as_str().to_owned()])
        ),
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

/// The headline of a record, readable at a glance, in the words of the
/// push messages ([`crate::site::i18n::Notify`]) and the pages'
/// ([`crate::site::i18n::Strings::what`]): what is known of it now, when,
/// and what it is. `unconfirmed`: the schedule is told "not confirmed"
/// ([`AsOf::unconfirmed_since`]).
///
/// - `Reset announced: 2026-11-24 18:00 UTC · Global reset · Pro · weekly limit`
/// - `Scheduled reset completed: 2026-11-24 18:02 UTC · Global reset · all plans`
/// - `Scheduled reset not confirmed: 2026-11-01 07:00 to 2026-11-02 08:00 UTC · Global reset`
/// - `Reset completed: 2026-11-15 03:00 UTC · Banked reset · plans not stated`
pub fn headline(record: &Record, unconfirmed: bool) -> String {
    let words = LANG.notify();
    let strings = LANG.strings();
    let window = record.schedule_window.map(window_words);
    let (said, when) = match record.kind {
        Kind::Completed => (
            words.completed,
            record.completed_at.or(record.effective_at).map(utc_words),
        ),
        Kind::Scheduled => match record.schedule_state {
            Some(ScheduleState::Fulfilled) => (
                words.fulfilled,
                record.completed_at.map(utc_words).or(window),
            ),
            _ if unconfirmed => (words.unconfirmed, window),
            // Announced; without a window its time was not stated.
            _ => (
                words.announced,
                Some(window.unwrap_or_else(|| strings.state_unknown.to_owned())),
            ),
        },
    };
    match when {
        Some(when) => format!("{said}{}{when} · {}", strings.colon, strings.what(record)),
        None => format!("{said} · {}", strings.what(record)),
    }
}

/// `2026-11-24 18:00 UTC`, or `2026-11-01 07:00 to 2026-11-02 08:00 UTC`.
fn window_words(window: ScheduleWindow) -> String {
    if window.start_at == window.end_at {
        utc_words(window.start_at)
    } else {
        format!(
            "{}{}{} UTC",
            utc_minute(window.start_at),
            LANG.notify().to,
            utc_minute(window.end_at)
        )
    }
}

/// `2026-11-24 18:00 UTC`.
fn utc_words(at: Timestamp) -> String {
    utc_minute(at) + " UTC"
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
