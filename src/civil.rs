//! Civil days as UTC windows: a date in a time zone (from the tz database,
//! `chrono-tz`) becomes the window from its midnight to the next one, which
//! is 23 or 25 hours long on daylight-saving days.

use chrono::{NaiveDate, NaiveTime, TimeZone};
use chrono_tz::Tz;

use crate::model::{ScheduleWindow, Timestamp};

/// The first instant of `date` in `tz`: midnight, or the first valid time
/// after a gap at midnight (zones that switch at 00:00).
fn start_of(date: NaiveDate, tz: Tz) -> Timestamp {
    let mut local = date.and_time(NaiveTime::MIN);
    loop {
        if let Some(dt) = tz.from_local_datetime(&local).earliest() {
            return Timestamp::from_datetime(&dt);
        }
        local += chrono::Duration::minutes(15);
    }
}

/// The window of civil day `date` in `tz`, in UTC.
pub fn civil_day(date: NaiveDate, tz: Tz) -> ScheduleWindow {
    let next = date.succ_opt().expect("a next day");
    ScheduleWindow {
        start_at: start_of(date, tz),
        end_at: start_of(next, tz),
    }
}

/// The civil day in `tz` that holds `at`.
pub fn civil_day_of(at: Timestamp, tz: Tz) -> ScheduleWindow {
    civil_day(at.to_datetime().with_timezone(&tz).date_naive(), tz)
}

/// A civil day an operator gave that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CivilDayError {
    /// Not `YYYY-MM-DD` (years 0 to 9999).
    #[error("--date {0:?} is not a date like 2026-11-24")]
    Date(String),
    /// Not an IANA zone name.
    #[error("--tz {0:?} is not a time zone like America/Los_Angeles")]
    Zone(String),
}

/// Parses `YYYY-MM-DD` and an `Area/City` zone name.
pub fn parse_day(date: &str, tz: &str) -> Result<(NaiveDate, Tz), CivilDayError> {
    let day = NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .ok()
        .filter(|d| (0..=9999).contains(&chrono::Datelike::year(d)))
        .ok_or_else(|| CivilDayError::Date(date.to_owned()))?;
    Ok((day, parse_zone(tz)?))
}

/// Parses an IANA zone name (`Asia/Shanghai`, `UTC`).
pub fn parse_zone(tz: &str) -> Result<Tz, CivilDayError> {
    tz.parse().map_err(|_| CivilDayError::Zone(tz.to_owned()))
}

/// `2026-11-25 02:00` in `tz` (minutes, local time).
pub fn local_minutes(at: Timestamp, tz: Tz) -> String {
    at.to_datetime()
        .with_timezone(&tz)
        .format("%Y-%m-%d %H:%M")
        .to_string()
}
