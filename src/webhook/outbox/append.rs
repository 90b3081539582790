//! Appending to the outbox: a publish's changes and commit, the time
//! events that fell due, and the header of a new or restored outbox.

use crate::changes::transitions;
use crate::durable::DataDirLock;
use crate::model::{Record, Timestamp};
use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::*;

impl Outbox {
    /// Appends the transitions from `old` to `new` (snapshot `sequence`;
    /// `old` none: `new` is a baseline, only its commit is written;
    /// `restored`: the changes a restore from a backup of then made)
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
        old: Option<&[Record]>,
        new: &[Record],
        sequence: u64,
        generated_at: Timestamp,
        (published_at, restored): (Timestamp, Option<Timestamp>),
        needed: Option<u64>,
    ) -> Result<usize, OutboxError> {
        let committed = self.index()?;
        if needed.is_none() && committed.outbox.is_none() {
            return Ok(0);
        }
        // A baseline (`old` is `None`): nothing is news; its commit line
        // names the version the next publish measures from.
        let baseline = old.is_none();
        let old = old.unwrap_or(new);
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
        if changes.is_empty() && needed.is_some() && old == new && !baseline {
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
                fulfils: Vec::new(),
                moment: Some(committed.next),
                changed: change.fields,
                previous_time: change.previous_time,
                restored,
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
                moment: Some(committed.next),
                changed: Vec::new(),
                previous_time: None,
                restored: None,
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
    pub(super) fn own(
        &self,
        _lock: &DataDirLock,
        index: Index,
        now: Timestamp,
    ) -> Result<Index, OutboxError> {
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
                outbox: crate::random::random_token(9),
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
    pub(super) fn home(&self) -> Result<String, OutboxError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        crate::durable::create_dir_durable(dir).map_err(|e| self.err(e))?;
        home_of(dir).map_err(|e| self.err(e))
    }

    /// The outbox id: `existing`, or a new one whose header line (with
    /// this directory as its home) is pushed to `out`.
    pub(super) fn header_if_new(
        &self,
        existing: Option<String>,
        out: &mut Vec<u8>,
    ) -> Result<String, OutboxError> {
        if let Some(id) = existing {
            return Ok(id);
        }
        let id = crate::random::random_token(9);
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
    pub(super) fn write_after(&self, end: u64, bytes: &[u8]) -> Result<(), OutboxError> {
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
}
