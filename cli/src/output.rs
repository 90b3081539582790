//! Writing to stdout where a closed pipe (`resetctl … | head`) is success,
//! not an error.

use std::io::{self, Write};

use crate::exit::{CliError, Code};

/// Writes `text` to stdout; a broken pipe counts as success.
pub fn print(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::new(
            Code::IoErr,
            format!("cannot write to stdout: {e}"),
        )),
    }
}

/// Pretty JSON of `value` with a trailing newline.
pub fn json<T: serde::Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON of plain data");
    text.push('\n');
    text
}
