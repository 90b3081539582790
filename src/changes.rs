//! What happened to each record between two published versions: the one
//! derivation every push channel reads (the record stream, the webhook
//! outbox, and through it every ready-made format and e-mail).
//!
//! A pure function of two record lists, by record id across every record,
//! whatever list (`kind` filter) it is in, so every way of publishing (sync,
//! seed, `record`, `publish`, the periodic republish, a rollback) yields the
//! same transitions and every consumer sees the same ones:
//!
//! | transition | event type | when |
//! |---|---|---|
//! | [`Transition::Created`] | `record.created` | a schedule announced, a completion recorded |
//! | [`Transition::Moved`] | `schedule.moved` | a schedule's window changed |
//! | [`Transition::Fulfilled`] | `schedule.fulfilled` | a schedule turned `fulfilled` (naming its completion) |
//! | [`Transition::Withdrawn`] | `record.removed` | a record left every list: undone or dismissed |
//! | [`Transition::Updated`] | `record.updated` | anything else changed (text, confidence, type, links) |
//!
//! A schedule whose served state only turned from `pending` to `elapsed`
//! (its window ended, the API's rule) or back has no transition: what is
//! announced for it is the time event of [`crate::remind`], "not
//! confirmed", once the matcher's tolerance has passed without a
//! completion (docs/decision-records.md, "What is announced").
//!
//! A subscriber's `kind` filter applies to the record ([`Change::concerns`]):
//! `all` hears of every record, `reset_scheduled` of schedules,
//! `reset_completed` of completions. So a fulfilled schedule is
//! `schedule.fulfilled` to everyone, never "removed" from `all`.

use std::collections::HashMap;

use serde::Serialize;

use crate::model::Timestamp;
use crate::model::{compare_ids, Kind, KindFilter, Record, ScheduleState, ScheduleWindow};

/// What happened to one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transition {
    /// A record appeared: a schedule announced, a completion recorded.
    Created,
    /// A schedule's window changed.
    Moved,
    /// A schedule turned `fulfilled`.
    Fulfilled,
    /// A record left every list: undone or dismissed.
    Withdrawn,
    /// Anything else about it changed.
    Updated,
}

/// Every event type of a data change, in the order of a record's life.
pub const EVENT_TYPES: [&str; 5] = [
    "record.created",
    "schedule.moved",
    "schedule.fulfilled",
    "record.updated",
    "record.removed",
];

impl Transition {
    /// The event type.
    pub const fn event_type(self) -> &'static str {
        match self {
            Transition::Created => EVENT_TYPES[0],
            Transition::Moved => EVENT_TYPES[1],
            Transition::Fulfilled => EVENT_TYPES[2],
            Transition::Updated => EVENT_TYPES[3],
            Transition::Withdrawn => EVENT_TYPES[4],
        }
    }

    /// The transition of an event type.
    pub fn of_event_type(event_type: &str) -> Option<Self> {
        [
            Transition::Created,
            Transition::Moved,
            Transition::Fulfilled,
            Transition::Updated,
            Transition::Withdrawn,
        ]
        .into_iter()
        .find(|t| t.event_type() == event_type)
    }
}

/// One record's transition.
#[derive(Clone, Debug, PartialEq)]
pub struct Change<'a> {
    /// What happened.
    pub transition: Transition,
    /// The record as the API serves it now (withdrawn: as last served).
    pub record: &'a Record,
    /// The window it had before (moved).
    pub previous_window: Option<ScheduleWindow>,
    /// The completion that fulfilled it, as served now (fulfilled, when
    /// the schedule names one that is served).
    pub completion: Option<&'a Record>,
    /// The id of the record whose message tells people of this change
    /// too: a schedule fulfilled by a completion recorded in the same
    /// version is told in the completion's message ("Reset completed"),
    /// not in one of its own. Machine channels get both events.
    pub told_with: Option<&'a str>,
    /// A completion recorded in this version: the schedules it fulfilled
    /// in it (each told with it), in id order.
    pub fulfils: Vec<&'a Record>,
}

impl Change<'_> {
    /// Whether a subscriber of `filter` hears of it: the filter applies to
    /// the record's kind.
    pub fn concerns(&self, filter: KindFilter) -> bool {
        concerns(self.record, filter)
    }
}

/// Whether a subscriber of `filter` hears of what happens to `record`:
/// `all` of every record, the others of records of their kind.
pub fn concerns(record: &Record, filter: KindFilter) -> bool {
    match filter {
        KindFilter::All => true,
        KindFilter::Scheduled => record.kind == Kind::Scheduled,
        KindFilter::Completed => record.kind == Kind::Completed,
    }
}

/// The filters a subscriber of which hears of `record`.
pub fn filters_of(record: &Record) -> Vec<String> {
    KindFilter::ALL
        .into_iter()
        .filter(|f| concerns(record, *f))
        .map(|f| f.as_str().to_owned())
        .collect()
}

/// What happened to each record from `old` to `new`, in a stable order: by
/// record id (numeric ids as numbers), so two consumers list them alike.
pub fn transitions<'a>(old: &'a [Record], new: &'a [Record]) -> Vec<Change<'a>> {
    let before: HashMap<&str, &Record> = old.iter().map(|r| (r.id.as_str(), r)).collect();
    let now: HashMap<&str, &Record> = new.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut changes = Vec::new();
    for record in new {
        let change = |transition| Change {
            transition,
            record,
            previous_window: None,
            completion: None,
            told_with: None,
            fulfils: Vec::new(),
        };
        match before.get(record.id.as_str()) {
            None => changes.push(change(Transition::Created)),
            Some(previous) if *previous == record => {}
            Some(previous) => {
                if let Some(change) = transition_of(previous, record, &before, &now) {
                    changes.push(change);
                }
            }
        }
    }
    for record in old {
        if !now.contains_key(record.id.as_str()) {
            changes.push(Change {
                transition: Transition::Withdrawn,
                record,
                previous_window: None,
                completion: None,
                told_with: None,
                fulfils: Vec::new(),
            });
        }
    }
    // By record id, except that a fulfilment follows the completion that
    // fulfilled it: "completed", then "the schedule it fulfils".
    fn anchor<'a>(c: &Change<'a>) -> (&'a str, u8) {
        match (c.transition, c.completion) {
            (Transition::Fulfilled, Some(completion)) => (completion.id.as_str(), 1),
            _ => (c.record.id.as_str(), 0),
        }
    }
    changes.sort_by(|a, b| {
        let (a_anchor, a_rank) = anchor(a);
        let (b_anchor, b_rank) = anchor(b);
        compare_ids(a_anchor, b_anchor)
            .then(a_rank.cmp(&b_rank))
            .then_with(|| compare_ids(&a.record.id, &b.record.id))
    });
    let told: Vec<(&str, &'a Record)> = changes
        .iter()
        .filter_map(|c| Some((c.told_with?, c.record)))
        .collect();
    for (completion, schedule) in told {
        if let Some(change) = changes.iter_mut().find(|c| c.record.id == completion) {
            change.fulfils.push(schedule);
        }
    }
    changes
}

/// The transition of a record served before as `previous` and now as
/// `record` (they differ), or none when only its state turned between
/// `pending` and `elapsed`.
fn transition_of<'a>(
    previous: &Record,
    record: &'a Record,
    before: &HashMap<&str, &Record>,
    now: &HashMap<&str, &'a Record>,
) -> Option<Change<'a>> {
    let fulfilled = |r: &Record| r.schedule_state == Some(ScheduleState::Fulfilled);
    let mut change = Change {
        transition: Transition::Updated,
        record,
        previous_window: None,
        completion: None,
        told_with: None,
        fulfils: Vec::new(),
    };
    if record.kind == Kind::Scheduled && fulfilled(record) && !fulfilled(previous) {
        change.transition = Transition::Fulfilled;
        change.completion = record
            .completion_record_id
            .as_deref()
            .and_then(|id| now.get(id).copied());
        change.told_with = change
            .completion
            .filter(|c| !before.contains_key(c.id.as_str()))
            .map(|c| c.id.as_str());
        return Some(change);
    }
    if record.kind == Kind::Scheduled && record.schedule_window != previous.schedule_window {
        change.transition = Transition::Moved;
        change.previous_window = previous.schedule_window;
        return Some(change);
    }
    let pending_or_elapsed = |r: &Record| {
        matches!(
            r.schedule_state,
            Some(ScheduleState::Pending | ScheduleState::Elapsed)
        )
    };
    if pending_or_elapsed(previous) && pending_or_elapsed(record) {
        let mut same_state = previous.clone();
        same_state.schedule_state = record.schedule_state;
        if same_state == *record {
            return None;
        }
    }
    Some(change)
}

/// The `data` of a data change, on every channel that carries one (the
/// record stream's event, a standard webhook's payload): the record as the
/// API serves it, the snapshot that brought the change and its
/// `generatedAt`; a moved schedule's previous window; a fulfilled
/// schedule's completion.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeData<'a> {
    /// The record (withdrawn: as last served; none for a test event).
    pub record: Option<&'a Record>,
    /// The snapshot sequence that brought the change.
    pub sequence: Option<u64>,
    /// That snapshot's `generatedAt`.
    pub generated_at: Option<Timestamp>,
    /// `schedule.moved`: the window before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_window: Option<ScheduleWindow>,
    /// `schedule.fulfilled`: the completion that fulfilled it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion: Option<&'a Record>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, kind: &str, state: Option<&str>) -> Record {
        let scheduled = kind == "reset_scheduled";
        serde_json::from_value(serde_json::json!({
            "id": id, "kind": kind, "resetType": "global",
            "announcedAt": "2026-11-20T10:00:00.000Z", "effectiveAt": "2026-11-21T12:00:00.000Z",
            "text": "t", "confidence": 0.9, "scope": null,
            "source": {"origin": "x", "postId": id, "handle": "h", "url": format!("https://x.com/h/status/{id}")},
            "schedulePrecision": if scheduled { Some("datetime") } else { None },
            "scheduleBasis": if scheduled { Some("explicit") } else { None },
            "scheduleWindow": if scheduled { Some(serde_json::json!({"startAt": "2026-11-21T12:00:00.000Z", "endAt": "2026-11-21T12:00:00.000Z"})) } else { None },
            "scheduleState": state,
            "completedAt": if scheduled { None } else { Some("2026-11-21T12:00:00.000Z") },
            "completionRecordId": null, "fulfillmentOrigin": null, "relatedRecordIds": []
        }))
        .expect("a valid record")
    }

    fn kinds(changes: &[Change]) -> Vec<(Transition, String)> {
        changes
            .iter()
            .map(|c| (c.transition, c.record.id.clone()))
            .collect()
    }

    #[test]
    fn created_updated_withdrawn_in_id_order_and_an_elapsing_state_is_no_event() {
        let old = vec![
            record("10", "reset_scheduled", Some("pending")),
            record("9", "reset_completed", None),
            record("11", "reset_completed", None),
        ];
        let mut elapsed = record("10", "reset_scheduled", Some("pending"));
        elapsed.schedule_state = Some(ScheduleState::Elapsed);
        let mut edited = record("11", "reset_completed", None);
        edited.text = Some("edited".into());
        let new = vec![elapsed, edited, record("100", "reset_completed", None)];
        assert_eq!(
            kinds(&transitions(&old, &new)),
            [
                (Transition::Withdrawn, "9".to_owned()),
                (Transition::Updated, "11".to_owned()),
                (Transition::Created, "100".to_owned()),
            ]
        );
        assert!(transitions(&new, &new).is_empty(), "no change, no event");
    }

    #[test]
    fn a_fulfilment_is_told_as_such_to_every_list_naming_its_completion() {
        let old = vec![record("10", "reset_scheduled", Some("pending"))];
        let mut fulfilled = record("10", "reset_scheduled", Some("pending"));
        fulfilled.schedule_state = Some(ScheduleState::Fulfilled);
        fulfilled.completion_record_id = Some("11".into());
        let new = vec![fulfilled, record("11", "reset_completed", None)];
        let changes = transitions(&old, &new);
        // The completion first, then the fulfilment it causes.
        assert_eq!(
            kinds(&changes),
            [
                (Transition::Created, "11".to_owned()),
                (Transition::Fulfilled, "10".to_owned())
            ]
        );
        assert_eq!(changes[1].completion.map(|c| c.id.as_str()), Some("11"));
        assert_eq!(
            changes[1].told_with,
            Some("11"),
            "told with its new completion"
        );
        let fulfils: Vec<&str> = changes[0].fulfils.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(fulfils, ["10"]);
        assert!(changes[1].concerns(KindFilter::All));
        assert!(changes[1].concerns(KindFilter::Scheduled));
        assert!(!changes[1].concerns(KindFilter::Completed));
        // A rollback is the other way round: the completion withdrawn,
        // the schedule pending again (changed otherwise).
        assert_eq!(
            kinds(&transitions(&new, &old)),
            [
                (Transition::Updated, "10".to_owned()),
                (Transition::Withdrawn, "11".to_owned())
            ]
        );
    }

    #[test]
    fn a_moved_window_names_the_one_before() {
        let old = vec![record("10", "reset_scheduled", Some("elapsed"))];
        let mut moved = record("10", "reset_scheduled", Some("pending"));
        let before = moved.schedule_window;
        moved.schedule_window = Some(ScheduleWindow {
            start_at: Timestamp::parse("2026-11-22T12:00:00.000Z").unwrap(),
            end_at: Timestamp::parse("2026-11-22T12:00:00.000Z").unwrap(),
        });
        let new = vec![moved];
        let changes = transitions(&old, &new);
        assert_eq!(kinds(&changes), [(Transition::Moved, "10".to_owned())]);
        assert_eq!(changes[0].previous_window, before);
    }
}
