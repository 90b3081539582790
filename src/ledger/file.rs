//! The ledger file: JSON lines, each with a check of its bytes
//! ([`super::line`]), appended and fsynced under the data-dir lock, never
//! rewritten or truncated but for one case: a ledger with lines that carry
//! no check (written before checks, or repaired by hand) is rewritten
//! atomically with them by its next append.
//!
//! An append that fails (a full disk, say) truncates the file back to its
//! length before the append, under the lock, so a failed command leaves
//! nothing behind. Only a crash mid-append can leave a torn line, and only
//! as the last one, without its line end: reading reports it with its line
//! number and keeps every entry before it, and the next append (under the
//! lock) cuts it off before writing, since no command ever reported it
//! done. Entry numbers are allocated past every number on disk, the torn
//! line's included, so no two entries ever carry the same number.
//!
//! Any other line that is not an entry (a changed byte, which its check
//! no longer matches, a cut line, a
//! foreign line, the torn line an older version ended with a line end
//! instead of cutting it) is **corrupt**: no crash of this program can write it, and skipping it
//! would silently drop an operator's action (and announce its record's
//! removal). [`LedgerRead::checked`] refuses such a ledger, so nothing is
//! published from it until it is repaired.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::entry::Entry;
use super::line::Line;
use crate::durable::{open_data_file, read_data_file, Cap, DataDirLock, OpenError, ReadError};

/// The largest ledger read: about 800,000 entries of a few hundred bytes.
pub const LEDGER_CAP: Cap = Cap::mib(256);

/// A line that is not an entry: torn (an interrupted append) or corrupt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} line {} is not a complete entry ({}); it is kept and skipped",
            crate::data_dir::LEDGER,
            self.line,
            self.problem
        )
    }
}

/// What reading the ledger found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LedgerRead {
    /// The intact entries, in order.
    pub entries: Vec<Entry>,
    /// Lines an interrupted append left: a strict prefix of an entry.
    pub torn: Vec<BadLine>,
    /// Lines that are neither an entry nor a torn append.
    pub corrupt: Vec<BadLine>,
    /// The highest entry number on any line: an entry (however it is
    /// spaced) or a torn line that starts `{"entry":N` (an append's).
    pub highest_number: u64,
    /// Entries read from lines without one (written before checks, or
    /// by hand), which the next append rewrites with them.
    pub unchecked: usize,
}

impl LedgerRead {
    /// The error of the first corrupt line, if there is one.
    pub fn corrupt_error(&self) -> Option<LedgerError> {
        self.corrupt.first().map(|bad| LedgerError::Corrupt {
            line: bad.line,
            problem: bad.problem.clone(),
        })
    }

    /// The number the next entry gets: past every number on disk.
    pub fn next_entry_number(&self) -> u64 {
        self.highest_number.saturating_add(1)
    }

    /// The read, or [`LedgerError::Corrupt`] naming the first corrupt line:
    /// what every command that derives records from the ledger goes by.
    pub fn checked(self) -> Result<Self, LedgerError> {
        match self.corrupt_error() {
            Some(e) => Err(e),
            None => Ok(self),
        }
    }
}

/// The entry number a torn line carries, when its append got that far.
fn torn_number(line: &[u8]) -> Option<u64> {
    let digits = line.strip_prefix(b"{\"entry\":")?;
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// Why the ledger could not be read or appended to.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A line that is neither an entry nor an interrupted append.
    #[error(
        "ledger.jsonl line {line} is corrupt ({problem}): it is neither an entry nor an interrupted append, \
         so nothing is published from this ledger until it is repaired. Restore ledger.jsonl from a backup, \
         or correct that line by hand and remove its \"check\" member, or delete it (the ledger is the source of truth; `resetctl record log` \
         shows what the other lines hold), then run `resetctl publish`"
    )]
    Corrupt {
        /// 1-based line number.
        line: usize,
        /// What the parser says of it.
        problem: String,
    },
    /// The ledger is not a regular file, or larger than [`LEDGER_CAP`].
    #[error(transparent)]
    Unfit(ReadError),
    /// I/O on the ledger file.
    #[error("ledger {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl LedgerError {
    fn from_read(e: ReadError) -> Self {
        match e {
            ReadError::Io { path, source } => LedgerError::Io { path, source },
            unfit => LedgerError::Unfit(unfit),
        }
    }

    fn from_open(e: OpenError, path: &Path) -> Self {
        Self::from_read(e.at(path))
    }
}

/// Reads every entry; a line that does not parse is reported, not fatal.
pub fn read_ledger(data_dir: &Path) -> Result<LedgerRead, LedgerError> {
    let path = crate::data_dir::DataDir::of(data_dir).ledger();
    let text = match read_data_file(&path, LEDGER_CAP) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(LedgerRead::default()),
        Err(e) => return Err(LedgerError::from_read(e)),
    };
    let mut read = LedgerRead::default();
    let ends_with_newline = text.last() == Some(&b'\n');
    let lines: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
    let count = if ends_with_newline {
        lines.len() - 1
    } else {
        lines.len()
    };
    for (i, line) in lines.iter().take(count).enumerate() {
        if line.is_empty() {
            continue;
        }
        // Only the last line without its line end is an append that did
        // not finish; every other bad line is corrupt.
        let parsed = if i + 1 == count && !ends_with_newline {
            Err((true, "no line end: the append did not finish".to_owned()))
        } else {
            match super::line::decode(line) {
                Ok(Line::Checked(entry)) => Ok(entry),
                Ok(Line::Unchecked(entry)) => {
                    read.unchecked += 1;
                    Ok(entry)
                }
                Err(problem) => Err((false, problem)),
            }
        };
        match parsed {
            Ok(entry) => {
                read.highest_number = read.highest_number.max(entry.entry);
                read.entries.push(entry);
            }
            Err((torn, problem)) => {
                let number = torn_number(line).unwrap_or(0);
                read.highest_number = read.highest_number.max(number);
                let bad = BadLine {
                    line: i + 1,
                    problem,
                };
                if torn {
                    read.torn.push(bad);
                } else {
                    read.corrupt.push(bad);
                }
            }
        }
    }
    Ok(read)
}

/// Appends `entry` (numbered by [`LedgerRead::next_entry_number`]) and fsyncs; the
/// caller holds the lock. On failure the file is truncated back to where
/// it was, so a failed append leaves nothing that could later be read as
/// an entry.
///
/// `earlier`, when given, are the entries of a ledger with lines that
/// carry no check (written before checks, or by hand; what the caller
/// read under the same lock): the ledger is then rewritten, atomically,
/// with a check on every line and `entry` last, instead of appended to.
pub fn append(
    lock: &DataDirLock,
    data_dir: &Path,
    entry: &Entry,
    earlier: Option<&[Entry]>,
) -> Result<(), LedgerError> {
    if let Some(earlier) = earlier {
        return rewrite_checked(lock, data_dir, earlier, entry);
    }
    let path = crate::data_dir::DataDir::of(data_dir).ledger();
    let io_err = |source| LedgerError::Io {
        path: path.clone(),
        source,
    };
    let mut file = open_data_file(
        &path,
        std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true),
    )
    .map_err(|e| LedgerError::from_open(e, &path))?;
    let mut line = Vec::new();
    // Cut a torn last line off first (what an interrupted append left; no
    // command reported it done), so the file stays whole lines only.
    let mut len = file.metadata().map_err(io_err)?.len();
    let mut last = [0u8; 1];
    if len > 0 {
        file.seek(SeekFrom::Start(len - 1)).map_err(io_err)?;
        file.read_exact(&mut last).map_err(io_err)?;
    }
    if len > 0 && last[0] != b'\n' {
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        file.read_to_end(&mut bytes).map_err(io_err)?;
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        file.set_len(whole as u64)
            .and_then(|()| file.sync_all())
            .map_err(io_err)?;
        tracing::warn!(
            "{}: cut off a torn last line (an append that did not finish): {:?}",
            crate::data_dir::LEDGER,
            String::from_utf8_lossy(&bytes[whole..])
        );
        len = whole as u64;
    }
    line.extend_from_slice(&super::line::encode(entry));
    line.push(b'\n');
    crate::testhook::reached("append:begin");
    if let Err(e) = file.write_all(&line).and_then(|()| file.sync_all()) {
        let _ = file.set_len(len).and_then(|()| file.sync_all());
        return Err(io_err(e));
    }
    crate::testhook::reached("append:done");
    if len == 0 {
        crate::durable::sync_dir(data_dir).map_err(io_err)?;
    }
    Ok(())
}

/// Replaces the ledger whole, atomically, with `entries`, each on a
/// checked line (`resetctl restore`); the caller holds the lock.
pub fn replace(lock: &DataDirLock, data_dir: &Path, entries: &[Entry]) -> Result<(), LedgerError> {
    write_lines(lock, data_dir, entries.iter())
}

/// Every entry of `entries` on a checked line, replacing the file atomically.
fn write_lines<'a>(
    _lock: &DataDirLock,
    data_dir: &Path,
    entries: impl Iterator<Item = &'a Entry>,
) -> Result<(), LedgerError> {
    let path = crate::data_dir::DataDir::of(data_dir).ledger();
    let mut bytes = Vec::new();
    for e in entries {
        bytes.extend_from_slice(&super::line::encode(e));
        bytes.push(b'\n');
    }
    crate::testhook::reached("append:begin");
    crate::durable::write_atomic(&path, &bytes).map_err(|e| LedgerError::Io {
        path: path.clone(),
        source: e.source,
    })?;
    crate::testhook::reached("append:done");
    Ok(())
}

/// The rewrite of a ledger with unchecked lines: every entry, and `entry`,
/// each on a checked line, replacing the file
/// atomically (a torn last line, which no command reported done, is left
/// out as an append would cut it).
fn rewrite_checked(
    lock: &DataDirLock,
    data_dir: &Path,
    earlier: &[Entry],
    entry: &Entry,
) -> Result<(), LedgerError> {
    write_lines(lock, data_dir, earlier.iter().chain(std::iter::once(entry)))?;
    let path = crate::data_dir::DataDir::of(data_dir).ledger();
    tracing::info!(
        "{}: had lines without a check (written before checks, or by hand); rewritten with a check on each of its {} lines",
        path.display(),
        earlier.len() + 1
    );
    Ok(())
}
