//! The webhook outbox: every published change, durable before any pointer
//! moves and before anything is sent.
//!
//! `<data-dir>/webhooks/outbox.jsonl` is append-only JSON lines, written
//! only under the data-dir lock by the one publish step
//! ([`crate::publish::publish`] and [`crate::publish::rollback`]):
//!
//! - a header line naming the outbox: a random id (its *epoch*), minted
//!   when the outbox is created and again when it finds itself restored
//!   or copied (its `webhooks/` directory is not the one it was made in),
//!   so no message id is ever issued twice ([`message_id`]);
//! - one `change` line per transition of a record
//!   ([`crate::changes::transitions`]), carrying the record exactly as
//!   served (and what the transition names: the window before a move, the
//!   completion of a fulfilment), so the outbox is self-contained and
//!   snapshot retention never matters to delivery;
//! - one `commit` line per publish that had changes, naming the snapshot it
//!   brought receivers to;
//! - time events ([`crate::remind`]) as `change` lines too, appended when they
//!   fall due ([`Outbox::append_reminders`], under the same lock), each with
//!   its key: a key already in the outbox is never appended again, so a
//!   reminder gets one message id across retries, restarts and processes.
//!   A compaction carries the keys of the reminders it drops in the header
//!   until they expire.
//!
//! **After a restore.** A writer that finds the outbox restored or copied
//! mints a new epoch and notes the instant (`quietUntil`): time events
//! that fell due before it are not appended (the instance the backup came
//! from told them, or they are stale), so subscribers are not told the
//! history again; what a publish after the restore finds different from
//! the restored version is told as usual, under new ids.
//!
//! Readers (the deliverer, `status`) take no lock and see only lines up to
//! the last commit, so a publish killed half way (or a torn last line) is
//! invisible; the next writer cuts such a tail off before it appends.
//!
//! **What it holds, and how big it gets.** Changes are written only while
//! some endpoint exists (with none, a publish appends just its commit
//! line, and nothing at all before the outbox exists). Past
//! [`COMPACT_AT_BYTES`], the publish step rewrites the file (atomically,
//! under the same lock) to what endpoints still need: the changes from the
//! lowest cursor among them on (a disabled endpoint's included, so `enable`
//! resumes where it stopped), with their numbers, message ids
//! and the outbox id unchanged (the header says where they start). An
//! endpoint that cannot be reached keeps changes waiting up to
//! [`MAX_BYTES`]; past that the oldest are dropped down to half of it (the
//! endpoint, when it recovers, goes on from the oldest kept change, and the
//! deliverer logs how many it missed). So the file never holds more than
//! [`MAX_BYTES`] plus one publish's changes, however the upstream flaps. A
//! reader notices the rewrite (a new file) and reads it afresh.
//!
//! The file's jobs, one module each: [`line`](mod@line) (what a line is, and a
//! message's id), `read` (committed lines, the index a writer needs),
//! `append` (a publish's changes, due time events, the header after a
//! restore) and `compact` (the rewrite past its bound).

use crate::model::Timestamp;
use std::io;
use std::path::{Path, PathBuf};

mod append;
mod compact;
pub mod line;
mod read;

pub use line::{home_of, message_id, Line, OutboxEntry, Reminded, ReminderFacts};
use line::{line_bytes, push_line};

/// Past this size a publish considers compacting the outbox.
pub const COMPACT_AT_BYTES: u64 = 1024 * 1024;

/// The most the outbox keeps for endpoints that are behind; past it the
/// oldest changes are dropped down to half of it.
pub const MAX_BYTES: u64 = 32 * 1024 * 1024;

/// The largest outbox read: compaction keeps it near [`MAX_BYTES`], plus
/// what one publish adds; four times that is a file no writer made.
const READ_CAP: crate::durable::Cap = crate::durable::Cap::bytes(4 * MAX_BYTES);

fn too_large() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "larger than {} bytes, the most an outbox may hold; refusing to read it",
            READ_CAP.bytes
        ),
    )
}

/// Why the outbox could not be read or appended to.
#[derive(Debug, thiserror::Error)]
#[error("webhook outbox {path}: {source}")]
pub struct OutboxError {
    /// The outbox file.
    pub path: PathBuf,
    /// The underlying error.
    #[source]
    pub source: io::Error,
}

/// The committed part of the outbox.
#[derive(Debug, Default, Clone)]
pub struct Committed {
    /// The outbox id, once there is one.
    pub outbox: Option<String>,
    /// The number of the first change held (changes before it were
    /// compacted away).
    pub first: u64,
    /// Reminders compacted away that have not expired (the header's).
    pub reminded: Vec<Reminded>,
    /// Time events due before it are not appended (the header's).
    pub quiet_until: Option<Timestamp>,
    /// Every committed change held, in order: `entries[i].n == first + i`.
    pub entries: Vec<OutboxEntry>,
    /// The snapshot the last commit led to.
    pub last_sequence: Option<u64>,
    /// The next entry number.
    pub next: u64,
    /// Where the committed part ends, in bytes.
    pub end: u64,
    /// Which file was read (device and inode): a compaction replaces it.
    file: Option<(u64, u64)>,
}

impl Committed {
    /// Change `n`, if it is held.
    pub fn get(&self, n: u64) -> Option<&OutboxEntry> {
        let index = n.checked_sub(self.first)?;
        self.entries.get(usize::try_from(index).ok()?)
    }

    /// The changes from `n` on (from the first held, when `n` is older).
    pub fn from(&self, n: u64) -> &[OutboxEntry] {
        let index = n.saturating_sub(self.first);
        let index = usize::try_from(index).unwrap_or(usize::MAX);
        &self.entries[index.min(self.entries.len())..]
    }

    /// The keys of every reminder the outbox holds or has held.
    pub fn reminder_keys(&self) -> std::collections::HashSet<&str> {
        self.entries
            .iter()
            .filter_map(|e| e.reminder.as_ref().map(|r| r.key.as_str()))
            .chain(self.reminded.iter().map(|r| r.key.as_str()))
            .collect()
    }
}

/// How every change line begins (serde writes the tag, then the number).
const CHANGE_PREFIX: &[u8] = br#"{"line":"change","n":"#;

/// The field only a reminder's change line has.
const REMINDER_FIELD: &[u8] = br#""reminder":{"key":"#;

/// The committed part as the writer sees it ([`Outbox::index`]).
#[derive(Debug, Default)]
pub struct Index {
    /// The outbox id, once there is one.
    pub outbox: Option<String>,
    /// The number of the first change held.
    pub first: u64,
    /// The next entry number.
    pub next: u64,
    /// The snapshot the last commit led to.
    pub last_sequence: Option<u64>,
    /// Where the committed part ends, in bytes.
    pub end: u64,
    /// The header's reminders compacted away.
    pub reminded: Vec<Reminded>,
    /// The header's home ([`home_of`]).
    pub home: Option<String>,
    /// The header's `quietUntil`.
    pub quiet_until: Option<Timestamp>,
    /// Each committed change's number and the byte range of its line.
    changes: Vec<(u64, std::ops::Range<usize>)>,
    bytes: Vec<u8>,
}

/// The outbox of one data dir.
#[derive(Debug, Clone)]
pub struct Outbox {
    path: PathBuf,
}

impl Outbox {
    /// The outbox of `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            path: crate::data_dir::DataDir::of(data_dir).outbox(),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, source: io::Error) -> OutboxError {
        OutboxError {
            path: self.path.clone(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::durable::DataDirLock;
    use crate::model::Record;
    use std::fs::OpenOptions;
    use std::io::Write;

    /// An outbox in a fresh directory, its lock, and the bundled records.
    fn fixture() -> (tempfile::TempDir, DataDirLock, Outbox, Vec<Record>) {
        let dir = tempfile::tempdir().unwrap();
        let lock = DataDirLock::acquire(
            &dir.path().join("lock"),
            std::time::Duration::from_secs(1),
            "test",
        )
        .unwrap();
        let outbox = Outbox::new(dir.path());
        let records = crate::document::RecordsDocument::from_slice(crate::BUNDLED_SEED_HISTORY)
            .unwrap()
            .records;
        (dir, lock, outbox, records)
    }

    /// Every record created, one publish each (changes 0..n; an endpoint
    /// that has received none).
    fn publish_one_by_one(lock: &DataDirLock, outbox: &Outbox, records: &[Record]) {
        let at = Timestamp::MAX;
        for i in 0..records.len() {
            outbox
                .append(
                    lock,
                    Some(&records[..i]),
                    &records[..=i],
                    i as u64 + 1,
                    at,
                    (at, None),
                    Some(0),
                )
                .unwrap();
        }
    }

    #[test]
    fn a_change_line_begins_with_its_tag_and_number() {
        let record = crate::document::RecordsDocument::from_slice(crate::BUNDLED_SEED_HISTORY)
            .unwrap()
            .records
            .remove(0);
        let entry = OutboxEntry {
            n: 7,
            id: "msg_x_7".into(),
            event_type: "record.created".into(),
            kinds: vec!["all".into()],
            sequence: 1,
            generated_at: record.completed_at.unwrap_or(Timestamp::MAX),
            published_at: Timestamp::MAX,
            record,
            reminder: None,
            previous_window: None,
            completion: None,
            told_with: None,
            fulfils: Vec::new(),
            moment: None,
            changed: Vec::new(),
            previous_time: None,
            restored: None,
        };
        let line = line_bytes(&Line::Change(Box::new(entry)));
        assert!(
            line.starts_with(b"{\"line\":\"change\",\"n\":7,"),
            "{}",
            String::from_utf8_lossy(&line)
        );
        assert!(line.starts_with(CHANGE_PREFIX));
    }

    #[test]
    fn commits_without_changes_do_not_pile_up() {
        let (_dir, lock, outbox, records) = fixture();
        let at = Timestamp::MAX;
        assert_eq!(
            outbox
                .append(&lock, Some(&[]), &records[..1], 1, at, (at, None), Some(0))
                .unwrap(),
            1
        );
        // The endpoint is gone: 30,000 publishes appended only their commits
        // (written here at once; appending each would fsync each).
        let mut tail = Vec::new();
        for sequence in 2..30_000u64 {
            tail.extend_from_slice(&line_bytes(&Line::Commit { sequence, next: 1 }));
        }
        let mut file = OpenOptions::new().append(true).open(outbox.path()).unwrap();
        file.write_all(&tail).unwrap();
        drop(file);
        assert!(std::fs::metadata(outbox.path()).unwrap().len() > COMPACT_AT_BYTES);
        // The next publish folds them into one.
        outbox
            .append(&lock, Some(&[]), &records, 39_999, at, (at, None), None)
            .unwrap();
        let size = std::fs::metadata(outbox.path()).unwrap().len();
        assert!(size <= COMPACT_AT_BYTES, "{size}");
        let committed = outbox.read().unwrap();
        assert_eq!(committed.last_sequence, Some(39_999));
        assert_eq!((committed.first, committed.next), (1, 1));
        assert!(committed.entries.is_empty());
    }

    #[test]
    fn past_its_bound_the_outbox_keeps_the_newest_changes_within_half_of_it() {
        let (_dir, lock, outbox, records) = fixture();
        publish_one_by_one(&lock, &outbox, &records);
        let index = outbox.index().unwrap();
        let n = index.next;
        assert!(n >= 10, "{n} changes");
        let sizes: Vec<u64> = index.changes.iter().map(|(_, r)| r.len() as u64).collect();
        let total: u64 = sizes.iter().sum();
        // A bound the kept changes exceed: the oldest go until they fit in half.
        let bound = total - 1;
        let mut kept_size = total;
        let mut dropped = 0;
        while kept_size > bound / 2 {
            kept_size -= sizes[dropped];
            dropped += 1;
        }
        outbox
            .compact_within(&lock, 0, bound, Timestamp::MAX)
            .unwrap();
        let committed = outbox.read().unwrap();
        assert_eq!(committed.next, n, "numbers are kept");
        assert_eq!(committed.first, dropped as u64, "the oldest kept change");
        let numbers: Vec<u64> = committed.entries.iter().map(|e| e.n).collect();
        assert_eq!(numbers, (dropped as u64..n).collect::<Vec<_>>());
        assert!(
            dropped > 0 && (dropped as u64) < n,
            "{dropped} of {n} dropped"
        );
        // Within the bound: nothing is dropped, and a file that would not
        // halve is not rewritten.
        let before = std::fs::read(outbox.path()).unwrap();
        outbox
            .compact_within(&lock, 0, total * 4, Timestamp::MAX)
            .unwrap();
        assert_eq!(std::fs::read(outbox.path()).unwrap(), before);
    }

    #[test]
    fn the_bound_and_its_half_are_limits_that_may_be_reached() {
        let (_dir, lock, outbox, records) = fixture();
        publish_one_by_one(&lock, &outbox, &records);
        let index = outbox.index().unwrap();
        let sizes: Vec<u64> = index.changes.iter().map(|(_, r)| r.len() as u64).collect();
        let total: u64 = sizes.iter().sum();
        // Exactly at the bound: kept whole (and not rewritten: it would not halve).
        let before = std::fs::read(outbox.path()).unwrap();
        outbox
            .compact_within(&lock, 0, total, Timestamp::MAX)
            .unwrap();
        assert_eq!(
            std::fs::read(outbox.path()).unwrap(),
            before,
            "at the bound"
        );
        // A bound whose half is exactly what the newest quarter weighs:
        // dropping stops there, with that quarter kept whole.
        let k = sizes.len() * 3 / 4;
        let quarter: u64 = sizes[k..].iter().sum();
        assert!(2 * quarter < total);
        outbox
            .compact_within(&lock, 0, 2 * quarter, Timestamp::MAX)
            .unwrap();
        let committed = outbox.read().unwrap();
        assert_eq!(committed.first, k as u64, "dropped down to exactly half");
        assert_eq!(committed.entries.len(), sizes.len() - k);
    }
}
