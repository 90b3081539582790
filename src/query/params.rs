//! Strict query-string parsing (spec 4.3 and docs/spec/decisions.md, "Query strings").
//!
//! Nothing is corrected or clamped: an unknown, repeated, empty or malformed
//! parameter, a name without `=`, or percent-encoding that does not decode to
//! UTF-8 is refused with an error that names the parameter. Errors are a
//! plain enum: this runs on every request.

use std::borrow::Cow;
use std::fmt;

pub use crate::model::{KindFilter, PlanId};

/// The parameters of `GET /records/latest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LatestQuery {
    /// The filter (default `all`).
    pub kind: KindFilter,
}

/// The parameters of `GET /records`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ListQuery {
    /// The filter (default `all`).
    pub kind: KindFilter,
    /// 1-based page (default 1), at most `u32::MAX`.
    pub page: u32,
    /// 1..=[`MAX_PAGE_SIZE`] (default [`DEFAULT_PAGE_SIZE`]).
    pub page_size: u32,
}

/// `pageSize` when the query has none.
pub const DEFAULT_PAGE_SIZE: u32 = 10;

/// The largest `pageSize`.
pub const MAX_PAGE_SIZE: u32 = 10;

/// The parameters of `GET /records.atom`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AtomQuery {
    /// The filter (default `all`).
    pub kind: KindFilter,
    /// Only records that concern this plan (default: every record).
    pub plan: Option<PlanId>,
}

/// The parameters of `GET /records.ics`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IcsQuery {
    /// The filter (default `all`).
    pub kind: KindFilter,
    /// Only records that concern this plan (default: every record).
    pub plan: Option<PlanId>,
    /// Minutes before each pending schedule to remind, 0..=1440 (default: no reminder).
    pub alarm: Option<u16>,
}

/// The longest `alarm` accepted: a day, in minutes.
pub const MAX_ALARM_MINUTES: u16 = 1440;

/// Why a query string was refused; the `Display` text is the 422 `detail`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueryError {
    /// A name the endpoint does not define.
    Unknown {
        /// The (decoded) name.
        name: String,
        /// The names the endpoint accepts.
        allowed: &'static str,
    },
    /// A name given more than once.
    Duplicate(&'static str),
    /// `name=` with nothing after it.
    Empty(&'static str),
    /// A segment without `=`.
    NoValue(String),
    /// An empty segment (`&&`, a leading or trailing `&`).
    EmptySegment,
    /// Percent-encoding that does not decode to UTF-8.
    BadEncoding(String),
    /// A value outside the parameter's rule.
    Invalid {
        /// The parameter.
        name: &'static str,
        /// The value as given (decoded).
        value: String,
    },
}

/// The most of a client's text (a parameter's name or value) a message
/// quotes: a request head may be tens of kilobytes, and a 422 that echoes
/// it whole is an amplifier and a log flood.
pub const QUOTED_CHARS: usize = 64;

/// A client's text as a message quotes it: in quotes and escaped as `{:?}`
/// writes it, cut after [`QUOTED_CHARS`] characters, with how long it was.
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let length = self.0.chars().count();
        if length <= QUOTED_CHARS {
            return write!(f, "{:?}", self.0);
        }
        let cut: String = self.0.chars().take(QUOTED_CHARS).collect();
        write!(f, "{cut:?}… ({length} characters)")
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::Unknown { name, allowed } => {
                write!(
                    f,
                    "unknown query parameter {}; this endpoint accepts {allowed}",
                    Quoted(name)
                )
            }
            QueryError::Duplicate(name) => {
                write!(f, "query parameter {name:?} is given more than once")
            }
            QueryError::Empty(name) => write!(f, "query parameter {name:?} is empty"),
            QueryError::NoValue(name) if name.chars().count() > QUOTED_CHARS => write!(
                f,
                "query parameter {} has no value (expected NAME=…)",
                Quoted(name)
            ),
            QueryError::NoValue(name) => write!(
                f,
                "query parameter {name:?} has no value (expected {name}=…)"
            ),
            QueryError::EmptySegment => {
                f.write_str("the query string has an empty parameter (a stray '&')")
            }
            QueryError::BadEncoding(raw) => {
                write!(
                    f,
                    "query parameter {} is not valid percent-encoded UTF-8",
                    Quoted(raw)
                )
            }
            QueryError::Invalid {
                name: "remind",
                value,
            } => write!(
                f,
                "query parameter \"remind\" must be {}; got {}",
                crate::remind::leads_rule(),
                Quoted(value)
            ),
            QueryError::Invalid { name, value } => {
                let rule = match *name {
                    "kind" => "one of all, reset_scheduled, reset_completed",
                    "page" => {
                        "a whole number from 1 to 4294967295, without sign, leading zeros or spaces"
                    }
                    "plan" => PlanId::RULE,
                    "alarm" => {
                        "a whole number of minutes from 0 to 1440, without sign, leading zeros or spaces"
                    }
                    _ => "a whole number from 1 to 10, without sign, leading zeros or spaces",
                };
                write!(
                    f,
                    "query parameter {name:?} must be {rule}; got {}",
                    Quoted(value)
                )
            }
        }
    }
}

/// Parses the query of `/records/latest` (`kind` only).
pub fn parse_latest_query(raw: &str) -> Result<LatestQuery, QueryError> {
    let mut kind = None;
    for_each_pair(raw, |name, value| match name.as_ref() {
        "kind" => set_once(&mut kind, "kind", value, parse_kind),
        _ => Err(QueryError::Unknown {
            name: name.into_owned(),
            allowed: "kind",
        }),
    })?;
    Ok(LatestQuery {
        kind: kind.unwrap_or(KindFilter::All),
    })
}

/// The query of `/records/stream`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamQuery {
    /// The `kind` filter.
    pub kind: KindFilter,
    /// Reminders (`remind=60,10`): the leads of `reset.upcoming`, and the
    /// window events with them. None: no reminder events (the default).
    pub remind: Option<crate::remind::Leads>,
}

/// Parses the query of `/records/stream` (`kind`, `remind`).
pub fn parse_stream_query(raw: &str) -> Result<StreamQuery, QueryError> {
    let (mut kind, mut remind) = (None, None);
    for_each_pair(raw, |name, value| match name.as_ref() {
        "kind" => set_once(&mut kind, "kind", value, parse_kind),
        "remind" => set_once(&mut remind, "remind", value, |v| {
            crate::remind::Leads::parse(v).ok()
        }),
        _ => Err(QueryError::Unknown {
            name: name.into_owned(),
            allowed: "kind, remind",
        }),
    })?;
    Ok(StreamQuery {
        kind: kind.unwrap_or(KindFilter::All),
        remind,
    })
}

/// Parses the query of `/records` (`kind`, `page`, `pageSize`).
pub fn parse_list_query(raw: &str) -> Result<ListQuery, QueryError> {
    let (mut kind, mut page, mut page_size) = (None, None, None);
    for_each_pair(raw, |name, value| match name.as_ref() {
        "kind" => set_once(&mut kind, "kind", value, parse_kind),
        "page" => set_once(&mut page, "page", value, |v| parse_number(v, u32::MAX)),
        "pageSize" => set_once(&mut page_size, "pageSize", value, |v| {
            parse_number(v, MAX_PAGE_SIZE)
        }),
        _ => Err(QueryError::Unknown {
            name: name.into_owned(),
            allowed: "kind, page, pageSize",
        }),
    })?;
    Ok(ListQuery {
        kind: kind.unwrap_or(KindFilter::All),
        page: page.unwrap_or(1),
        page_size: page_size.unwrap_or(DEFAULT_PAGE_SIZE),
    })
}

/// Parses the query of `/records.atom` (`kind`, `plan`).
pub fn parse_atom_query(raw: &str) -> Result<AtomQuery, QueryError> {
    let (mut kind, mut plan) = (None, None);
    for_each_pair(raw, |name, value| match name.as_ref() {
        "kind" => set_once(&mut kind, "kind", value, parse_kind),
        "plan" => set_once(&mut plan, "plan", value, PlanId::parse),
        _ => Err(QueryError::Unknown {
            name: name.into_owned(),
            allowed: "kind, plan",
        }),
    })?;
    Ok(AtomQuery {
        kind: kind.unwrap_or(KindFilter::All),
        plan,
    })
}

/// Parses the query of `/records.ics` (`kind`, `plan`, `alarm`).
pub fn parse_ics_query(raw: &str) -> Result<IcsQuery, QueryError> {
    let (mut kind, mut plan, mut alarm) = (None, None, None);
    for_each_pair(raw, |name, value| match name.as_ref() {
        "kind" => set_once(&mut kind, "kind", value, parse_kind),
        "plan" => set_once(&mut plan, "plan", value, PlanId::parse),
        "alarm" => set_once(&mut alarm, "alarm", value, parse_minutes),
        _ => Err(QueryError::Unknown {
            name: name.into_owned(),
            allowed: "kind, plan, alarm",
        }),
    })?;
    Ok(IcsQuery {
        kind: kind.unwrap_or(KindFilter::All),
        plan,
        alarm,
    })
}

fn parse_kind(value: &str) -> Option<KindFilter> {
    KindFilter::parse(value)
}

/// `^[1-9][0-9]*$` with a value of at most `max`.
fn parse_number(value: &str, max: u32) -> Option<u32> {
    let bytes = value.as_bytes();
    if bytes.is_empty()
        || bytes.len() > 10
        || bytes[0] == b'0'
        || !bytes.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    value
        .parse::<u64>()
        .ok()
        .filter(|v| *v <= u64::from(max))
        .map(|v| v as u32)
}

/// `0`, or `^[1-9][0-9]*$` with a value of at most [`MAX_ALARM_MINUTES`].
fn parse_minutes(value: &str) -> Option<u16> {
    if value == "0" {
        return Some(0);
    }
    parse_number(value, u32::from(MAX_ALARM_MINUTES)).map(|v| v as u16)
}

fn set_once<T>(
    slot: &mut Option<T>,
    name: &'static str,
    value: Cow<'_, str>,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<(), QueryError> {
    if slot.is_some() {
        return Err(QueryError::Duplicate(name));
    }
    if value.is_empty() {
        return Err(QueryError::Empty(name));
    }
    let parsed = parse(&value).ok_or_else(|| QueryError::Invalid {
        name,
        value: value.into_owned(),
    })?;
    *slot = Some(parsed);
    Ok(())
}

/// Splits `a=1&b=2`, decodes both sides and calls `f(name, value)`.
fn for_each_pair(
    raw: &str,
    mut f: impl FnMut(Cow<'_, str>, Cow<'_, str>) -> Result<(), QueryError>,
) -> Result<(), QueryError> {
    if raw.is_empty() {
        return Ok(());
    }
    for segment in raw.split('&') {
        if segment.is_empty() {
            return Err(QueryError::EmptySegment);
        }
        let Some((name, value)) = segment.split_once('=') else {
            let name = decode(segment).map_err(|_| QueryError::BadEncoding(segment.to_owned()))?;
            return Err(QueryError::NoValue(name.into_owned()));
        };
        let name_decoded = decode(name).map_err(|_| QueryError::BadEncoding(name.to_owned()))?;
        let value = decode(value)
            .map_err(|_| QueryError::BadEncoding(name_decoded.clone().into_owned()))?;
        f(name_decoded, value)?;
    }
    Ok(())
}

/// Percent-decodes (form encoding: `+` is a space); `Err` when the bytes are
/// not UTF-8 or an escape is malformed.
fn decode(text: &str) -> Result<Cow<'_, str>, ()> {
    if !text.bytes().any(|b| b == b'%' || b == b'+') {
        return Ok(Cow::Borrowed(text));
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |b: u8| (b as char).to_digit(16);
                let (Some(hi), Some(lo)) = (
                    bytes.get(i + 1).copied().and_then(hex),
                    bytes.get(i + 2).copied().and_then(hex),
                ) else {
                    return Err(());
                };
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map(Cow::Owned).map_err(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(raw: &str) -> Result<(KindFilter, u32, u32), String> {
        parse_list_query(raw)
            .map(|q| (q.kind, q.page, q.page_size))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_valid_values() {
        assert_eq!(list(""), Ok((KindFilter::All, 1, 10)));
        assert_eq!(
            list("kind=reset_completed&page=4294967295&pageSize=1"),
            Ok((KindFilter::Completed, u32::MAX, 1))
        );
        assert_eq!(
            list("%6Bind=reset_scheduled"),
            Ok((KindFilter::Scheduled, 1, 10))
        );
        assert_eq!(list("pageSize=%31%30"), Ok((KindFilter::All, 1, 10)));
        assert_eq!(
            parse_latest_query("kind=all").unwrap().kind,
            KindFilter::All
        );
    }

    #[test]
    fn every_refusal_names_the_parameter() {
        let cases = [
            ("page=0", "query parameter \"page\" must be a whole number from 1 to 4294967295, without sign, leading zeros or spaces; got \"0\""),
            ("page=01", "query parameter \"page\" must be a whole number from 1 to 4294967295, without sign, leading zeros or spaces; got \"01\""),
            ("page=4294967296", "query parameter \"page\" must be a whole number from 1 to 4294967295, without sign, leading zeros or spaces; got \"4294967296\""),
            ("page=+1", "query parameter \"page\" must be a whole number from 1 to 4294967295, without sign, leading zeros or spaces; got \" 1\""),
            ("page=-1", "query parameter \"page\" must be a whole number from 1 to 4294967295, without sign, leading zeros or spaces; got \"-1\""),
            ("pageSize=11", "query parameter \"pageSize\" must be a whole number from 1 to 10, without sign, leading zeros or spaces; got \"11\""),
            ("pageSize=1.0", "query parameter \"pageSize\" must be a whole number from 1 to 10, without sign, leading zeros or spaces; got \"1.0\""),
            ("kind=ALL", "query parameter \"kind\" must be one of all, reset_scheduled, reset_completed; got \"ALL\""),
            ("kind=", "query parameter \"kind\" is empty"),
            ("kind", "query parameter \"kind\" has no value (expected kind=…)"),
            ("page=1&page=2", "query parameter \"page\" is given more than once"),
            ("page=1&%70age=2", "query parameter \"page\" is given more than once"),
            ("limit=5", "unknown query parameter \"limit\"; this endpoint accepts kind, page, pageSize"),
            ("Kind=all", "unknown query parameter \"Kind\"; this endpoint accepts kind, page, pageSize"),
            ("kind=all&", "the query string has an empty parameter (a stray '&')"),
            ("kind=%ff", "query parameter \"kind\" is not valid percent-encoded UTF-8"),
            ("kind=%4", "query parameter \"kind\" is not valid percent-encoded UTF-8"),
            ("%zz=1", "query parameter \"%zz\" is not valid percent-encoded UTF-8"),
        ];
        for (raw, detail) in cases {
            assert_eq!(list(raw), Err(detail.to_owned()), "{raw}");
        }
        assert_eq!(
            parse_latest_query("page=1").unwrap_err().to_string(),
            "unknown query parameter \"page\"; this endpoint accepts kind"
        );
    }

    #[test]
    fn feed_queries_take_kind_plan_and_alarm() {
        let atom = parse_atom_query("kind=reset_completed&plan=pro_2").unwrap();
        assert_eq!(atom.kind, KindFilter::Completed);
        assert_eq!(atom.plan.as_ref().map(PlanId::as_str), Some("pro_2"));
        assert_eq!(
            parse_atom_query("").unwrap(),
            AtomQuery {
                kind: KindFilter::All,
                plan: None
            }
        );
        let ics = parse_ics_query("alarm=0&plan=plus").unwrap();
        assert_eq!((ics.kind, ics.alarm), (KindFilter::All, Some(0)));
        assert_eq!(parse_ics_query("alarm=1440").unwrap().alarm, Some(1440));
        assert_eq!(parse_ics_query("").unwrap().alarm, None);
        let long = "a".repeat(32);
        assert!(parse_atom_query(&format!("plan={long}")).is_ok());
    }

    #[test]
    fn feed_refusals_name_the_parameter() {
        let plan_rule =
            "must be a plan id of 1 to 32 characters a-z, 0-9 or _ (such as plus or pro)";
        let alarm_rule = "must be a whole number of minutes from 0 to 1440, without sign, leading zeros or spaces";
        let too_long = "a".repeat(33);
        let cases = [
            (
                "plan=Pro".to_owned(),
                format!("query parameter \"plan\" {plan_rule}; got \"Pro\""),
            ),
            (
                "plan=pro-1".to_owned(),
                format!("query parameter \"plan\" {plan_rule}; got \"pro-1\""),
            ),
            (
                format!("plan={too_long}"),
                format!("query parameter \"plan\" {plan_rule}; got \"{too_long}\""),
            ),
            (
                "plan=pro&plan=plus".to_owned(),
                "query parameter \"plan\" is given more than once".to_owned(),
            ),
            (
                "plan=".to_owned(),
                "query parameter \"plan\" is empty".to_owned(),
            ),
            (
                "alarm=1".to_owned(),
                "unknown query parameter \"alarm\"; this endpoint accepts kind, plan".to_owned(),
            ),
            (
                "page=1".to_owned(),
                "unknown query parameter \"page\"; this endpoint accepts kind, plan".to_owned(),
            ),
        ];
        for (raw, detail) in &cases {
            assert_eq!(
                parse_atom_query(raw).unwrap_err().to_string(),
                *detail,
                "{raw}"
            );
        }
        let cases = [
            (
                "alarm=1441",
                format!("query parameter \"alarm\" {alarm_rule}; got \"1441\""),
            ),
            (
                "alarm=-1",
                format!("query parameter \"alarm\" {alarm_rule}; got \"-1\""),
            ),
            (
                "alarm=00",
                format!("query parameter \"alarm\" {alarm_rule}; got \"00\""),
            ),
            (
                "alarm=015",
                format!("query parameter \"alarm\" {alarm_rule}; got \"015\""),
            ),
            (
                "alarm=1.5",
                format!("query parameter \"alarm\" {alarm_rule}; got \"1.5\""),
            ),
            (
                "alarm=5&alarm=5",
                "query parameter \"alarm\" is given more than once".to_owned(),
            ),
            (
                "kind=all&kind=all",
                "query parameter \"kind\" is given more than once".to_owned(),
            ),
            (
                "pageSize=1",
                "unknown query parameter \"pageSize\"; this endpoint accepts kind, plan, alarm"
                    .to_owned(),
            ),
        ];
        for (raw, detail) in &cases {
            assert_eq!(
                parse_ics_query(raw).unwrap_err().to_string(),
                *detail,
                "{raw}"
            );
        }
    }
}
