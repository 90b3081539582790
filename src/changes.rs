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
//!
//! **Stories.** One action often changes several records: a completion
//! recorded with the schedules it fulfils, a link (the schedule fulfilled,
//! the completion listing it), a corrected completion time (the completion
//! and every schedule it fulfils). Machine channels get every change; a
//! person is told the *story* once ([`Change::told_with`] names the record
//! whose change tells it): a schedule whose only change is its
//! fulfilment, when the completion that causes it changed in its own right
//! (recorded, withdrawn, its time corrected), and a completion whose only
//! change is the list of schedules it fulfils, when one of those schedules
//! changed. [`Change::fields`] says what an update changed, in the words a
//! message uses.

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

/// What an update changed, by the parts of a record a person knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Field {
    /// `text`.
    Text,
    /// `confidence`.
    Confidence,
    /// `resetType`.
    Type,
    /// `scope`: plans and limits.
    Scope,
    /// `announcedAt`.
    Announced,
    /// `source`.
    Source,
    /// A completion's time (`effectiveAt`, `completedAt`) or a schedule's
    /// `effectiveAt`.
    Time,
    /// A schedule's window or its precision.
    Window,
    /// A schedule's fulfilment: `completedAt`, `completionRecordId`,
    /// `fulfillmentOrigin`, and the state they make.
    Fulfilment,
    /// A completion's `relatedRecordIds`.
    Links,
    /// Anything else (`scheduleBasis`, a state of its own).
    Other,
}

impl Field {
    /// The fields in which `before` and `now` (one record, two versions) differ.
    pub fn between(before: &Record, now: &Record) -> Vec<Field> {
        let schedule = now.kind == Kind::Scheduled;
        let window_changed = before.schedule_window != now.schedule_window
            || before.schedule_precision != now.schedule_precision;
        let mut fields = Vec::new();
        let mut differ = |field: Field, changed: bool| {
            if changed && !fields.contains(&field) {
                fields.push(field);
            }
        };
        differ(Field::Text, before.text != now.text);
        differ(Field::Confidence, before.confidence != now.confidence);
        differ(Field::Type, before.reset_type != now.reset_type);
        differ(Field::Scope, before.scope != now.scope);
        differ(Field::Announced, before.announced_at != now.announced_at);
        differ(Field::Source, before.source != now.source);
        differ(Field::Time, before.effective_at != now.effective_at);
        differ(Field::Window, window_changed);
        let fulfilment = before.completion_record_id != now.completion_record_id
            || before.fulfillment_origin != now.fulfillment_origin
            || (schedule && before.completed_at != now.completed_at);
        differ(Field::Fulfilment, fulfilment);
        differ(
            Field::Time,
            !schedule && before.completed_at != now.completed_at,
        );
        differ(
            Field::Links,
            before.related_record_ids != now.related_record_ids,
        );
        differ(
            Field::Other,
            before.schedule_basis != now.schedule_basis
                || before.kind != now.kind
                || (!fulfilment
                    && !window_changed
                    && before.schedule_state != now.schedule_state
                    && !matches!(
                        (before.schedule_state, now.schedule_state),
                        (
                            Some(ScheduleState::Pending | ScheduleState::Elapsed),
                            Some(ScheduleState::Pending | ScheduleState::Elapsed)
                        )
                    )),
        );
        fields
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
    /// too (the module's "Stories"): a schedule fulfilled by a completion
    /// recorded in the same version is told in the completion's message
    /// ("Reset completed"), not in one of its own. Machine channels get
    /// every change.
    pub told_with: Option<&'a str>,
    /// A completion recorded in this version: the schedules it fulfilled
    /// in it (each told with it), in id order.
    pub fulfils: Vec<&'a Record>,
    /// The record as served before (none for a new record).
    pub previous: Option<&'a Record>,
    /// What an update changed (empty for other transitions).
    pub fields: Vec<Field>,
    /// A completion whose time changed: its time before.
    pub previous_time: Option<Timestamp>,
}

/// Whether a change of `record` (`transition`, changing `fields`) tells
/// people its schedule's window anew: created, moved, or open again (a
/// fulfilment withdrawn). A time event of that schedule that fell due by
/// then is never sent after it ([`crate::remind::Reminder::told_by`]).
pub fn announces_window(transition: Transition, record: &Record, fields: &[Field]) -> bool {
    let open =
        record.kind == Kind::Scheduled && record.schedule_state != Some(ScheduleState::Fulfilled);
    match transition {
        Transition::Created | Transition::Moved => true,
        Transition::Updated => open && fields.contains(&Field::Fulfilment),
        Transition::Fulfilled | Transition::Withdrawn => false,
    }
}

impl Change<'_> {
    /// Whether it tells people its schedule's window anew ([`announces_window`]).
    pub fn announces_window(&self) -> bool {
        announces_window(self.transition, self.record, &self.fields)
    }

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
            previous: None,
            fields: Vec::new(),
            previous_time: None,
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
                previous: Some(record),
                fields: Vec::new(),
                previous_time: None,
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
    tell_stories(&mut changes);
    let told: Vec<(&str, &'a Record)> = changes
        .iter()
        .filter(|c| c.transition == Transition::Fulfilled)
        .filter_map(|c| Some((c.told_with?, c.record)))
        .collect();
    for (completion, schedule) in told {
        if let Some(change) = changes
            .iter_mut()
            .find(|c| c.record.id == completion && c.transition == Transition::Created)
        {
            change.fulfils.push(schedule);
        }
    }
    changes
}

/// Marks the changes a person is told within another's story (the
/// module's "Stories"), each naming the record whose change tells it,
/// resolved to the first change of the chain that is told on its own.
fn tell_stories<'a>(changes: &mut [Change<'a>]) {
    let only = |c: &Change, allowed: &[Field]| {
        c.transition == Transition::Updated
            && !c.fields.is_empty()
            && c.fields.iter().all(|f| allowed.contains(f))
    };
    // A completion that changed in its own right: it tells the schedules
    // whose fulfilment it changed.
    let telling_completion = |c: &Change| {
        c.record.kind == Kind::Completed
            && (c.transition != Transition::Updated || !only(c, &[Field::Links]))
    };
    let position: HashMap<&str, usize> = changes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.record.id.as_str(), i))
        .collect();
    let at = |id: Option<&str>| id.and_then(|id| position.get(id).copied());
    // The change each is told with (an index), the first in the changes'
    // order that tells it.
    let mut told_with: Vec<Option<usize>> = changes
        .iter()
        .map(|c| c.told_with.and_then(|id| position.get(id).copied()))
        .collect();
    for (i, c) in changes.iter().enumerate() {
        if c.told_with.is_some() {
            continue;
        }
        let fulfilment_only =
            c.transition == Transition::Fulfilled || only(c, &[Field::Fulfilment, Field::Other]);
        let candidates: Vec<usize> = if c.record.kind == Kind::Scheduled && fulfilment_only {
            // Its completion, before or now, changed in its own right.
            [
                at(c.record.completion_record_id.as_deref()),
                at(c.previous.and_then(|p| p.completion_record_id.as_deref())),
            ]
            .into_iter()
            .flatten()
            .filter(|&j| telling_completion(&changes[j]))
            .collect()
        } else if c.record.kind == Kind::Completed && only(c, &[Field::Links]) {
            // A schedule it lists, or listed, changed.
            let before = c.previous.map_or(&[][..], |p| &p.related_record_ids[..]);
            c.record
                .related_record_ids
                .iter()
                .chain(before)
                .filter_map(|id| at(Some(id)))
                .filter(|&j| changes[j].record.kind == Kind::Scheduled)
                .collect()
        } else {
            Vec::new()
        };
        told_with[i] = candidates.into_iter().min();
    }
    // To the root of each chain (a completion told with a schedule that is
    // itself told with another completion), and into the changes.
    let roots: Vec<Option<usize>> = (0..changes.len())
        .map(|i| {
            let mut root = told_with[i]?;
            for _ in 0..changes.len() {
                match told_with[root] {
                    Some(next) if next != root && next != i => root = next,
                    _ => break,
                }
            }
            Some(root)
        })
        .collect();
    let ids: Vec<&'a str> = changes
        .iter()
        .map(|c| {
            let record: &'a Record = c.record;
            record.id.as_str()
        })
        .collect();
    for (change, root) in changes.iter_mut().zip(roots) {
        if let Some(root) = root {
            change.told_with = Some(ids[root]);
        }
    }
}

/// The transition of a record served before as `previous` and now as
/// `record` (they differ), or none when only its state turned between
/// `pending` and `elapsed`.
fn transition_of<'a>(
    previous: &'a Record,
    record: &'a Record,
    before: &HashMap<&str, &'a Record>,
    now: &HashMap<&str, &'a Record>,
) -> Option<Change<'a>> {
    let fulfilled = |r: &Record| r.schedule_state == Some(ScheduleState::Fulfilled);
    let fields = Field::between(previous, record);
    let time_of = |r: &Record| r.completed_at.or(r.effective_at);
    let mut change = Change {
        transition: Transition::Updated,
        record,
        previous_window: None,
        completion: None,
        told_with: None,
        fulfils: Vec::new(),
        previous: Some(previous),
        previous_time: (record.kind == Kind::Completed && fields.contains(&Field::Time))
            .then(|| time_of(previous))
            .flatten(),
        fields,
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
