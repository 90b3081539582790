//! Converting the public status feed into records (upstream-feed.md,
//! "Converting the feed into records"), rule by rule.
//!
//! A record that cannot be converted is reported (where it was, its post id,
//! why) and skipped; the rest still publish. A document that is not this
//! feed at all is refused whole.

use std::collections::{HashMap, HashSet};
use std::fmt;

use chrono::{NaiveTime, Timelike};
use chrono_tz::America::Los_Angeles;
use serde_json::Value;

use super::wire::{
    Feed, FeedEvent, FeedWindow, FulfilledSchedule, HeatmapSource, ManualCompletion,
};
use crate::document::DocumentError;
use crate::model::validate::{id_scheme, validate_records, IdScheme};
use crate::model::UpstreamMonitor;
use crate::model::{
    FulfillmentOrigin, Kind, Origin, Record, ResetType, ScheduleBasis, SchedulePrecision,
    ScheduleState, ScheduleWindow, Source, Timestamp,
};
use crate::schedule::schedule_state_at;

/// A feed item that yields no record, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRecord {
    /// Where it is in the feed (`events[3]`, `resetTimeline.fulfilledSchedules[0].schedule`).
    pub location: String,
    /// Its post id, when it has one.
    pub post_id: Option<String>,
    /// Why it was skipped.
    pub reason: String,
}

/// Why a feed item yields no record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    /// The item does not have the shape of its kind (`event`, `heatmap source`, …).
    #[error("unreadable {what}: {why}")]
    Unreadable {
        /// What the item should be.
        what: &'static str,
        /// The parser's words.
        why: String,
    },
    /// Another item already gave this id.
    #[error("duplicate id {0:?}: an earlier item has the same id; this later copy is dropped")]
    Duplicate(String),
    /// The record breaks a rule of the model.
    #[error("{field}: {problem}")]
    Invalid {
        /// The field.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// An event kind this version does not know.
    #[error("unknown event kind {0:?}")]
    UnknownKind(String),
    /// A reset type this version does not know.
    #[error("unknown resetType {0:?}")]
    UnknownResetType(String),
    /// A schedule precision this version does not know.
    #[error("unknown schedulePrecision {0:?}")]
    UnknownPrecision(String),
    /// A schedule basis this version does not know.
    #[error("unknown scheduleBasis {0:?}")]
    UnknownBasis(String),
    /// A schedule without a time.
    #[error("a schedule with no effectiveAt and no window")]
    NoScheduleTime,
    /// A post id that is neither numeric nor `op_…` (heatmap items: numeric only).
    #[error("post id {id:?} follows no known id scheme ({expected})")]
    UnknownIdScheme {
        /// The id.
        id: String,
        /// The schemes the item may use.
        expected: &'static str,
    },
}

impl fmt::Display for SkippedRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.post_id {
            Some(id) => write!(f, "{} (post {id}): {}", self.location, self.reason),
            None => write!(f, "{}: {}", self.location, self.reason),
        }
    }
}

/// The records a feed yields at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The feed's `generatedAt`.
    pub generated_at: Timestamp,
    /// The feed's `lastSuccessfulCheckAt`.
    pub last_successful_check_at: Option<Timestamp>,
    /// The feed's own monitor status.
    pub monitor: Option<UpstreamMonitor>,
    /// The records, states evaluated at `now`.
    pub records: Vec<Record>,
    /// What could not be converted.
    pub skipped: Vec<SkippedRecord>,
}

/// A schedule's fulfilment, from `fulfilledSchedules` or a manual completion.
#[derive(Debug, Clone)]
struct Fulfilment {
    completed_at: Option<Timestamp>,
    completion_id: Option<String>,
    origin: FulfillmentOrigin,
}

/// One candidate event, de-duplicated by post id.
#[derive(Debug, Clone)]
struct Candidate {
    event: FeedEvent,
    location: String,
    window: Option<FeedWindow>,
}

/// Converts a parsed feed document at `now`.
pub fn convert_feed(value: &Value, now: Timestamp) -> Result<Converted, DocumentError> {
    let feed: Feed =
        serde_path_to_error::deserialize(value).map_err(|e| DocumentError::Document {
            field: if e.path().to_string() == "." {
                "(feed)".into()
            } else {
                e.path().to_string()
            },
            problem: e.inner().to_string(),
        })?;
    if feed.schema_version != 1 {
        return Err(DocumentError::Document {
            field: "schemaVersion".into(),
            problem: format!(
                "unsupported version {} (only 1 is known)",
                feed.schema_version
            ),
        });
    }
    let mut c = Converter::default();
    let timeline = feed.reset_timeline.clone().unwrap_or_default();
    for (i, v) in feed.events.iter().enumerate() {
        c.add_event(v, format!("events[{i}]"), None);
    }
    for (i, v) in feed.grace_schedules.iter().enumerate() {
        c.add_event(v, format!("graceSchedules[{i}]"), None);
    }
    if let Some(next) = timeline.next_schedule.as_ref().filter(|v| !v.is_null()) {
        // Both shapes are seen: an event, or {event, window}.
        match next.get("event") {
            Some(event) => {
                let window = next
                    .get("window")
                    .and_then(|w| serde_json::from_value(w.clone()).ok());
                c.add_event(event, "resetTimeline.nextSchedule.event".into(), window);
            }
            None => c.add_event(next, "resetTimeline.nextSchedule".into(), None),
        }
    }
    for (i, v) in timeline.fulfilled_schedules.iter().enumerate() {
        let location = format!("resetTimeline.fulfilledSchedules[{i}]");
        match serde_json::from_value::<FulfilledSchedule>(v.clone()) {
            Ok(entry) => {
                let post_id = entry
                    .schedule
                    .pointer("/source/postId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                c.add_event(
                    &entry.schedule,
                    format!("{location}.schedule"),
                    entry.window,
                );
                if let Some(post_id) = post_id {
                    let origin = match entry
                        .fulfillment_origin
                        .as_deref()
                        .and_then(FulfillmentOrigin::parse)
                    {
                        Some(origin) => origin,
                        None => FulfillmentOrigin::Auto,
                    };
                    c.fulfilled.insert(
                        post_id,
                        Fulfilment {
                            completed_at: entry.completed_at,
                            completion_id: entry.completion_post_id,
                            origin,
                        },
                    );
                }
            }
            Err(e) => c.skip(
                location,
                None,
                SkipReason::Unreadable {
                    what: "fulfilled schedule",
                    why: e.to_string(),
                },
            ),
        }
    }
    let mut manual = Vec::new();
    for (i, v) in timeline.manual_completions.iter().enumerate() {
        let location = format!("resetTimeline.manualCompletions[{i}]");
        match serde_json::from_value::<ManualCompletion>(v.clone()) {
            Ok(entry) => {
                for (j, schedule) in entry.schedules.iter().enumerate() {
                    c.add_event(schedule, format!("{location}.schedules[{j}]"), None);
                }
                for post_id in &entry.schedule_post_ids {
                    c.fulfilled.entry(post_id.clone()).or_insert(Fulfilment {
                        completed_at: Some(entry.completed_at),
                        completion_id: Some(entry.id.clone()),
                        origin: FulfillmentOrigin::Manual,
                    });
                }
                manual.push((location, entry));
            }
            Err(e) => c.skip(
                location,
                v.get("id").and_then(Value::as_str).map(str::to_owned),
                SkipReason::Unreadable {
                    what: "manual completion",
                    why: e.to_string(),
                },
            ),
        }
    }
    let suppressed: HashSet<String> = timeline.suppressed_post_ids.iter().cloned().collect();
    let mut records = c.build_records(&suppressed, now);
    for (location, entry) in &manual {
        let types: Vec<ResetType> = entry
            .schedule_post_ids
            .iter()
            .filter_map(|id| {
                c.candidates
                    .get(c.index_of(id)?)
                    .and_then(|cand| reset_type_of(&cand.event).ok())
            })
            .collect();
        let record = manual_record(entry, ResetType::union(&types));
        c.push_checked(
            &mut records,
            record,
            location.clone(),
            Some(entry.id.clone()),
        );
    }
    // Heatmap sources not otherwise known: heatmap-only history.
    let known: HashSet<String> = c
        .candidates
        .iter()
        .map(|cand| cand.event.source.post_id.clone())
        .collect();
    let mut heatmap_seen = HashSet::new();
    for (d, day) in feed.heatmap.iter().flat_map(|h| h.days.iter()).enumerate() {
        for (s, v) in day.sources.iter().enumerate() {
            let location = format!("heatmap.days[{d}].sources[{s}]");
            let source: HeatmapSource = match serde_json::from_value(v.clone()) {
                Ok(source) => source,
                Err(e) => {
                    c.skip(
                        location,
                        None,
                        SkipReason::Unreadable {
                            what: "heatmap source",
                            why: e.to_string(),
                        },
                    );
                    continue;
                }
            };
            if known.contains(&source.post_id)
                || suppressed.contains(&source.post_id)
                || !heatmap_seen.insert(source.post_id.clone())
                || source
                    .kind
                    .as_deref()
                    .is_some_and(|k| k != "reset_completed")
            {
                continue;
            }
            match heatmap_record(&source) {
                Ok(record) => {
                    c.push_checked(&mut records, record, location, Some(source.post_id.clone()))
                }
                Err(reason) => c.skip(location, Some(source.post_id.clone()), reason),
            }
        }
    }
    link_completions(&mut records, &c.fulfilled);
    Ok(Converted {
        generated_at: feed.generated_at,
        last_successful_check_at: feed.last_successful_check_at,
        monitor: feed.monitor.map(|m| UpstreamMonitor {
            status: m.status,
            error_code: m.error_code,
        }),
        records,
        skipped: c.skipped,
    })
}

#[derive(Default)]
struct Converter {
    candidates: Vec<Candidate>,
    by_post_id: HashMap<String, usize>,
    fulfilled: HashMap<String, Fulfilment>,
    skipped: Vec<SkippedRecord>,
    /// Ids of the records kept so far: a later item with the same id is dropped.
    kept: HashSet<String>,
}

impl Converter {
    fn index_of(&self, post_id: &str) -> Option<usize> {
        self.by_post_id.get(post_id).copied()
    }

    fn skip(&mut self, location: String, post_id: Option<String>, reason: SkipReason) {
        self.skipped.push(SkippedRecord {
            location,
            post_id,
            reason: reason.to_string(),
        });
    }

    /// Adds one event; a duplicate post id keeps the most complete copy (and any known window).
    fn add_event(&mut self, value: &Value, location: String, window: Option<FeedWindow>) {
        let event: FeedEvent = match serde_json::from_value(value.clone()) {
            Ok(event) => event,
            Err(e) => {
                let post_id = value
                    .pointer("/source/postId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                return self.skip(
                    location,
                    post_id,
                    SkipReason::Unreadable {
                        what: "event",
                        why: e.to_string(),
                    },
                );
            }
        };
        match self.by_post_id.get(&event.source.post_id) {
            Some(&at) => {
                let existing = &mut self.candidates[at];
                let window = window.or(existing.window);
                if event.completeness() > existing.event.completeness() {
                    *existing = Candidate {
                        event,
                        location,
                        window,
                    };
                } else {
                    existing.window = window;
                }
            }
            None => {
                self.by_post_id
                    .insert(event.source.post_id.clone(), self.candidates.len());
                self.candidates.push(Candidate {
                    event,
                    location,
                    window,
                });
            }
        }
    }

    /// Validates one record on its own; a broken one, or a later copy of
    /// an id already kept (a feed listing one manual completion twice),
    /// is reported and skipped.
    fn push_checked(
        &mut self,
        records: &mut Vec<Record>,
        record: Record,
        location: String,
        post_id: Option<String>,
    ) {
        if self.kept.contains(&record.id) {
            let why = SkipReason::Duplicate(record.id);
            return self.skip(location, post_id, why);
        }
        match validate_records(std::slice::from_ref(&record)) {
            Ok(()) => {
                self.kept.insert(record.id.clone());
                records.push(record);
            }
            Err(e) => self.skip(
                location,
                post_id,
                SkipReason::Invalid {
                    field: e.field.to_string(),
                    problem: e.problem.to_string(),
                },
            ),
        }
    }

    fn build_records(&mut self, suppressed: &HashSet<String>, now: Timestamp) -> Vec<Record> {
        let mut records = Vec::new();
        for cand in self.candidates.clone() {
            let post_id = cand.event.source.post_id.clone();
            let kind = match cand.event.kind.as_str() {
                "reset_completed" => Kind::Completed,
                "reset_scheduled" => Kind::Scheduled,
                // Rule 6: no record.
                "banked_reset" | "limit_increase" | "uncertain" => continue,
                other => {
                    self.skip(
                        cand.location,
                        Some(post_id),
                        SkipReason::UnknownKind(other.to_owned()),
                    );
                    continue;
                }
            };
            let fulfilment = self.fulfilled.get(&post_id).cloned();
            // Rule 5: a suppressed post is dismissed unless it is a fulfilled schedule.
            if suppressed.contains(&post_id) && !(kind == Kind::Scheduled && fulfilment.is_some()) {
                continue;
            }
            let built = match kind {
                Kind::Completed => completion_record(&cand.event),
                Kind::Scheduled => schedule_record(&cand, fulfilment.as_ref(), now),
            };
            match built {
                Ok(record) => self.push_checked(&mut records, record, cand.location, Some(post_id)),
                Err(reason) => self.skip(cand.location, Some(post_id), reason),
            }
        }
        records
    }
}

fn reset_type_of(event: &FeedEvent) -> Result<ResetType, SkipReason> {
    match event.reset_type.as_deref() {
        None => Ok(ResetType::Global),
        Some(text) => {
            ResetType::parse(text).ok_or_else(|| SkipReason::UnknownResetType(text.to_owned()))
        }
    }
}

/// The record's id and source from the event's post id (numeric or `op_…`).
fn id_and_source(event: &FeedEvent) -> Result<(String, Source), SkipReason> {
    let id = event.source.post_id.clone();
    match id_scheme(&id) {
        Some(IdScheme::Post) if !id.starts_with("seed:") => {
            let operator = event.source.origin.as_deref() == Some("operator");
            let source = if operator {
                Source {
                    origin: Origin::Operator,
                    post_id: Some(id.clone()),
                    handle: None,
                    url: None,
                }
            } else {
                Source {
                    origin: Origin::X,
                    post_id: Some(id.clone()),
                    handle: event.source.handle.clone(),
                    url: event.source.url.clone(),
                }
            };
            Ok((id, source))
        }
        Some(IdScheme::Operator) if !id.starts_with("seed:") => {
            let source = Source::operator_note(&id);
            Ok((id, source))
        }
        _ => Err(SkipReason::UnknownIdScheme {
            id,
            expected: "numeric or op_…",
        }),
    }
}

/// Rule 1.
fn completion_record(event: &FeedEvent) -> Result<Record, SkipReason> {
    let (id, source) = id_and_source(event)?;
    Ok(Record {
        id,
        kind: Kind::Completed,
        reset_type: reset_type_of(event)?,
        announced_at: event.announced_at,
        effective_at: event.effective_at,
        text: event.text.clone(),
        confidence: event.confidence,
        scope: event.scope.clone(),
        source,
        schedule_precision: None,
        schedule_basis: None,
        schedule_window: None,
        schedule_state: None,
        completed_at: event.effective_at.or(event.announced_at),
        completion_record_id: None,
        fulfillment_origin: None,
        related_record_ids: Vec::new(),
    })
}

/// Rules 2 and 3.
fn schedule_record(
    cand: &Candidate,
    fulfilment: Option<&Fulfilment>,
    now: Timestamp,
) -> Result<Record, SkipReason> {
    let event = &cand.event;
    let (id, source) = id_and_source(event)?;
    let precision = match event.schedule_precision.as_deref() {
        Some(text) => SchedulePrecision::parse(text)
            .ok_or_else(|| SkipReason::UnknownPrecision(text.to_owned()))?,
        None => match event.effective_at {
            Some(at) if is_los_angeles_midnight(at) => SchedulePrecision::Date,
            _ => SchedulePrecision::Datetime,
        },
    };
    let basis = match event.schedule_basis.as_deref() {
        Some(text) => {
            ScheduleBasis::parse(text).ok_or_else(|| SkipReason::UnknownBasis(text.to_owned()))?
        }
        None => ScheduleBasis::Explicit,
    };
    let window = match (cand.window, event.effective_at) {
        (Some(w), _) => ScheduleWindow {
            start_at: w.start_at,
            end_at: w.end_at,
        },
        (None, Some(at)) if precision == SchedulePrecision::Date => los_angeles_day(at),
        (None, Some(at)) => ScheduleWindow {
            start_at: at,
            end_at: at,
        },
        (None, None) => return Err(SkipReason::NoScheduleTime),
    };
    let mut record = Record {
        id,
        kind: Kind::Scheduled,
        reset_type: reset_type_of(event)?,
        announced_at: event.announced_at,
        effective_at: event.effective_at,
        text: event.text.clone(),
        confidence: event.confidence,
        scope: event.scope.clone(),
        source,
        schedule_precision: Some(precision),
        schedule_basis: Some(basis),
        schedule_window: Some(window),
        schedule_state: None,
        completed_at: None,
        completion_record_id: None,
        fulfillment_origin: None,
        related_record_ids: Vec::new(),
    };
    if let Some(f) = fulfilment.filter(|f| f.completed_at.is_some()) {
        record.completed_at = f.completed_at;
        record.completion_record_id = f.completion_id.clone();
        record.fulfillment_origin = Some(f.origin);
    }
    record.schedule_state = Some(schedule_state_at(&record, now));
    Ok(record)
}

/// Rule 4: the shape of spec 2.5.
fn manual_record(entry: &ManualCompletion, reset_type: ResetType) -> Record {
    Record::manual_completion(
        &entry.id,
        entry.completed_at,
        &entry.schedule_post_ids,
        reset_type,
    )
}

/// Rule 7: heatmap-only history.
fn heatmap_record(source: &HeatmapSource) -> Result<Record, SkipReason> {
    let id = source.post_id.clone();
    if id_scheme(&id) != Some(IdScheme::Post) || id.starts_with("seed:") {
        return Err(SkipReason::UnknownIdScheme {
            id,
            expected: "numeric",
        });
    }
    // The handle is the first path segment of https://x.com/HANDLE/status/ID.
    let handle = source
        .url
        .as_deref()
        .and_then(|u| u.split("://").nth(1))
        .and_then(|rest| rest.split('/').nth(1))
        .filter(|h| !h.is_empty())
        .map(str::to_owned);
    let reset_type = match source.reset_type.as_deref() {
        None => ResetType::Global,
        Some(text) => {
            ResetType::parse(text).ok_or_else(|| SkipReason::UnknownResetType(text.to_owned()))?
        }
    };
    Ok(Record {
        id: id.clone(),
        kind: Kind::Completed,
        reset_type,
        announced_at: source.announced_at,
        effective_at: source.effective_at,
        text: source.text.clone(),
        confidence: None,
        scope: None,
        source: Source {
            origin: Origin::X,
            post_id: Some(id),
            handle,
            url: source.url.clone(),
        },
        schedule_precision: None,
        schedule_basis: None,
        schedule_window: None,
        schedule_state: None,
        completed_at: source.effective_at.or(source.announced_at),
        completion_record_id: None,
        fulfillment_origin: None,
        related_record_ids: Vec::new(),
    })
}

/// Completions list the schedules whose fulfilment names them (rule 1).
fn link_completions(records: &mut [Record], fulfilled: &HashMap<String, Fulfilment>) {
    let schedule_ids: HashSet<String> = records
        .iter()
        .filter(|r| r.kind == Kind::Scheduled && r.schedule_state == Some(ScheduleState::Fulfilled))
        .map(|r| r.id.clone())
        .collect();
    let mut by_completion: HashMap<&str, Vec<String>> = HashMap::new();
    for (schedule, f) in fulfilled {
        if let (Some(completion), true) =
            (f.completion_id.as_deref(), schedule_ids.contains(schedule))
        {
            if f.origin != FulfillmentOrigin::Manual {
                by_completion
                    .entry(completion)
                    .or_default()
                    .push(schedule.clone());
            }
        }
    }
    for record in records.iter_mut().filter(|r| {
        r.kind == Kind::Completed && r.fulfillment_origin != Some(FulfillmentOrigin::Manual)
    }) {
        if let Some(ids) = by_completion.get(record.id.as_str()) {
            let mut ids = ids.clone();
            ids.sort_by(|a, b| crate::model::compare_ids(a, b));
            record.related_record_ids = ids;
        }
    }
}

fn is_los_angeles_midnight(at: Timestamp) -> bool {
    let local = at.to_datetime().with_timezone(&Los_Angeles);
    local.time() == NaiveTime::MIN && local.nanosecond() == 0
}

/// The America/Los_Angeles civil day holding `at`, as a UTC window
/// (23 or 25 hours long on daylight-saving days).
pub fn los_angeles_day(at: Timestamp) -> ScheduleWindow {
    crate::civil::civil_day_of(at, Los_Angeles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn los_angeles_days_across_daylight_saving() {
        // Summer (PDT, UTC-7).
        let w = los_angeles_day(t("2026-08-10T15:00:00.000Z"));
        assert_eq!(
            (w.start_at.to_string(), w.end_at.to_string()),
            (
                "2026-08-10T07:00:00.000Z".into(),
                "2026-08-11T07:00:00.000Z".into()
            )
        );
        // 2026-11-01: PDT → PST, a 25-hour day.
        let w = los_angeles_day(t("2026-11-01T12:00:00.000Z"));
        assert_eq!(
            (w.start_at.to_string(), w.end_at.to_string()),
            (
                "2026-11-01T07:00:00.000Z".into(),
                "2026-11-02T08:00:00.000Z".into()
            )
        );
        // 2026-03-08: PST → PDT, a 23-hour day.
        let w = los_angeles_day(t("2026-03-08T12:00:00.000Z"));
        assert_eq!(
            (w.start_at.to_string(), w.end_at.to_string()),
            (
                "2026-03-08T08:00:00.000Z".into(),
                "2026-03-09T07:00:00.000Z".into()
            )
        );
        // An instant just before local midnight belongs to the earlier day.
        let w = los_angeles_day(t("2026-08-11T06:59:59.999Z"));
        assert_eq!(w.start_at.to_string(), "2026-08-10T07:00:00.000Z");
        assert!(is_los_angeles_midnight(t("2026-08-10T07:00:00.000Z")));
        assert!(is_los_angeles_midnight(t("2026-12-10T08:00:00.000Z")));
        assert!(!is_los_angeles_midnight(t("2026-08-01T12:00:00.000Z")));
    }

    #[test]
    fn reset_type_union() {
        assert_eq!(ResetType::union(&[]), ResetType::Global);
        assert_eq!(ResetType::union(&[ResetType::Banked]), ResetType::Banked);
        assert_eq!(
            ResetType::union(&[ResetType::Banked, ResetType::Global]),
            ResetType::GlobalAndBanked
        );
    }
}
