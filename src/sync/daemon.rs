//! The sync daemon: one attempt now, then each interval plus a small
//! jitter, or when the back-off allows, until shut down.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::backoff::interval_with_jitter;
use super::error::SyncError;
use super::run::{sync_once, SyncOutcome, SyncSettings};
use crate::clock::Clock;
use crate::random::random_unit;

/// Syncs now and then every interval plus a small jitter (or when back-off allows) until
/// `shutdown` resolves. Each outcome goes to `report`, except a refusal that no later
/// attempt can change (a data dir that is not a mirror's), which ends the daemon with
/// that error, as it ends `sync --once`.
pub async fn run_daemon(
    data_dir: &Path,
    settings: &SyncSettings,
    clock: Arc<dyn Clock>,
    shutdown: impl Future<Output = ()>,
    mut report: impl FnMut(&Result<SyncOutcome, SyncError>),
) -> Result<(), SyncError> {
    tokio::pin!(shutdown);
    let interval = Duration::from_secs(u64::from(settings.source.interval_minutes) * 60);
    loop {
        let result = match sync_once(data_dir, settings, clock.as_ref()).await {
            Err(e @ SyncError::WrongMode(_)) => return Err(e),
            other => other,
        };
        report(&result);
        let now = clock.now();
        let next = match &result {
            Err(SyncError::BackingOff { until, .. }) => *until,
            Err(
                SyncError::Fetch {
                    next_attempt_at, ..
                }
                | SyncError::Invalid {
                    next_attempt_at, ..
                },
            ) => *next_attempt_at,
            _ => now.add_millis(interval_with_jitter(interval, random_unit()).as_millis() as i64),
        };
        let wait = Duration::from_millis((next.as_millis() - now.as_millis()).max(1000) as u64);
        let wait = match (&result, crate::testhook::sync_interval()) {
            (Ok(_), Some(test_interval)) => test_interval,
            _ => wait,
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = &mut shutdown => return Ok(()),
        }
    }
}
