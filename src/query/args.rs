//! Tool arguments (JSON) under the same rules as the query string: unknown
//! or mistyped arguments are refused with a message naming them; nothing is
//! corrected or clamped.

use serde_json::{Map, Value};

use super::{KindFilter, LatestQuery, ListQuery, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};

/// A tool argument refused; the `Display` text is the tool error's text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// `kind` is not a kind filter.
    #[error("argument \"kind\" must be one of all, reset_scheduled, reset_completed; got {}", super::params::Quoted(.0))]
    Kind(String),
    /// `kind` is not a string.
    #[error("argument \"kind\" must be a string; got {0}")]
    KindType(Value),
    /// A number outside its range, or not a whole number.
    #[error("argument {name:?} must be a whole number from 1 to {max}; got {got}")]
    Integer {
        /// The argument.
        name: String,
        /// Its largest value.
        max: u64,
        /// What was given.
        got: Value,
    },
    /// An argument the tool does not define.
    #[error("unknown argument {}; this tool accepts {allowed}", super::params::Quoted(.name))]
    Unknown {
        /// The argument.
        name: String,
        /// The arguments the tool accepts.
        allowed: String,
    },
}

fn kind_arg(args: &Map<String, Value>) -> Result<KindFilter, ArgumentError> {
    match args.get("kind") {
        None => Ok(KindFilter::All),
        Some(Value::String(s)) => {
            KindFilter::parse(s).ok_or_else(|| ArgumentError::Kind(s.clone()))
        }
        Some(other) => Err(ArgumentError::KindType(other.clone())),
    }
}

fn integer_arg(
    args: &Map<String, Value>,
    name: &str,
    max: u64,
) -> Result<Option<u32>, ArgumentError> {
    let Some(given) = args.get(name) else {
        return Ok(None);
    };
    match given.as_u64() {
        Some(v) if given.is_number() && (1..=max).contains(&v) => Ok(Some(v as u32)),
        _ => Err(ArgumentError::Integer {
            name: name.to_owned(),
            max,
            got: given.clone(),
        }),
    }
}

fn no_unknown(args: &Map<String, Value>, allowed: &[&str]) -> Result<(), ArgumentError> {
    match args.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(ArgumentError::Unknown {
            name: k.clone(),
            allowed: allowed.join(", "),
        }),
        None => Ok(()),
    }
}

/// The arguments of `get_latest_reset`.
pub fn latest_query_from_args(args: &Map<String, Value>) -> Result<LatestQuery, ArgumentError> {
    no_unknown(args, &["kind"])?;
    Ok(LatestQuery {
        kind: kind_arg(args)?,
    })
}

/// The arguments of `list_resets`.
pub fn list_query_from_args(args: &Map<String, Value>) -> Result<ListQuery, ArgumentError> {
    no_unknown(args, &["kind", "page", "pageSize"])?;
    Ok(ListQuery {
        kind: kind_arg(args)?,
        page: integer_arg(args, "page", u64::from(u32::MAX))?.unwrap_or(1),
        page_size: integer_arg(args, "pageSize", u64::from(MAX_PAGE_SIZE))?
            .unwrap_or(DEFAULT_PAGE_SIZE),
    })
}
