//! Writing to stdout where a closed pipe (`resetctl … | head`) is success,
//! not an error; and keeping text from upstreams and operators from
//! driving the operator's terminal.
//!
//! Everything printed goes through [`escape_controls`]: a control
//! character other than newline and tab is written as `\uXXXX`, so an
//! upstream post id or an `--actor` cannot clear the screen. In JSON
//! output that is the standard escape of the same character, so the JSON
//! stays valid and means the same. A value inside a human-readable line
//! (a post id, a skip reason, an actor, an upstream's name) is written
//! with [`shown!`], which escapes newline and tab as well, so such a value
//! cannot add a line of its own (`last error: none`) either; an error line
//! ([`warn`]) is one line whatever its words hold.

use std::io::{self, Write};

use crate::exit::CliError;

/// `text` with every control character but newline and tab as `\uXXXX`
/// (C0, DEL and C1, which terminals act on), and every bidirectional
/// control ([`resetctl::model::is_bidi_control`]), which reorders what a
/// terminal shows after it.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || resetctl::model::is_bidi_control(c)
}

/// A value inside a human-readable line: every control character, newline
/// and tab included, and every bidirectional control, written as `\uXXXX`.
pub struct Shown<T>(pub T);

impl<T: std::fmt::Display> std::fmt::Display for Shown<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0.to_string();
        let mut escaped = String::with_capacity(text.len());
        for c in text.chars() {
            if c.is_control() || resetctl::model::is_bidi_control(c) {
                escaped.push_str(&format!("\\u{:04x}", u32::from(c)));
            } else {
                escaped.push(c);
            }
        }
        // Width and alignment (`{:<44}`) apply to what is shown.
        f.pad(&escaped)
    }
}

/// `format!` for human-readable output: every argument is written through
/// [`Shown`], so no value can break its line. Arguments are positional
/// (`{}`), never captured by name, so none escapes the wrapping.
macro_rules! shown {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        format!($fmt $(, $crate::output::Shown(&$arg))*)
    };
}
pub(crate) use shown;

/// Writes one line to stderr (`resetctl: …`): an error or warning is one
/// line, so every control character in it, newline included, is escaped.
pub fn warn(line: &str) {
    eprintln!("resetctl: {}", Shown(line));
}

/// Writes `text` to stdout, control characters escaped; a broken pipe
/// counts as success.
pub fn print(text: &str) -> Result<(), CliError> {
    let text = escape_controls(text);
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::io(format!("cannot write to stdout: {e}"))),
    }
}

/// Pretty JSON of `value` with a trailing newline.
pub fn json<T: serde::Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON of plain data");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::{escape_controls, Shown};

    #[test]
    fn a_shown_value_cannot_break_its_line() {
        assert_eq!(
            shown!("id: {} ({})", "1\nlast error: none\t", 7),
            "id: 1\\u000alast error: none\\u0009 (7)"
        );
        assert_eq!(Shown("a\u{1b}é\r").to_string(), "a\\u001bé\\u000d");
        assert_eq!(shown!("[{:<4}|{:>3}]", "a\n", 7), "[a\\u000a|  7]");
    }

    #[test]
    fn control_characters_are_escaped_and_json_stays_json() {
        assert_eq!(
            escape_controls("a\u{1b}[2Jb\u{9b}c\r\n\td"),
            "a\\u001b[2Jb\\u009bc\\u000d\n\td"
        );
        let json = serde_json::to_string("x\u{7f}\u{85}y").unwrap();
        let escaped = escape_controls(&json);
        assert_eq!(escaped, "\"x\\u007f\\u0085y\"");
        let back: String = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back, "x\u{7f}\u{85}y");
    }
}
