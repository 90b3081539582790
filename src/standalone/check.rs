//! The refusals of operator actions, each naming the problem; checked
//! against the records derived before the action, so a refusal records
//! nothing.

use super::{Instance, StandaloneError};
use crate::ledger::{Action, RecordStatus};
use crate::model::validate::validate_records;
use crate::model::{FulfillmentOrigin, Kind, Record, Timestamp};

fn refuse<T>(message: String) -> Result<T, StandaloneError> {
    Err(StandaloneError::Refused(message))
}

/// Refuses `action` when it cannot apply to `instance`.
pub(super) fn check_action(
    instance: &Instance,
    action: &Action,
    now: Timestamp,
) -> Result<(), StandaloneError> {
    match action {
        Action::Add { record } => check_add(instance, record, now),
        Action::Complete { schedule_ids, .. } => {
            for id in schedule_ids {
                let r = active(
                    instance,
                    id,
                    Some(Kind::Scheduled),
                    "complete takes schedules",
                )?;
                if r.fulfillment_origin == Some(FulfillmentOrigin::Manual) {
                    return refuse(format!(
                        "{id} is already completed manually by {}",
                        r.completion_record_id.as_deref().unwrap_or("?")
                    ));
                }
            }
            Ok(())
        }
        Action::Link {
            completion_id,
            schedule_id,
        } => check_link(instance, completion_id, schedule_id),
        Action::Unlink {
            completion_id,
            schedule_id,
        } => check_unlink(instance, completion_id, schedule_id),
        Action::Dismiss { id } => active(instance, id, None, "dismiss").map(drop),
        Action::Edit { id, changes } => {
            let r = active(instance, id, None, "edit")?;
            if let Some(confidence) = changes.confidence {
                super::actions::check_confidence(confidence)
                    .map_err(|e| StandaloneError::Refused(e.to_string()))?;
            }
            if changes.effective_at.is_some() && r.kind == Kind::Scheduled {
                return refuse(format!("{id} is a schedule: its time comes from its window; record a new schedule instead"));
            }
            Ok(())
        }
        Action::Move { id, window, .. } => {
            let r = active(instance, id, Some(Kind::Scheduled), "move takes a schedule")?;
            if r.fulfillment_origin.is_some() {
                return refuse(format!(
                    "{id} is fulfilled by {}: a fulfilled schedule keeps its window (unlink or undo first)",
                    r.completion_record_id.as_deref().unwrap_or("?")
                ));
            }
            if r.schedule_window.as_ref() == Some(window) {
                return refuse(format!("{id} is already scheduled for that window"));
            }
            Ok(())
        }
        Action::Undo { entry } => check_undo(instance, *entry),
        Action::Checked { .. } | Action::Restore { .. } => Ok(()),
    }
}

/// The active record `id` (of `kind`, when given; `role` says why it must be).
fn active<'i>(
    instance: &'i Instance,
    id: &str,
    kind: Option<Kind>,
    role: &str,
) -> Result<&'i Record, StandaloneError> {
    let Some(r) = instance.derived.get(id) else {
        return refuse(format!("no record with id {id:?}"));
    };
    match r.status {
        RecordStatus::Dismissed(e) => return refuse(format!("{id} was dismissed (entry {e})")),
        RecordStatus::Undone(e) => return refuse(format!("{id} was undone (entry {e})")),
        RecordStatus::Active => {}
    }
    if let Some(kind) = kind.filter(|k| *k != r.record.kind) {
        return refuse(format!(
            "{id} is a {}, not a {kind} ({role})",
            r.record.kind
        ));
    }
    Ok(&r.record)
}

/// The schedule of a link or unlink (its second id).
fn linked_schedule<'i>(instance: &'i Instance, id: &str) -> Result<&'i Record, StandaloneError> {
    active(
        instance,
        id,
        Some(Kind::Scheduled),
        "the second id is the schedule",
    )
}

/// A new record: an id not taken, and valid once its state is evaluated.
fn check_add(instance: &Instance, record: &Record, now: Timestamp) -> Result<(), StandaloneError> {
    if let Some(r) = instance.derived.get(&record.id) {
        let by = r
            .added_by
            .map_or("seeded history".to_owned(), |e| format!("entry {e}"));
        return refuse(format!(
            "a record with id {} already exists ({by})",
            record.id
        ));
    }
    let mut probe = record.clone();
    crate::schedule::evaluate_states(std::slice::from_mut(&mut probe), now);
    validate_records(&[probe]).map_err(|e| {
        StandaloneError::Refused(format!("nothing was recorded: {}: {}", e.field, e.problem))
    })
}

/// A link of an active completion to an active schedule not already linked to it.
fn check_link(
    instance: &Instance,
    completion_id: &str,
    schedule_id: &str,
) -> Result<(), StandaloneError> {
    active(
        instance,
        completion_id,
        Some(Kind::Completed),
        "the first id is the completion",
    )?;
    let s = linked_schedule(instance, schedule_id)?;
    if s.completion_record_id.as_deref() == Some(completion_id)
        && s.fulfillment_origin != Some(FulfillmentOrigin::Auto)
    {
        return refuse(format!(
            "{completion_id} is already linked to {schedule_id}"
        ));
    }
    Ok(())
}

/// An unlink of a schedule linked to that completion, not by a manual completion.
fn check_unlink(
    instance: &Instance,
    completion_id: &str,
    schedule_id: &str,
) -> Result<(), StandaloneError> {
    let s = linked_schedule(instance, schedule_id)?;
    if s.completion_record_id.as_deref() != Some(completion_id) {
        return refuse(format!("{schedule_id} is not linked to {completion_id}"));
    }
    if s.fulfillment_origin == Some(FulfillmentOrigin::Manual) {
        return refuse(format!(
            "{schedule_id} was completed manually; undo that entry instead"
        ));
    }
    Ok(())
}

/// An undo of an entry that exists, is not an undo, and is not undone yet.
fn check_undo(instance: &Instance, entry: u64) -> Result<(), StandaloneError> {
    let Some(target) = instance.entries.iter().find(|e| e.entry == entry) else {
        return refuse(format!("no ledger entry {entry}"));
    };
    if matches!(target.action, Action::Undo { .. }) {
        return refuse(format!(
            "entry {entry} is itself an undo; undo entries cannot be undone"
        ));
    }
    if matches!(target.action, Action::Restore { .. }) {
        return refuse(format!(
            "entry {entry} is a restore; restore another backup instead (resetctl restore DIR)"
        ));
    }
    if let Some(by) = instance
        .entries
        .iter()
        .find(|e| matches!(e.action, Action::Undo { entry: t } if t == entry))
    {
        return refuse(format!(
            "entry {entry} was already undone by entry {}",
            by.entry
        ));
    }
    Ok(())
}
