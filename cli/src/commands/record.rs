//! `resetctl record …` and `resetctl mark-checked`: build one ledger action
//! from flags, hand it to the library (which refuses or records and
//! republishes), print what happened.

use std::hash::{BuildHasher, Hasher};

use resetctl::ledger::{Action, Edit, RecordStatus};
use resetctl::model::{
    FulfillmentOrigin, Kind, Origin, Record, ResetType, ScheduleBasis, SchedulePrecision,
    ScheduleWindow, Scope, Source, Timestamp,
};
use resetctl::standalone::{load_instance, record_action};

use crate::args::{RecordCommand, RecordFacts, SourceArgs};
use crate::exit::{CliError, Code};
use crate::output::{json, print};
use crate::settings::Settings;

fn usage(message: impl Into<String>) -> CliError {
    CliError::new(Code::Usage, message)
}

/// The flag or `RESETCTL_ACTOR`, else the config file's `actor`, else `$USER@hostname`.
fn actor(settings: &Settings, given: Option<String>) -> String {
    given
        .or_else(|| settings.file.actor.clone())
        .unwrap_or_else(|| {
            let user = std::env::var("USER").unwrap_or_else(|_| "operator".into());
            let host = std::fs::read_to_string("/etc/hostname")
                .map(|h| h.trim().to_owned())
                .unwrap_or_default();
            if host.is_empty() {
                user
            } else {
                format!("{user}@{host}")
            }
        })
}

/// `op_` + 24 random hex digits.
fn operator_id() -> String {
    let random = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        h.finish()
    };
    format!("op_{:016x}{:08x}", random(), random() as u32)
}

/// `https://x.com/HANDLE/status/ID` (or twitter.com, with or without www) → (id, handle, canonical url).
pub fn parse_post_url(url: &str) -> Result<(String, String, String), String> {
    let fail = || {
        format!("--post-url {url:?} is not a post URL like https://x.com/HANDLE/status/1234567890")
    };
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

fn source_of(source: &SourceArgs) -> Result<(String, Source), CliError> {
    match &source.post_url {
        Some(url) => {
            let (id, handle, canonical) = parse_post_url(url).map_err(usage)?;
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
        None => {
            let id = operator_id();
            Ok((
                id.clone(),
                Source {
                    origin: Origin::Operator,
                    post_id: Some(id),
                    handle: None,
                    url: None,
                },
            ))
        }
    }
}

fn reset_type(text: Option<&str>) -> Result<ResetType, CliError> {
    match text {
        None => Ok(ResetType::Global),
        Some(t) => ResetType::parse(t).ok_or_else(|| {
            usage(format!(
                "--type {t:?} must be global, banked or global_and_banked"
            ))
        }),
    }
}

fn scope(facts: &RecordFacts) -> Option<Scope> {
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

fn base_record(
    id: String,
    kind: Kind,
    source: Source,
    facts: &RecordFacts,
    now: Timestamp,
) -> Result<Record, CliError> {
    if let Some(c) = facts.confidence {
        if !(0.0..=1.0).contains(&c) {
            return Err(usage(format!(
                "--confidence must be between 0 and 1, got {c}"
            )));
        }
    }
    Ok(Record {
        id,
        kind,
        reset_type: reset_type(facts.reset_type.as_deref())?,
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

fn apply(settings: &Settings, actor_name: Option<String>, action: Action) -> Result<(), CliError> {
    let (entry, snapshot) = record_action(
        &settings.store(),
        settings.publish(),
        &actor(settings, actor_name),
        action,
    )?;
    print(&format!(
        "entry {}: {}; published snapshot {} ({} records)\n",
        entry.entry,
        entry.action.describe(),
        snapshot.sequence,
        snapshot.records.len()
    ))
}

pub fn run(settings: &Settings, command: RecordCommand) -> Result<(), CliError> {
    let now = settings.now;
    match command {
        RecordCommand::Schedule {
            source,
            at,
            date,
            tz,
            window,
            basis,
            facts,
        } => {
            let (id, src) = source_of(&source)?;
            let mut record = base_record(id, Kind::Scheduled, src, &facts, now)?;
            let (precision, window) = match (at, date, window.as_slice()) {
                (Some(at), None, []) => (SchedulePrecision::Datetime, ScheduleWindow { start_at: at, end_at: at }),
                (None, Some(date), []) => {
                    let (day, zone) = resetctl::civil::parse_day(&date, tz.as_deref().unwrap_or_default()).map_err(usage)?;
                    (SchedulePrecision::Date, resetctl::civil::civil_day(day, zone))
                }
                (None, None, [start, end]) => {
                    if start > end {
                        return Err(usage(format!("--window START {start} is after END {end}")));
                    }
                    (SchedulePrecision::Window, ScheduleWindow { start_at: *start, end_at: *end })
                }
                _ => return Err(usage("give one of --at TIME, --date YYYY-MM-DD --tz AREA/CITY, or --window START END")),
            };
            record.schedule_precision = Some(precision);
            record.schedule_basis = Some(match basis.as_deref() {
                None => ScheduleBasis::Explicit,
                Some(b) => ScheduleBasis::parse(b).ok_or_else(|| {
                    usage(format!(
                        "--basis {b:?} must be explicit or contextual_inference"
                    ))
                })?,
            });
            record.schedule_window = Some(window);
            record.effective_at = Some(window.start_at);
            apply(
                settings,
                facts.actor.clone(),
                Action::Add {
                    record: Box::new(record),
                },
            )
        }
        RecordCommand::Completion { source, at, facts } => {
            let (id, src) = source_of(&source)?;
            let mut record = base_record(id, Kind::Completed, src, &facts, now)?;
            record.effective_at = at;
            record.completed_at = at.or(record.announced_at);
            apply(
                settings,
                facts.actor.clone(),
                Action::Add {
                    record: Box::new(record),
                },
            )
        }
        RecordCommand::Complete {
            schedule_ids,
            at,
            actor,
        } => {
            let instance = load_instance(&settings.store(), &settings.publish())?;
            let next_entry = instance.entries.last().map_or(0, |e| e.entry) + 1;
            let id = resetctl::ledger::derive::manual_id(next_entry);
            apply(
                settings,
                actor,
                Action::Complete {
                    id,
                    completed_at: at.unwrap_or(now),
                    schedule_ids,
                },
            )
        }
        RecordCommand::Link {
            completion_id,
            schedule_id,
            actor,
        } => apply(
            settings,
            actor,
            Action::Link {
                completion_id,
                schedule_id,
            },
        ),
        RecordCommand::Unlink {
            completion_id,
            schedule_id,
            actor,
        } => apply(
            settings,
            actor,
            Action::Unlink {
                completion_id,
                schedule_id,
            },
        ),
        RecordCommand::Dismiss { id, actor } => apply(settings, actor, Action::Dismiss { id }),
        RecordCommand::Undo { entry, actor } => apply(settings, actor, Action::Undo { entry }),
        RecordCommand::Edit {
            id,
            text,
            clear_text,
            confidence,
            reset_type: rt,
            effective_at,
            actor,
        } => {
            let changes = Edit {
                text: if clear_text {
                    Some(None)
                } else {
                    text.map(Some)
                },
                confidence: confidence.map(Some),
                reset_type: rt.as_deref().map(|t| reset_type(Some(t))).transpose()?,
                effective_at,
            };
            if changes == Edit::default() {
                return Err(usage("nothing to change: give --text, --clear-text, --confidence, --type or --effective-at"));
            }
            apply(settings, actor, Action::Edit { id, changes })
        }
        RecordCommand::List { json: as_json } => list(settings, as_json),
        RecordCommand::Show { id } => show(settings, &id),
        RecordCommand::Log { json: as_json } => log(settings, as_json),
    }
}

pub fn mark_checked(
    settings: &Settings,
    at: Option<Timestamp>,
    actor_name: Option<String>,
) -> Result<(), CliError> {
    apply(
        settings,
        actor_name,
        Action::Checked {
            at: at.unwrap_or(settings.now),
        },
    )
}

fn status_word(status: RecordStatus) -> String {
    match status {
        RecordStatus::Active => "published".into(),
        RecordStatus::Dismissed(e) => format!("dismissed (entry {e})"),
        RecordStatus::Undone(e) => format!("undone (entry {e})"),
    }
}

fn warn_torn(torn: &[resetctl::ledger::TornLine]) {
    for t in torn {
        eprintln!("resetctl: warning: {t}");
    }
}

fn list(settings: &Settings, as_json: bool) -> Result<(), CliError> {
    let instance = load_instance(&settings.store(), &settings.publish())?;
    warn_torn(&instance.torn);
    if as_json {
        let rows: Vec<_> = instance
            .derived
            .records
            .iter()
            .map(|r| serde_json::json!({"status": status_word(r.status), "addedBy": r.added_by, "record": r.record}))
            .collect();
        return print(&json(&rows));
    }
    let mut out = String::new();
    for r in &instance.derived.records {
        let rec = &r.record;
        let state = rec
            .schedule_state
            .map_or(String::new(), |s| format!(" {s}"));
        let origin = rec
            .fulfillment_origin
            .map_or(String::new(), |o: FulfillmentOrigin| format!(" ({o})"));
        let when = rec
            .schedule_window
            .map(|w| w.start_at)
            .or(rec.completed_at)
            .map_or("-".to_owned(), |t| t.to_string());
        out.push_str(&format!(
            "{:<44} {:<15}{state}{origin}  {when}  [{}]\n",
            rec.id,
            rec.kind,
            status_word(r.status)
        ));
    }
    if out.is_empty() {
        out.push_str("no records\n");
    }
    print(&out)
}

fn show(settings: &Settings, id: &str) -> Result<(), CliError> {
    let instance = load_instance(&settings.store(), &settings.publish())?;
    warn_torn(&instance.torn);
    let r = instance
        .derived
        .get(id)
        .ok_or_else(|| usage(format!("no record with id {id:?}")))?;
    let touching: Vec<String> = instance
        .entries
        .iter()
        .filter(|e| {
            serde_json::to_string(&e.action).is_ok_and(|a| a.contains(&format!("\"{id}\"")))
        })
        .map(|e| {
            format!(
                "  entry {} {} by {}: {}",
                e.entry,
                e.at,
                e.actor,
                e.action.describe()
            )
        })
        .collect();
    let mut out = format!("status: {}\n", status_word(r.status));
    out.push_str(&serde_json::to_string_pretty(&r.record).expect("records serialise"));
    out.push('\n');
    if !touching.is_empty() {
        out.push_str("entries:\n");
        out.push_str(&touching.join("\n"));
        out.push('\n');
    }
    print(&out)
}

fn log(settings: &Settings, as_json: bool) -> Result<(), CliError> {
    let instance = load_instance(&settings.store(), &settings.publish())?;
    warn_torn(&instance.torn);
    let mut out = String::new();
    for e in instance.entries.iter().rev() {
        if as_json {
            out.push_str(&serde_json::to_string(e).expect("entries serialise"));
        } else {
            out.push_str(&format!(
                "{:>5}  {}  {:<20}  {}",
                e.entry,
                e.at,
                e.actor,
                e.action.describe()
            ));
        }
        out.push('\n');
    }
    print(&out)
}
