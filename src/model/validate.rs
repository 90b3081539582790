//! Rules that span fields or records, each with an error that names the
//! record (index and id) and the field.
//!
//! Type-level rules (enum values, timestamp form, presence of every field)
//! are enforced while decoding (see [`crate::document`]); everything else is
//! here, so a document is accepted only when every rule holds for every
//! record.

use std::collections::HashSet;
use std::fmt;

use super::{FulfillmentOrigin, Kind, Origin, Record, ScheduleState};

/// One broken rule in one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// Position of the record in its list (0-based).
    pub index: usize,
    /// The record's id as given.
    pub id: String,
    /// The field, as a camelCase path (`scheduleWindow.startAt`).
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "record {} (id {:?}): {}: {}",
            self.index, self.id, self.field, self.problem
        )
    }
}

impl std::error::Error for ValidationError {}

/// The id schemes of section 2.1, after an optional `seed:` marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdScheme {
    /// A source post: the numeric post id.
    Post,
    /// An operator note: `op_…`.
    Operator,
    /// A manual completion: `manual:…`.
    Manual,
}

/// The `seed:` marker that seeded history carries (docs/spec/decisions.md).
pub const SEED_PREFIX: &str = "seed:";

/// Classifies an id, or `None` when it follows no scheme.
pub fn id_scheme(id: &str) -> Option<IdScheme> {
    let bare = id.strip_prefix(SEED_PREFIX).unwrap_or(id);
    let word = |s: &str, extra: &[u8]| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || extra.contains(&b))
    };
    if !bare.is_empty() && bare.len() <= 20 && bare.bytes().all(|b| b.is_ascii_digit()) {
        Some(IdScheme::Post)
    } else if let Some(rest) = bare.strip_prefix("op_") {
        word(rest, b"_-").then_some(IdScheme::Operator)
    } else if let Some(rest) = bare.strip_prefix("manual:") {
        word(rest, b"_-:").then_some(IdScheme::Manual)
    } else {
        None
    }
}

/// Checks every rule for every record; the first broken rule is returned.
pub fn validate_records(records: &[Record]) -> Result<(), ValidationError> {
    let mut seen = HashSet::with_capacity(records.len());
    for (index, record) in records.iter().enumerate() {
        let fail = |field: &str, problem: String| ValidationError {
            index,
            id: record.id.clone(),
            field: field.to_owned(),
            problem,
        };
        if !seen.insert(record.id.as_str()) {
            return Err(fail(
                "id",
                "duplicate id (an earlier record has the same id)".into(),
            ));
        }
        validate_record(record).map_err(|(field, problem)| fail(field, problem))?;
    }
    Ok(())
}

type RuleResult = Result<(), (&'static str, String)>;

fn must_be_null<T>(field: &'static str, value: &Option<T>, why: &str) -> RuleResult {
    match value {
        Some(_) => Err((field, format!("must be null {why}"))),
        None => Ok(()),
    }
}

fn must_be_set<T>(field: &'static str, value: &Option<T>, why: &str) -> RuleResult {
    match value {
        Some(_) => Ok(()),
        None => Err((field, format!("must not be null {why}"))),
    }
}

/// The rules of one record on its own.
fn validate_record(r: &Record) -> RuleResult {
    let scheme = id_scheme(&r.id).ok_or((
        "id",
        "follows no id scheme (a numeric post id, op_…, or manual:…, optionally after seed:)"
            .into(),
    ))?;
    validate_times(r)?;
    if let Some(c) = r.confidence {
        if !(0.0..=1.0).contains(&c) {
            return Err(("confidence", format!("must be between 0 and 1, got {c}")));
        }
    }
    if let Some(w) = r.schedule_window {
        if w.start_at > w.end_at {
            return Err((
                "scheduleWindow.startAt",
                format!("must not be after endAt ({} > {})", w.start_at, w.end_at),
            ));
        }
    }
    if r.related_record_ids.iter().any(String::is_empty) {
        return Err(("relatedRecordIds", "must not contain an empty id".into()));
    }
    validate_source(r, scheme)?;
    match r.kind {
        Kind::Completed => validate_completion(r, scheme),
        Kind::Scheduled => validate_schedule(r, scheme),
    }
}

/// Every timestamp must be writable in the one form, so what is published
/// reads back (a date-precision window ending after 9999-12-31 would not).
fn validate_times(r: &Record) -> RuleResult {
    let window = r.schedule_window;
    let fields = [
        ("announcedAt", r.announced_at),
        ("effectiveAt", r.effective_at),
        ("completedAt", r.completed_at),
        ("scheduleWindow.startAt", window.map(|w| w.start_at)),
        ("scheduleWindow.endAt", window.map(|w| w.end_at)),
    ];
    for (field, at) in fields {
        if let Some(at) = at.filter(|at| !at.is_writable()) {
            return Err((field, crate::model::OutOfRange(at).to_string()));
        }
    }
    Ok(())
}

fn validate_source(r: &Record, scheme: IdScheme) -> RuleResult {
    let s = &r.source;
    match s.origin {
        Origin::Operator => {
            must_be_null("source.handle", &s.handle, "when source.origin is operator")?;
            must_be_null("source.url", &s.url, "when source.origin is operator")?;
        }
        Origin::X => must_be_set("source.postId", &s.post_id, "when source.origin is x")?,
        Origin::Rss | Origin::Github => {}
    }
    let bare = r.id.strip_prefix(SEED_PREFIX).unwrap_or(&r.id);
    match scheme {
        IdScheme::Post if s.post_id.as_deref() != Some(bare) => Err((
            "source.postId",
            format!("must equal the numeric id {bare:?} of a source-post record"),
        )),
        IdScheme::Operator if s.origin != Origin::Operator => {
            Err(("source.origin", "must be operator on an op_ record".into()))
        }
        _ => Ok(()),
    }
}

fn validate_completion(r: &Record, scheme: IdScheme) -> RuleResult {
    let why = "on a reset_completed record";
    must_be_null("schedulePrecision", &r.schedule_precision, why)?;
    must_be_null("scheduleBasis", &r.schedule_basis, why)?;
    must_be_null("scheduleWindow", &r.schedule_window, why)?;
    must_be_null("scheduleState", &r.schedule_state, why)?;
    must_be_null("completionRecordId", &r.completion_record_id, why)?;
    if scheme == IdScheme::Manual {
        let why = "on a manual completion (section 2.5)";
        if r.fulfillment_origin != Some(FulfillmentOrigin::Manual) {
            return Err(("fulfillmentOrigin", format!("must be manual {why}")));
        }
        must_be_null("announcedAt", &r.announced_at, why)?;
        must_be_null("text", &r.text, why)?;
        must_be_null("confidence", &r.confidence, why)?;
        must_be_set("effectiveAt", &r.effective_at, why)?;
        must_be_set("completedAt", &r.completed_at, why)?;
        if r.source.origin != Origin::Operator {
            return Err(("source.origin", format!("must be operator {why}")));
        }
        must_be_null("source.postId", &r.source.post_id, why)?;
    }
    Ok(())
}

fn validate_schedule(r: &Record, scheme: IdScheme) -> RuleResult {
    if scheme == IdScheme::Manual {
        return Err((
            "kind",
            "a manual: record must be a reset_completed record".into(),
        ));
    }
    let why = "on a reset_scheduled record";
    must_be_set("schedulePrecision", &r.schedule_precision, why)?;
    must_be_set("scheduleBasis", &r.schedule_basis, why)?;
    let state = r
        .schedule_state
        .ok_or(("scheduleState", format!("must not be null {why}")))?;
    if state == ScheduleState::Fulfilled {
        let why = "on a fulfilled schedule";
        must_be_set("completedAt", &r.completed_at, why)?;
        must_be_set("fulfillmentOrigin", &r.fulfillment_origin, why)?;
    } else {
        let why = format!("on a {state} schedule");
        must_be_null("completedAt", &r.completed_at, &why)?;
        must_be_null("completionRecordId", &r.completion_record_id, &why)?;
        must_be_null("fulfillmentOrigin", &r.fulfillment_origin, &why)?;
    }
    if matches!(state, ScheduleState::Pending | ScheduleState::Elapsed) {
        must_be_set(
            "scheduleWindow",
            &r.schedule_window,
            &format!("on a {state} schedule"),
        )?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
