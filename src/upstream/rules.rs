//! The rules that turn one feed item into one record (upstream-feed.md,
//! "Converting the feed into records"): ids and sources, completions,
//! schedules with their windows and states, manual completions, heatmap
//! history, and the links between completions and the schedules they fulfil.

use std::collections::{HashMap, HashSet};

use chrono::{NaiveTime, Timelike};
use chrono_tz::America::Los_Angeles;

use super::skip::SkipReason;
use super::wire::{FeedEvent, FeedWindow, HeatmapSource, ManualCompletion};
use crate::model::validate::{id_scheme, IdScheme};
use crate::model::{
    FulfillmentOrigin, Kind, Origin, Record, ResetType, ScheduleBasis, SchedulePrecision,
    ScheduleState, ScheduleWindow, Source, Timestamp,
};
use crate::schedule::schedule_state_at;

/// A schedule's fulfilment, from `fulfilledSchedules` or a manual completion.
#[derive(Debug, Clone)]
pub(super) struct Fulfilment {
    pub(super) completed_at: Option<Timestamp>,
    pub(super) completion_id: Option<String>,
    pub(super) origin: FulfillmentOrigin,
}

/// One candidate event, de-duplicated by post id.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub(super) event: FeedEvent,
    pub(super) location: String,
    pub(super) window: Option<FeedWindow>,
}

pub(super) fn reset_type_of(event: &FeedEvent) -> Result<ResetType, SkipReason> {
    match event.reset_type.as_deref() {
        None => Ok(ResetType::Global),
        Some(text) => {
            ResetType::parse(text).ok_or_else(|| SkipReason::UnknownResetType(text.to_owned()))
        }
    }
}

/// The record's id and source from the event's post id (numeric or `op_…`).
pub(super) fn id_and_source(event: &FeedEvent) -> Result<(String, Source), SkipReason> {
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
pub(super) fn completion_record(event: &FeedEvent) -> Result<Record, SkipReason> {
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
pub(super) fn schedule_record(
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
pub(super) fn manual_record(entry: &ManualCompletion, reset_type: ResetType) -> Record {
    Record::manual_completion(
        &entry.id,
        entry.completed_at,
        &entry.schedule_post_ids,
        reset_type,
    )
}

/// Rule 7: heatmap-only history.
pub(super) fn heatmap_record(source: &HeatmapSource) -> Result<Record, SkipReason> {
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
pub(super) fn link_completions(records: &mut [Record], fulfilled: &HashMap<String, Fulfilment>) {
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

pub(super) fn is_los_angeles_midnight(at: Timestamp) -> bool {
    let local = at.to_datetime().with_timezone(&Los_Angeles);
    local.time() == NaiveTime::MIN && local.nanosecond() == 0
}

/// The America/Los_Angeles civil day holding `at`, as a UTC window
/// (23 or 25 hours long on daylight-saving days).
pub fn los_angeles_day(at: Timestamp) -> ScheduleWindow {
    crate::civil::civil_day_of(at, Los_Angeles)
}
