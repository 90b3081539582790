//! Time events: what falls due for a schedule by the clock, derived from
//! the served records, the clock and the matcher's tolerance. Every push
//! channel (the record stream, webhooks, and through them every
//! ready-made format and e-mail) asks this module which fall due and when
//! the next one does; none decides it again.
//!
//! A schedule that is neither fulfilled nor withdrawn (served `pending`,
//! or `elapsed` once its window ended) has:
//!
//! | event | who gets it | due at | sent late until (its grace) |
//! |---|---|---|---|
//! | `reset.upcoming` (lead `L`) | reminder subscribers | window start − `L` | [`LATE_GRACE_MS`] after it was due, and never once the window has started |
//! | `reset.window_started` | reminder subscribers | window start | [`LATE_GRACE_MS`] after the start, and never once a longer window has ended |
//! | `reset.window_ended` | reminder subscribers | window end (a window longer than an instant, with a tolerance) | [`LATE_GRACE_MS`] after the end, and never once the schedule is unconfirmed |
//! | `schedule.elapsed` | every subscriber of schedules | window end + the matcher's tolerance | [`LATE_GRACE_MS`] after it was due |
//!
//! **One message per moment.** A window that is one instant (an exact
//! time) has one event at that instant, `reset.window_started` ("Reset due
//! now"), never a start and an end. When several `reset.upcoming` of one
//! schedule are due at once (a process was stopped), only the newest is
//! sent, and none once its window has started: "in 60 minutes" is never
//! sent after "in 10 minutes" was due. With a tolerance of 0 the window's
//! end and the unconfirmed schedule are one moment: only
//! `schedule.elapsed` is sent.
//!
//! **"Not confirmed" only when it is.** The served `scheduleState` turns
//! `elapsed` when the window ends (the API's rule), but a completion up to
//! the matcher's tolerance (`--match-tolerance-minutes`) later still
//! fulfils the schedule. So what is announced waits for the tolerance:
//! [`unconfirmed_at`] is the instant a schedule is told as not confirmed,
//! and the status page and the badge ([`crate::site::verdict`]) read the
//! same instant. A completion before it turns the next message into
//! "Reset completed" (a `schedule.fulfilled` change), with no "elapsed"
//! before it.
//!
//! **Never before it was announced.** A time event that fell due at or
//! before the publish that announced its schedule's window (created,
//! moved, or open again when its completion was withdrawn:
//! [`crate::changes::announces_window`]) is told by that announcement,
//! which says the time left ([`Reminder::told_by`]): a schedule recorded
//! two minutes before its time is "Reset announced: in 2 minutes", never
//! followed by "Reset in 10 minutes"; one open again after its window
//! started is "Open again: …", never followed by a late "window open".
//!
//! A time event is identified by its [`Reminder::key`]: the record, the
//! event, the lead and the instant it refers to. A schedule that moves gets
//! new keys (its reminders are armed again); one that is fulfilled or goes
//! away has none left to send.
//!
//! Pure: no I/O; the clock is a parameter.

use serde::Serialize;

use crate::model::{Kind, Record, ScheduleState, Timestamp};

/// The leads used when none are named: 60 and 10 minutes.
pub const DEFAULT_LEADS: [u32; 2] = [60, 10];

/// The longest lead: one day, in minutes.
pub const MAX_LEAD_MINUTES: u32 = 1440;

/// The most leads one subscriber may ask for.
pub const MAX_LEADS: usize = 5;

/// How late a reminder may still be sent after it fell due (a process was
/// stopped, or busy): 15 minutes, and never past the event it announces.
pub const LATE_GRACE_MS: i64 = 15 * 60 * 1000;

/// The event types of reminders (sent to those who ask for them), in the
/// order of a schedule's life.
pub const EVENT_TYPES: [&str; 3] = [
    "reset.upcoming",
    "reset.window_started",
    "reset.window_ended",
];

/// The event type of a schedule told as not confirmed: a time event every
/// subscriber of schedules gets, reminders or not.
pub const ELAPSED_EVENT_TYPE: &str = "schedule.elapsed";

/// What a time event announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReminderKind {
    /// The window starts in `lead` minutes.
    Upcoming,
    /// The window has started (an instant window: the reset is due now).
    WindowStarted,
    /// A longer window has ended, no completion recorded yet.
    WindowEnded,
    /// The matcher's tolerance after the window's end has passed with no
    /// completion: not confirmed. Not a reminder: every subscriber of
    /// schedules is told.
    Elapsed,
}

impl ReminderKind {
    const ALL: [ReminderKind; 4] = [
        ReminderKind::Upcoming,
        ReminderKind::WindowStarted,
        ReminderKind::WindowEnded,
        ReminderKind::Elapsed,
    ];

    /// The event type.
    pub const fn event_type(self) -> &'static str {
        match self {
            ReminderKind::Upcoming => EVENT_TYPES[0],
            ReminderKind::WindowStarted => EVENT_TYPES[1],
            ReminderKind::WindowEnded => EVENT_TYPES[2],
            ReminderKind::Elapsed => ELAPSED_EVENT_TYPE,
        }
    }

    /// The kind of an event type.
    pub fn of_event_type(event_type: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.event_type() == event_type)
    }

    /// Its place in a schedule's life (upcoming first, not confirmed last).
    pub fn rank(self) -> usize {
        Self::ALL
            .iter()
            .position(|k| *k == self)
            .unwrap_or(usize::MAX)
    }

    /// Whether only subscribers that asked for reminders get it.
    pub const fn is_reminder(self) -> bool {
        !matches!(self, ReminderKind::Elapsed)
    }
}

/// The instant a schedule that is neither fulfilled nor withdrawn is told
/// as not confirmed: its window's end plus the matcher's tolerance (a
/// completion up to then still fulfils it). None without a window.
pub fn unconfirmed_at(record: &Record, tolerance_ms: i64) -> Option<Timestamp> {
    (record.kind == Kind::Scheduled).then_some(
        record
            .schedule_window?
            .end_at
            .add_millis(tolerance_ms.max(0)),
    )
}

/// Leads in minutes before a window starts: 1 to [`MAX_LEADS`] distinct
/// values of 1 to [`MAX_LEAD_MINUTES`], longest first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Leads(Vec<u32>);

impl Default for Leads {
    fn default() -> Self {
        Self(DEFAULT_LEADS.to_vec())
    }
}

/// How one lead is written (the words of every refusal of one).
pub const LEAD_RULE: &str = "minutes (10 or 10m) or hours (1h) from 1 minute to 24 hours, without sign, leading zeros or spaces";

/// How a list of leads is written (`remind=` refusals).
pub fn leads_rule() -> String {
    format!("1 to {MAX_LEADS} leads before a window starts, comma-separated and none twice, each {LEAD_RULE}")
}

/// Why a list of leads was refused; the text names the item and the rule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LeadError {
    /// An item that is not a lead.
    #[error("{0:?} is not a lead: write {LEAD_RULE}")]
    Item(String),
    /// The same lead twice.
    #[error("the lead of {0} minutes is given twice")]
    Twice(u32),
    /// Too many.
    #[error("at most {MAX_LEADS} leads, got {0}")]
    TooMany(usize),
    /// None.
    #[error("no lead given")]
    Empty,
}

impl Leads {
    /// Parses `60m,10m` (also `60,10` or `1h,10m`): comma-separated, each
    /// a whole number of minutes (`m` or no unit) or hours (`h`).
    pub fn parse(text: &str) -> Result<Self, LeadError> {
        if text.is_empty() {
            return Err(LeadError::Empty);
        }
        let leads = text
            .split(',')
            .map(|item| parse_lead(item).ok_or_else(|| LeadError::Item(item.to_owned())))
            .collect::<Result<Vec<u32>, LeadError>>()?;
        Self::from_minutes(leads)
    }

    /// Leads from minutes (checked like [`Leads::parse`]).
    pub fn from_minutes(mut minutes: Vec<u32>) -> Result<Self, LeadError> {
        if minutes.is_empty() {
            return Err(LeadError::Empty);
        }
        if minutes.len() > MAX_LEADS {
            return Err(LeadError::TooMany(minutes.len()));
        }
        if let Some(bad) = minutes
            .iter()
            .find(|m| !(1..=MAX_LEAD_MINUTES).contains(*m))
        {
            return Err(LeadError::Item(bad.to_string()));
        }
        minutes.sort_unstable_by(|a, b| b.cmp(a));
        if let Some(w) = minutes.windows(2).find(|w| w[0] == w[1]) {
            return Err(LeadError::Twice(w[0]));
        }
        Ok(Self(minutes))
    }

    /// The minutes, longest first.
    pub fn minutes(&self) -> &[u32] {
        &self.0
    }

    /// Whether `minutes` is one of them.
    pub fn contains(&self, minutes: u32) -> bool {
        self.0.contains(&minutes)
    }

    /// The union of several lists (at most [`MAX_LEADS`] each; the union
    /// may hold more), longest first.
    pub fn union<'a>(all: impl IntoIterator<Item = &'a Leads>) -> Vec<u32> {
        let mut minutes: Vec<u32> = all.into_iter().flat_map(|l| l.0.iter().copied()).collect();
        minutes.sort_unstable_by(|a, b| b.cmp(a));
        minutes.dedup();
        minutes
    }

    /// `60m,10m`: the form [`Leads::parse`] reads.
    pub fn to_text(&self) -> String {
        self.0
            .iter()
            .map(|m| format!("{m}m"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Serialize for Leads {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Leads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let minutes = Vec::<u32>::deserialize(d)?;
        Leads::from_minutes(minutes).map_err(serde::de::Error::custom)
    }
}

/// `10`, `10m` or `1h` in minutes, within 1 minute to a day.
fn parse_lead(item: &str) -> Option<u32> {
    let (digits, factor) = match item.as_bytes().last()? {
        b'm' => (&item[..item.len() - 1], 1),
        b'h' => (&item[..item.len() - 1], 60),
        _ => (item, 1),
    };
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0')
        && digits.len() <= 4;
    let minutes = digits.parse::<u32>().ok().filter(|_| plain)? * factor;
    (1..=MAX_LEAD_MINUTES).contains(&minutes).then_some(minutes)
}

/// One reminder of one schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Reminder<'a> {
    /// What it announces.
    pub kind: ReminderKind,
    /// Minutes before the window starts (`reset.upcoming` only).
    pub lead_minutes: Option<u32>,
    /// The instant it refers to: the window's start (upcoming, started) or end.
    pub at: Timestamp,
    /// When it falls due.
    pub due_at: Timestamp,
    /// From this instant on it is never sent.
    pub expires_at: Timestamp,
    /// The schedule, as the API serves it.
    pub record: &'a Record,
}

impl Reminder<'_> {
    /// What makes it one: the record, the event, the lead and the instant.
    pub fn key(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.record.id,
            self.kind.event_type(),
            self.lead_minutes.unwrap_or(0),
            self.at
        )
    }

    /// Whether it may be sent at `now`.
    pub fn is_due(&self, now: Timestamp) -> bool {
        self.due_at <= now && now < self.expires_at
    }

    /// Whether the announcement of its schedule's window, published at
    /// `announced` (the schedule created, or moved to this window), already
    /// told it: it fell due at or before that instant, and the
    /// announcement said the time left instead ("Reset announced: in 2
    /// minutes, at …"). Such a time event is never sent, on any channel.
    pub fn told_by(&self, announced: Option<Timestamp>) -> bool {
        announced.is_some_and(|at| self.due_at <= at)
    }
}

/// Every time event `record` has (for a subscriber with `leads`, or none
/// without reminders; `tolerance_ms` the matcher's), sent or not, due or
/// not, in the order they fall due; none for a record that is not a
/// schedule with a window, neither fulfilled nor withdrawn.
pub fn reminders_of<'a>(
    record: &'a Record,
    leads: Option<&[u32]>,
    tolerance_ms: i64,
) -> Vec<Reminder<'a>> {
    let Some(window) = record.schedule_window else {
        return Vec::new();
    };
    let open = matches!(
        record.schedule_state,
        Some(ScheduleState::Pending | ScheduleState::Elapsed)
    );
    if record.kind != Kind::Scheduled || !open {
        return Vec::new();
    }
    let (start, end) = (window.start_at, window.end_at);
    let tolerance_ms = tolerance_ms.max(0);
    let unconfirmed = end.add_millis(tolerance_ms);
    let mut out = Vec::new();
    for &lead in leads.unwrap_or_default() {
        let due_at = start.add_millis(-i64::from(lead) * 60_000);
        out.push(Reminder {
            kind: ReminderKind::Upcoming,
            lead_minutes: Some(lead),
            at: start,
            due_at,
            expires_at: start.min(due_at.add_millis(LATE_GRACE_MS)),
            record,
        });
    }
    if leads.is_some() {
        let grace_end = start.add_millis(LATE_GRACE_MS);
        out.push(Reminder {
            kind: ReminderKind::WindowStarted,
            lead_minutes: None,
            at: start,
            due_at: start,
            // Never past a longer window's end, nor past the moment the
            // schedule is told unconfirmed.
            expires_at: grace_end.min(if end > start { end } else { unconfirmed }),
            record,
        });
        // An instant window's end is its start (one message); with no
        // tolerance the end is the unconfirmed moment (one message).
        if end > start && tolerance_ms > 0 {
            out.push(Reminder {
                kind: ReminderKind::WindowEnded,
                lead_minutes: None,
                at: end,
                due_at: end,
                expires_at: end.add_millis(LATE_GRACE_MS).min(unconfirmed),
                record,
            });
        }
    }
    out.push(Reminder {
        kind: ReminderKind::Elapsed,
        lead_minutes: None,
        at: end,
        due_at: unconfirmed,
        expires_at: unconfirmed.add_millis(LATE_GRACE_MS),
        record,
    });
    out
}

/// The time events to send at `now` (each subscriber skips the keys it
/// was already sent): due and not expired; of each schedule's
/// `reset.upcoming` only the newest, and none once another of its events
/// is due.
pub fn due<'a>(
    records: &'a [Record],
    leads: Option<&[u32]>,
    tolerance_ms: i64,
    now: Timestamp,
) -> Vec<Reminder<'a>> {
    let mut out = Vec::new();
    for record in records {
        let (upcoming, others): (Vec<_>, Vec<_>) = reminders_of(record, leads, tolerance_ms)
            .into_iter()
            .filter(|r| r.is_due(now))
            .partition(|r| r.kind == ReminderKind::Upcoming);
        if others.is_empty() {
            out.extend(upcoming.into_iter().max_by_key(|r| r.due_at));
        } else {
            out.extend(others);
        }
    }
    out
}

/// The first instant after `after` at which one of `records`' time events
/// (for `leads`, and `tolerance_ms`) falls due, if any does.
pub fn next_due(
    records: &[Record],
    leads: Option<&[u32]>,
    tolerance_ms: i64,
    after: Timestamp,
) -> Option<Timestamp> {
    records
        .iter()
        .flat_map(|record| reminders_of(record, leads, tolerance_ms))
        .map(|r| r.due_at)
        .filter(|due| *due > after)
        .min()
}

/// The `data` of a reminder, on every channel: the record as served, the
/// snapshot it is served from, the lead and the instant it refers to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReminderData<'a> {
    /// The schedule, as the API serves it.
    pub record: &'a Record,
    /// The snapshot sequence it is served from.
    pub sequence: u64,
    /// That snapshot's `generatedAt`.
    pub generated_at: Timestamp,
    /// Minutes before the window starts (`reset.upcoming`), else null.
    pub lead_minutes: Option<u32>,
    /// The instant it refers to: the window's start, or its end.
    pub at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    fn schedule(start: &str, end: &str, state: ScheduleState) -> Record {
        let mut record = crate::document::RecordsDocument::from_slice(crate::BUNDLED_SEED_HISTORY)
            .unwrap()
            .records
            .into_iter()
            .find(|r| r.kind == Kind::Scheduled && r.schedule_window.is_some())
            .unwrap();
        record.schedule_window = Some(crate::model::ScheduleWindow {
            start_at: at(start),
            end_at: at(end),
        });
        record.schedule_state = Some(state);
        record.completed_at = None;
        record.fulfillment_origin = None;
        record
    }

    #[test]
    fn leads_read_minutes_and_hours_and_refuse_what_is_not_one() {
        assert_eq!(Leads::parse("60m,10m").unwrap().minutes(), &[60, 10]);
        assert_eq!(Leads::parse("10,1h").unwrap().minutes(), &[60, 10]);
        assert_eq!(Leads::parse("24h").unwrap().minutes(), &[1440]);
        assert_eq!(Leads::default().to_text(), "60m,10m");
        for bad in [
            "", "0", "0m", "010", "25h", "1441", "-5", " 5", "5s", "m", "1h,60m",
        ] {
            assert!(Leads::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Leads::parse("1h,60m"), Err(LeadError::Twice(60)));
        assert_eq!(Leads::parse("1,2,3,4,5,6"), Err(LeadError::TooMany(6)));
    }

    /// The matcher's default tolerance, 180 minutes.
    const TOLERANCE: i64 = 180 * 60_000;

    #[test]
    fn a_pending_schedule_is_reminded_at_each_lead_then_at_its_start_and_end() {
        let record = schedule(
            "2026-11-24T18:00:00.000Z",
            "2026-11-24T20:00:00.000Z",
            ScheduleState::Pending,
        );
        let records = [record];
        let leads = [60, 10];
        let due_at = |now: &str| -> Vec<(&str, Option<u32>)> {
            due(&records, Some(&leads), TOLERANCE, at(now))
                .iter()
                .map(|r| (r.kind.event_type(), r.lead_minutes))
                .collect()
        };
        assert_eq!(due_at("2026-11-24T16:59:59.999Z"), vec![]);
        assert_eq!(
            due_at("2026-11-24T17:00:00.000Z"),
            vec![("reset.upcoming", Some(60))]
        );
        // Late by up to the grace, and no later.
        assert_eq!(
            due_at("2026-11-24T17:14:59.999Z"),
            vec![("reset.upcoming", Some(60))]
        );
        assert_eq!(due_at("2026-11-24T17:15:00.000Z"), vec![]);
        assert_eq!(
            due_at("2026-11-24T17:50:00.000Z"),
            vec![("reset.upcoming", Some(10))]
        );
        assert_eq!(
            due_at("2026-11-24T18:00:00.000Z"),
            vec![("reset.window_started", None)]
        );
        assert_eq!(due_at("2026-11-24T18:15:00.000Z"), vec![]);
        assert_eq!(
            due_at("2026-11-24T20:00:00.000Z"),
            vec![("reset.window_ended", None)]
        );
        assert_eq!(due_at("2026-11-24T20:15:00.000Z"), vec![]);
        // Not confirmed once the tolerance has passed, and then only.
        assert_eq!(due_at("2026-11-24T22:59:59.999Z"), vec![]);
        assert_eq!(
            due_at("2026-11-24T23:00:00.000Z"),
            vec![("schedule.elapsed", None)]
        );
        // The next due instants, in order.
        let mut t = at("2026-11-24T00:00:00.000Z");
        let mut seen = Vec::new();
        while let Some(next) = next_due(&records, Some(&leads), TOLERANCE, t) {
            seen.push(next.to_string());
            t = next;
        }
        assert_eq!(
            seen,
            [
                "2026-11-24T17:00:00.000Z",
                "2026-11-24T17:50:00.000Z",
                "2026-11-24T18:00:00.000Z",
                "2026-11-24T20:00:00.000Z",
                "2026-11-24T23:00:00.000Z"
            ]
        );
        // Without reminders, only the unconfirmed schedule is told.
        let told: Vec<_> = reminders_of(&records[0], None, TOLERANCE)
            .iter()
            .map(|r| r.kind)
            .collect();
        assert_eq!(told, [ReminderKind::Elapsed]);
    }

    #[test]
    fn an_instant_window_is_one_moment_and_unconfirmed_only_after_the_tolerance() {
        let records = [schedule(
            "2026-11-24T18:00:00.000Z",
            "2026-11-24T18:00:00.000Z",
            ScheduleState::Pending,
        )];
        assert!(due(
            &records,
            Some(&[60]),
            TOLERANCE,
            at("2026-11-24T17:50:00.000Z")
        )
        .is_empty());
        // One event at the instant, announceable for the grace.
        let now = due(
            &records,
            Some(&[60]),
            TOLERANCE,
            at("2026-11-24T18:05:00.000Z"),
        );
        let kinds: Vec<_> = now.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [ReminderKind::WindowStarted]);
        let key = now[0].key();
        assert!(
            key.ends_with("|reset.window_started|0|2026-11-24T18:00:00.000Z"),
            "{key}"
        );
        // The served state turning elapsed changes nothing of it.
        let mut elapsed = records[0].clone();
        elapsed.schedule_state = Some(ScheduleState::Elapsed);
        let again = due(
            std::slice::from_ref(&elapsed),
            Some(&[60]),
            TOLERANCE,
            at("2026-11-24T18:00:00.000Z"),
        );
        assert_eq!(again.iter().map(|r| r.key()).collect::<Vec<_>>(), [key]);
        assert_eq!(
            unconfirmed_at(&records[0], TOLERANCE).map(|t| t.to_string()),
            Some("2026-11-24T21:00:00.000Z".to_owned())
        );
        // With no tolerance the instant is the unconfirmed moment: one message.
        let kinds: Vec<_> = due(&records, Some(&[60]), 0, at("2026-11-24T18:00:00.000Z"))
            .iter()
            .map(|r| r.kind)
            .collect();
        assert_eq!(kinds, [ReminderKind::Elapsed]);
    }

    #[test]
    fn a_fulfilled_or_unknown_schedule_has_no_time_event() {
        for state in [ScheduleState::Fulfilled, ScheduleState::Unknown] {
            let r = schedule(
                "2026-11-24T18:00:00.000Z",
                "2026-11-24T20:00:00.000Z",
                state,
            );
            assert!(
                reminders_of(&r, Some(&[60]), TOLERANCE).is_empty(),
                "{state:?}"
            );
        }
    }
}
