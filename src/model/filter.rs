//! The vocabulary of lists every module shares: the `kind` filters, which
//! records each one shows, plan ids and the `plan` rule, and the order of
//! record ids. The HTTP query surface (`query`), the feeds, the stream, the
//! ledger and the webhooks all speak it; it depends on the records alone.

use std::cmp::Ordering;

use super::{Kind, Record, ScheduleState};

/// The `kind` filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KindFilter {
    /// The live public list: everything but fulfilled schedules.
    All,
    /// Schedules, including fulfilled and elapsed history.
    Scheduled,
    /// Completions.
    Completed,
}

impl KindFilter {
    /// Every filter, in a fixed order (the public view keeps one list per filter, in this order).
    pub const ALL: [KindFilter; 3] = [
        KindFilter::All,
        KindFilter::Scheduled,
        KindFilter::Completed,
    ];

    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            KindFilter::All => "all",
            KindFilter::Scheduled => "reset_scheduled",
            KindFilter::Completed => "reset_completed",
        }
    }

    /// Parses the wire spelling (exact, case-sensitive).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// Position in [`KindFilter::ALL`].
    pub const fn index(self) -> usize {
        match self {
            KindFilter::All => 0,
            KindFilter::Scheduled => 1,
            KindFilter::Completed => 2,
        }
    }
}

/// A plan id for the feeds' `plan` filter and a webhook endpoint's
/// `--plan`: 1 to 32 characters of
/// `[a-z0-9_]` (validated on construction, so a renderer can write it
/// anywhere without escaping).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PlanId(String);

impl TryFrom<String> for PlanId {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        Self::parse(&text).ok_or_else(|| format!("{text:?} is not {}", Self::RULE))
    }
}

impl From<PlanId> for String {
    fn from(plan: PlanId) -> String {
        plan.0
    }
}

impl PlanId {
    /// The rule, as refusals say it: the one rule for a plan id wherever one
    /// is given (the feeds' `plan`, `webhook add --plan`).
    pub const RULE: &'static str =
        "a plan id of 1 to 32 characters a-z, 0-9 or _ (such as plus or pro)";

    /// Parses a plan id; `None` when it breaks the rule.
    pub fn parse(text: &str) -> Option<Self> {
        let ok = (1..=32).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        ok.then(|| Self(text.to_owned()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `record` belongs in `filter`'s list.
pub fn visible_in(record: &Record, filter: KindFilter) -> bool {
    match filter {
        KindFilter::All => record.schedule_state != Some(ScheduleState::Fulfilled),
        KindFilter::Scheduled => record.kind == Kind::Scheduled,
        KindFilter::Completed => record.kind == Kind::Completed,
    }
}

/// Whether `record` concerns `plan` (the feeds' `plan` filter): its scope
/// is unknown (null), or its plans name `plan`, `all` or `unknown`. A plan
/// no record names still matches the records for all or unknown plans.
pub fn concerns_plan(record: &Record, plan: &str) -> bool {
    match &record.scope {
        None => true,
        Some(scope) => scope
            .plans
            .iter()
            .any(|p| p == plan || p == "all" || p == "unknown"),
    }
}

/// Ids compared numerically when both are numeric strings, else bytewise.
pub fn compare_ids(a: &str, b: &str) -> Ordering {
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if numeric(a) && numeric(b) {
        let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
        a.len().cmp(&b.len()).then_with(|| a.cmp(b))
    } else {
        a.as_bytes().cmp(b.as_bytes())
    }
}
