//! The verdict of the status page and the badge: was there a reset during
//! a given day, and what is the next one?
//!
//! The rules, in the order the original page applies them:
//!
//! 1. **Unknown** when the data cannot be trusted: `meta.lastSuccessfulCheckAt`
//!    is missing or older than [`TRUST_HOURS`] hours, or (upstream mode) the
//!    data source's status is not `ok`.
//! 2. **Yes** when a completion happened during the day, or a schedule's
//!    time arrived during it (its window started that day, no later than
//!    now). A confirmed reset (a completion, or a fulfilled schedule) wins:
//!    the newest confirmed one is shown, and a schedule of the day whose
//!    time came after it and is not confirmed is only told beside it
//!    ([`Verdict::Yes`]'s `later`), so a day with a reset stays a yes
//!    whatever falls due later that day. Without a confirmed reset the
//!    newest schedule whose time has come is shown, with how sure we are:
//!    due (not confirmed yet: a completion up to the matcher's tolerance
//!    after the window's end still fulfils it), or not confirmed (that
//!    tolerance has passed; the instant push messages tell it,
//!    [`crate::remind::unconfirmed_at`]).
//! 3. **No** otherwise, with the next reset when one is announced.
//!
//! Pure functions of the records, `meta` and an instant: the page's own
//! script applies the same rules to the visitor's local day.

use crate::model::{DataSourceStatus, Kind, Record, ScheduleState, Timestamp};

/// How old `lastSuccessfulCheckAt` may be before the data is not trusted.
pub const TRUST_HOURS: i64 = 30;

/// Whether a check at `checked_at` is older than [`TRUST_HOURS`] at `now`:
/// the page, the badge and `resetctl status` distrust it alike.
pub fn check_overdue(checked_at: Timestamp, now: Timestamp) -> bool {
    now.as_millis() - checked_at.as_millis() > TRUST_HOURS * 3_600_000
}

/// One day as a half-open UTC interval `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Day {
    /// The first instant of the day.
    pub start: Timestamp,
    /// The first instant after it.
    pub end: Timestamp,
}

impl Day {
    /// The UTC day that contains `at`.
    pub fn utc_of(at: Timestamp) -> Self {
        const DAY: i64 = 86_400_000;
        let start = at.as_millis().div_euclid(DAY) * DAY;
        Day {
            start: Timestamp::from_millis(start),
            end: Timestamp::from_millis(start + DAY),
        }
    }

    /// Whether `at` falls on the day.
    pub fn contains(self, at: Timestamp) -> bool {
        self.start <= at && at < self.end
    }
}

/// Why the data cannot be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distrust {
    /// `meta.lastSuccessfulCheckAt` is null.
    NeverChecked,
    /// The last successful check is older than [`TRUST_HOURS`].
    Stale {
        /// When it was.
        checked_at: Timestamp,
    },
    /// The upstream data source reports this status (not `ok`).
    Source(DataSourceStatus),
}

/// What the records say about one record's reset time on the day.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitKind {
    /// A completion record: the reset happened.
    Completed,
    /// A schedule confirmed by a completion.
    Fulfilled,
    /// A schedule not confirmed: the matcher's tolerance after its
    /// window's end passed without a completion.
    Elapsed,
    /// A schedule whose time has come, not confirmed yet (in its window,
    /// or within the tolerance after it).
    Due,
}

/// The record that makes the day a "yes".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit<'a> {
    /// The record.
    pub record: &'a Record,
    /// When the reset happened or was due.
    pub at: Timestamp,
    /// How sure the records are.
    pub kind: HitKind,
}

impl HitKind {
    /// Whether the records confirm the reset (a completion, or a
    /// fulfilled schedule).
    pub fn is_confirmed(self) -> bool {
        matches!(self, HitKind::Completed | HitKind::Fulfilled)
    }
}

/// The answer to "did it reset?".
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict<'a> {
    /// The data cannot be trusted.
    Unknown(Distrust),
    /// A reset during the day: `hit` is the one shown, `later` a schedule
    /// of the day whose time came after a confirmed `hit` and that is not
    /// confirmed (due, or not confirmed), told beside it, never instead.
    Yes {
        /// The newest confirmed reset of the day, else the newest
        /// schedule of the day whose time has come.
        hit: Hit<'a>,
        /// The newest schedule of the day whose time came after a
        /// confirmed `hit` and that is not confirmed; `None` when `hit`
        /// is not confirmed itself.
        later: Option<Hit<'a>>,
    },
    /// None during the day.
    No,
}

impl Verdict<'_> {
    /// The verdict's machine name (`yes`, `no`, `unknown`), as the page's
    /// script and the tests read it.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Unknown(_) => "unknown",
            Verdict::Yes { .. } => "yes",
            Verdict::No => "no",
        }
    }
}

/// What the verdict reads from `meta`.
#[derive(Clone, Copy, Debug)]
pub struct Trust {
    /// `meta.lastSuccessfulCheckAt`.
    pub last_successful_check_at: Option<Timestamp>,
    /// `meta.dataSource.status` (upstream mode only).
    pub source_status: Option<DataSourceStatus>,
}

impl Trust {
    /// What `view`'s `meta` says about trust.
    pub fn of(view: &crate::query::PublishedView) -> Self {
        Trust {
            last_successful_check_at: view.last_successful_check_at(),
            source_status: view.sync_status(),
        }
    }

    /// Why the data cannot be trusted at `now`, if it cannot.
    pub fn distrust(&self, now: Timestamp) -> Option<Distrust> {
        let Some(checked_at) = self.last_successful_check_at else {
            return Some(Distrust::NeverChecked);
        };
        if check_overdue(checked_at, now) {
            return Some(Distrust::Stale { checked_at });
        }
        match self.source_status {
            Some(status) if status != DataSourceStatus::Ok => Some(Distrust::Source(status)),
            _ => None,
        }
    }
}

/// When `record`'s reset happened or was due, and how sure that is, if
/// its time has come by `now` (`tolerance_ms`: the matcher's).
pub fn reset_time(
    record: &Record,
    now: Timestamp,
    tolerance_ms: i64,
) -> Option<(Timestamp, HitKind)> {
    let (at, kind) = match record.kind {
        Kind::Completed => (
            record.completed_at.or(record.effective_at)?,
            HitKind::Completed,
        ),
        Kind::Scheduled => {
            let at = record
                .schedule_window
                .map(|w| w.start_at)
                .or(record.effective_at)?;
            let kind = match record.schedule_state? {
                ScheduleState::Fulfilled => HitKind::Fulfilled,
                ScheduleState::Unknown => return None,
                ScheduleState::Elapsed | ScheduleState::Pending
                    if crate::schedule::told_unconfirmed(record, tolerance_ms, now) =>
                {
                    HitKind::Elapsed
                }
                ScheduleState::Elapsed | ScheduleState::Pending => HitKind::Due,
            };
            (at, kind)
        }
    };
    (at <= now).then_some((at, kind))
}

/// The verdict for `day` as of `now`, from `records` (those visible under
/// `all`), `trust` and the matcher's `tolerance_ms`.
pub fn verdict<'a>(
    records: impl IntoIterator<Item = &'a Record>,
    trust: Trust,
    day: Day,
    now: Timestamp,
    tolerance_ms: i64,
) -> Verdict<'a> {
    if let Some(why) = trust.distrust(now) {
        return Verdict::Unknown(why);
    }
    let hits: Vec<Hit<'a>> = records
        .into_iter()
        .filter_map(|record| {
            let (at, kind) = reset_time(record, now, tolerance_ms)?;
            day.contains(at).then_some(Hit { record, at, kind })
        })
        .collect();
    // The newest of each; among equal times a completion (it is the
    // confirmation), then the last listed.
    let newest = |confirmed: bool| {
        hits.iter()
            .filter(|hit| hit.kind.is_confirmed() == confirmed)
            .max_by_key(|hit| (hit.at, hit.kind == HitKind::Completed))
            .copied()
    };
    match (newest(true), newest(false)) {
        (Some(hit), unconfirmed) => Verdict::Yes {
            hit,
            later: unconfirmed.filter(|u| u.at > hit.at),
        },
        (None, Some(hit)) => Verdict::Yes { hit, later: None },
        (None, None) => Verdict::No,
    }
}

/// The next reset: the pending schedule with a window that starts soonest
/// among those not ended at `now` (one in its window now counts).
pub fn next_reset<'a>(
    records: impl IntoIterator<Item = &'a Record>,
    now: Timestamp,
) -> Option<&'a Record> {
    soonest(records, |w| w.end_at >= now)
}

/// The next reset still to come: the pending schedule whose window starts
/// soonest after `now` (the badge's "next"; a window open now is the
/// verdict's, not next).
pub fn next_start<'a>(
    records: impl IntoIterator<Item = &'a Record>,
    now: Timestamp,
) -> Option<&'a Record> {
    soonest(records, |w| w.start_at > now)
}

/// The pending schedule whose window starts soonest among those `keep`
/// keeps (among equal starts the smallest id).
fn soonest<'a>(
    records: impl IntoIterator<Item = &'a Record>,
    keep: impl Fn(crate::model::ScheduleWindow) -> bool,
) -> Option<&'a Record> {
    records
        .into_iter()
        .filter(|r| r.kind == Kind::Scheduled && r.schedule_state == Some(ScheduleState::Pending))
        .filter(|r| r.schedule_window.is_some_and(&keep))
        .min_by(|a, b| {
            let start = |r: &Record| r.schedule_window.map(|w| w.start_at);
            start(a).cmp(&start(b)).then_with(|| a.id.cmp(&b.id))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    fn completion(id: &str, completed: &str) -> Record {
        serde_json::from_value(serde_json::json!({
            "id": id, "kind": "reset_completed", "resetType": "global",
            "announcedAt": completed, "effectiveAt": completed, "text": null, "confidence": 0.9,
            "scope": null, "source": {"origin": "x", "postId": id, "handle": "h", "url": null},
            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null,
            "scheduleState": null, "completedAt": completed, "completionRecordId": null,
            "fulfillmentOrigin": null, "relatedRecordIds": []
        }))
        .unwrap()
    }

    fn schedule(id: &str, state: &str, start: &str, end: &str) -> Record {
        serde_json::from_value(serde_json::json!({
            "id": id, "kind": "reset_scheduled", "resetType": "global",
            "announcedAt": "2026-11-01T00:00:00.000Z", "effectiveAt": start, "text": null,
            "confidence": 0.9, "scope": null,
            "source": {"origin": "x", "postId": id, "handle": "h", "url": null},
            "schedulePrecision": "datetime", "scheduleBasis": "explicit",
            "scheduleWindow": {"startAt": start, "endAt": end}, "scheduleState": state,
            "completedAt": null, "completionRecordId": null, "fulfillmentOrigin": null,
            "relatedRecordIds": []
        }))
        .unwrap()
    }

    /// The matcher's default tolerance, 180 minutes.
    const TOLERANCE: i64 = 180 * 60_000;

    fn checked(text: &str) -> Trust {
        Trust {
            last_successful_check_at: Some(at(text)),
            source_status: None,
        }
    }

    #[test]
    fn a_check_exactly_thirty_hours_old_is_still_trusted() {
        let trust = checked("2026-11-20T00:00:00.000Z");
        assert_eq!(trust.distrust(at("2026-11-21T06:00:00.000Z")), None);
        assert_eq!(
            trust.distrust(at("2026-11-21T06:00:00.001Z")),
            Some(Distrust::Stale {
                checked_at: at("2026-11-20T00:00:00.000Z")
            })
        );
        let never = Trust {
            last_successful_check_at: None,
            source_status: None,
        };
        assert_eq!(
            never.distrust(at("2026-11-21T00:00:00.000Z")),
            Some(Distrust::NeverChecked)
        );
        let failing = Trust {
            source_status: Some(DataSourceStatus::Stale),
            ..checked("2026-11-21T00:00:00.000Z")
        };
        assert_eq!(
            failing.distrust(at("2026-11-21T00:00:00.000Z")),
            Some(Distrust::Source(DataSourceStatus::Stale))
        );
        // A mirror whose sync is ok is trusted on its check alone.
        let syncing = Trust {
            source_status: Some(DataSourceStatus::Ok),
            ..checked("2026-11-21T00:00:00.000Z")
        };
        assert_eq!(syncing.distrust(at("2026-11-21T00:00:00.000Z")), None);
    }

    #[test]
    fn the_day_is_half_open_in_a_positive_and_a_negative_offset() {
        // The visitor's day at +08:00 is [16:00Z the day before, 16:00Z).
        let plus_eight = Day {
            start: at("2026-11-20T16:00:00.000Z"),
            end: at("2026-11-21T16:00:00.000Z"),
        };
        // At -08:00 it is [08:00Z, 08:00Z the day after).
        let minus_eight = Day {
            start: at("2026-11-21T08:00:00.000Z"),
            end: at("2026-11-22T08:00:00.000Z"),
        };
        let now = at("2026-11-22T12:00:00.000Z");
        let trust = checked("2026-11-22T11:00:00.000Z");
        for (day, on_start, before_start, on_end) in [
            (
                plus_eight,
                "2026-11-20T16:00:00.000Z",
                "2026-11-20T15:59:59.999Z",
                "2026-11-21T16:00:00.000Z",
            ),
            (
                minus_eight,
                "2026-11-21T08:00:00.000Z",
                "2026-11-21T07:59:59.999Z",
                "2026-11-22T08:00:00.000Z",
            ),
        ] {
            let first = [completion("1", on_start)];
            assert_eq!(
                verdict(&first, trust, day, now, TOLERANCE).name(),
                "yes",
                "{on_start}"
            );
            let before = [completion("2", before_start)];
            assert_eq!(
                verdict(&before, trust, day, now, TOLERANCE).name(),
                "no",
                "{before_start}"
            );
            let after = [completion("3", on_end)];
            assert_eq!(
                verdict(&after, trust, day, now, TOLERANCE).name(),
                "no",
                "{on_end}"
            );
        }
        assert_eq!(
            Day::utc_of(at("2026-11-21T23:59:59.999Z")).end,
            at("2026-11-22T00:00:00.000Z")
        );
        assert_eq!(
            Day::utc_of(at("2026-11-22T00:00:00.000Z")).start,
            at("2026-11-22T00:00:00.000Z")
        );
    }

    #[test]
    fn a_window_starting_now_is_due_and_one_starting_later_is_next() {
        let now = at("2026-11-21T10:00:00.000Z");
        let trust = checked("2026-11-21T09:00:00.000Z");
        let day = Day::utc_of(now);
        let starting_now = [schedule(
            "10",
            "pending",
            "2026-11-21T10:00:00.000Z",
            "2026-11-21T12:00:00.000Z",
        )];
        match verdict(&starting_now, trust, day, now, TOLERANCE) {
            Verdict::Yes { hit, later: None } => {
                assert_eq!(hit.kind, HitKind::Due);
                assert_eq!(hit.at, now);
            }
            other => panic!("{other:?}"),
        }
        let a_moment_later = [schedule(
            "11",
            "pending",
            "2026-11-21T10:00:00.001Z",
            "2026-11-21T12:00:00.000Z",
        )];
        assert_eq!(
            verdict(&a_moment_later, trust, day, now, TOLERANCE).name(),
            "no"
        );
        assert_eq!(
            next_reset(&a_moment_later, now).map(|r| r.id.as_str()),
            Some("11")
        );
        // A window that ends exactly now still counts as next; one that ended does not.
        let ending_now = [schedule(
            "12",
            "pending",
            "2026-11-21T08:00:00.000Z",
            "2026-11-21T10:00:00.000Z",
        )];
        assert_eq!(
            next_reset(&ending_now, now).map(|r| r.id.as_str()),
            Some("12")
        );
        let ended = [schedule(
            "13",
            "pending",
            "2026-11-21T08:00:00.000Z",
            "2026-11-21T09:59:59.999Z",
        )];
        assert_eq!(next_reset(&ended, now), None);
        // An unknown state is no reset; among equal times a completion wins.
        let unknown = [schedule(
            "14",
            "unknown",
            "2026-11-21T09:00:00.000Z",
            "2026-11-21T09:00:00.000Z",
        )];
        assert_eq!(verdict(&unknown, trust, day, now, TOLERANCE).name(), "no");
        let both = [
            schedule(
                "15",
                "fulfilled",
                "2026-11-21T09:00:00.000Z",
                "2026-11-21T09:00:00.000Z",
            ),
            completion("16", "2026-11-21T09:00:00.000Z"),
        ];
        match verdict(&both, trust, day, now, TOLERANCE) {
            Verdict::Yes { hit, later: None } => assert_eq!(hit.kind, HitKind::Completed),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_passed_window_is_due_until_the_tolerance_then_not_confirmed() {
        let trust = checked("2026-11-21T15:00:00.000Z");
        // An exact time at 15:29, served elapsed as soon as it passed.
        let passed = [schedule(
            "20",
            "elapsed",
            "2026-11-21T15:29:00.000Z",
            "2026-11-21T15:29:00.000Z",
        )];
        let kind_at =
            |now: &str| match verdict(&passed, trust, Day::utc_of(at(now)), at(now), TOLERANCE) {
                Verdict::Yes { hit, later: None } => hit.kind,
                other => panic!("{other:?}"),
            };
        assert_eq!(kind_at("2026-11-21T15:29:18.000Z"), HitKind::Due);
        assert_eq!(kind_at("2026-11-21T18:28:59.999Z"), HitKind::Due);
        assert_eq!(kind_at("2026-11-21T18:29:00.000Z"), HitKind::Elapsed);
    }

    #[test]
    fn a_confirmed_reset_stays_the_answer_whatever_falls_due_later_that_day() {
        let trust = checked("2026-11-21T20:00:00.000Z");
        let mut fulfilled = schedule(
            "31",
            "fulfilled",
            "2026-11-21T06:00:00.000Z",
            "2026-11-21T06:00:00.000Z",
        );
        fulfilled.completed_at = Some(at("2026-11-21T06:02:00.000Z"));
        // Three confirmed resets, then a schedule of 15:00 that nothing confirms.
        let day = [
            completion("30", "2026-11-21T01:00:00.000Z"),
            fulfilled,
            completion("32", "2026-11-21T11:00:00.000Z"),
            schedule(
                "33",
                "elapsed",
                "2026-11-21T15:00:00.000Z",
                "2026-11-21T15:00:00.000Z",
            ),
            // An earlier one not confirmed is not news beside a later reset.
            schedule(
                "34",
                "elapsed",
                "2026-11-21T00:30:00.000Z",
                "2026-11-21T00:30:00.000Z",
            ),
        ];
        let shown = |now: &str| match verdict(&day, trust, Day::utc_of(at(now)), at(now), TOLERANCE)
        {
            Verdict::Yes { hit, later } => (
                (hit.record.id.as_str(), hit.kind),
                later.map(|l| (l.record.id.as_str(), l.kind)),
            ),
            other => panic!("{other:?}"),
        };
        let confirmed = ("32", HitKind::Completed);
        // Before 15:00 nothing later has come.
        assert_eq!(shown("2026-11-21T14:59:59.999Z"), (confirmed, None));
        // Due, then not confirmed once the tolerance has passed: told beside the yes.
        assert_eq!(
            shown("2026-11-21T15:00:00.000Z"),
            (confirmed, Some(("33", HitKind::Due)))
        );
        assert_eq!(
            shown("2026-11-21T18:00:00.000Z"),
            (confirmed, Some(("33", HitKind::Elapsed)))
        );
        // A schedule due at the same instant as the confirmed reset is not "later".
        let same = [
            completion("40", "2026-11-21T09:00:00.000Z"),
            schedule(
                "41",
                "pending",
                "2026-11-21T09:00:00.000Z",
                "2026-11-21T10:00:00.000Z",
            ),
        ];
        let now = at("2026-11-21T09:30:00.000Z");
        match verdict(&same, trust, Day::utc_of(now), now, TOLERANCE) {
            Verdict::Yes { hit, later: None } => assert_eq!(hit.record.id, "40"),
            other => panic!("{other:?}"),
        }
    }
}
