//! The one timestamp type of the project.
//!
//! Every timestamp the service reads or writes is UTC with exactly three
//! fraction digits and a `Z` suffix (`2026-11-20T10:00:00.000Z`). Anything
//! else is refused, never guessed: the parser below accepts only that form.
//! Internally a timestamp is milliseconds since the Unix epoch, so ordering
//! and arithmetic are integer operations.

use std::fmt;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Utc};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// A UTC instant with millisecond precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// Why a string is not a timestamp of the one accepted form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a UTC timestamp of the form YYYY-MM-DDTHH:MM:SS.mmmZ, got {0:?}")]
pub struct TimestampError(pub String);

impl Timestamp {
    /// The earliest instant the one form can write: `0000-01-01T00:00:00.000Z`.
    pub const MIN: Timestamp = Timestamp(-62_167_219_200_000);
    /// The latest instant the one form can write: `9999-12-31T23:59:59.999Z`.
    pub const MAX: Timestamp = Timestamp(253_402_300_799_999);

    /// Whether this instant can be written in the one form (years 0000 to
    /// 9999) and so read back. Arithmetic can leave that range (the day
    /// after 9999-12-31); such a value is refused wherever it would be
    /// written, never stored.
    pub const fn is_writable(self) -> bool {
        self.0 >= Self::MIN.0 && self.0 <= Self::MAX.0
    }

    /// The instant `millis` milliseconds after the Unix epoch.
    pub const fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    /// Milliseconds since the Unix epoch.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// The current system time, truncated to milliseconds.
    pub fn now() -> Self {
        Self(Utc::now().timestamp_millis())
    }

    /// This instant as a chrono value, for calendar arithmetic.
    pub fn to_datetime(self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.0).unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    /// The instant of a chrono value, truncated to milliseconds.
    pub fn from_datetime<Tz: chrono::TimeZone>(value: &DateTime<Tz>) -> Self {
        Self(value.timestamp_millis())
    }

    /// This instant plus `millis` milliseconds (saturating).
    pub const fn add_millis(self, millis: i64) -> Self {
        Self(self.0.saturating_add(millis))
    }

    /// Parses exactly `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        let fail = || TimestampError(text.to_owned());
        let b = text.as_bytes();
        if b.len() != 24
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
            || b[19] != b'.'
            || b[23] != b'Z'
        {
            return Err(fail());
        }
        let num = |range: std::ops::Range<usize>| -> Result<u32, TimestampError> {
            let mut value = 0u32;
            for &c in &b[range] {
                if !c.is_ascii_digit() {
                    return Err(fail());
                }
                value = value * 10 + u32::from(c - b'0');
            }
            Ok(value)
        };
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second, milli) =
            (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
        let date = NaiveDate::from_ymd_opt(year as i32, month, day).ok_or_else(fail)?;
        if second > 59 {
            return Err(fail());
        }
        let time = NaiveTime::from_hms_milli_opt(hour, minute, second, milli).ok_or_else(fail)?;
        Ok(Self(
            NaiveDateTime::new(date, time).and_utc().timestamp_millis(),
        ))
    }
}

/// Parses a time an operator typed: it must carry an explicit UTC offset
/// (docs/spec/decisions.md, "Time"), and is converted to UTC. Accepted forms:
/// RFC 3339 (`2026-11-20T18:00:00+08:00`, `2026-11-20T10:00:00.000Z`) and
/// `2026-11-20 18:00[:SS] +08:00`. A time without an offset is refused.
pub fn parse_operator_time(text: &str) -> Result<Timestamp, OperatorTimeError> {
    let at = parse_offset_time(text)?;
    if !at.is_writable() {
        return Err(OperatorTimeError::OutOfRange(
            text.to_owned(),
            OutOfRange(at),
        ));
    }
    Ok(at)
}

/// A time an operator typed that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperatorTimeError {
    /// It has an offset but is not one of the accepted forms.
    #[error(
        "cannot read {0:?} as a time; use 2026-11-20T18:00:00+08:00 or \"2026-11-20 18:00 +08:00\""
    )]
    Unreadable(String),
    /// It has no UTC offset: times are never guessed.
    #[error("{0:?} has no UTC offset; add one (e.g. \"2026-11-20 18:00 +08:00\" or a trailing Z): times are never guessed")]
    NoOffset(String),
    /// It is outside the years a timestamp can be written in.
    #[error("{0:?} is {1}")]
    OutOfRange(String, OutOfRange),
}

/// [`parse_operator_time`] before the range check (an offset can carry a
/// time of 9999-12-31 past the end of year 9999 in UTC).
fn parse_offset_time(text: &str) -> Result<Timestamp, OperatorTimeError> {
    let trimmed = text.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(trimmed) {
        return Ok(Timestamp::from_datetime(&dt));
    }
    for format in [
        "%Y-%m-%d %H:%M %:z",
        "%Y-%m-%d %H:%M:%S %:z",
        "%Y-%m-%d %H:%M %z",
        "%Y-%m-%d %H:%M:%S %z",
    ] {
        if let Ok(dt) = DateTime::parse_from_str(trimmed, format) {
            return Ok(Timestamp::from_datetime(&dt));
        }
    }
    let has_offset = trimmed.ends_with('Z')
        || trimmed
            .rsplit_once(['+', '-'])
            .is_some_and(|(_, tail)| tail.contains(':') && tail.len() <= 5);
    Err(if has_offset {
        OperatorTimeError::Unreadable(text.to_owned())
    } else {
        OperatorTimeError::NoOffset(text.to_owned())
    })
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_writable() {
            // Every byte `to_ascii` writes is an ASCII digit or separator.
            return f.write_str(std::str::from_utf8(&self.to_ascii()).map_err(|_| fmt::Error)?);
        }
        // Outside the one form's years (named in errors only): widened fields.
        let dt = self.to_datetime();
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            dt.year(),
            dt.month(),
            dt.day(),
            dt.hour(),
            dt.minute(),
            dt.second(),
            self.0.rem_euclid(1000)
        )
    }
}

impl Timestamp {
    /// The one form, `YYYY-MM-DDTHH:MM:SS.mmmZ`, as 24 ASCII bytes without
    /// the formatting machinery: the quota writes one into every answer's
    /// `X-RateLimit-Reset`. An instant outside years 0000 to 9999 (never
    /// written, see [`Timestamp::is_writable`]) is clamped to those bounds.
    pub fn to_ascii(self) -> [u8; 24] {
        let dt = Timestamp(self.0.clamp(Self::MIN.0, Self::MAX.0)).to_datetime();
        let mut out = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut value: u32| {
            for i in (at..at + width).rev() {
                out[i] = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, 4, dt.year() as u32);
        put(5, 2, dt.month());
        put(8, 2, dt.day());
        put(11, 2, dt.hour());
        put(14, 2, dt.minute());
        put(17, 2, dt.second());
        put(20, 3, self.0.rem_euclid(1000) as u32);
        out
    }
}

/// An instant outside years 0000 to 9999, which the one form cannot write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} is outside the years 0000 to 9999 that a timestamp can be written in")]
pub struct OutOfRange(pub Timestamp);

impl std::str::FromStr for Timestamp {
    type Err = TimestampError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for Timestamp {
    /// Refuses an instant outside years 0000 to 9999: what is written must read back.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if !self.is_writable() {
            return Err(serde::ser::Error::custom(OutOfRange(*self)));
        }
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a UTC timestamp of the form YYYY-MM-DDTHH:MM:SS.mmmZ")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_the_one_form() {
        for text in [
            "2026-11-20T10:00:00.000Z",
            "1970-01-01T00:00:00.000Z",
            "2024-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.001Z",
            "0000-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
        ] {
            assert_eq!(Timestamp::parse(text).unwrap().to_string(), text);
            assert_eq!(&Timestamp::parse(text).unwrap().to_ascii(), text.as_bytes());
        }
        assert_eq!(
            Timestamp::parse("1970-01-01T00:00:01.500Z")
                .unwrap()
                .as_millis(),
            1500
        );
    }

    #[test]
    fn operator_times_need_an_offset() {
        let utc = |t: &str| parse_operator_time(t).map(|ts| ts.to_string());
        assert_eq!(
            utc("2026-11-20 18:00 +08:00"),
            Ok("2026-11-20T10:00:00.000Z".into())
        );
        assert_eq!(
            utc("2026-11-20T18:00:00+08:00"),
            Ok("2026-11-20T10:00:00.000Z".into())
        );
        assert_eq!(
            utc("2026-11-20T10:00:00.000Z"),
            Ok("2026-11-20T10:00:00.000Z".into())
        );
        assert_eq!(
            utc("2026-11-20 18:00:30 -05:00"),
            Ok("2026-11-20T23:00:30.000Z".into())
        );
        let err = utc("2026-11-20 18:00").unwrap_err().to_string();
        assert!(err.contains("has no UTC offset"), "{err}");
        let err = utc("9999-12-31T23:00:00-05:00").unwrap_err().to_string();
        assert!(err.contains("outside the years 0000 to 9999"), "{err}");
    }

    #[test]
    fn the_writable_range_is_exactly_what_parses() {
        assert_eq!(
            Timestamp::parse("0000-01-01T00:00:00.000Z"),
            Ok(Timestamp::MIN)
        );
        assert_eq!(
            Timestamp::parse("9999-12-31T23:59:59.999Z"),
            Ok(Timestamp::MAX)
        );
        let past_the_end = Timestamp::MAX.add_millis(1);
        assert!(!past_the_end.is_writable());
        assert!(!Timestamp::MIN.add_millis(-1).is_writable());
        let err = serde_json::to_string(&past_the_end).unwrap_err();
        assert!(
            err.to_string().contains("outside the years 0000 to 9999"),
            "{err}"
        );
        assert_eq!(
            serde_json::to_string(&Timestamp::MAX).unwrap(),
            "\"9999-12-31T23:59:59.999Z\""
        );
    }

    #[test]
    fn refuses_every_other_form() {
        for text in [
            "2026-11-20T10:00:00Z",
            "2026-11-20T10:00:00.00Z",
            "2026-11-20T10:00:00.0000Z",
            "2026-11-20T10:00:00.000+00:00",
            "2026-11-20 10:00:00.000Z",
            "2026-02-30T10:00:00.000Z",
            "2026-11-20T24:00:00.000Z",
            "2026-11-20T10:00:60.000Z",
            "2026-11-20t10:00:00.000z",
            "+026-11-20T10:00:00.000Z",
            "",
        ] {
            assert_eq!(
                Timestamp::parse(text),
                Err(TimestampError(text.to_owned())),
                "{text}"
            );
        }
    }
}
