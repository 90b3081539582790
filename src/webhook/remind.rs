//! Time events for webhook endpoints: what falls due ([`crate::remind`])
//! for the enabled endpoints (`schedule.elapsed` for all of them, the
//! reminders of the leads each asks for), appended to the outbox when it
//! falls due, and when the next one will.
//!
//! The one deliverer of a data dir runs `schedule` (below): it sleeps until the
//! [`Pass::next_due`] of its last look, and wakes early when the pointer
//! moves (a publish made visible) or the outbox or the endpoints change;
//! `webhook deliver --once` appends what is due before it delivers. Appending is under the data-dir lock and skips every key
//! the outbox has held ([`super::Outbox::append_reminders`]), so neither a
//! second process nor a restart appends a reminder twice; the deliverer
//! then sends it like any change, at least once under one message id.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::clock::Clock;

use crate::model::Timestamp;
use crate::snapshot::{SnapshotError, SnapshotStore};

use super::endpoint::{Endpoint, EndpointError, Endpoints};
use super::outbox::{Outbox, OutboxError};

/// Why due reminders could not be appended; nothing was.
#[derive(Debug, thiserror::Error)]
pub enum RemindError {
    /// The endpoints file.
    #[error(transparent)]
    Endpoints(#[from] EndpointError),
    /// The snapshot or the data-dir lock.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The outbox.
    #[error(transparent)]
    Outbox(#[from] OutboxError),
}

/// The lead lists of the enabled endpoints, each once: `None` for those
/// that take no reminders (they still hear of unconfirmed schedules).
/// Empty: no endpoint is enabled.
pub fn lead_lists(endpoints: &[Endpoint]) -> Vec<Option<&crate::remind::Leads>> {
    let mut lists: Vec<Option<&crate::remind::Leads>> = Vec::new();
    for leads in endpoints
        .iter()
        .filter(|e| e.enabled)
        .map(|e| e.remind.as_ref())
    {
        if !lists.contains(&leads) {
            lists.push(leads);
        }
    }
    lists
}

/// The time events due at `now` for every endpoint's own leads (of each
/// schedule, the latest of *its* leads: one endpoint's 10 minutes never
/// hides another's 20), each once, in the order a person is told them:
/// by the instant they fell due, then by the records' order (the order
/// they were recorded or synced), then by the order of a schedule's life.
fn due_for<'a>(
    records: &'a [crate::model::Record],
    lists: &[Option<&crate::remind::Leads>],
    tolerance_ms: i64,
    now: Timestamp,
) -> Vec<crate::remind::Reminder<'a>> {
    let mut keys = std::collections::HashSet::new();
    let mut due = Vec::new();
    for leads in lists {
        let leads = leads.map(|l| l.minutes());
        for reminder in crate::remind::due(records, leads, tolerance_ms, now) {
            if keys.insert(reminder.key()) {
                due.push(reminder);
            }
        }
    }
    let position = |r: &crate::remind::Reminder| {
        records
            .iter()
            .position(|x| std::ptr::eq(x, r.record))
            .unwrap_or(usize::MAX)
    };
    due.sort_by_key(|r| (r.due_at, position(r), r.kind.rank()));
    due
}

/// What one look at the due reminders did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pass {
    /// Reminders appended to the outbox.
    pub appended: usize,
    /// The next instant after `now` at which one the enabled endpoints
    /// want falls due, by the served snapshot (none: nothing to wait for).
    pub next_due: Option<Timestamp>,
}

/// Appends the time events due at `now` that the outbox has not held,
/// and tells when the next one falls due (one read of the endpoints and
/// the snapshot for both). The lock is taken (within `lock_timeout`) only
/// when there is one to append.
pub fn append_due(
    data_dir: &Path,
    now: Timestamp,
    tolerance_ms: i64,
    lock_timeout: Duration,
) -> Result<Pass, RemindError> {
    let endpoints = Endpoints::new(data_dir).load()?;
    let lists = lead_lists(&endpoints);
    if lists.is_empty() {
        return Ok(Pass::default());
    }
    let union = crate::remind::Leads::union(lists.iter().flatten().copied());
    let leads = (!union.is_empty()).then_some(union.as_slice());
    let next_due = |snapshot: &crate::snapshot::Snapshot| {
        crate::remind::next_due(&snapshot.records, leads, tolerance_ms, now)
    };
    let store = SnapshotStore::new(data_dir);
    let outbox = Outbox::new(data_dir);
    let unsent = |snapshot: &crate::snapshot::Snapshot| -> Result<bool, OutboxError> {
        let due = due_for(&snapshot.records, &lists, tolerance_ms, now);
        if due.is_empty() {
            // The usual wake: nothing due, the outbox is not read.
            return Ok(false);
        }
        let committed = outbox.read()?;
        let held = committed.reminder_keys();
        let quiet =
            |r: &crate::remind::Reminder| committed.quiet_until.is_some_and(|q| r.due_at < q);
        let announced = announced_at(&committed);
        Ok(due.iter().any(|r| {
            !held.contains(r.key().as_str())
                && !quiet(r)
                && !r.told_by(announced.get(r.record.id.as_str()).copied())
        }))
    };
    match store.load_current()? {
        Some(snapshot) if unsent(&snapshot)? => {}
        Some(snapshot) => {
            return Ok(Pass {
                appended: 0,
                next_due: next_due(&snapshot),
            })
        }
        None => return Ok(Pass::default()),
    }
    let lock = store.lock(lock_timeout, "resetctl webhook reminders")?;
    // Under the lock: the served snapshot may have moved on meanwhile.
    let Some(snapshot) = store.load_current()? else {
        return Ok(Pass::default());
    };
    let committed = outbox.read()?;
    let announced = announced_at(&committed);
    let due: Vec<_> = due_for(&snapshot.records, &lists, tolerance_ms, now)
        .into_iter()
        .filter(|r| !r.told_by(announced.get(r.record.id.as_str()).copied()))
        .collect();
    let appended =
        outbox.append_reminders(&lock, &due, snapshot.sequence, snapshot.generated_at, now)?;
    if appended > 0 {
        tracing::info!("webhook time events: {appended} due at {now} appended to the outbox");
    }
    Ok(Pass {
        appended,
        next_due: next_due(&snapshot),
    })
}

/// How soon a running deliverer tries again to append due reminders after
/// it could not (the data-dir lock busy past its timeout, a file unreadable).
const REMIND_RETRY: Duration = Duration::from_secs(5);

/// Appends the reminders due at `now` ([`append_due`]),
/// off the runtime's threads; a failure is logged (`None`).
pub(super) async fn append_now(
    data_dir: &Path,
    tolerance_ms: i64,
    timeout: Duration,
    now: Timestamp,
) -> Option<Pass> {
    let dir = data_dir.to_owned();
    let pass =
        tokio::task::spawn_blocking(move || append_due(&dir, now, tolerance_ms, timeout)).await;
    match pass {
        Ok(Ok(pass)) => Some(pass),
        Ok(Err(e)) => {
            tracing::warn!("webhook time events due at {now} not appended: {e}");
            None
        }
        Err(_) => None,
    }
}

/// The running deliverer's reminder scheduler ([`super::deliver::run`]
/// spawns it with the receiver of its changes): appends what is due, then
/// sleeps until the next reminder falls due by the clock, or until the
/// pointer moves (a publish made visible), the outbox or the endpoints
/// change (an endpoint added), never polling (after a failed append it
/// tries again in [`REMIND_RETRY`], so a due reminder is not left for the
/// next wake). What is due is always read from the version the pointer
/// names after the wake, never from one read before it.
pub(super) async fn schedule(
    data_dir: PathBuf,
    clock: std::sync::Arc<dyn Clock>,
    (tolerance_ms, timeout): (i64, Duration),
    mut changes: tokio::sync::watch::Receiver<u64>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        // Listening before looking: a change meanwhile is not missed.
        changes.mark_unchanged();
        // One instant for both: a reminder falling due while the append
        // runs is after it, so the next wake finds it.
        let now = clock.now();
        let pass = append_now(&data_dir, tolerance_ms, timeout, now).await;
        let (appended, next) = (pass.is_some(), pass.and_then(|p| p.next_due));
        crate::testhook::reached("remind:sleeping");
        let due = async {
            match next {
                Some(at) => clock.sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = due => {}
            _ = changes.changed() => {}
            _ = tokio::time::sleep(REMIND_RETRY), if !appended => {}
            _ = stop.changed() => {}
        }
        if *stop.borrow() {
            return;
        }
    }
}

/// When each schedule's window was last announced to the endpoints: the
/// publish of its latest change the outbox holds that announced it
/// ([`crate::changes::announces_window`]: created, moved, open again;
/// [`crate::remind::Reminder::told_by`]).
fn announced_at(
    committed: &super::outbox::Committed,
) -> std::collections::HashMap<&str, Timestamp> {
    committed
        .entries
        .iter()
        .filter(|e| e.reminder.is_none())
        .filter(|e| {
            crate::changes::Transition::of_event_type(&e.event_type)
                .is_some_and(|t| crate::changes::announces_window(t, &e.record, &e.changed))
        })
        .map(|e| (e.record.id.as_str(), e.published_at))
        .collect()
}

/// Whether the time event `entry` is not to be sent at `now`: it expired,
/// or a later change of its record (in `later`, the outbox's entries after
/// it) withdrew or fulfilled the schedule, or moved its window (its time
/// events, by the matcher's `tolerance_ms`, no longer include it).
pub fn cancelled(
    entry: &super::OutboxEntry,
    later: &[super::OutboxEntry],
    now: Timestamp,
    tolerance_ms: i64,
) -> bool {
    let Some(facts) = &entry.reminder else {
        return false;
    };
    if now >= facts.expires_at {
        return true;
    }
    let lead: Vec<u32> = facts.lead_minutes.into_iter().collect();
    later
        .iter()
        .filter(|e| e.reminder.is_none() && e.record.id == entry.record.id)
        .any(|change| {
            crate::changes::Transition::of_event_type(&change.event_type)
                == Some(crate::changes::Transition::Withdrawn)
                || !crate::remind::reminders_of(&change.record, Some(&lead), tolerance_ms)
                    .iter()
                    .any(|r| r.key() == facts.key)
        })
}
