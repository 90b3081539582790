//! Converting the public status feed into records (upstream-feed.md,
//! "Converting the feed into records"), rule by rule.
//!
//! A record that cannot be converted is reported (where it was, its post id,
//! why) and skipped; the rest still publish. A document that is not this
//! feed at all is refused whole.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::rules::{
    completion_record, heatmap_record, link_completions, manual_record, reset_type_of,
    schedule_record, Candidate, Fulfilment,
};
use super::skip::{SkipReason, SkippedRecord};
use super::wire::{
    Feed, FeedEvent, FeedWindow, FulfilledSchedule, HeatmapSource, ManualCompletion, Timeline,
};
use crate::document::DocumentError;
use crate::model::validate::validate_records;
use crate::model::UpstreamMonitor;
use crate::model::{FulfillmentOrigin, Kind, Record, ResetType, Timestamp};

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

/// Converts a parsed feed document at `now`.
pub fn convert_feed(value: &Value, now: Timestamp) -> Result<Converted, DocumentError> {
    let feed = read_feed(value)?;
    let mut c = Converter::default();
    let timeline = feed.reset_timeline.clone().unwrap_or_default();
    for (i, v) in feed.events.iter().enumerate() {
        c.add_event(v, format!("events[{i}]"), None);
    }
    for (i, v) in feed.grace_schedules.iter().enumerate() {
        c.add_event(v, format!("graceSchedules[{i}]"), None);
    }
    c.add_next_schedule(&timeline);
    c.add_fulfilled(&timeline);
    let manual = c.add_manual(&timeline);
    let suppressed: HashSet<String> = timeline.suppressed_post_ids.iter().cloned().collect();
    let mut records = c.build_records(&suppressed, now);
    c.push_manual(&mut records, &manual);
    c.push_heatmap(&mut records, &feed, &suppressed);
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

/// The feed's shape, and a version this build knows.
fn read_feed(value: &Value) -> Result<Feed, DocumentError> {
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
    Ok(feed)
}

impl Converter {
    /// `resetTimeline.nextSchedule`: an event, or `{event, window}` (both shapes are seen).
    fn add_next_schedule(&mut self, timeline: &Timeline) {
        let Some(next) = timeline.next_schedule.as_ref().filter(|v| !v.is_null()) else {
            return;
        };
        match next.get("event") {
            Some(event) => {
                let window = next
                    .get("window")
                    .and_then(|w| serde_json::from_value(w.clone()).ok());
                self.add_event(event, "resetTimeline.nextSchedule.event".into(), window);
            }
            None => self.add_event(next, "resetTimeline.nextSchedule".into(), None),
        }
    }

    /// `resetTimeline.fulfilledSchedules`: each schedule, and what fulfilled it.
    fn add_fulfilled(&mut self, timeline: &Timeline) {
        for (i, v) in timeline.fulfilled_schedules.iter().enumerate() {
            let location = format!("resetTimeline.fulfilledSchedules[{i}]");
            let entry = match serde_json::from_value::<FulfilledSchedule>(v.clone()) {
                Ok(entry) => entry,
                Err(e) => {
                    self.skip(
                        location,
                        None,
                        SkipReason::Unreadable {
                            what: "fulfilled schedule",
                            why: e.to_string(),
                        },
                    );
                    continue;
                }
            };
            let post_id = entry
                .schedule
                .pointer("/source/postId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            self.add_event(
                &entry.schedule,
                format!("{location}.schedule"),
                entry.window,
            );
            if let Some(post_id) = post_id {
                let origin = entry
                    .fulfillment_origin
                    .as_deref()
                    .and_then(FulfillmentOrigin::parse)
                    .unwrap_or(FulfillmentOrigin::Auto);
                self.fulfilled.insert(
                    post_id,
                    Fulfilment {
                        completed_at: entry.completed_at,
                        completion_id: entry.completion_post_id,
                        origin,
                    },
                );
            }
        }
    }

    /// `resetTimeline.manualCompletions`: their schedules and what they
    /// fulfil; the completions themselves become records once the rest is known.
    fn add_manual(&mut self, timeline: &Timeline) -> Vec<(String, ManualCompletion)> {
        let mut manual = Vec::new();
        for (i, v) in timeline.manual_completions.iter().enumerate() {
            let location = format!("resetTimeline.manualCompletions[{i}]");
            match serde_json::from_value::<ManualCompletion>(v.clone()) {
                Ok(entry) => {
                    for (j, schedule) in entry.schedules.iter().enumerate() {
                        self.add_event(schedule, format!("{location}.schedules[{j}]"), None);
                    }
                    for post_id in &entry.schedule_post_ids {
                        self.fulfilled.entry(post_id.clone()).or_insert(Fulfilment {
                            completed_at: Some(entry.completed_at),
                            completion_id: Some(entry.id.clone()),
                            origin: FulfillmentOrigin::Manual,
                        });
                    }
                    manual.push((location, entry));
                }
                Err(e) => self.skip(
                    location,
                    v.get("id").and_then(Value::as_str).map(str::to_owned),
                    SkipReason::Unreadable {
                        what: "manual completion",
                        why: e.to_string(),
                    },
                ),
            }
        }
        manual
    }

    /// The manual completions, each with the union of its schedules' reset types.
    fn push_manual(&mut self, records: &mut Vec<Record>, manual: &[(String, ManualCompletion)]) {
        for (location, entry) in manual {
            let types: Vec<ResetType> = entry
                .schedule_post_ids
                .iter()
                .filter_map(|id| {
                    self.candidates
                        .get(self.index_of(id)?)
                        .and_then(|cand| reset_type_of(&cand.event).ok())
                })
                .collect();
            let record = manual_record(entry, ResetType::union(&types));
            self.push_checked(records, record, location.clone(), Some(entry.id.clone()));
        }
    }

    /// Heatmap sources not otherwise known: heatmap-only history.
    fn push_heatmap(
        &mut self,
        records: &mut Vec<Record>,
        feed: &Feed,
        suppressed: &HashSet<String>,
    ) {
        let known: HashSet<String> = self
            .candidates
            .iter()
            .map(|cand| cand.event.source.post_id.clone())
            .collect();
        let mut seen = HashSet::new();
        for (d, day) in feed.heatmap.iter().flat_map(|h| h.days.iter()).enumerate() {
            for (s, v) in day.sources.iter().enumerate() {
                let location = format!("heatmap.days[{d}].sources[{s}]");
                let source: HeatmapSource = match serde_json::from_value(v.clone()) {
                    Ok(source) => source,
                    Err(e) => {
                        self.skip(
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
                    || !seen.insert(source.post_id.clone())
                    || source
                        .kind
                        .as_deref()
                        .is_some_and(|k| k != "reset_completed")
                {
                    continue;
                }
                match heatmap_record(&source) {
                    Ok(record) => {
                        self.push_checked(records, record, location, Some(source.post_id.clone()))
                    }
                    Err(reason) => self.skip(location, Some(source.post_id.clone()), reason),
                }
            }
        }
    }
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
#[cfg(test)]
mod tests {
    use super::super::rules::{is_los_angeles_midnight, los_angeles_day};
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
