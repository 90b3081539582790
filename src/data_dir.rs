//! The data dir: every file and directory in it, named once; its locks;
//! and what it holds (nothing yet, a standalone instance, an upstream
//! mirror). Every module that reads or writes one of its files asks
//! [`DataDir`] for the path; `tests/architecture.rs` checks that no other
//! code spells out a file name.
//!
//! ```text
//! resetctl.lock            the writers' lock (publish, seed, record, webhook manage)
//! sync.lock                one sync at a time (cron and daemon)
//! history.json             seeded history (standalone)
//! ledger.jsonl             the operator ledger (standalone)
//! sync-state.json          the sync state (mirror)
//! upstream-feed.json       the last good public feed (mirror)
//! snapshots/CURRENT        the sequence being served
//! snapshots/NNNNNNNNNNNN.json   the versions
//! webhooks/endpoints.json  the endpoints
//! webhooks/outbox.jsonl    the changes to deliver
//! webhooks/deliveries.jsonl     the delivery log
//! webhooks/deliver.lock    one deliverer at a time
//! webhooks/state/ID.json   each endpoint's cursor and attempts
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::durable::{DataDirLock, LockError};
use crate::model::Mode;

const LOCK: &str = "resetctl.lock";
const SYNC_LOCK: &str = "sync.lock";
const HISTORY: &str = "history.json";
/// The ledger's file name (messages name it).
pub const LEDGER: &str = "ledger.jsonl";
const SYNC_STATE: &str = "sync-state.json";
/// The kept feed's file name (messages name it).
pub const STORED_FEED: &str = "upstream-feed.json";
const SNAPSHOTS: &str = "snapshots";
const POINTER: &str = "CURRENT";
/// Digits of a version's file name.
const SEQUENCE_DIGITS: usize = 12;
const WEBHOOKS: &str = "webhooks";
const ENDPOINTS: &str = "endpoints.json";
const OUTBOX: &str = "outbox.jsonl";
const DELIVERIES: &str = "deliveries.jsonl";
const DELIVER_LOCK: &str = "deliver.lock";
const ENDPOINT_STATES: &str = "state";

/// How often the server's reloader looks anyway when no event came (a
/// watch can be lost with its directory), and how often the deliverer
/// looks when the data dir cannot be watched at all (a watched deliverer
/// never looks unasked).
pub const SAFETY_LOOK: Duration = Duration::from_secs(2);

/// How long a file event waits for the rest of its burst (a write, then
/// its close; a rename pair), so one change is one look.
pub const EVENT_BURST: Duration = Duration::from_millis(5);

/// Which files a watch of the data dir reports changes of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    /// What is served: the pointer, the versions, the sync state, the
    /// kept feed (the server's reloader).
    Served,
    /// What is delivered, and the publish that makes a change visible:
    /// the outbox, the endpoints and the pointer (the deliverer and its
    /// reminder scheduler).
    Deliveries,
}

/// A directory of the data dir that is a symbolic link. resetctl makes
/// each of them itself, never as a link, so one there was put by someone
/// else and may lead reads and writes (a prune's removals among them) to
/// files that are not the data dir's: it is refused, as a link in place of
/// a file of the data dir (`CURRENT`) is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path} is a symbolic link; the data dir's directories are never links, so it is not \
     followed: put the directory itself there"
)]
pub struct LinkedDir {
    /// The directory.
    pub path: PathBuf,
}

/// The paths of one data dir.
#[derive(Clone, Copy, Debug)]
pub struct DataDir<'a> {
    root: &'a Path,
}

/// What a data dir holds: it belongs to one mode, decided by its files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// Nothing of either mode yet.
    Nothing,
    /// A standalone instance: seeded history, an operator ledger, or a
    /// standalone snapshot served.
    Standalone,
    /// An upstream mirror: a sync state, or an upstream snapshot served.
    Mirror,
    /// Signs of both (a damaged or hand-mixed data dir): neither mode's
    /// commands touch it.
    Both,
}

impl<'a> DataDir<'a> {
    /// The data dir at `root`.
    pub fn of(root: &'a Path) -> Self {
        Self { root }
    }

    /// Its root.
    pub fn root(self) -> &'a Path {
        self.root
    }

    /// Seeded history.
    pub fn history(self) -> PathBuf {
        self.root.join(HISTORY)
    }

    /// The operator ledger.
    pub fn ledger(self) -> PathBuf {
        self.root.join(LEDGER)
    }

    /// The sync state.
    pub fn sync_state(self) -> PathBuf {
        self.root.join(SYNC_STATE)
    }

    /// The last good public feed.
    pub fn stored_feed(self) -> PathBuf {
        self.root.join(STORED_FEED)
    }

    /// The versions' directory.
    pub fn snapshots(self) -> PathBuf {
        self.root.join(SNAPSHOTS)
    }

    /// The pointer to the version served.
    pub fn pointer(self) -> PathBuf {
        self.snapshots().join(POINTER)
    }

    /// The file of version `sequence`.
    pub fn snapshot(self, sequence: u64) -> PathBuf {
        self.snapshots()
            .join(format!("{sequence:0width$}.json", width = SEQUENCE_DIGITS))
    }

    /// The version a file name in the versions' directory is, if it is one.
    pub fn sequence_of(name: &str) -> Option<u64> {
        let stem = name.strip_suffix(".json")?;
        (stem.len() == SEQUENCE_DIGITS && stem.bytes().all(|b| b.is_ascii_digit()))
            .then(|| stem.parse().ok())
            .flatten()
    }

    /// Whether a change to the file or directory called `name` (in the
    /// data dir or its versions' directory) can change what is served: the
    /// pointer, a version, the sync state, the kept feed.
    pub fn serves_from(name: &str) -> bool {
        [POINTER, SNAPSHOTS, SYNC_STATE, STORED_FEED].contains(&name)
            || Self::sequence_of(name).is_some()
    }

    /// Watches the files of `what` (see [`Watched`]): `changed` gets a
    /// message for every event that can change one of them (and for an
    /// error of the watch, which may mean lost events). Reads (a reader's
    /// own among them) and temp files never count, so an idle watcher rests.
    pub fn watch(
        self,
        what: Watched,
        changed: tokio::sync::mpsc::UnboundedSender<()>,
    ) -> notify::Result<notify::RecommendedWatcher> {
        use notify::Watcher;
        let dirs = match what {
            Watched::Served => vec![self.root.to_owned(), self.snapshots()],
            Watched::Deliveries => vec![self.webhooks(), self.snapshots()],
        };
        for dir in &dirs {
            std::fs::create_dir_all(dir).map_err(notify::Error::io)?;
        }
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.as_ref().map_or(true, |e| changes(e, what)) {
                    let _ = changed.send(());
                }
            })?;
        for dir in &dirs {
            watcher.watch(dir, notify::RecursiveMode::NonRecursive)?;
        }
        Ok(watcher)
    }

    /// The webhooks' directory.
    pub fn webhooks(self) -> PathBuf {
        self.root.join(WEBHOOKS)
    }

    /// The webhook endpoints.
    pub fn endpoints(self) -> PathBuf {
        self.webhooks().join(ENDPOINTS)
    }

    /// The webhook outbox.
    pub fn outbox(self) -> PathBuf {
        self.webhooks().join(OUTBOX)
    }

    /// The delivery log.
    pub fn deliveries(self) -> PathBuf {
        self.webhooks().join(DELIVERIES)
    }

    /// The endpoints' delivery states' directory.
    pub fn endpoint_states(self) -> PathBuf {
        self.webhooks().join(ENDPOINT_STATES)
    }

    /// Endpoint `id`'s delivery state.
    pub fn endpoint_state(self, id: &str) -> PathBuf {
        self.endpoint_states().join(format!("{id}.json"))
    }

    /// Refuses the data dir when one of its directories (`snapshots/`,
    /// `webhooks/`, `webhooks/state/`) is a symbolic link ([`LinkedDir`]);
    /// one that is missing is fine (it is made when needed). The data dir
    /// itself may be a link: an operator names it.
    pub fn refuse_links(self) -> Result<(), LinkedDir> {
        for path in [self.snapshots(), self.webhooks(), self.endpoint_states()] {
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(LinkedDir { path });
            }
        }
        Ok(())
    }

    /// Takes the writers' lock within `timeout` (`purpose` names the holder
    /// to whoever waits).
    pub fn lock(self, timeout: Duration, purpose: &str) -> Result<DataDirLock, LockError> {
        DataDirLock::acquire(&self.root.join(LOCK), timeout, purpose)
    }

    /// Takes the sync lock (one sync at a time).
    pub fn lock_sync(self, timeout: Duration, purpose: &str) -> Result<DataDirLock, LockError> {
        DataDirLock::acquire(&self.root.join(SYNC_LOCK), timeout, purpose)
    }

    /// Takes the deliverer's lock (one deliverer at a time).
    pub fn lock_deliverer(
        self,
        timeout: Duration,
        purpose: &str,
    ) -> Result<DataDirLock, LockError> {
        DataDirLock::acquire(&self.webhooks().join(DELIVER_LOCK), timeout, purpose)
    }

    /// What the data dir holds, given the mode of the version served
    /// (`served`: `None` when there is none or it cannot be read, which
    /// says nothing of the mode).
    pub fn holds(self, served: Option<Mode>) -> Holds {
        let standalone =
            served == Some(Mode::Standalone) || self.history().exists() || self.ledger().exists();
        let mirror = served == Some(Mode::Upstream) || self.sync_state().exists();
        match (standalone, mirror) {
            (false, false) => Holds::Nothing,
            (true, false) => Holds::Standalone,
            (false, true) => Holds::Mirror,
            (true, true) => Holds::Both,
        }
    }
}

/// Whether `event` can change the files of `what`: a create, a rename, a
/// removal or a close after writing, of one of them.
fn changes(event: &notify::Event, what: Watched) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    use notify::EventKind;
    if event.need_rescan() {
        // The kernel's queue overflowed: events were lost, look again.
        return true;
    }
    let kind = match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(ModifyKind::Data(_)) => false,
        _ => true,
    };
    kind && event.paths.iter().any(|path| {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|name| match what {
                Watched::Served => DataDir::serves_from(name),
                Watched::Deliveries => [OUTBOX, ENDPOINTS, POINTER].contains(&name),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_versions_name_reads_back_as_its_sequence() {
        let dir = DataDir::of(Path::new("/d"));
        for sequence in [0, 1, 42, 999_999_999_999] {
            let path = dir.snapshot(sequence);
            let name = path.file_name().unwrap().to_str().unwrap();
            assert_eq!(DataDir::sequence_of(name), Some(sequence));
            assert!(DataDir::serves_from(name));
        }
        for other in [
            "1.json",
            "00000000000a.json",
            "000000000001.json.tmp",
            "CURRENT.json",
        ] {
            assert_eq!(DataDir::sequence_of(other), None, "{other}");
        }
        assert!(DataDir::serves_from("CURRENT"));
        assert!(!DataDir::serves_from("ledger.jsonl"));
    }
}
