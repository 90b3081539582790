//! Tool arguments (JSON) under the same rules as the query string: unknown
//! or mistyped arguments are refused with a message naming them; nothing is
//! corrected or clamped.

use serde_json::{Map, Value};

use super::{KindFilter, LatestQuery, ListQuery};

fn kind_arg(args: &Map<String, Value>) -> Result<KindFilter, String> {
    match args.get("kind") {
        None => Ok(KindFilter::All),
        Some(Value::String(s)) => KindFilter::parse(s).ok_or_else(|| {
            format!(
                "argument \"kind\" must be one of all, reset_scheduled, reset_completed; got {s:?}"
            )
        }),
        Some(other) => Err(format!("argument \"kind\" must be a string; got {other}")),
    }
}

fn integer_arg(args: &Map<String, Value>, name: &str, max: u64) -> Result<Option<u32>, String> {
    match args.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) if (1..=max).contains(&v) => Ok(Some(v as u32)),
            _ => Err(format!(
                "argument {name:?} must be a whole number from 1 to {max}; got {n}"
            )),
        },
        Some(other) => Err(format!(
            "argument {name:?} must be a whole number from 1 to {max}; got {other}"
        )),
    }
}

fn no_unknown(args: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match args.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "unknown argument {k:?}; this tool accepts {}",
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

/// The arguments of `get_latest_reset`.
pub fn latest_query_from_args(args: &Map<String, Value>) -> Result<LatestQuery, String> {
    no_unknown(args, &["kind"])?;
    Ok(LatestQuery {
        kind: kind_arg(args)?,
    })
}

/// The arguments of `list_resets`.
pub fn list_query_from_args(args: &Map<String, Value>) -> Result<ListQuery, String> {
    no_unknown(args, &["kind", "page", "pageSize"])?;
    Ok(ListQuery {
        kind: kind_arg(args)?,
        page: integer_arg(args, "page", u64::from(u32::MAX))?.unwrap_or(1),
        page_size: integer_arg(args, "pageSize", 10)?.unwrap_or(10),
    })
}
