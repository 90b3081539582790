//! Hot reload: watch the data dir and swap in a newly published snapshot.
//!
//! The server holds one immutable [`PublishedView`] behind an atomic pointer
//! (`arc-swap`); requests load it without a lock. The reloader wakes on a
//! file event (`notify`) or a poll tick, debounces the burst, loads and
//! validates the new version off to the side (a blocking task), and swaps it
//! in only on success. A corrupt file is logged and the old view kept
//! ("reload cannot make things worse"). If the watch cannot be set up
//! (inotify limits, missing directory), it falls back to polling and says so.

use crate::data_dir::{DataDir, Watched};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;
use tokio::sync::mpsc;

use crate::clock::Clock;
use crate::live::{LiveChanges, ViewSwap};
use crate::query::PublishedView;
use crate::snapshot::{Mode, SnapshotStore};
use crate::sync::state::{load_sync_state, newest, SyncState};

/// The shared, atomically swapped view (`None` until a snapshot exists),
/// the public feed it was derived from, when it mirrors one, and the
/// broadcast of its swaps to live streams.
#[derive(Debug, Clone, Default)]
pub struct ViewHandle(
    Arc<ArcSwapOption<PublishedView>>,
    Arc<ArcSwapOption<MirroredFeed>>,
    Arc<Swaps>,
    /// Why the served version is not the pointer's (`/healthz` says it).
    Arc<ArcSwapOption<String>>,
);

/// Numbers every swap of the view and tells live streams about it.
#[derive(Debug)]
struct Swaps {
    /// The generation of the last view stored.
    generation: AtomicU64,
    live: LiveChanges,
    /// The generation of the last view stored, for whoever prepares what
    /// is made once per view (the server's coded bodies).
    stored: tokio::sync::watch::Sender<u64>,
}

impl Default for Swaps {
    fn default() -> Self {
        Self {
            generation: AtomicU64::new(0),
            live: LiveChanges::default(),
            stored: tokio::sync::watch::Sender::new(0),
        }
    }
}

/// The last good public status feed, byte for byte as it was validated and
/// published (upstream mode with the public feed as upstream).
#[derive(Debug)]
pub struct MirroredFeed {
    /// The document.
    pub bytes: bytes::Bytes,
    /// Its SHA-256 (hex), as the sync state records it.
    pub sha256: String,
    /// Its strong entity tag, quoted.
    pub etag: bytes::Bytes,
}

impl ViewHandle {
    /// The current view (a cheap guard; never blocks on reload).
    pub fn load(&self) -> arc_swap::Guard<Option<Arc<PublishedView>>> {
        self.0.load()
    }

    /// The mirrored public feed, if any.
    pub fn feed(&self) -> Option<Arc<MirroredFeed>> {
        self.1.load_full()
    }

    /// The current view, owned: for answers that wait (on the quota)
    /// between choosing the view and rendering from it.
    pub fn load_full(&self) -> Option<Arc<PublishedView>> {
        self.0.load_full()
    }

    /// Replaces the view, numbered as the next generation, and broadcasts
    /// the swap (its events computed once, only when a stream listens).
    /// Called by one reloader at a time, so generations arrive in order.
    pub fn store(&self, view: PublishedView) {
        let to = self.2.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let new = Arc::new(view.at_generation(to));
        let old = self.0.swap(Some(new.clone()));
        self.2.stored.send_replace(to);
        if self.2.live.has_listeners() {
            let from = old.as_ref().map_or(0, |old| old.generation());
            self.2
                .live
                .send(ViewSwap::between(old.as_deref(), from, &new, to));
        }
    }

    /// The broadcast of view swaps (subscribe before loading the view).
    pub fn live(&self) -> &LiveChanges {
        &self.2.live
    }

    /// Changes with every view stored (its generation): subscribe, then load.
    pub fn stored(&self) -> tokio::sync::watch::Receiver<u64> {
        self.2.stored.subscribe()
    }

    /// Why the served version is not the one the pointer names, while it
    /// is not (the pointer names a missing or broken version).
    pub fn warning(&self) -> Option<Arc<String>> {
        self.3.load_full()
    }

    fn set_warning(&self, warning: Option<String>) {
        self.3.store(warning.map(Arc::new));
    }

    /// The sequence of the current view.
    pub fn sequence(&self) -> Option<u64> {
        self.0.load().as_ref().map(|v| v.sequence())
    }
}

/// How the reloader notices new versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WatchMode {
    /// File events, with a slow safety poll; polling if the watch fails.
    #[default]
    Auto,
    /// Polling only (file systems without events, e.g. some network mounts).
    Poll,
}

/// How often to poll when there are no file events.
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// Loads the current version (before returning, so a server never answers
/// 503 for data that exists), then keeps the view up to date until aborted.
pub async fn spawn_reloader(
    data_dir: PathBuf,
    view: ViewHandle,
    mode: WatchMode,
    clock: Arc<dyn Clock>,
) -> tokio::task::JoinHandle<()> {
    // The watch goes up before the first load, so a publish in between is not missed.
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    let watcher = match mode {
        WatchMode::Poll => {
            tracing::info!(
                "watching {} by polling every {:?}",
                data_dir.display(),
                POLL_INTERVAL
            );
            None
        }
        WatchMode::Auto => match DataDir::of(&data_dir).watch(Watched::Served, tx) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                tracing::warn!(
                    "cannot watch {} ({e}); polling every {:?} instead",
                    data_dir.display(),
                    POLL_INTERVAL
                );
                None
            }
        },
    };
    let mut reloader = Reloader {
        store: SnapshotStore::new(&data_dir),
        view,
        failed: None,
        carried: None,
        fruitless: None,
        clock,
    };
    reloader.check().await;
    tokio::spawn(async move {
        let interval = if watcher.is_some() {
            crate::data_dir::SAFETY_LOOK
        } else {
            POLL_INTERVAL
        };
        loop {
            tokio::select! {
                event = rx.recv(), if watcher.is_some() => {
                    if event.is_none() { break; }
                    tokio::time::sleep(crate::data_dir::EVENT_BURST).await;
                    while rx.try_recv().is_ok() {}
                }
                _ = tokio::time::sleep(interval) => {}
            }
            reloader.check().await;
        }
        drop(watcher);
    })
}

/// A version as loaded off the request threads.
type Loaded = Result<
    Result<crate::snapshot::Snapshot, crate::snapshot::SnapshotError>,
    tokio::task::JoinError,
>;

struct Reloader {
    store: SnapshotStore,
    view: ViewHandle,
    /// The last sequence that failed to load, so a broken file is logged once.
    failed: Option<u64>,
    /// The sync outcome the served snapshot carries (upstream mode).
    carried: Option<SyncState>,
    /// The pointer problem a fallback last found nothing for: not searched
    /// (every snapshot decoded) again until it changes.
    fruitless: Option<String>,
    /// For the sync status, which turns `stale` as the cache ages.
    clock: Arc<dyn Clock>,
}

impl Reloader {
    /// Swaps in a new version, or a new `dataSource`, if either changed,
    /// and the mirrored feed that goes with it.
    async fn check(&mut self) {
        let changed = self.check_snapshot().await || self.check_sync_state();
        self.check_feed();
        if changed {
            crate::testhook::reached("reload:applied");
        }
    }

    /// Mirrors the kept public feed while its bytes are the ones the newest
    /// sync state records (a feed written ahead of its state, or left by a
    /// killed sync, is not served: the previous one stays); none when the
    /// served data is not from a public feed.
    fn check_feed(&mut self) {
        let upstream = self
            .view
            .load()
            .as_ref()
            .is_some_and(|v| v.mode() == Mode::Upstream);
        let wanted = if upstream {
            load_sync_state(self.store.data_dir())
                .ok()
                .and_then(|file| newest(file, self.carried.clone()))
                .and_then(|state| state.feed_sha256)
        } else {
            None
        };
        let served = self.view.feed();
        let Some(wanted) = wanted else {
            if served.is_some() {
                self.view.1.store(None);
            }
            return;
        };
        if served.as_ref().is_some_and(|f| f.sha256 == wanted) {
            return;
        }
        let path = DataDir::of(self.store.data_dir()).stored_feed();
        // One hash of the file: compared with the state's, and made the tag.
        let read = crate::sync::read_stored_feed(self.store.data_dir()).map(|bytes| {
            use sha2::{Digest, Sha256};
            let bytes = bytes.unwrap_or_default();
            let digest = Sha256::digest(&bytes);
            (bytes, digest)
        });
        match read {
            Ok((bytes, digest)) if crate::model::digest_hex(&digest) == wanted => {
                self.view.1.store(Some(Arc::new(MirroredFeed {
                    bytes: bytes::Bytes::from(bytes),
                    sha256: wanted,
                    etag: crate::query::entity_tag(&digest),
                })));
            }
            Ok(_) => tracing::debug!(
                "{} is not the feed the sync state records (yet): keeping the mirrored one",
                path.display()
            ),
            Err(e) => tracing::warn!("keeping the mirrored feed: {e}"),
        }
    }

    /// The `dataSource` for a snapshot carrying `carried`: the newer of
    /// the sync state file and the snapshot's own record of its sync.
    fn data_source(&self, carried: Option<SyncState>) -> Option<crate::model::DataSource> {
        let file = match load_sync_state(self.store.data_dir()) {
            Ok(state) => state,
            Err(e) => {
                tracing::warn!("keeping the served sync state: {e}");
                return self
                    .view
                    .load()
                    .as_ref()
                    .and_then(|v| v.data_source().cloned());
            }
        };
        newest(file, carried).and_then(|s| s.data_source(self.clock.now(), true))
    }

    /// Rebuilds the meta when the sync state (or its age) changed what it
    /// says; returns whether it did.
    fn check_sync_state(&mut self) -> bool {
        let guard = self.view.load();
        let Some(view) = guard.as_ref().filter(|v| v.mode() == Mode::Upstream) else {
            return false;
        };
        let data_source = self.data_source(self.carried.clone());
        if data_source.as_ref() == view.data_source() {
            return false;
        }
        let next = view.with_data_source(data_source);
        drop(guard);
        self.view.store(next);
        true
    }

    /// Swaps in the pointer's version, built whole (its `dataSource`
    /// included) before the one swap, if it differs from the served one.
    /// Returns whether it swapped. A server with nothing to serve yet whose
    /// pointer cannot be followed starts on the newest version that loads,
    /// and says so loudly (the log, and `/healthz`'s `warning`).
    async fn check_snapshot(&mut self) -> bool {
        let wanted = match self.store.current_sequence() {
            Ok(Some(seq)) => seq,
            Ok(None) => return false,
            Err(e) => {
                if self.view.load().is_none() {
                    return self.fall_back(&e.to_string()).await;
                }
                tracing::warn!("keeping the served snapshot: {e}");
                return false;
            }
        };
        if Some(wanted) == self.view.sequence() || Some(wanted) == self.failed {
            return false;
        }
        let store = self.store.clone();
        let loaded = tokio::task::spawn_blocking(move || store.load(wanted)).await;
        if let Ok(Err(e)) = &loaded {
            if self.view.load().is_none() {
                self.failed = Some(wanted);
                crate::metrics::reload(false);
                return self.fall_back(&e.to_string()).await;
            }
        }
        self.swap_in(wanted, loaded).await
    }

    /// Serves the newest version that loads, the pointer's being `why`
    /// unusable.
    async fn fall_back(&mut self, why: &str) -> bool {
        if self.fruitless.as_deref() == Some(why) {
            return false;
        }
        let store = self.store.clone();
        let Ok(Some(snapshot)) = tokio::task::spawn_blocking(move || store.newest_loadable()).await
        else {
            tracing::error!(
                "nothing to serve: {why}, and no snapshot on disk loads; publish again"
            );
            self.fruitless = Some(why.to_owned());
            return false;
        };
        let sequence = snapshot.sequence;
        let warning = format!(
            "the pointer cannot be followed ({why}); serving snapshot {sequence}, the newest that loads. \
             Make it current with `resetctl snapshots rollback {sequence}`, or publish"
        );
        tracing::error!("{warning}");
        let swapped = self.swap_in(sequence, Ok(Ok(snapshot))).await;
        self.view.set_warning(Some(warning));
        swapped
    }

    /// Builds `loaded` (version `wanted`) and swaps it in.
    async fn swap_in(&mut self, wanted: u64, loaded: Loaded) -> bool {
        match loaded {
            Ok(Ok(snapshot)) => {
                let data_source = (snapshot.mode == Mode::Upstream)
                    .then(|| self.data_source(snapshot.sync.clone()))
                    .flatten();
                self.carried = snapshot.sync.clone();
                // Building the index sorts every filter: off the request threads.
                let built = tokio::task::spawn_blocking(move || {
                    PublishedView::build(&snapshot, data_source)
                })
                .await;
                let Ok(view) = built else {
                    tracing::error!("building the view of snapshot {wanted} failed");
                    return false;
                };
                tracing::info!(sequence = wanted, "serving snapshot {wanted}");
                self.view.store(view);
                self.view.set_warning(None);
                self.failed = None;
                crate::metrics::reload(true);
                true
            }
            Ok(Err(e)) => {
                tracing::error!("not serving snapshot {wanted}, keeping the current one: {e}");
                self.failed = Some(wanted);
                crate::metrics::reload(false);
                false
            }
            Err(e) => {
                tracing::error!("snapshot loader failed: {e}");
                false
            }
        }
    }
}
