//! The change diff: what became visible, changed or went away between two
//! published versions.
//!
//! A pure function of two record lists, so every way of publishing (sync,
//! seed, `record`, `publish`, the periodic republish, a rollback) yields
//! changes, and every consumer (the SSE stream, the webhook outbox) sees the
//! same ones. "Visible" is the API's own rule for a `kind` filter
//! ([`visible_in`]): a schedule that turns `fulfilled` leaves `all` (removed
//! there) while it stays in `reset_scheduled` (updated there).

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::model::Record;
use crate::model::{compare_ids, visible_in, KindFilter};

/// What happened to one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// Newly visible.
    Created,
    /// Still visible, with some field changed (a state turning `elapsed`,
    /// a fulfilment, an edit).
    Updated,
    /// No longer visible (dismissed, undone, or out of the filter).
    Removed,
}

impl ChangeKind {
    /// The event type: `record.created`, `record.updated`, `record.removed`.
    pub fn event_type(self) -> &'static str {
        match self {
            ChangeKind::Created => "record.created",
            ChangeKind::Updated => "record.updated",
            ChangeKind::Removed => "record.removed",
        }
    }
}

/// One change: the record as the API serves it (for a removal, as it was
/// last served).
#[derive(Clone, Debug, PartialEq)]
pub struct Change<'a> {
    /// What happened.
    pub kind: ChangeKind,
    /// The record.
    pub record: &'a Record,
}

/// The changes from `old` to `new` as seen through `filter`, in a stable
/// order: by record id (numeric ids as numbers), so a consumer can apply
/// them one by one and two consumers list them alike.
pub fn diff<'a>(old: &'a [Record], new: &'a [Record], filter: KindFilter) -> Vec<Change<'a>> {
    let before: HashMap<&str, &Record> = old
        .iter()
        .filter(|r| visible_in(r, filter))
        .map(|r| (r.id.as_str(), r))
        .collect();
    let mut changes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for record in new.iter().filter(|r| visible_in(r, filter)) {
        seen.insert(record.id.as_str());
        match before.get(record.id.as_str()) {
            None => changes.push(Change {
                kind: ChangeKind::Created,
                record,
            }),
            Some(previous) if *previous != record => changes.push(Change {
                kind: ChangeKind::Updated,
                record,
            }),
            Some(_) => {}
        }
    }
    for (id, record) in &before {
        if !seen.contains(id) {
            changes.push(Change {
                kind: ChangeKind::Removed,
                record,
            });
        }
    }
    changes.sort_by(|a, b| by_id(a.record, b.record));
    changes
}

fn by_id(a: &Record, b: &Record) -> Ordering {
    compare_ids(&a.id, &b.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ScheduleState;

    fn record(id: &str, kind: &str, state: Option<&str>) -> Record {
        let scheduled = kind == "reset_scheduled";
        serde_json::from_value(serde_json::json!({
            "id": id, "kind": kind, "resetType": "global",
            "announcedAt": "2026-11-20T10:00:00.000Z", "effectiveAt": "2026-11-21T12:00:00.000Z",
            "text": "t", "confidence": 0.9, "scope": null,
            "source": {"origin": "x", "postId": id, "handle": "h", "url": format!("https://x.com/h/status/{id}")},
            "schedulePrecision": if scheduled { Some("datetime") } else { None },
            "scheduleBasis": if scheduled { Some("explicit") } else { None },
            "scheduleWindow": if scheduled { Some(serde_json::json!({"startAt": "2026-11-21T12:00:00.000Z", "endAt": "2026-11-21T12:00:00.000Z"})) } else { None },
            "scheduleState": state,
            "completedAt": if scheduled { None } else { Some("2026-11-21T12:00:00.000Z") },
            "completionRecordId": null, "fulfillmentOrigin": null, "relatedRecordIds": []
        }))
        .expect("a valid record")
    }

    fn kinds(changes: &[Change]) -> Vec<(ChangeKind, String)> {
        changes
            .iter()
            .map(|c| (c.kind, c.record.id.clone()))
            .collect()
    }

    #[test]
    fn created_updated_removed_in_id_order() {
        let old = vec![
            record("10", "reset_scheduled", Some("pending")),
            record("9", "reset_completed", None),
            record("11", "reset_completed", None),
        ];
        let mut elapsed = record("10", "reset_scheduled", Some("pending"));
        elapsed.schedule_state = Some(ScheduleState::Elapsed);
        let new = vec![
            elapsed,
            record("11", "reset_completed", None),
            record("100", "reset_completed", None),
        ];
        assert_eq!(
            kinds(&diff(&old, &new, KindFilter::All)),
            [
                (ChangeKind::Removed, "9".to_owned()),
                (ChangeKind::Updated, "10".to_owned()),
                (ChangeKind::Created, "100".to_owned()),
            ]
        );
        assert!(
            diff(&new, &new, KindFilter::All).is_empty(),
            "no change, no event"
        );
    }

    #[test]
    fn a_fulfilment_leaves_all_but_updates_the_schedule_list() {
        let old = vec![record("10", "reset_scheduled", Some("pending"))];
        let mut fulfilled = record("10", "reset_scheduled", Some("pending"));
        fulfilled.schedule_state = Some(ScheduleState::Fulfilled);
        let new = vec![fulfilled, record("11", "reset_completed", None)];
        assert_eq!(
            kinds(&diff(&old, &new, KindFilter::All)),
            [
                (ChangeKind::Removed, "10".to_owned()),
                (ChangeKind::Created, "11".to_owned())
            ]
        );
        assert_eq!(
            kinds(&diff(&old, &new, KindFilter::Scheduled)),
            [(ChangeKind::Updated, "10".to_owned())]
        );
        assert_eq!(
            kinds(&diff(&old, &new, KindFilter::Completed)),
            [(ChangeKind::Created, "11".to_owned())]
        );
        // A rollback is the same diff the other way round.
        assert_eq!(
            kinds(&diff(&new, &old, KindFilter::All)),
            [
                (ChangeKind::Created, "10".to_owned()),
                (ChangeKind::Removed, "11".to_owned())
            ]
        );
    }
}
