//! `resetctl record …` and `resetctl mark-checked`: build one ledger action
//! from flags, hand it to the library (which refuses or records and
//! republishes), print what happened.

use resetctl::ledger::{Action, Edit, RecordStatus};
use resetctl::model::{FulfillmentOrigin, Timestamp};
use resetctl::standalone::actions::{
    check_confidence, move_schedule, new_completion, new_schedule, parse_reset_type, ActionError,
    Facts, ScheduleTime, SourceSpec,
};
use resetctl::standalone::{load_instance, published_ids, record_action, Request};

use crate::args::{RecordCommand, RecordFacts, ScheduleTimeArgs, SourceArgs};
use crate::exit::CliError;
use crate::output::{json, print, shown};
use crate::settings::Settings;

fn usage(message: impl Into<String>) -> CliError {
    CliError::usage(message)
}

/// The `actor` setting (flag, `RESETCTL_ACTOR`, config file), else `$USER@hostname`.
fn actor(settings: &Settings) -> String {
    settings.actor.clone().unwrap_or_else(|| {
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

fn source_spec(source: SourceArgs) -> SourceSpec {
    match source.post_url {
        Some(url) => SourceSpec::PostUrl(url),
        None => SourceSpec::Operator,
    }
}

fn facts(facts: &RecordFacts) -> Facts {
    Facts {
        reset_type: facts.reset_type.clone(),
        scope_plans: facts.scope_plans.clone(),
        scope_windows: facts.scope_windows.clone(),
        confidence: facts.confidence,
        text: facts.text.clone(),
        announced_at: facts.announced_at,
    }
}

fn add(
    settings: &Settings,
    record: Result<resetctl::model::Record, ActionError>,
) -> Result<(), CliError> {
    let record = record?;
    apply(
        settings,
        Request::Action(Action::Add {
            record: Box::new(record),
        }),
    )
}

fn apply(settings: &Settings, request: Request) -> Result<(), CliError> {
    let (entry, snapshot) = record_action(
        &settings.store(),
        settings.publish(),
        &actor(settings),
        request,
    )?;
    print(&shown!(
        "entry {}: {}; published snapshot {} ({} records)\n",
        entry.entry,
        entry.action.describe(),
        snapshot.sequence,
        snapshot.records.len()
    ))
}

/// The one time a schedule is given: `--at`, `--date` with `--tz`, or `--window`.
fn schedule_time(time: ScheduleTimeArgs) -> Result<ScheduleTime, CliError> {
    let ScheduleTimeArgs {
        at,
        date,
        tz,
        window,
    } = time;
    Ok(match (at, date, window.as_slice()) {
        (Some(at), None, []) => ScheduleTime::At(at),
        (None, Some(date), []) => ScheduleTime::Day {
            date,
            tz: tz.unwrap_or_default(),
        },
        (None, None, [start, end]) => ScheduleTime::Window(*start, *end),
        _ => {
            return Err(usage(
                "give one of --at TIME, --date YYYY-MM-DD --tz AREA/CITY, or --window START END",
            ))
        }
    })
}

/// The changes `record edit` asks for; none is a usage error.
fn edit_of(
    text: Option<String>,
    clear_text: bool,
    confidence: Option<f64>,
    reset_type: Option<String>,
    effective_at: Option<Timestamp>,
) -> Result<Edit, CliError> {
    check_confidence(confidence)?;
    let changes = Edit {
        text: if clear_text {
            Some(None)
        } else {
            text.map(Some)
        },
        confidence: confidence.map(Some),
        reset_type: reset_type
            .as_deref()
            .map(|t| parse_reset_type(Some(t)))
            .transpose()?,
        effective_at,
    };
    if changes == Edit::default() {
        return Err(usage(
            "nothing to change: give --text, --clear-text, --confidence, --type or --effective-at",
        ));
    }
    Ok(changes)
}

pub fn run(settings: &Settings, command: RecordCommand) -> Result<(), CliError> {
    let now = settings.now;
    match command {
        RecordCommand::Schedule {
            source,
            time,
            basis,
            facts: given,
        } => {
            let time = schedule_time(time)?;
            let record = new_schedule(
                &source_spec(source),
                &time,
                basis.as_deref(),
                &facts(&given),
                now,
            );
            add(settings, record)
        }
        RecordCommand::Completion {
            source,
            at,
            facts: given,
        } => {
            let record = new_completion(&source_spec(source), at, &facts(&given), now);
            add(settings, record)
        }
        RecordCommand::Complete {
            schedule_ids, at, ..
        } => apply(
            settings,
            Request::Complete {
                completed_at: at.unwrap_or(now),
                schedule_ids,
            },
        ),
        RecordCommand::Link {
            completion_id,
            schedule_id,
            ..
        } => apply(
            settings,
            Request::Action(Action::Link {
                completion_id,
                schedule_id,
            }),
        ),
        RecordCommand::Unlink {
            completion_id,
            schedule_id,
            ..
        } => apply(
            settings,
            Request::Action(Action::Unlink {
                completion_id,
                schedule_id,
            }),
        ),
        RecordCommand::Dismiss { id, .. } => {
            apply(settings, Request::Action(Action::Dismiss { id }))
        }
        RecordCommand::Undo { entry, .. } => {
            apply(settings, Request::Action(Action::Undo { entry }))
        }
        RecordCommand::Move { id, time, .. } => {
            let time = schedule_time(time)?;
            let action = move_schedule(&id, &time)?;
            apply(settings, Request::Action(action))
        }
        RecordCommand::Edit {
            id,
            text,
            clear_text,
            confidence,
            reset_type,
            effective_at,
            ..
        } => {
            let changes = edit_of(text, clear_text, confidence, reset_type, effective_at)?;
            apply(settings, Request::Action(Action::Edit { id, changes }))
        }
        RecordCommand::List { json: as_json } => list(settings, as_json),
        RecordCommand::Show { id } => show(settings, &id),
        RecordCommand::Log { json: as_json } => log(settings, as_json),
    }
}

/// `resetctl restore DIR`.
pub fn restore(settings: &Settings, backup: &std::path::Path) -> Result<(), CliError> {
    let report = resetctl::standalone::restore::restore(
        &settings.store(),
        backup,
        &actor(settings),
        settings.publish(),
    )?;
    let count =
        |n: usize, one: &str, other: &str| format!("{n} {}", if n == 1 { one } else { other });
    print(&format!(
        "restored {} and {} from a backup of {}; published snapshot {} ({})\n",
        count(report.entries, "ledger entry", "ledger entries"),
        count(report.history, "seeded record", "seeded records"),
        report.backup_of,
        report.snapshot.sequence,
        count(report.snapshot.records.len(), "record", "records"),
    ))
}

pub fn mark_checked(settings: &Settings, at: Option<Timestamp>) -> Result<(), CliError> {
    apply(
        settings,
        Request::Action(Action::Checked {
            at: at.unwrap_or(settings.now),
        }),
    )
}

/// Where a record stands, as the API sees it: an active record is
/// `published` only when the current snapshot serves it.
fn status_word(status: RecordStatus, published: bool) -> String {
    match status {
        RecordStatus::Active if published => "published".into(),
        RecordStatus::Active => "recorded, not published yet (run `resetctl publish`)".into(),
        RecordStatus::Dismissed(e) => format!("dismissed (entry {e})"),
        RecordStatus::Undone(e) => format!("undone (entry {e})"),
    }
}

fn warn_torn(torn: &[resetctl::ledger::BadLine]) {
    for t in torn {
        crate::output::warn(&format!("warning: {t}"));
    }
}

fn list(settings: &Settings, as_json: bool) -> Result<(), CliError> {
    resetctl::standalone::refuse_upstream(&settings.store())?;
    let instance = load_instance(&settings.store(), &settings.publish())?;
    let published = published_ids(&settings.store())?;
    warn_torn(&instance.torn);
    if as_json {
        let rows: Vec<_> = instance
            .derived
            .records
            .iter()
            .map(|r| serde_json::json!({"status": status_word(r.status, published.contains(&r.record.id)), "addedBy": r.added_by, "record": r.record}))
            .collect();
        return print(&json(&rows));
    }
    let mut out = String::new();
    for r in &instance.derived.records {
        let rec = &r.record;
        let state = rec
            .schedule_state
            .map_or(String::new(), |s| shown!(" {}", s));
        let origin = rec
            .fulfillment_origin
            .map_or(String::new(), |o: FulfillmentOrigin| shown!(" ({})", o));
        let when = rec
            .schedule_window
            .map(|w| w.start_at)
            .or(rec.completed_at)
            .map_or("-".to_owned(), |t| t.to_string());
        out.push_str(&shown!(
            "{:<44} {:<15}{}{}  {}  [{}]\n",
            rec.id,
            rec.kind,
            state,
            origin,
            when,
            status_word(r.status, published.contains(&rec.id))
        ));
    }
    if out.is_empty() {
        out.push_str("no records\n");
    }
    print(&out)
}

fn show(settings: &Settings, id: &str) -> Result<(), CliError> {
    resetctl::standalone::refuse_upstream(&settings.store())?;
    let instance = load_instance(&settings.store(), &settings.publish())?;
    let published = published_ids(&settings.store())?;
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
            shown!(
                "  entry {} {} by {}: {}",
                e.entry,
                e.at,
                e.actor,
                e.action.describe()
            )
        })
        .collect();
    let mut out = shown!(
        "status: {}\n",
        status_word(r.status, published.contains(id))
    );
    out.push_str(&serde_json::to_string_pretty(&r.record).expect("records serialise"));
    out.push('\n');
    if !touching.is_empty() {
        out.push_str("entries:\n");
        out.push_str(&touching.join("\n"));
        out.push('\n');
    }
    print(&out)
}

/// The ledger as it is on disk, also while a corrupt line refuses every
/// command that derives records from it (this is what an operator reads to
/// repair it).
fn log(settings: &Settings, as_json: bool) -> Result<(), CliError> {
    resetctl::standalone::refuse_upstream(&settings.store())?;
    let ledger = resetctl::ledger::read_ledger(&settings.data_dir)?;
    warn_torn(&ledger.torn);
    for bad in &ledger.corrupt {
        crate::output::warn(&format!(
            "warning: {} line {} is corrupt ({}); nothing is published until it is repaired",
            resetctl::data_dir::LEDGER,
            bad.line,
            bad.problem
        ));
    }
    let mut out = String::new();
    for e in ledger.entries.iter().rev() {
        if as_json {
            out.push_str(&serde_json::to_string(e).expect("entries serialise"));
        } else {
            out.push_str(&shown!(
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
