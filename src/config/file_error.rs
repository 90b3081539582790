//! A config file's parse or type error in one line of text: the line and
//! the column, the key it is about (when the line names a known one) and
//! what is wrong, in words. The TOML parser's own message quotes the line
//! (and a type error the value): a line that holds a Redis password or an
//! upstream token must not be shown, in any command, `serve --check` or a
//! reload's log, so no part of a line or of a value is ever quoted.

use super::FileConfig;

/// `error` (from parsing `text`) as one line: `line 2, column 52:
/// `rate-limit-store`: …`. Nothing of the file is quoted but a known
/// key's name (and an unknown key's, which is what is wrong).
pub fn describe(error: &toml::de::Error, text: &str) -> String {
    let message = error.message();
    let start = error.span().map_or(0, |span| span.start.min(text.len()));
    let (line, column) = position(text, start);
    let at = format!("line {line}, column {column}");
    if let Some(unknown) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
    {
        return format!("{at}: {}", unknown_key(unknown));
    }
    let key = key_at(text, line);
    let what = match (key.as_deref(), message) {
        (Some(key), "duplicate key") => format!("`{key}` is given twice"),
        (Some(key), message) if message.starts_with("invalid type: ") => {
            format!(
                "`{key}` must be {}, not {}",
                expected(message),
                found(message)
            )
        }
        (None, message) if message.starts_with("invalid type: ") => {
            format!(
                "a value must be {}, not {}",
                expected(message),
                found(message)
            )
        }
        // The parser's grammar errors are fixed words (`invalid basic
        // string, expected `"``), never a part of the file.
        (Some(key), message) => format!("`{key}`: {}", one_line(message)),
        (None, message) => one_line(message),
    };
    format!("{at}: {what}")
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

/// The known key assigned on `line` (1-based) or the nearest line above it
/// that assigns one (a value may span lines: a list, a multi-line string),
/// as the file spells it; `None` when no line names a known key.
fn key_at(text: &str, line: usize) -> Option<String> {
    text.lines()
        .take(line)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .find_map(assigned_key)
}

/// The known key a line assigns (`KEY =`, `"KEY" =`) or opens as a table
/// (`[KEY]`), if any.
fn assigned_key(line: &str) -> Option<String> {
    let line = line.trim_start();
    let name = match line.strip_prefix('[') {
        Some(table) => table.split(']').next()?,
        None => line.split_once('=')?.0,
    };
    let name = name.trim().trim_matches(|c| c == '"' || c == '\'');
    FileConfig::KEYS
        .iter()
        .map(|k| super::kebab(k))
        .find(|spelled| spelled == name)
}

/// What a type error expected, in words.
fn expected(message: &str) -> &'static str {
    let expected = message.rsplit(", expected ").next().unwrap_or("");
    match expected {
        "a string" => "text (a quoted string)",
        "a sequence" => "a list ([\"…\", \"…\"])",
        "a boolean" => "true or false",
        "f64" | "f32" => "a number",
        _ if expected.starts_with('u') || expected.starts_with('i') => "a whole number",
        _ => "another kind of value",
    }
}

/// What a type error found, in words (never the value itself).
fn found(message: &str) -> &'static str {
    let found = message
        .trim_start_matches("invalid type: ")
        .split([' ', ','])
        .next()
        .unwrap_or("");
    match found {
        "string" => "text",
        "integer" => "a whole number",
        "floating" => "a number with a fraction",
        "boolean" => "true or false",
        "sequence" => "a list",
        "map" => "a table",
        _ => "that kind of value",
    }
}

/// A message on one line.
fn one_line(message: &str) -> String {
    message
        .split('\n')
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("; ")
}

/// An unknown key in few words, and the key it most likely meant (`lisen`
/// → `listen`), as clap suggests a flag.
fn unknown_key(key: &str) -> String {
    let nearest = FileConfig::KEYS
        .iter()
        .map(|k| super::kebab(k))
        .map(|k| (strsim::jaro_winkler(key, &k), k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match nearest {
        Some((_, k)) => format!("unknown key `{key}`; did you mean `{k}`?"),
        None => format!(
            "unknown key `{key}`; the keys are the long flags' names (`resetctl help` lists them)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::describe;

    fn error_of(text: &str) -> String {
        let error = toml::from_str::<super::FileConfig>(text).unwrap_err();
        describe(&error, text)
    }

    #[test]
    fn errors_name_the_line_the_column_and_the_key_never_the_value() {
        for (text, said) in [
            (
                "keep = 3\nrate-limit-store = \"redis://:s3cretPW@h:1/0\n",
                "line 2, column 44: `rate-limit-store`: invalid basic string, expected `\"`",
            ),
            (
                "upstream-header = \"X-Key: s3cretPW\"\n",
                "line 1, column 19: `upstream-header` must be a list ([\"…\", \"…\"]), not text",
            ),
            (
                "rate-limit-store = \"a\"\nrate-limit-store = \"s3cretPW\"\n",
                "line 2, column 1: `rate-limit-store` is given twice",
            ),
            (
                "upstream = \"https://s3cretPW@h/\" lisen = 1\n",
                "line 1, column 34: `upstream`: unexpected key or value, expected newline, `#`",
            ),
            (
                "upstream-header = [\n  \"X: s3cretPW\",\n  \"Y: 2\n]\n",
                "line 3, column 8: `upstream-header`: invalid basic string, expected `\"`",
            ),
            (
                "keep = \"x\"\n",
                "line 1, column 8: `keep` must be a whole number, not text",
            ),
            (
                "s3cretPW\n",
                "line 1, column 9: key with no value, expected `=`",
            ),
            (
                "keep = 3\nlisen = 1\n",
                "line 2, column 1: unknown key `lisen`; did you mean `listen`?",
            ),
        ] {
            assert_eq!(error_of(text), said, "{text}");
        }
    }
}
