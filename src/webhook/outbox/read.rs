//! Reading the outbox: the committed lines (all, or what was appended
//! since), and the index a writer needs.

use crate::model::Timestamp;
use serde::Deserialize;
use std::io::{Read, Seek, SeekFrom};

use super::*;

impl Outbox {
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
}
