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

use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::changes::transitions;
use crate::durable::DataDirLock;
use crate::model::{Record, ScheduleWindow, Timestamp};

/// The outbox file name, under `webhooks/`.
pub const OUTBOX_FILE: &str = "outbox.jsonl";

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

/// One line of the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "camelCase")]
pub enum Line {
    /// The first line: who this outbox is.
    Header {
        /// A random id (the epoch), part of every message id.
        outbox: String,
        /// The number of the first change held (past 0 once compacted).
        #[serde(default, skip_serializing_if = "is_zero")]
        first: u64,
        /// Reminders appended before `first` that have not expired.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reminded: Vec<Reminded>,
        /// The `webhooks/` directory it was made in ([`home_of`]): another
        /// one means a restore or a copy.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        home: Option<String>,
        /// Time events due before this instant are not appended (set when
        /// the outbox found itself restored).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quiet_until: Option<Timestamp>,
    },
    /// One change.
    Change(Box<OutboxEntry>),
    /// The end of one publish's changes.
    Commit {
        /// The snapshot the changes above lead to.
        sequence: u64,
        /// The next entry number.
        next: u64,
    },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A reminder the outbox has held, by its key, until it expires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reminded {
    /// [`crate::remind::Reminder::key`].
    pub key: String,
    /// From this instant on it is never sent.
    pub expires_at: Timestamp,
}

/// What makes an entry a reminder ([`crate::remind`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReminderFacts {
    /// [`crate::remind::Reminder::key`].
    pub key: String,
    /// Minutes before the window starts (`reset.upcoming`).
    pub lead_minutes: Option<u32>,
    /// The instant it refers to.
    pub at: Timestamp,
    /// From this instant on it is not sent (the deliverer skips it).
    pub expires_at: Timestamp,
}

/// One change, as every endpoint will be told about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEntry {
    /// Position in the outbox (0, 1, 2, …): the deliverer's cursor counts these.
    pub n: u64,
    /// The message id (`webhook-id`), unique and stable across retries.
    pub id: String,
    /// A change ([`crate::changes::EVENT_TYPES`]) or a time event
    /// ([`crate::remind::ReminderKind`]).
    #[serde(rename = "type")]
    pub event_type: String,
    /// The kind filters (`all`, `reset_scheduled`, `reset_completed`)
    /// whose subscribers hear of it: those the record is of
    /// ([`crate::changes::concerns`]).
    pub kinds: Vec<String>,
    /// The snapshot sequence that made the change.
    pub sequence: u64,
    /// That snapshot's `generatedAt`.
    pub generated_at: Timestamp,
    /// When it was published (the payload's `timestamp`).
    pub published_at: Timestamp,
    /// The record as the API serves it (for a removal, as last served).
    pub record: Record,
    /// For a reminder: its key, lead, instant and expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminder: Option<ReminderFacts>,
    /// `schedule.moved`: the window before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_window: Option<ScheduleWindow>,
    /// `schedule.fulfilled`: the completion that fulfilled it, as served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<Record>,
    /// `schedule.fulfilled` by a completion recorded in the same version:
    /// that completion's id. A message for people tells it in the
    /// completion's message, not in one of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub told_with: Option<String>,
    /// A completion's: the schedules it fulfilled in the same version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fulfils: Vec<Record>,
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
            path: data_dir.join("webhooks").join(OUTBOX_FILE),
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

    /// Reads the committed lines from byte `from` on (0 for all), adding
    /// them to `into`. Lines past the last commit are not taken.
    pub fn read_from(&self, into: &mut Committed) -> Result<(), OutboxError> {
        use std::os::unix::fs::MetadataExt;
        let mut file = match crate::durable::open_regular(&self.path) {
            Ok(file) => file,
            Err(crate::durable::OpenError::Missing) => return Ok(()),
            Err(e) => return Err(self.err(e.at(&self.path).into_io())),
        };
        let meta = file.metadata().map_err(|e| self.err(e))?;
        if meta.len() > READ_CAP.bytes {
            return Err(self.err(too_large()));
        }
        let identity = Some((meta.dev(), meta.ino()));
        if into.file != identity {
            // Another file (a compaction replaced it): read it afresh.
            *into = Committed {
                file: identity,
                ..Committed::default()
            };
        }
        file.seek(SeekFrom::Start(into.end))
            .map_err(|e| self.err(e))?;
        let mut bytes = Vec::new();
        file.take(READ_CAP.bytes)
            .read_to_end(&mut bytes)
            .map_err(|e| self.err(e))?;
        let base = into.end;
        let mut pending = Vec::new();
        let mut offset = 0usize;
        while let Some(len) = bytes[offset..].iter().position(|b| *b == b'\n') {
            let line = &bytes[offset..offset + len];
            offset += len + 1;
            match serde_json::from_slice::<Line>(line) {
                // The header stands on its own: committed when written.
                Ok(Line::Header {
                    outbox,
                    first,
                    reminded,
                    quiet_until,
                    ..
                }) => {
                    into.outbox = Some(outbox);
                    into.first = first;
                    into.reminded = reminded;
                    into.quiet_until = quiet_until;
                    into.next = into.next.max(first);
                    into.end = base + offset as u64;
                }
                Ok(Line::Change(entry)) => pending.push(*entry),
                Ok(Line::Commit { sequence, next }) => {
                    into.entries.append(&mut pending);
                    into.last_sequence = Some(sequence);
                    into.next = next;
                    into.end = base + offset as u64;
                }
                // A torn or foreign line ends what can be trusted.
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// What the writer needs of the committed part, without decoding a
    /// single record: where it ends, the numbers, and where each change's
    /// line lies (so a compaction copies lines instead of re-encoding them).
    pub fn index(&self) -> Result<Index, OutboxError> {
        /// Any line, its record skipped unread.
        #[derive(Deserialize)]
        struct Light {
            line: String,
            outbox: Option<String>,
            first: Option<u64>,
            #[serde(default)]
            reminded: Vec<Reminded>,
            home: Option<String>,
            #[serde(rename = "quietUntil")]
            quiet_until: Option<Timestamp>,
            n: Option<u64>,
            sequence: Option<u64>,
            next: Option<u64>,
        }
        let bytes = match crate::durable::read_data_file(&self.path, READ_CAP) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(Index::default()),
            Err(e) => return Err(self.err(e.into_io())),
        };
        let mut index = Index::default();
        let mut pending = Vec::new();
        let mut offset = 0usize;
        while let Some(len) = bytes[offset..].iter().position(|b| *b == b'\n') {
            let start = offset;
            offset += len + 1;
            let line = &bytes[start..start + len];
            // A change line as this program writes it starts with its tag
            // and number: read just those (decoding a record per line made
            // every publish cost the whole outbox).
            if let Some(rest) = line.strip_prefix(CHANGE_PREFIX) {
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                let n = std::str::from_utf8(&rest[..digits])
                    .ok()
                    .and_then(|d| d.parse::<u64>().ok());
                match n {
                    Some(n) if rest.get(digits) == Some(&b',') && line.ends_with(b"}") => {
                        pending.push((n, start..offset));
                        continue;
                    }
                    _ => break,
                }
            }
            let Ok(light) = serde_json::from_slice::<Light>(line) else {
                break;
            };
            match (light.line.as_str(), light.n, light.sequence, light.next) {
                ("header", ..) => {
                    index.outbox = light.outbox;
                    index.first = light.first.unwrap_or(0);
                    index.reminded = light.reminded;
                    index.home = light.home;
                    index.quiet_until = light.quiet_until;
                    index.next = index.next.max(index.first);
                    index.end = offset as u64;
                }
                ("change", Some(n), ..) => pending.push((n, start..offset)),
                ("commit", _, Some(sequence), Some(next)) => {
                    index.changes.append(&mut pending);
                    index.last_sequence = Some(sequence);
                    index.next = next;
                    index.end = offset as u64;
                }
                _ => break,
            }
        }
        index.bytes = bytes;
        Ok(index)
    }

    /// Reads everything committed.
    pub fn read(&self) -> Result<Committed, OutboxError> {
        let mut committed = Committed::default();
        self.read_from(&mut committed)?;
        Ok(committed)
    }

    /// Appends the transitions from `old` to `new` (snapshot `sequence`)
    /// and makes them durable, then compacts the file when it has grown
    /// past [`COMPACT_AT_BYTES`]. `needed` is the lowest change number an
    /// endpoint still needs ([`crate::webhook::needed`]), or `None` when
    /// there is no endpoint
    /// (then only the commit is written, so later changes are measured
    /// from this version; and nothing at all while there is no outbox).
    /// The caller holds the data-dir lock: this is a step of the one
    /// publish step, run before the pointer moves.
    #[allow(clippy::too_many_arguments)]
    pub fn append(
        &self,
        lock: &DataDirLock,
        old: &[Record],
        new: &[Record],
        sequence: u64,
        generated_at: Timestamp,
        published_at: Timestamp,
        needed: Option<u64>,
    ) -> Result<usize, OutboxError> {
        let committed = self.index()?;
        if needed.is_none() && committed.outbox.is_none() {
            return Ok(0);
        }
        let changes = if needed.is_some() {
            transitions(old, new)
        } else {
            Vec::new()
        };
        // No transition and the very same records: nothing to write. A
        // version whose records differ only by what is no transition (a
        // schedule's state turning elapsed) still gets its commit line, so
        // the next publish measures from it and a withdrawn record is
        // carried as last served.
        if changes.is_empty() && needed.is_some() && old == new {
            return Ok(0);
        }
        let committed = self.own(lock, committed, published_at)?;
        let mut out = Vec::new();
        let outbox = self.header_if_new(committed.outbox.clone(), &mut out)?;
        let mut n = committed.next;
        let count = changes.len();
        for change in changes {
            let mut entry = OutboxEntry {
                n,
                id: String::new(),
                event_type: change.transition.event_type().to_owned(),
                kinds: crate::changes::filters_of(change.record),
                sequence,
                generated_at,
                published_at,
                record: change.record.clone(),
                reminder: None,
                previous_window: change.previous_window,
                completion: change.completion.cloned(),
                told_with: change.told_with.map(str::to_owned),
                fulfils: change.fulfils.into_iter().cloned().collect(),
            };
            entry.id = message_id(&outbox, &entry);
            push_line(&mut out, &Line::Change(Box::new(entry)));
            n += 1;
        }
        push_line(&mut out, &Line::Commit { sequence, next: n });
        crate::testhook::reached("outbox:append");
        self.write_after(committed.end, &out)?;
        crate::testhook::reached("outbox:appended");
        if committed.end + out.len() as u64 > COMPACT_AT_BYTES {
            self.compact(lock, needed.unwrap_or(n), published_at)?;
        }
        Ok(count)
    }

    /// Appends the time events in `reminders` whose keys the outbox has
    /// not held (and that did not fall due before a restore, see
    /// `quietUntil`), as change lines and one commit (naming snapshot
    /// `sequence`, the one they are served from), durably; returns how
    /// many. The caller holds the data-dir lock, so two processes never
    /// append one twice.
    pub fn append_reminders(
        &self,
        lock: &DataDirLock,
        reminders: &[crate::remind::Reminder<'_>],
        sequence: u64,
        generated_at: Timestamp,
        now: Timestamp,
    ) -> Result<usize, OutboxError> {
        self.own(lock, self.index()?, now)?;
        let committed = self.read()?;
        let held = committed.reminder_keys();
        // An endpoint added after the last publish finds no outbox yet.
        let mut out = Vec::new();
        let outbox = self.header_if_new(committed.outbox.clone(), &mut out)?;
        let mut n = committed.next;
        for reminder in reminders {
            let key = reminder.key();
            let before_restore = committed.quiet_until.is_some_and(|q| reminder.due_at < q);
            if held.contains(key.as_str()) || !reminder.is_due(now) || before_restore {
                continue;
            }
            let mut entry = OutboxEntry {
                n,
                id: String::new(),
                event_type: reminder.kind.event_type().to_owned(),
                kinds: crate::changes::filters_of(reminder.record),
                sequence,
                generated_at,
                published_at: now,
                record: reminder.record.clone(),
                reminder: Some(ReminderFacts {
                    key,
                    lead_minutes: reminder.lead_minutes,
                    at: reminder.at,
                    expires_at: reminder.expires_at,
                }),
                previous_window: None,
                completion: None,
                told_with: None,
                fulfils: Vec::new(),
            };
            entry.id = message_id(&outbox, &entry);
            push_line(&mut out, &Line::Change(Box::new(entry)));
            n += 1;
        }
        let count = (n - committed.next) as usize;
        if count == 0 {
            return Ok(0);
        }
        // What the next publish measures from stays the version receivers
        // were last told of, whatever is served (a reminder changes no
        // record; a publish or rollback killed before its pointer moved has
        // told them of another version than the served one).
        let told = committed.last_sequence.unwrap_or(sequence);
        push_line(
            &mut out,
            &Line::Commit {
                sequence: told,
                next: n,
            },
        );
        crate::testhook::reached("outbox:remind");
        self.write_after(committed.end, &out)?;
        crate::testhook::reached("outbox:reminded");
        Ok(count)
    }

    /// Makes sure the outbox is this data dir's own before a writer
    /// appends: one made in another `webhooks/` directory (a restore, a
    /// copy) gets a new epoch and `quietUntil` = `now`; one from before
    /// homes were noted gets its home. Either is one atomic rewrite under
    /// the caller's lock; the index returned is the file's after it.
    fn own(&self, _lock: &DataDirLock, index: Index, now: Timestamp) -> Result<Index, OutboxError> {
        let Some(outbox) = index.outbox.clone() else {
            return Ok(index);
        };
        let home = self.home()?;
        if index.home.as_deref() == Some(home.as_str()) {
            return Ok(index);
        }
        let header = if index.home.is_some() {
            tracing::warn!(
                "webhook outbox: made in another directory (a restore or a copy of the data dir): new message ids from here on, and time events due before {now} are not sent"
            );
            Line::Header {
                outbox: crate::webhook::random_token(9),
                first: index.first,
                reminded: index.reminded.clone(),
                home: Some(home),
                quiet_until: Some(now),
            }
        } else {
            Line::Header {
                outbox,
                first: index.first,
                reminded: index.reminded.clone(),
                home: Some(home),
                quiet_until: index.quiet_until,
            }
        };
        let mut bytes = line_bytes(&header);
        for (_, range) in &index.changes {
            bytes.extend_from_slice(&index.bytes[range.clone()]);
        }
        if let Some(sequence) = index.last_sequence {
            bytes.extend_from_slice(&line_bytes(&Line::Commit {
                sequence,
                next: index.next,
            }));
        }
        crate::durable::write_atomic(&self.path, &bytes).map_err(|e| self.err(e.source))?;
        self.index()
    }

    /// The identity of this outbox's `webhooks/` directory ([`home_of`]),
    /// made first when it does not exist.
    fn home(&self) -> Result<String, OutboxError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        crate::durable::create_dir_durable(dir).map_err(|e| self.err(e))?;
        home_of(dir).map_err(|e| self.err(e))
    }

    /// The outbox id: `existing`, or a new one whose header line (with
    /// this directory as its home) is pushed to `out`.
    fn header_if_new(
        &self,
        existing: Option<String>,
        out: &mut Vec<u8>,
    ) -> Result<String, OutboxError> {
        if let Some(id) = existing {
            return Ok(id);
        }
        let id = crate::webhook::random_token(9);
        push_line(
            out,
            &Line::Header {
                outbox: id.clone(),
                first: 0,
                reminded: Vec::new(),
                home: Some(self.home()?),
                quiet_until: None,
            },
        );
        Ok(id)
    }

    /// Writes `bytes` after the committed part (which ends at `end`),
    /// cutting off whatever a killed writer left past it, and makes them
    /// durable (the directory entry too, when the file is new).
    fn write_after(&self, end: u64, bytes: &[u8]) -> Result<(), OutboxError> {
        if let Some(dir) = self.path.parent() {
            crate::durable::create_dir_durable(dir).map_err(|e| self.err(e))?;
        }
        let mut file = crate::durable::open_data_file(
            &self.path,
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true),
        )
        .map_err(|e| self.err(e.at(&self.path).into_io()))?;
        file.set_len(end).map_err(|e| self.err(e))?;
        file.seek(SeekFrom::End(0)).map_err(|e| self.err(e))?;
        file.write_all(bytes).map_err(|e| self.err(e))?;
        file.sync_data().map_err(|e| self.err(e))?;
        if end == 0 {
            if let Some(dir) = self.path.parent() {
                crate::durable::sync_dir(dir).map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }

    /// Rewrites the outbox to the changes from `needed` on (and one commit
    /// line), dropping the oldest of those too while they exceed
    /// [`MAX_BYTES`] (down to half of it); nothing happens unless that
    /// drops changes for the bound or halves the file. Atomic
    /// (temp file, fsync, rename), under the caller's data-dir lock.
    /// Reminders dropped keep their keys in the header until they expire
    /// (by `now`).
    pub fn compact(
        &self,
        lock: &DataDirLock,
        needed: u64,
        now: Timestamp,
    ) -> Result<(), OutboxError> {
        self.compact_within(lock, needed, MAX_BYTES, now)
    }

    /// [`Outbox::compact`] with the bound `max_bytes` (a test's small one).
    fn compact_within(
        &self,
        _lock: &DataDirLock,
        needed: u64,
        max_bytes: u64,
        now: Timestamp,
    ) -> Result<(), OutboxError> {
        let index = self.index()?;
        let Some(outbox) = index.outbox.clone() else {
            return Ok(());
        };
        let kept: Vec<&std::ops::Range<usize>> = index
            .changes
            .iter()
            .filter(|(n, _)| *n >= needed)
            .map(|(_, range)| range)
            .collect();
        let mut size: u64 = kept.iter().map(|r| r.len() as u64).sum();
        let mut dropped_for_size = 0;
        if size > max_bytes {
            while size > max_bytes / 2 && dropped_for_size < kept.len() {
                size -= kept[dropped_for_size].len() as u64;
                dropped_for_size += 1;
            }
        }
        let first = index.next - (kept.len() - dropped_for_size) as u64;
        // Rewrite only when that drops changes for the bound, or at least
        // halves the file (so a cursor that moves a little does not make
        // every publish rewrite what it keeps; commit lines of publishes
        // without changes are folded into one this way too).
        let rewritten = size + 1024;
        if dropped_for_size == 0 && rewritten > index.end / 2 {
            return Ok(());
        }
        if dropped_for_size > 0 {
            tracing::warn!(
                "webhook outbox: {dropped_for_size} changes no endpoint has received were dropped to keep the outbox under {} MiB; an endpoint that is behind goes on from the oldest kept change",
                max_bytes / (1024 * 1024)
            );
        }
        // The keys of reminders that leave the file and may still fall due.
        let mut reminded: Vec<Reminded> = index
            .reminded
            .iter()
            .filter(|r| r.expires_at > now)
            .cloned()
            .collect();
        for (n, range) in &index.changes {
            if *n >= first {
                continue;
            }
            let line = &index.bytes[range.clone()];
            if !line
                .windows(REMINDER_FIELD.len())
                .any(|w| w == REMINDER_FIELD)
            {
                continue;
            }
            if let Ok(Line::Change(entry)) = serde_json::from_slice::<Line>(line) {
                if let Some(r) = entry.reminder.filter(|r| r.expires_at > now) {
                    reminded.push(Reminded {
                        key: r.key,
                        expires_at: r.expires_at,
                    });
                }
            }
        }
        let mut bytes = line_bytes(&Line::Header {
            outbox,
            first,
            reminded,
            home: index.home.clone(),
            quiet_until: index.quiet_until,
        });
        for range in &kept[dropped_for_size..] {
            bytes.extend_from_slice(&index.bytes[(*range).clone()]);
        }
        if let Some(sequence) = index.last_sequence {
            bytes.extend_from_slice(&line_bytes(&Line::Commit {
                sequence,
                next: index.next,
            }));
        }
        crate::testhook::reached("outbox:compact");
        crate::durable::write_atomic(&self.path, &bytes).map_err(|e| self.err(e.source))?;
        crate::testhook::reached("outbox:compacted");
        Ok(())
    }
}

/// A message id that names one message forever: the outbox's epoch, the
/// entry's number and the first 32 bits of a SHA-256 of what it says. The
/// epoch changes when the outbox is restored or copied; the digest keeps
/// two outboxes that share an epoch anyway (a file-system snapshot rolled
/// back) from giving one id to two different messages.
pub fn message_id(outbox: &str, entry: &OutboxEntry) -> String {
    use sha2::{Digest, Sha256};
    let content = serde_json::to_vec(entry).expect("an outbox entry serialises");
    let digest = Sha256::digest(&content);
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("msg_{outbox}_{}_{hex}", entry.n)
}

/// What names a `webhooks/` directory: its inode and, where the file
/// system keeps it, its birth time. A directory made by a restore (`tar`,
/// `cp`, `rsync`) has another; a rename within the file system keeps it.
pub fn home_of(dir: &Path) -> io::Result<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir)?;
    let born = meta
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    Ok(match born {
        Some(born) => format!("{}-{}", meta.ino(), born.as_nanos()),
        None => meta.ino().to_string(),
    })
}

fn line_bytes(line: &Line) -> Vec<u8> {
    let mut out = Vec::new();
    push_line(&mut out, line);
    out
}

fn push_line(out: &mut Vec<u8>, line: &Line) {
    serde_json::to_writer(&mut *out, line).expect("an outbox line serialises");
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    &records[..i],
                    &records[..=i],
                    i as u64 + 1,
                    at,
                    at,
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
                .append(&lock, &[], &records[..1], 1, at, at, Some(0))
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
            .append(&lock, &[], &records, 39_999, at, at, None)
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
