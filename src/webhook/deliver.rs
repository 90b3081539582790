//! The deliverer: sends the outbox to every enabled endpoint, at least
//! once and in order per endpoint.
//!
//! Exactly one deliverer runs per data dir: it holds `webhooks/deliver.lock`
//! (an OS lock, released when its holder dies, so another `serve` or
//! `sync --daemon` takes over). Each endpoint has its own task, so a slow
//! or dead endpoint never delays the others, and its own durable state
//! (`state/<endpoint>.json`): the cursor (the next outbox entry) and the
//! retry schedule of the entry at the cursor. The cursor moves only after
//! an answer was received and the state written, so a SIGKILL at any
//! moment at worst sends one message again, with the same `webhook-id`.
//!
//! Time comes from the injectable [`Clock`]: retry schedules and the 24 h
//! window are tested by running `webhook deliver --once` at chosen
//! instants. The `webhook-timestamp` header alone is the system time,
//! because receivers check it against their own clock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::clock::Clock;
use crate::data_dir::{DataDir, Watched};
use crate::durable::{DataDirLock, LockError};
use crate::model::Timestamp;

use super::endpoint::{Endpoint, Endpoints};
use super::log;
use super::outbox::{Committed, Outbox, OutboxEntry};
use super::request::Event;
use super::send::{send, Answer, SendError};
pub use super::settle::PassReport;
use super::settle::{settle, write, Settled, Written};
use super::state::{load_state, EndpointState};

/// How often a running deliverer looks for new outbox entries, endpoints
/// and a moved pointer when the data dir cannot be watched on this system.
/// Otherwise it never looks unasked: it learns of a publish (the pointer
/// move), an outbox append and an endpoint change from the data dir's file
/// events ([`DataDir::watch`]), and of the time from its clock.
const POLL: Duration = crate::data_dir::SAFETY_LOOK;
/// How often a running deliverer trims its delivery log.
const TRIM_EVERY: Duration = Duration::from_secs(60);

/// What the deliverer process brings. Everything that decides how an
/// endpoint is delivered to (private targets allowed, the timeout, the
/// record pages' base) is kept with the endpoint in the data dir, so every
/// process that may hold the deliverer lock delivers alike.
#[derive(Debug, Clone)]
pub struct DeliverSettings {
    /// The clock of retry schedules.
    pub clock: Arc<dyn Clock>,
    /// Seconds to wait for the data-dir lock (disabling an endpoint on 410).
    pub lock_timeout: Duration,
    /// The operator's contact in the `User-Agent` (`--user-agent-contact`).
    pub contact: Option<String>,
    /// The matcher's tolerance in milliseconds: when an unconfirmed
    /// schedule is announced so ([`crate::remind`]).
    pub tolerance_ms: i64,
}

/// Takes the deliverer lock of `data_dir` within `timeout`.
pub fn lock(data_dir: &Path, timeout: Duration, purpose: &str) -> Result<DataDirLock, LockError> {
    crate::data_dir::DataDir::of(data_dir).lock_deliverer(timeout, purpose)
}

/// What the running deliverer shares between its endpoint tasks.
#[derive(Debug)]
struct Shared {
    data_dir: PathBuf,
    settings: DeliverSettings,
    committed: RwLock<Committed>,
    endpoints: RwLock<Vec<Endpoint>>,
    /// The version the pointer named at the last look.
    served: Mutex<Option<u64>>,
    /// Which versions are a replica's, whose messages its writer sends.
    held: super::replica::Held,
    /// Counts the changes seen (outbox, endpoints, pointer): every task
    /// waits on it, and a watch never loses a change that came between a
    /// task's look and its wait.
    changed: tokio::sync::watch::Sender<u64>,
    stop: tokio::sync::watch::Receiver<bool>,
}

impl Shared {
    /// One attempt to tell `endpoint` what `entry` starts: the entry
    /// itself to a standard endpoint, its whole moment to a person (one
    /// message, [`super::message`]); the answer, and the number of the
    /// last entry it covers.
    async fn attempt(
        &self,
        endpoint: &Endpoint,
        entry: &OutboxEntry,
    ) -> (Result<Answer, SendError>, u64) {
        let contact = self.settings.contact.as_deref();
        if !endpoint.format.is_for_people() {
            return (send(contact, endpoint, &Event::of(entry)).await, entry.n);
        }
        let now = self.settings.clock.now();
        let (entries, told) = self.moment(endpoint, entry, now);
        let last = entries.last().map_or(entry.n, |e| e.n);
        let audience = super::message::Audience {
            language: endpoint.language,
            zone: endpoint.zone(),
            leads: endpoint.remind.as_ref(),
            record_pages: endpoint.record_pages.as_deref(),
            sent_at: now,
        };
        let message = super::message::message(&entries, &told, &audience);
        let answer = super::send::send_message(contact, endpoint, &message, &entry.id).await;
        (answer, last)
    }

    /// The moment `first` (the first entry `endpoint` is told of at its
    /// cursor) belongs to: every entry of it, and the indices of those
    /// the endpoint is told of (wanted, a reminder not cancelled at `now`).
    fn moment(
        &self,
        endpoint: &Endpoint,
        first: &OutboxEntry,
        now: Timestamp,
    ) -> (Vec<OutboxEntry>, Vec<usize>) {
        let committed = self.committed.read().expect("not poisoned");
        let moment = first.moment();
        let entries: Vec<OutboxEntry> = committed
            .from(moment.max(committed.first))
            .iter()
            .take_while(|e| e.moment() == moment)
            .cloned()
            .collect();
        let told = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e.n >= first.n
                    && endpoint.wants(e)
                    && !super::remind::cancelled(
                        e,
                        committed.from(e.n + 1),
                        now,
                        self.settings.tolerance_ms,
                    )
            })
            .map(|(i, _)| i)
            .collect();
        (entries, told)
    }

    /// The ids of the endpoints that are enabled now.
    fn enabled_ids(&self) -> Vec<String> {
        self.endpoints
            .read()
            .expect("not poisoned")
            .iter()
            .filter(|e| e.enabled)
            .map(|e| e.id.clone())
            .collect()
    }

    /// A new shared state over `data_dir`, nothing read yet.
    fn new(
        data_dir: &Path,
        settings: DeliverSettings,
        stop: tokio::sync::watch::Receiver<bool>,
    ) -> Self {
        Shared {
            data_dir: data_dir.to_owned(),
            settings,
            committed: RwLock::new(Committed::default()),
            endpoints: RwLock::new(Vec::new()),
            served: Mutex::new(None),
            held: super::replica::Held::default(),
            changed: tokio::sync::watch::channel(0).0,
            stop,
        }
    }

    /// Reads the outbox (what was appended since), the endpoints and the
    /// pointer, and tells every waiting task when one of them changed.
    fn refresh(&self) {
        let outbox = Outbox::new(&self.data_dir);
        let mut changed = false;
        {
            let mut committed = self.committed.write().expect("not poisoned");
            let before = (committed.first, committed.next);
            if let Err(e) = outbox.read_from(&mut committed) {
                tracing::warn!("{e}");
            }
            changed |= (committed.first, committed.next) != before;
        }
        match Endpoints::new(&self.data_dir).load() {
            Ok(all) => {
                let mut endpoints = self.endpoints.write().expect("not poisoned");
                if *endpoints != all {
                    *endpoints = all;
                    changed = true;
                }
            }
            Err(e) => tracing::warn!("{e}"),
        }
        // The pointer: a publish is visible once it moves, and only then do
        // its schedules have reminders to arm (the outbox got its changes
        // before, while the previous version was still served).
        match crate::snapshot::SnapshotStore::new(&self.data_dir).current_sequence() {
            Ok(sequence) => {
                let mut served = self.served.lock().expect("not poisoned");
                if *served != sequence {
                    *served = sequence;
                    changed = true;
                }
            }
            Err(e) => tracing::warn!("{e}"),
        }
        if changed {
            self.changed.send_modify(|n| *n += 1);
        }
    }

    fn endpoint(&self, id: &str) -> Option<Endpoint> {
        self.endpoints
            .read()
            .expect("not poisoned")
            .iter()
            .find(|e| e.id == id && e.enabled)
            .cloned()
    }

    /// The first entry at or after `from` that `endpoint` wants (a
    /// reminder only while it is not cancelled at `now`; none of a
    /// replica's, [`super::replica`]), and the position
    /// scanned up to when there is none. Changes before the first
    /// the outbox holds were compacted away (the endpoint was disabled, or
    /// behind past the outbox's bound): it goes on from the first held.
    fn next_wanted(
        &self,
        endpoint: &Endpoint,
        from: u64,
        now: Timestamp,
    ) -> Result<OutboxEntry, u64> {
        let committed = self.committed.read().expect("not poisoned");
        let mut n = from;
        if n < committed.first {
            tracing::warn!(
                "webhook {}: {} changes were not kept for it (it was disabled, or behind past the outbox's bound); it goes on from change {}",
                endpoint.id,
                committed.first - n,
                committed.first
            );
            n = committed.first;
        }
        while let Some(entry) = committed.get(n) {
            let later = committed.from(n + 1);
            if endpoint.wants(entry)
                && !super::remind::cancelled(entry, later, now, self.settings.tolerance_ms)
                && !self.held.holds(&self.data_dir, entry.sequence)
            {
                return Ok(entry.clone());
            }
            n += 1;
        }
        Err(n)
    }

    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }
}

/// One pass (`webhook deliver --once`): for every enabled endpoint, sends
/// what is due now, in order, stopping at an endpoint's first failure.
/// The caller holds the deliverer lock.
pub async fn deliver_once(
    data_dir: &Path,
    settings: DeliverSettings,
    _lock: &DataDirLock,
) -> PassReport {
    let (_tx, stop) = tokio::sync::watch::channel(false);
    // What fell due by now goes out with this pass.
    let _ = super::remind::append_now(
        data_dir,
        settings.tolerance_ms,
        settings.lock_timeout,
        settings.clock.now(),
    )
    .await;
    let shared = Arc::new(Shared::new(data_dir, settings, stop));
    shared.refresh();
    let report = Arc::new(Mutex::new(PassReport::default()));
    let ids = shared.enabled_ids();
    let tasks: Vec<_> = ids
        .into_iter()
        .map(|id| tokio::spawn(work(shared.clone(), id, true, report.clone())))
        .collect();
    for task in tasks {
        let _ = task.await;
    }
    log::trim(data_dir);
    let report = report.lock().expect("not poisoned").clone();
    report
}

/// Runs the deliverer until `stop` turns true: waits for the deliverer
/// lock (another process may hold it; it is retried every second, so this
/// one takes over when that one dies), then delivers continuously.
pub async fn run(
    data_dir: PathBuf,
    settings: DeliverSettings,
    purpose: String,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let lock = loop {
        if *stop.borrow() {
            return;
        }
        // A data dir without endpoints gets no lock file and no `webhooks/`.
        if !Endpoints::new(&data_dir).path().exists() {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = stop.changed() => {}
            }
            continue;
        }
        let dir = data_dir.clone();
        let what = purpose.clone();
        match tokio::task::spawn_blocking(move || lock(&dir, Duration::ZERO, &what)).await {
            Ok(Ok(lock)) => break lock,
            Ok(Err(LockError::Busy { .. })) => {}
            Ok(Err(e)) => tracing::warn!("webhook deliverer: {e}"),
            Err(_) => return,
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stop.changed() => {}
        }
    };
    tracing::info!("webhook deliverer running");
    crate::testhook::reached("deliver:locked");
    let shared = Arc::new(Shared::new(&data_dir, settings, stop.clone()));
    let report = Arc::new(Mutex::new(PassReport::default()));
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let watcher = match DataDir::of(&data_dir).watch(Watched::Deliveries, events_tx) {
        Ok(watcher) => Some(watcher),
        Err(e) => {
            tracing::warn!(
                "webhook deliverer: cannot watch the outbox ({e}); looking every {POLL:?}"
            );
            None
        }
    };
    let reminders = tokio::spawn(super::remind::schedule(
        data_dir.clone(),
        shared.settings.clock.clone(),
        (shared.settings.tolerance_ms, shared.settings.lock_timeout),
        shared.changed.subscribe(),
        stop.clone(),
    ));
    let mut running: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    let mut trim = tokio::time::interval(TRIM_EVERY);
    trim.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    'look: loop {
        // Reading the outbox (all of it, after a compaction), the endpoints
        // and the pointer is file work: off the runtime's threads, which
        // answer requests meanwhile.
        let refreshing = shared.clone();
        let _ = tokio::task::spawn_blocking(move || refreshing.refresh()).await;
        running.retain(|_, task| !task.is_finished());
        let enabled = shared.enabled_ids();
        for id in enabled {
            running
                .entry(id.clone())
                .or_insert_with(|| tokio::spawn(work(shared.clone(), id, false, report.clone())));
        }
        // Until a file event (or, unwatched, the next look); the log's
        // trim is a timer of its own that reads nothing else.
        loop {
            tokio::select! {
                event = events.recv(), if watcher.is_some() => {
                    if event.is_some() {
                        // A burst of events (an append, then its close) is one look.
                        tokio::time::sleep(crate::data_dir::EVENT_BURST).await;
                        while events.try_recv().is_ok() {}
                    }
                    break;
                }
                _ = tokio::time::sleep(POLL), if watcher.is_none() => break,
                _ = trim.tick() => log::trim(&data_dir),
                _ = stop.changed() => break,
            }
        }
        if *stop.borrow() {
            break 'look;
        }
    }
    drop(watcher);
    shared.changed.send_modify(|n| *n += 1);
    reminders.abort();
    for (_, task) in running {
        task.abort();
    }
    drop(lock);
}

/// One endpoint's loop: the entry at its cursor, sent until answered.
async fn work(shared: Arc<Shared>, id: String, once: bool, report: Arc<Mutex<PassReport>>) {
    let data_dir = shared.data_dir.clone();
    let lock_timeout = shared.settings.lock_timeout;
    let mut state: Option<EndpointState> = {
        let (dir, id) = (data_dir.clone(), id.clone());
        tokio::task::spawn_blocking(move || load_state(&dir, &id))
            .await
            .ok()
            .flatten()
    };
    let mut changes = shared.changed.subscribe();
    loop {
        // Listening before looking: a change meanwhile wakes the wait below.
        changes.mark_unchanged();
        if shared.stopped() {
            return;
        }
        // Removed or disabled since: stop (the state stays for `enable`).
        let Some(endpoint) = shared.endpoint(&id) else {
            return;
        };
        let st = state.get_or_insert_with(|| EndpointState {
            next: endpoint.start,
            ..EndpointState::default()
        });
        if st.next < endpoint.start {
            st.next = endpoint.start;
        }
        let entry = match shared.next_wanted(&endpoint, st.next, shared.settings.clock.now()) {
            Ok(entry) => entry,
            Err(scanned) => {
                if scanned != st.next {
                    // What was at the cursor is not sent (not wanted, or a
                    // reminder cancelled): its retries go with it.
                    st.move_to(scanned);
                    write(&shared.data_dir, &id, Written::state(st), lock_timeout).await;
                }
                if once {
                    return;
                }
                tokio::select! {
                    _ = changes.changed() => {}
                    _ = stop_of(&shared) => {}
                }
                continue;
            }
        };
        if entry.n != st.next {
            // Entries this endpoint does not want were passed over.
            st.move_to(entry.n);
        }
        let clock = &shared.settings.clock;
        if let Some(wait) = st.wait(endpoint.format, &entry, clock.now()) {
            // A pass leaves a retry or a receiver's wait to the next one,
            // and the pace too when its clock stands still (`--now`).
            if once && (wait.later || clock.stands_still()) {
                return;
            }
            // Until the retry is due by the clock, or something changed
            // (the endpoint disabled, a later change that cancels it).
            tokio::select! {
                _ = clock.sleep_until(wait.until) => {}
                _ = changes.changed() => {}
                _ = stop_of(&shared) => {}
            }
            continue;
        }
        let (answer, last) = shared.attempt(&endpoint, &entry).await;
        crate::testhook::reached("deliver:answered");
        let now = shared.settings.clock.now();
        let (settled, written) = settle(now, &endpoint, st, (&entry, last), answer, &report);
        write(&shared.data_dir, &id, written, lock_timeout).await;
        match settled {
            Settled::Next => continue,
            Settled::Disabled => return,
            Settled::Retrying if once => return,
            Settled::Retrying => {}
        }
    }
}

/// Ends when the deliverer is told to stop.
async fn stop_of(shared: &Shared) {
    let mut stop = shared.stop.clone();
    let _ = stop.wait_for(|stopped| *stopped).await;
}
