//! Compacting the outbox past its bound: the changes endpoints still
//! need, with their numbers and ids, rewritten atomically.

use crate::durable::DataDirLock;
use crate::model::Timestamp;

use super::*;

impl Outbox {
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
    pub(super) fn compact_within(
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
