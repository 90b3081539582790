//! The operator's new records and actions, built from what the operator
//! typed: the rules the CLI used to decide (post URLs, `op_` ids, record
//! defaults, a schedule's `effectiveAt` from its window, the confidence
//! range, manual completion ids). The CLI only translates flags into these
//! types; every refusal names the flag.

use crate::ledger::derive::manual_id;
use crate::ledger::Action;
use crate::model::{
    Kind, Origin, Record, ResetType, ScheduleBasis, SchedulePrecision, ScheduleWindow, Scope,
    Source, Timestamp,
};

/// Where a new record comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// A post on the social platform: `https://x.com/HANDLE/status/ID`.
    PostUrl(String),
    /// An operator note (an `op_` id is generated).
    Operator,
}

/// When a new schedule is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleTime {
    /// An exact time (datetime precision).
    At(Timestamp),
    /// A civil day (`YYYY-MM-DD`) in a zone (`Area/City`): date precision.
    Day {
        /// The date.
        date: String,
        /// The zone.
        tz: String,
    },
    /// A window (window precision).
    Window(Timestamp, Timestamp),
}

/// What schedules and completions share.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// `global`, `banked` or `global_and_banked` (default `global`).
    pub reset_type: Option<String>,
    /// Affected plans (empty: unknown).
    pub scope_plans: Vec<String>,
    /// Affected quota windows (empty: unknown).
    pub scope_windows: Vec<String>,
    /// 0 to 1.
    pub confidence: Option<f64>,
    /// The post text or operator copy.
    pub text: Option<String>,
    /// When it was announced (default: now).
    pub announced_at: Option<Timestamp>,
}

/// An operator's request, turned into a ledger action under the data-dir
/// lock (a manual completion's id comes from its entry number, which only
/// the lock holder can know).
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// An action that needs nothing from the ledger.
    Action(Action),
    /// A manual completion of these schedules.
    Complete {
        /// When the reset happened.
        completed_at: Timestamp,
        /// The schedules it fulfils.
        schedule_ids: Vec<String>,
    },
}

impl Request {
    /// The action recorded as entry `entry`.
    pub fn into_action(self, entry: u64) -> Action {
        match self {
            Request::Action(action) => action,
            Request::Complete {
                completed_at,
                schedule_ids,
            } => Action::Complete {
                id: manual_id(entry),
                completed_at,
                schedule_ids,
            },
        }
    }
}

/// An operator's record that cannot be made; each names the flag and
/// what it expects.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    /// `--window START END` with START after END.
    #[error("--window START {start} is after END {end}")]
    WindowReversed {
        /// The start given.
        start: Timestamp,
        /// The end given.
        end: Timestamp,
    },
    /// `--date` / `--tz` unreadable.
    #[error(transparent)]
    Day(#[from] crate::civil::CivilDayError),
    /// `--basis` not a basis.
    #[error("--basis {0:?} must be explicit or contextual_inference")]
    Basis(String),
    /// `--type` not a reset type.
    #[error("--type {0:?} must be global, banked or global_and_banked")]
    ResetType(String),
    /// `--confidence` outside 0 to 1.
    #[error("--confidence must be between 0 and 1, got {0}")]
    Confidence(f64),
    /// `--post-url` not a post URL.
    #[error("--post-url {0:?} is not a post URL like https://x.com/HANDLE/status/1234567890")]
    PostUrl(String),
}

/// The precision and window a schedule time gives (a new schedule's, or
/// a moved one's).
pub fn window_of(time: &ScheduleTime) -> Result<(SchedulePrecision, ScheduleWindow), ActionError> {
    Ok(match time {
        ScheduleTime::At(at) => (
            SchedulePrecision::Datetime,
            ScheduleWindow {
                start_at: *at,
                end_at: *at,
            },
        ),
        ScheduleTime::Day { date, tz } => {
            let (day, zone) = crate::civil::parse_day(date, tz)?;
            (SchedulePrecision::Date, crate::civil::civil_day(day, zone))
        }
        ScheduleTime::Window(start, end) => {
            if start > end {
                return Err(ActionError::WindowReversed {
                    start: *start,
                    end: *end,
                });
            }
            (
                SchedulePrecision::Window,
                ScheduleWindow {
                    start_at: *start,
                    end_at: *end,
                },
            )
        }
    })
}

/// `record move`: schedule `id` moves to `time`.
pub fn move_schedule(id: &str, time: &ScheduleTime) -> Result<Action, ActionError> {
    let (precision, window) = window_of(time)?;
    Ok(Action::Move {
        id: id.to_owned(),
        precision,
        window,
    })
}

/// A new schedule.
pub fn new_schedule(
    source: &SourceSpec,
    time: &ScheduleTime,
    basis: Option<&str>,
    facts: &Facts,
    now: Timestamp,
) -> Result<Record, ActionError> {
    let (precision, window) = window_of(time)?;
    let mut record = base_record(source, Kind::Scheduled, facts, now)?;
    record.schedule_precision = Some(precision);
    record.schedule_basis = Some(match basis {
        None => ScheduleBasis::Explicit,
        Some(b) => ScheduleBasis::parse(b).ok_or_else(|| ActionError::Basis(b.to_owned()))?,
    });
    record.schedule_window = Some(window);
    // A schedule's time is its window's start.
    record.effective_at = Some(window.start_at);
    Ok(record)
}

/// A new completion; without `at` its time is unknown and `completedAt` is
/// the announcement.
pub fn new_completion(
    source: &SourceSpec,
    at: Option<Timestamp>,
    facts: &Facts,
    now: Timestamp,
) -> Result<Record, ActionError> {
    let mut record = base_record(source, Kind::Completed, facts, now)?;
    record.effective_at = at;
    record.completed_at = at.or(record.announced_at);
    Ok(record)
}

/// Parses a reset type as the operator typed it (default `global`).
pub fn parse_reset_type(text: Option<&str>) -> Result<ResetType, ActionError> {
    match text {
        None => Ok(ResetType::Global),
        Some(t) => ResetType::parse(t).ok_or_else(|| ActionError::ResetType(t.to_owned())),
    }
}

/// Refuses a confidence outside 0 to 1.
pub fn check_confidence(confidence: Option<f64>) -> Result<(), ActionError> {
    match confidence {
        Some(c) if !(0.0..=1.0).contains(&c) => Err(ActionError::Confidence(c)),
        _ => Ok(()),
    }
}

fn base_record(
    source: &SourceSpec,
    kind: Kind,
    facts: &Facts,
    now: Timestamp,
) -> Result<Record, ActionError> {
    check_confidence(facts.confidence)?;
    let (id, source) = source_of(source)?;
    Ok(Record {
        id,
        kind,
        reset_type: parse_reset_type(facts.reset_type.as_deref())?,
        announced_at: Some(facts.announced_at.unwrap_or(now)),
        effective_at: None,
        text: facts.text.clone(),
        confidence: facts.confidence,
        scope: scope(facts),
        source,
        schedule_precision: None,
        schedule_basis: None,
        schedule_window: None,
        schedule_state: None,
        completed_at: None,
        completion_record_id: None,
        fulfillment_origin: None,
        related_record_ids: Vec::new(),
    })
}

/// Plans and windows when either is given; what is missing is `unknown`.
fn scope(facts: &Facts) -> Option<Scope> {
    if facts.scope_plans.is_empty() && facts.scope_windows.is_empty() {
        return None;
    }
    let or_unknown = |v: &Vec<String>| {
        if v.is_empty() {
            vec!["unknown".to_owned()]
        } else {
            v.clone()
        }
    };
    Some(Scope {
        plans: or_unknown(&facts.scope_plans),
        windows: or_unknown(&facts.scope_windows),
    })
}

fn source_of(source: &SourceSpec) -> Result<(String, Source), ActionError> {
    match source {
        SourceSpec::PostUrl(url) => {
            let (id, handle, canonical) = parse_post_url(url)?;
            Ok((
                id.clone(),
                Source {
                    origin: Origin::X,
                    post_id: Some(id),
                    handle: Some(handle),
                    url: Some(canonical),
                },
            ))
        }
        SourceSpec::Operator => {
            let id = operator_id();
            let source = Source::operator_note(&id);
            Ok((id, source))
        }
    }
}

/// `op_` + 24 random hex digits.
pub fn operator_id() -> String {
    format!("op_{}", crate::random::random_token(12))
}

/// `https://x.com/HANDLE/status/ID` (or twitter.com, with or without www) →
/// (id, handle, canonical url).
pub fn parse_post_url(url: &str) -> Result<(String, String, String), ActionError> {
    let fail = || ActionError::PostUrl(url.to_owned());
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(fail)?;
    let rest = rest
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .trim_end_matches('/');
    let mut parts = rest.split('/');
    let host = parts.next().ok_or_else(fail)?;
    if !matches!(
        host,
        "x.com" | "www.x.com" | "twitter.com" | "www.twitter.com" | "mobile.twitter.com"
    ) {
        return Err(fail());
    }
    let (handle, status, id) = (parts.next(), parts.next(), parts.next());
    match (handle, status, id, parts.next()) {
        (Some(h), Some("status"), Some(id), None)
            if !h.is_empty()
                && !id.is_empty()
                && id.len() <= 20
                && id.bytes().all(|b| b.is_ascii_digit()) =>
        {
            Ok((
                id.to_owned(),
                h.to_owned(),
                format!("https://x.com/{h}/status/{id}"),
            ))
        }
        _ => Err(fail()),
    }
}
