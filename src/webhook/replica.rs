//! Writer and replica deliver once. A data dir that mirrors another
//! resetctl instance (it syncs that instance's `/export.json`, and keeps
//! the `dataSource` it carries as the sync's `origin`) is a replica: the
//! instance it mirrors, the writer, tells every change and reminder to the
//! endpoints registered there, so a replica takes none. `webhook add`
//! refuses it ([`super::manage::add`]), and the endpoints a replica already
//! has (added before its first sync, or before it became one) are held:
//! the deliverer sends them nothing while it is one, and their cursors pass
//! over what the writer tells, so if it stops being one (its upstream
//! pointed at the public feed, a failover) they go on from the present,
//! never with the writer's past. `status` and `webhook list` say so.
//!
//! What decides is the version a message comes from: a version published
//! by a sync from another instance carries that sync's state, `origin`
//! and all ([`crate::snapshot::SnapshotHead::sync`]), and it is written
//! before its changes reach the outbox, so no deliverer ever sees a
//! replica's first changes before it can tell they are a replica's.

use std::path::Path;

use crate::snapshot::{SnapshotHead, SnapshotStore};

/// Why a data dir's endpoints send nothing: it mirrors another resetctl
/// instance.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("this data dir is a replica: it mirrors another resetctl instance ({writer}), and a replica has no webhooks, since each data dir with endpoints would send every change once more, under other webhook-ids; register endpoints on the instance it mirrors (the writer)")]
pub struct Replica {
    /// The instance it mirrors, as the origin of its upstream URL (a path
    /// or query may carry a token).
    pub writer: String,
}

impl Replica {
    /// Whether version `head` was published by a sync from another
    /// resetctl instance, and from which.
    fn of(head: &SnapshotHead) -> Option<Self> {
        let sync = head.sync.as_ref()?;
        sync.origin.as_ref()?;
        Some(Replica {
            writer: crate::redact::redact_target(&sync.source.url),
        })
    }
}

/// Whether `data_dir` is a replica now: the version it serves was synced
/// from another resetctl instance.
pub fn now(data_dir: &Path) -> Option<Replica> {
    let head = SnapshotStore::new(data_dir).current_head().ok()??;
    Replica::of(&head)
}

/// Whether the messages of version `sequence` are a replica's (the version
/// served stands in when that one was pruned).
pub fn of_version(data_dir: &Path, sequence: u64) -> Option<Replica> {
    match SnapshotStore::new(data_dir).head(sequence) {
        Ok(head) => Replica::of(&head),
        Err(_) => now(data_dir),
    }
}

/// What a running deliverer knows of the versions it has delivered from:
/// whether each is a replica's (one look at a version's head each, and one
/// warning in the log for each held version).
#[derive(Debug, Default)]
pub struct Held(std::sync::Mutex<std::collections::HashMap<u64, bool>>);

impl Held {
    /// Whether the messages of version `sequence` of `data_dir` are held.
    pub fn holds(&self, data_dir: &Path, sequence: u64) -> bool {
        let mut known = self.0.lock().expect("not poisoned");
        *known.entry(sequence).or_insert_with(|| {
            let replica = of_version(data_dir, sequence);
            if let Some(replica) = &replica {
                tracing::warn!("webhook endpoints send nothing of version {sequence}: {replica}");
            }
            replica.is_some()
        })
    }
}
