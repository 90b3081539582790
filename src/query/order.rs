//! Filters and the total ordering (spec 4.4, docs/spec/decisions.md "Ordering details",
//! revised: a manual completion is placed by its completion time).
//!
//! "Descending" puts null last; ids that are both numeric compare as
//! numbers, otherwise bytewise. Ids are unique, so every order is total and
//! a page boundary never depends on the request.

use std::cmp::Ordering;

use crate::model::{compare_ids, visible_in, KindFilter, Record, ScheduleState};

/// Indexes of the records in `filter`'s list, in the public order.
pub fn order_for(records: &[Record], filter: KindFilter) -> Vec<u32> {
    let mut indexes: Vec<u32> = (0..records.len() as u32)
        .filter(|&i| visible_in(&records[i as usize], filter))
        .collect();
    let cmp = match filter {
        KindFilter::Scheduled => compare_scheduled,
        KindFilter::All | KindFilter::Completed => compare_live,
    };
    indexes.sort_unstable_by(|&a, &b| cmp(&records[a as usize], &records[b as usize]));
    indexes
}

/// When a record happened, for the order: its announcement, else (a
/// manual completion) its completion, else its effective time.
fn placed_at(record: &Record) -> Option<crate::model::Timestamp> {
    record
        .announced_at
        .or(record.completed_at)
        .or(record.effective_at)
}

/// Descending with `None` last.
fn desc_nulls_last<T: Ord>(a: Option<T>, b: Option<T>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => b.cmp(&a),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// `reset_scheduled`: effectiveAt descending, then id descending.
fn compare_scheduled(a: &Record, b: &Record) -> Ordering {
    desc_nulls_last(a.effective_at, b.effective_at).then_with(|| compare_ids(&b.id, &a.id))
}

/// `all` and `reset_completed`: pending schedules first (soonest window start,
/// then id ascending); then announcedAt, completedAt, effectiveAt, id, each
/// descending, where a record without `announcedAt` (a manual completion)
/// takes its `completedAt`, else its `effectiveAt`, in `announcedAt`'s place:
/// the newest completion is first whether or not it was announced.
fn compare_live(a: &Record, b: &Record) -> Ordering {
    let pending_start = |r: &Record| {
        (r.schedule_state == Some(ScheduleState::Pending))
            .then(|| r.schedule_window.map(|w| w.start_at))
    };
    match (pending_start(a), pending_start(b)) {
        (Some(sa), Some(sb)) => {
            // Ascending, a (never expected) missing window last.
            let by_start = match (sa, sb) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            };
            by_start.then_with(|| compare_ids(&a.id, &b.id))
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => desc_nulls_last(placed_at(a), placed_at(b))
            .then_with(|| desc_nulls_last(a.completed_at, b.completed_at))
            .then_with(|| desc_nulls_last(a.effective_at, b.effective_at))
            .then_with(|| compare_ids(&b.id, &a.id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::concerns_plan;

    #[test]
    fn a_plan_matches_its_own_records_and_those_for_all_or_unknown_plans() {
        let mut record: Record = serde_json::from_value(serde_json::json!({
            "id": "1", "kind": "reset_completed", "resetType": "global",
            "announcedAt": null, "effectiveAt": null, "text": null, "confidence": null,
            "scope": null,
            "source": {"origin": "x", "postId": "1", "handle": "h", "url": null},
            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null,
            "scheduleState": null, "completedAt": null, "completionRecordId": null,
            "fulfillmentOrigin": null, "relatedRecordIds": []
        }))
        .unwrap();
        assert!(
            concerns_plan(&record, "pro"),
            "a null scope concerns every plan"
        );
        let with_plans = |plans: &[&str]| crate::model::Scope {
            plans: plans.iter().map(|p| p.to_string()).collect(),
            windows: vec!["weekly".into()],
        };
        for (plans, pro, nobody) in [
            (&["pro"][..], true, false),
            (&["plus"][..], false, false),
            (&["plus", "pro"][..], true, false),
            (&["all"][..], true, true),
            (&["unknown"][..], true, true),
            (&[][..], false, false),
        ] {
            record.scope = Some(with_plans(plans));
            assert_eq!(concerns_plan(&record, "pro"), pro, "{plans:?}");
            assert_eq!(concerns_plan(&record, "nobody"), nobody, "{plans:?}");
        }
    }

    #[test]
    fn numeric_ids_compare_as_numbers() {
        assert_eq!(compare_ids("9", "10"), Ordering::Less);
        assert_eq!(compare_ids("0010", "9"), Ordering::Greater);
        assert_eq!(
            compare_ids("2086972802457063486", "2086972802457063400"),
            Ordering::Greater
        );
        assert_eq!(compare_ids("op_b", "op_a"), Ordering::Greater);
        assert_eq!(compare_ids("9", "op_a"), Ordering::Less);
        assert_eq!(
            compare_ids("seed:9", "seed:10"),
            Ordering::Greater,
            "not numeric: bytewise"
        );
    }
}
