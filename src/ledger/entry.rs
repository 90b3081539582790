//! Ledger entries: one operator action each, never rewritten.

use serde::{Deserialize, Serialize};

use crate::model::{Record, ResetType, SchedulePrecision, ScheduleWindow, Timestamp};

/// One line of the ledger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// 1-based, in append order.
    pub entry: u64,
    /// When it was recorded.
    pub at: Timestamp,
    /// Who recorded it (`--actor`, else `$USER@host`).
    pub actor: String,
    /// What was done.
    pub action: Action,
}

/// Fields an operator may edit on a record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    /// New text (`Some(None)` clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Option<String>>,
    /// New confidence (`Some(None)` clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Option<f64>>,
    /// New reset type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_type: Option<ResetType>,
    /// New effective time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_at: Option<Timestamp>,
}

/// What an entry does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// A new schedule or completion (from a source post or an operator note).
    Add {
        /// The record as recorded (state fields are derived at publish).
        record: Box<Record>,
    },
    /// A manual completion (`manual:` id) that fulfils these schedules.
    Complete {
        /// The manual completion's id.
        id: String,
        /// When the reset happened.
        completed_at: Timestamp,
        /// The schedules it fulfils.
        schedule_ids: Vec<String>,
    },
    /// An operator links a completion to a schedule.
    Link {
        /// The completion.
        completion_id: String,
        /// The schedule.
        schedule_id: String,
    },
    /// An operator removes a link (also an automatic match).
    Unlink {
        /// The completion.
        completion_id: String,
        /// The schedule.
        schedule_id: String,
    },
    /// The record leaves every filter.
    Dismiss {
        /// The record.
        id: String,
    },
    /// A schedule's window changes (`record move`): it is announced anew
    /// for the new window.
    Move {
        /// The schedule.
        id: String,
        /// Its precision for the new window.
        precision: SchedulePrecision,
        /// The new window.
        window: ScheduleWindow,
    },
    /// Fields of a record change.
    Edit {
        /// The record.
        id: String,
        /// The new values.
        changes: Edit,
    },
    /// Reverts one earlier entry.
    Undo {
        /// The entry reverted.
        entry: u64,
    },
    /// The ledger was put back from a backup (`resetctl restore`): the
    /// entries before this one are the backup's, numbered as they were;
    /// this one is numbered past every entry the ledger held before, so no
    /// number (nor a `manual:entry-N` id made from it) is issued twice.
    Restore {
        /// When the backup's data was last changed.
        backup_of: Timestamp,
    },
    /// A successful monitor check (`meta.lastSuccessfulCheckAt`).
    Checked {
        /// When the check succeeded.
        at: Timestamp,
    },
}

impl Action {
    /// One line for `record log`.
    pub fn describe(&self) -> String {
        match self {
            Action::Add { record } => format!("add {} {}", record.kind, record.id),
            Action::Complete {
                id,
                schedule_ids,
                completed_at,
            } => {
                format!(
                    "complete {} at {completed_at} as {id}",
                    schedule_ids.join(", ")
                )
            }
            Action::Link {
                completion_id,
                schedule_id,
            } => format!("link {completion_id} → {schedule_id}"),
            Action::Unlink {
                completion_id,
                schedule_id,
            } => format!("unlink {completion_id} → {schedule_id}"),
            Action::Dismiss { id } => format!("dismiss {id}"),
            Action::Move { id, window, .. } => format!(
                "move {id} to {}{}",
                window.start_at,
                if window.end_at > window.start_at {
                    format!(" – {}", window.end_at)
                } else {
                    String::new()
                }
            ),
            Action::Edit { id, .. } => format!("edit {id}"),
            Action::Undo { entry } => format!("undo entry {entry}"),
            Action::Checked { at } => format!("monitor check at {at}"),
            Action::Restore { backup_of } => format!("restore from a backup of {backup_of}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `ledger_line` fuzz target: a number read back from its
    /// own shortest form must be the same number, or a ledger entry (and a
    /// snapshot's confidence) changes between a write and a read.
    #[test]
    fn an_entry_reads_back_exactly_as_written() {
        let line = r#"{"entry":4,"at":"2026-11-20T10:02:00.000Z","actor":"ops","action":{"type":"edit","id":"101","changes":{"textmntry":null,"confidence":88888888888888888888888888888888888888888888888888888888888888888888880.5}}}"#;
        let entry: Entry = serde_json::from_str(line).unwrap();
        let again: Entry = serde_json::from_slice(&serde_json::to_vec(&entry).unwrap()).unwrap();
        assert_eq!(again, entry);
    }

    proptest::proptest! {
        /// Every confidence a record can hold survives a write and a read.
        #[test]
        fn every_confidence_reads_back_exactly(bits in 0u64..=0x3FF0_0000_0000_0000) {
            let confidence = f64::from_bits(bits);
            let text = serde_json::to_string(&confidence).unwrap();
            proptest::prop_assert_eq!(serde_json::from_str::<f64>(&text).unwrap(), confidence, "{}", text);
        }
    }
}
