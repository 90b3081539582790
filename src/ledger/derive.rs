//! Folding seeded history and the ledger into the records of a standalone
//! instance, with fulfilment kept consistent in both directions.
//!
//! Fulfilment of a schedule, strongest first: `manual` (a `complete`
//! entry), `link` (an operator's link), `auto` (a completion whose time
//! falls in the schedule window, widened by the tolerance on both sides,
//! unless an operator unlinked that pair). The fulfilled schedule gets
//! `completedAt`, `completionRecordId` and the origin; the completion lists
//! the schedule in `relatedRecordIds`. Seeded history keeps the fulfilment
//! it was seeded with.
//!
//! **Time's arrow.** An automatic match needs the schedule to have been
//! announced, in the window it has now, before the completion was
//! recorded (its `add` or last `move` entry comes before the completion's
//! entry), and the reset not to have happened before the schedule's
//! announcement: a reset cannot be the one a later announcement speaks
//! of, so a schedule announced after a completion starts `pending` and is
//! reminded (docs/decision-records.md, "A completion fulfils only what was
//! announced before it"). Seeded history is older than every ledger entry:
//! a seeded completion never fulfils a recorded schedule. `link` and
//! `complete` are the operator's word and keep their meaning.

use std::collections::{HashMap, HashSet};

use super::entry::{Action, Entry};
use crate::model::{FulfillmentOrigin, Kind, Record, ResetType, Timestamp};
use crate::schedule::evaluate_states;

/// Whether a record is published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordStatus {
    /// Published.
    Active,
    /// Dismissed by this entry: in no filter.
    Dismissed(u64),
    /// The entry that added it was undone by this entry: in no filter.
    Undone(u64),
}

/// A record and where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedRecord {
    /// The record with states evaluated.
    pub record: Record,
    /// Published or not, and why.
    pub status: RecordStatus,
    /// The entry that added it; `None` for seeded history.
    pub added_by: Option<u64>,
    /// The entry that announced its window as it is now (the `add`, or
    /// the last `move` not undone); `None` for seeded history.
    pub announced_by: Option<u64>,
}

/// Everything the ledger says at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Derived {
    /// All records, published or not, seeded first then in entry order.
    pub records: Vec<DerivedRecord>,
    /// The latest successful monitor check.
    pub last_successful_check_at: Option<Timestamp>,
}

impl Derived {
    /// The records to publish.
    pub fn published(&self) -> Vec<Record> {
        self.records
            .iter()
            .filter(|r| r.status == RecordStatus::Active)
            .map(|r| r.record.clone())
            .collect()
    }

    /// The record with this id.
    pub fn get(&self, id: &str) -> Option<&DerivedRecord> {
        self.records.iter().find(|r| r.record.id == id)
    }
}

/// The id of the manual completion recorded by entry `entry`.
pub fn manual_id(entry: u64) -> String {
    format!("manual:entry-{entry}")
}

/// Folds `history` and `entries` at `now`; `tolerance_ms` widens windows for auto matches.
pub fn derive_records(
    history: Vec<Record>,
    entries: &[Entry],
    now: Timestamp,
    tolerance_ms: i64,
) -> Derived {
    let undone: HashMap<u64, u64> = entries
        .iter()
        .filter_map(|e| match e.action {
            Action::Undo { entry } => Some((entry, e.entry)),
            _ => None,
        })
        .collect();
    let mut derived = Derived {
        records: history
            .into_iter()
            .map(|record| DerivedRecord {
                record,
                status: RecordStatus::Active,
                added_by: None,
                announced_by: None,
            })
            .collect(),
        last_successful_check_at: None,
    };
    let mut links: Vec<(String, String, FulfillmentOrigin)> = Vec::new();
    let mut unlinked: HashSet<(String, String)> = HashSet::new();
    for entry in entries {
        let undone_by = undone.get(&entry.entry).copied();
        fold_entry(&mut derived, &mut links, &mut unlinked, entry, undone_by);
    }
    fulfil(&mut derived, &links, &unlinked, tolerance_ms);
    let mut records: Vec<Record> = derived.records.iter().map(|r| r.record.clone()).collect();
    evaluate_states(&mut records, now);
    for (d, record) in derived.records.iter_mut().zip(records) {
        d.record = record;
    }
    derived
}

/// One ledger entry folded into `derived` (`undone_by`: the entry that
/// undid it, if one did); links and unlinks are gathered for [`fulfil`].
fn fold_entry(
    derived: &mut Derived,
    links: &mut Vec<(String, String, FulfillmentOrigin)>,
    unlinked: &mut HashSet<(String, String)>,
    entry: &Entry,
    undone_by: Option<u64>,
) {
    let status = undone_by.map_or(RecordStatus::Active, RecordStatus::Undone);
    match &entry.action {
        Action::Add { record } => {
            let mut record = (**record).clone();
            record.related_record_ids.clear();
            derived.records.push(DerivedRecord {
                record,
                status,
                added_by: Some(entry.entry),
                announced_by: Some(entry.entry),
            });
        }
        Action::Complete {
            id,
            completed_at,
            schedule_ids,
        } => {
            derived.records.push(DerivedRecord {
                record: manual_completion(derived, id, *completed_at, schedule_ids),
                status,
                added_by: Some(entry.entry),
                announced_by: Some(entry.entry),
            });
            if undone_by.is_none() {
                for schedule in schedule_ids {
                    links.push((id.clone(), schedule.clone(), FulfillmentOrigin::Manual));
                }
            }
        }
        _ if undone_by.is_some() => {}
        Action::Link {
            completion_id,
            schedule_id,
        } => {
            unlinked.remove(&(completion_id.clone(), schedule_id.clone()));
            links.push((
                completion_id.clone(),
                schedule_id.clone(),
                FulfillmentOrigin::Link,
            ));
        }
        Action::Unlink {
            completion_id,
            schedule_id,
        } => {
            links.retain(|(c, s, _)| !(c == completion_id && s == schedule_id));
            unlinked.insert((completion_id.clone(), schedule_id.clone()));
        }
        Action::Dismiss { id } => {
            if let Some(r) = derived
                .records
                .iter_mut()
                .find(|r| &r.record.id == id && r.status == RecordStatus::Active)
            {
                r.status = RecordStatus::Dismissed(entry.entry);
            }
        }
        Action::Edit { id, changes } => {
            if let Some(r) = derived.records.iter_mut().find(|r| &r.record.id == id) {
                edit(&mut r.record, changes);
            }
        }
        Action::Move {
            id,
            precision,
            window,
        } => {
            if let Some(r) = derived.records.iter_mut().find(|r| &r.record.id == id) {
                r.record.schedule_precision = Some(*precision);
                r.record.schedule_window = Some(*window);
                // A schedule's time is its window's start.
                r.record.effective_at = Some(window.start_at);
                r.announced_by = Some(entry.entry);
            }
        }
        Action::Undo { .. } | Action::Restore { .. } => {}
        Action::Checked { at } => {
            derived.last_successful_check_at = derived.last_successful_check_at.max(Some(*at));
        }
    }
}

/// The record of a manual completion of `schedule_ids`: its reset type
/// is the union of theirs.
fn manual_completion(
    derived: &Derived,
    id: &str,
    completed_at: Timestamp,
    schedule_ids: &[String],
) -> Record {
    let types: Vec<ResetType> = schedule_ids
        .iter()
        .filter_map(|s| derived.get(s).map(|r| r.record.reset_type))
        .collect();
    Record::manual_completion(id, completed_at, schedule_ids, ResetType::union(&types))
}

/// `changes` applied to `record`; a new time of a completion that was not
/// recorded manually is its completion time too.
fn edit(record: &mut Record, changes: &super::Edit) {
    if let Some(text) = &changes.text {
        record.text = text.clone();
    }
    if let Some(confidence) = changes.confidence {
        record.confidence = confidence;
    }
    if let Some(reset_type) = changes.reset_type {
        record.reset_type = reset_type;
    }
    if let Some(effective_at) = changes.effective_at {
        record.effective_at = Some(effective_at);
        if record.kind == Kind::Completed
            && record.fulfillment_origin != Some(FulfillmentOrigin::Manual)
        {
            record.completed_at = Some(effective_at);
        }
    }
}

/// The strongest explicit fulfilment of each schedule, both sides active:
/// manual beats link; a later entry beats an earlier one.
fn explicit_fulfilments(
    derived: &Derived,
    links: &[(String, String, FulfillmentOrigin)],
) -> HashMap<String, (String, FulfillmentOrigin)> {
    let active = |id: &str| {
        derived
            .get(id)
            .is_some_and(|r| r.status == RecordStatus::Active)
    };
    let mut explicit: HashMap<String, (String, FulfillmentOrigin)> = HashMap::new();
    for (c, s, origin) in links {
        if !(active(c) && active(s)) {
            continue;
        }
        let replace = match explicit.get(s) {
            Some((_, FulfillmentOrigin::Manual)) => *origin == FulfillmentOrigin::Manual,
            _ => true,
        };
        if replace {
            explicit.insert(s.clone(), (c.clone(), *origin));
        }
    }
    explicit
}

/// An active completion not recorded manually, as the matcher sees it.
struct Matchable {
    id: String,
    /// When the reset happened.
    at: Timestamp,
    completed_at: Option<Timestamp>,
    /// The entry that recorded it (`None`: seeded history).
    recorded_by: Option<u64>,
}

impl Matchable {
    /// Whether it may fulfil, by itself, schedule `d` (whose window,
    /// widened by the tolerance, holds it): only a schedule announced in
    /// that window before this completion was recorded, and not after the
    /// reset happened (the module's "Time's arrow").
    fn may_fulfil(&self, d: &DerivedRecord) -> bool {
        let recorded_after = match (d.announced_by, self.recorded_by) {
            (Some(schedule), Some(completion)) => schedule < completion,
            _ => false,
        };
        recorded_after && d.record.announced_at.is_none_or(|a| a <= self.at)
    }
}

/// Active completions not recorded manually, by when they happened.
fn matchable_completions(derived: &Derived) -> Vec<Matchable> {
    let mut v: Vec<_> = derived
        .records
        .iter()
        .filter(|r| {
            r.status == RecordStatus::Active
                && r.record.kind == Kind::Completed
                && r.record.fulfillment_origin != Some(FulfillmentOrigin::Manual)
        })
        .filter_map(|r| {
            completion_time(&r.record).map(|at| Matchable {
                id: r.record.id.clone(),
                at,
                completed_at: r.record.completed_at,
                recorded_by: r.added_by,
            })
        })
        .collect();
    v.sort_by_key(|c| c.at);
    v
}

/// Sets both sides of each (schedule index, completion, origin, completedAt).
fn assign(
    derived: &mut Derived,
    assignments: Vec<(usize, String, FulfillmentOrigin, Option<Timestamp>)>,
) {
    // Ledger schedules start unfulfilled; assignments then set both sides.
    for d in derived.records.iter_mut().filter(|d| d.added_by.is_some()) {
        if d.record.kind == Kind::Scheduled {
            d.record.completed_at = None;
            d.record.completion_record_id = None;
            d.record.fulfillment_origin = None;
        }
    }
    let mut related: HashMap<String, Vec<String>> = HashMap::new();
    for (i, c, origin, at) in assignments {
        let schedule = &mut derived.records[i].record;
        schedule.completed_at = at;
        schedule.completion_record_id = Some(c.clone());
        schedule.fulfillment_origin = Some(origin);
        related.entry(c).or_default().push(schedule.id.clone());
    }
    for d in derived.records.iter_mut().filter(|d| {
        d.record.kind == Kind::Completed
            && d.record.fulfillment_origin != Some(FulfillmentOrigin::Manual)
    }) {
        if let Some(ids) = related.get(&d.record.id) {
            let mut all: Vec<String> = d
                .record
                .related_record_ids
                .iter()
                .cloned()
                .chain(ids.iter().cloned())
                .collect();
            all.sort_by(|a, b| crate::model::compare_ids(a, b));
            all.dedup();
            d.record.related_record_ids = all;
        }
    }
}

/// When a completion happened, for matching.
fn completion_time(r: &Record) -> Option<Timestamp> {
    r.effective_at.or(r.completed_at).or(r.announced_at)
}

/// Sets fulfilment on schedules added through the ledger (and on any
/// schedule an operator linked or completed), and lists schedules on their
/// completions.
fn fulfil(
    derived: &mut Derived,
    links: &[(String, String, FulfillmentOrigin)],
    unlinked: &HashSet<(String, String)>,
    tolerance_ms: i64,
) {
    let explicit = explicit_fulfilments(derived, links);
    let completions = matchable_completions(derived);
    let mut assignments: Vec<(usize, String, FulfillmentOrigin, Option<Timestamp>)> = Vec::new();
    for (i, d) in derived.records.iter().enumerate() {
        let r = &d.record;
        if r.kind != Kind::Scheduled || d.status != RecordStatus::Active {
            continue;
        }
        if let Some((c, origin)) = explicit.get(&r.id) {
            let at = derived
                .get(c)
                .and_then(|c| c.record.completed_at.or(completion_time(&c.record)));
            assignments.push((i, c.clone(), *origin, at));
            continue;
        }
        if d.added_by.is_none() {
            continue; // Seeded history keeps its own fulfilment.
        }
        let Some(window) = r.schedule_window else {
            continue;
        };
        let (from, to) = (
            window.start_at.as_millis() - tolerance_ms,
            window.end_at.as_millis() + tolerance_ms,
        );
        if let Some(c) = completions.iter().find(|c| {
            (from..=to).contains(&c.at.as_millis())
                && c.may_fulfil(d)
                && !unlinked.contains(&(c.id.clone(), r.id.clone()))
        }) {
            assignments.push((
                i,
                c.id.clone(),
                FulfillmentOrigin::Auto,
                c.completed_at.or(Some(c.at)),
            ));
        }
    }
    assign(derived, assignments);
}
