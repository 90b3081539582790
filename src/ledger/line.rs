//! One line of the ledger: an entry's JSON and a check of its bytes.
//!
//! ```text
//! {"entry":3,"at":"…","actor":"…","action":{…},"check":"9f2c41d07a1be356"}
//! ```
//!
//! The check is the first 64 bits of the SHA-256 of the line without it
//! (the entry's JSON exactly as written, closed by its `}`), in hex, as the
//! last member. A changed byte anywhere in the line (a digit of a date, a
//! letter of an id) no longer matches its check, so it is corruption, not
//! a different entry read as true. The line stays one JSON object, so an
//! older resetctl reads it (it ignores the member) and `jq` shows it.
//!
//! Lines without a check are read: a ledger written before checks
//! existed holds only such lines, and an operator who corrects a line by
//! hand (as a corrupt line's error says to) removes its check. Such a line
//! may hold no member but the entry's own, so a damaged check member is
//! corruption, not a line without one; dropping a check whole is an edit,
//! not a changed byte. The next append rewrites the ledger with a check on
//! every line ([`super::file::append`]).

use sha2::{Digest, Sha256};

use super::entry::Entry;

/// What precedes the check's hex digits at the end of a checked line.
const CHECK_OPEN: &[u8] = b",\"check\":\"";
/// What follows them.
const CHECK_CLOSE: &[u8] = b"\"}";
/// Hex digits of the check.
const CHECK_DIGITS: usize = 16;

/// A line read back.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// An entry whose check matched its bytes.
    Checked(Entry),
    /// An entry of a ledger written before checks.
    Unchecked(Entry),
}

/// The line of `entry` (without its line end), its check appended.
pub fn encode(entry: &Entry) -> Vec<u8> {
    let mut line = serde_json::to_vec(entry).expect("an entry serialises");
    let check = check_of(&line);
    line.pop(); // the closing `}`, which the check member closes instead
    line.extend_from_slice(CHECK_OPEN);
    line.extend_from_slice(check.as_bytes());
    line.extend_from_slice(CHECK_CLOSE);
    line
}

/// Reads one line (without its line end): an entry whose check matches,
/// an entry of an unchecked ledger, or why it is neither.
pub fn decode(line: &[u8]) -> Result<Line, String> {
    match split_check(line) {
        Some((body, check)) => {
            if check_of(&body).as_bytes() != check {
                return Err(
                    "its bytes do not match its check: something changed the line after it was written"
                        .to_owned(),
                );
            }
            serde_json::from_slice::<Entry>(&body)
                .map(Line::Checked)
                .map_err(|e| e.to_string())
        }
        None => decode_unchecked(line).map(Line::Unchecked),
    }
}

/// The line without its check member (closed by `}`) and the check's digits.
fn split_check(line: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let tail = CHECK_OPEN.len() + CHECK_DIGITS + CHECK_CLOSE.len();
    let start = line.len().checked_sub(tail)?;
    let (body, member) = line.split_at(start);
    let digits = member.strip_prefix(CHECK_OPEN)?.strip_suffix(CHECK_CLOSE)?;
    if !digits
        .iter()
        .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    let mut closed = body.to_vec();
    closed.push(b'}');
    Some((closed, digits))
}

/// An entry of an unchecked ledger: the entry's members and nothing else,
/// so a line whose check member was damaged is not read as unchecked.
fn decode_unchecked(line: &[u8]) -> Result<Entry, String> {
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let serde_json::Value::Object(members) = &value else {
        return Err("not a JSON object".to_owned());
    };
    if let Some(other) = members
        .keys()
        .find(|k| !["entry", "at", "actor", "action"].contains(&k.as_str()))
    {
        return Err(format!(
            "it has no valid check, and a member {other:?} no entry has"
        ));
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// The check of `bytes`: the first 64 bits of their SHA-256, in hex.
fn check_of(bytes: &[u8]) -> String {
    Sha256::digest(bytes)[..CHECK_DIGITS / 2]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        serde_json::from_str(
            r#"{"entry":7,"at":"2026-12-21T10:00:00.000Z","actor":"ops","action":{"type":"dismiss","id":"100"}}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_line_reads_back_as_its_entry_and_any_changed_byte_is_found() {
        let line = encode(&entry());
        assert!(line.ends_with(b"\"}"));
        assert_eq!(decode(&line), Ok(Line::Checked(entry())));
        for at in 0..line.len() {
            let mut changed = line.clone();
            changed[at] = if changed[at] == b'1' { b'2' } else { b'1' };
            assert!(
                !matches!(decode(&changed), Ok(Line::Checked(e)) if e == entry())
                    && !matches!(decode(&changed), Ok(Line::Unchecked(_))),
                "byte {at}: {}",
                String::from_utf8_lossy(&changed)
            );
        }
    }

    #[test]
    fn an_unchecked_line_holds_only_an_entrys_members() {
        let plain = serde_json::to_vec(&entry()).unwrap();
        assert_eq!(decode(&plain), Ok(Line::Unchecked(entry())));
        let mut damaged = encode(&entry());
        let at = damaged.len() - 22; // inside `"check"`
        damaged[at] = b'x';
        assert!(
            decode(&damaged).is_err(),
            "{}",
            String::from_utf8_lossy(&damaged)
        );
    }
}
