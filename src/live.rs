//! Live changes of the served view: what the record stream (SSE) sends.
//!
//! Every swap of the served view ([`crate::reload::ViewHandle::store`]) is
//! broadcast once, as a [`ViewSwap`] that already holds the events of each
//! `kind` filter, computed once by [`crate::changes::transitions`] from the
//! view served before to the one served now (a reload can skip sequences,
//! and a rollback goes backwards, so consecutive sequences are never
//! assumed). A stream then only picks its filter's events: a thousand
//! clients cost one derivation per publish, not a thousand.
//!
//! An event's `id` names the version it brought the client to, as
//! `<sequence>-<tag>` ([`event_id`]): the tag is made from the version's
//! records and `generatedAt`, so a sequence issued again after a restore
//! or a re-seed never repeats an id of a different version, and a client
//! that resumes from such an id is told to resync.
//!
//! Views are numbered by a *generation* (one per swap of this server), which
//! orders them even when sequences repeat (a new `dataSource` alone) or go
//! back (a rollback). A stream remembers the generation it is at: a swap
//! from that generation is applied, an older one (already seen when the
//! stream read the view) is skipped, and a gap (a receiver that lagged
//! behind the broadcast's buffer) becomes a `resync` event, never unbounded
//! buffering.
//!
//! Time events are not swaps: each stream is told of unconfirmed schedules
//! (`schedule.elapsed`), and one that asked for reminders (`remind=`) of
//! those too, at the instants [`crate::remind`] names, by the server's
//! clock ([`reminder`] makes the event).
//!
//! Pure apart from the broadcast channel: no HTTP, no I/O, no clock.

use std::sync::Arc;

use serde_json::json;

use crate::changes::{transitions, Change, ChangeData};
use crate::model::KindFilter;
use crate::model::Record;
use crate::query::PublishedView;

/// Swaps a slow stream may fall behind before it is told to resync.
pub const BROADCAST_CAPACITY: usize = 64;

/// One event of the record stream, ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveEvent {
    /// `id:`: the version the change brought ([`event_id`]; none for a
    /// time event, or a `ready` of a resumed stream, which must not move
    /// the client's place).
    pub id: Option<String>,
    /// `event:`: `ready`, `resync`, a change
    /// ([`crate::changes::EVENT_TYPES`]) or a time event
    /// ([`crate::remind::ReminderKind`]).
    pub event: &'static str,
    /// `data:`: one line of JSON.
    pub data: String,
}

/// One swap of the served view, with the events each filter sees.
#[derive(Debug)]
pub struct ViewSwap {
    /// The generation of the view served before (0: none).
    pub from: u64,
    /// The generation of the view served now.
    pub to: u64,
    /// The events, per filter ([`KindFilter::index`]), in the diff's order.
    pub events: [Vec<LiveEvent>; 3],
    /// The schedules whose window it announced (created, or moved): their
    /// time events due by now were told by it
    /// ([`crate::remind::Reminder::told_by`]).
    pub announced: Vec<String>,
}

impl ViewSwap {
    /// The swap from `old` (generation `from`; `None` before the first view)
    /// to `new` (generation `to`).
    pub fn between(old: Option<&PublishedView>, from: u64, new: &PublishedView, to: u64) -> Self {
        let changes = match old {
            Some(old) if old.same_records(new) => Vec::new(),
            Some(old) => transitions(old.records(), new.records()),
            None => transitions(&[], new.records()),
        };
        let events = KindFilter::ALL.map(|filter| events_of(&changes, new, filter));
        let announced = announced_of(&changes);
        Self {
            from,
            to,
            events,
            announced,
        }
    }
}

/// The change events from `old` records to `new` that concern a
/// subscriber of `filter`, each carrying [`ChangeData`]: the record as the
/// API serves it (withdrawn: as last served), `new`'s sequence and its
/// `generatedAt`, and what the transition names (the window before a
/// move, the completion of a fulfilment).
pub fn change_events(old: &[Record], new: &PublishedView, filter: KindFilter) -> Vec<LiveEvent> {
    events_of(&transitions(old, new.records()), new, filter)
}

/// The events of `changes` (to `new`) that concern a subscriber of `filter`.
fn events_of(changes: &[Change<'_>], new: &PublishedView, filter: KindFilter) -> Vec<LiveEvent> {
    let id = event_id(new);
    changes
        .iter()
        .filter(|change| change.concerns(filter))
        .map(|change| LiveEvent {
            id: Some(id.clone()),
            event: change.transition.event_type(),
            data: serde_json::to_string(&ChangeData {
                record: Some(change.record),
                sequence: Some(new.sequence()),
                generated_at: Some(new.generated_at()),
                previous_window: change.previous_window,
                completion: change.completion,
            })
            .expect("a change serialises"),
        })
        .collect()
}

/// The schedules whose window `changes` announce (created, moved, or open
/// again).
fn announced_of(changes: &[Change<'_>]) -> Vec<String> {
    changes
        .iter()
        .filter(|c| c.announces_window())
        .map(|c| c.record.id.clone())
        .collect()
}

/// The schedules whose window was announced from `old` records to `new`.
pub fn announced(old: &[Record], new: &PublishedView) -> Vec<String> {
    announced_of(&transitions(old, new.records()))
}

/// The `id:` of the events that bring a client to `view`:
/// `<sequence>-<tag>`, the tag the first 48 bits of a SHA-256 of the
/// version's records and `generatedAt`, in hex.
pub fn event_id(view: &PublishedView) -> String {
    format!("{}-{}", view.sequence(), view.version_tag())
}

/// A client's `Last-Event-ID`: the sequence it names, and the tag when it
/// has one (an id of a release before tags is a bare sequence). A time
/// event's id adds `~` and the instant it fell due ([`reminder`]); see
/// [`parse_reminded`].
pub fn parse_event_id(id: &str) -> Option<(u64, Option<&str>)> {
    let id = id.trim();
    let id = id.split_once('~').map_or(id, |(place, _)| place);
    let (sequence, tag) = match id.split_once('-') {
        Some((sequence, tag)) => (sequence, Some(tag)),
        None => (id, None),
    };
    Some((sequence.parse().ok()?, tag))
}

/// The instant the last time event a client was sent fell due, when its
/// `Last-Event-ID` is a time event's id.
pub fn parse_reminded(id: &str) -> Option<crate::model::Timestamp> {
    let (_, millis) = id.trim().split_once('~')?;
    millis
        .parse::<i64>()
        .ok()
        .map(crate::model::Timestamp::from_millis)
}

/// The first event of every stream: the current sequence and the record
/// `/records/latest?kind=` would return (or null). `resumed`: the client
/// sent `Last-Event-ID`, so the event carries no id (its place moves only
/// with the catch-up events that follow).
pub fn ready(view: &PublishedView, filter: KindFilter, resumed: bool) -> LiveEvent {
    let latest = view.latest(filter).unwrap_or("null");
    LiveEvent {
        id: (!resumed).then(|| event_id(view)),
        event: "ready",
        data: format!(
            "{{\"sequence\":{},\"generatedAt\":\"{}\",\"latest\":{latest}}}",
            view.sequence(),
            view.generated_at()
        ),
    }
}

/// A reminder of `view`'s record ([`crate::remind`]), the data every
/// channel sends. Its `id` keeps the client's place in the snapshot
/// sequence (`place`, the id of the last change it was sent) and adds the
/// instant it fell due (`<place>~<milliseconds>`), so a client that
/// reconnects is sent the time events due after it that are still within
/// their grace, and none twice.
pub fn reminder(
    reminder: &crate::remind::Reminder<'_>,
    view: &PublishedView,
    place: Option<&str>,
) -> LiveEvent {
    LiveEvent {
        id: place.map(|place| format!("{place}~{}", reminder.due_at.as_millis())),
        event: reminder.kind.event_type(),
        data: serde_json::to_string(&crate::remind::ReminderData {
            record: reminder.record,
            sequence: view.sequence(),
            generated_at: view.generated_at(),
            lead_minutes: reminder.lead_minutes,
            at: reminder.at,
        })
        .expect("a reminder serialises"),
    }
}

/// Tells a client it missed changes it cannot be given (its snapshot is no
/// longer on disk, or it fell behind): refetch, then go on from `view`.
pub fn resync(view: &PublishedView, why: &str) -> LiveEvent {
    LiveEvent {
        id: Some(event_id(view)),
        event: "resync",
        data:
            json!({"sequence": view.sequence(), "generatedAt": view.generated_at(), "reason": why})
                .to_string(),
    }
}

/// What a stream does with one broadcast swap, given the generation it is at.
#[derive(Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// Already seen (the stream read a view at or after this swap): nothing.
    Skip,
    /// The next swap: send these events and move to `to`.
    Apply(&'a [LiveEvent]),
    /// A swap was missed: resync.
    Gap,
}

/// The step for `swap` of a stream at generation `at`, filtered by `filter`.
pub fn step(swap: &ViewSwap, at: u64, filter: KindFilter) -> Step<'_> {
    if swap.to <= at {
        Step::Skip
    } else if swap.from == at {
        Step::Apply(&swap.events[filter.index()])
    } else {
        Step::Gap
    }
}

/// The broadcast of swaps, shared by the view handle (sender) and streams.
#[derive(Debug)]
pub struct LiveChanges {
    sender: tokio::sync::broadcast::Sender<Arc<ViewSwap>>,
}

impl Default for LiveChanges {
    fn default() -> Self {
        Self {
            sender: tokio::sync::broadcast::channel(BROADCAST_CAPACITY).0,
        }
    }
}

impl LiveChanges {
    /// A receiver of every swap sent from now on. Subscribe *before*
    /// reading the current view, so no swap falls between the two.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<ViewSwap>> {
        self.sender.subscribe()
    }

    /// Whether any stream listens (no listener: no diff is computed).
    pub fn has_listeners(&self) -> bool {
        self.sender.receiver_count() > 0
    }

    /// Sends `swap` to every stream.
    pub fn send(&self, swap: ViewSwap) {
        let _ = self.sender.send(Arc::new(swap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::Transition;

    fn swap(from: u64, to: u64) -> ViewSwap {
        let event = LiveEvent {
            id: Some(to.to_string()),
            event: Transition::Created.event_type(),
            data: "{}".into(),
        };
        ViewSwap {
            from,
            to,
            events: [vec![event], Vec::new(), Vec::new()],
            announced: Vec::new(),
        }
    }

    #[test]
    fn an_event_id_names_a_sequence_and_its_tag_and_a_bare_sequence_still_reads() {
        assert_eq!(
            parse_event_id("12-0a1b2c3d4e5f"),
            Some((12, Some("0a1b2c3d4e5f")))
        );
        assert_eq!(parse_event_id(" 12 "), Some((12, None)));
        assert_eq!(parse_event_id("x-1"), None);
        assert_eq!(parse_event_id(""), None);
    }

    #[test]
    fn a_stream_applies_the_next_swap_skips_seen_ones_and_resyncs_on_a_gap() {
        assert_eq!(step(&swap(3, 4), 4, KindFilter::All), Step::Skip);
        assert_eq!(step(&swap(2, 3), 4, KindFilter::All), Step::Skip);
        assert!(matches!(step(&swap(4, 5), 4, KindFilter::All), Step::Apply(e) if e.len() == 1));
        assert_eq!(
            step(&swap(4, 5), 4, KindFilter::Scheduled),
            Step::Apply(&[])
        );
        assert_eq!(step(&swap(5, 6), 4, KindFilter::All), Step::Gap);
    }
}
