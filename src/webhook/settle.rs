//! What an answer to an attempt does to an endpoint: its cursor and retry
//! schedule ([`super::retry`]), its pace, the delivery log, the metrics,
//! and a 410's disabling; and the writing of it, off the runtime's threads.
//! The deliverer ([`super::deliver`]) settles each answer here.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use crate::metrics::DeliveryOutcome;
use crate::model::Timestamp;

use super::endpoint::{Endpoint, Endpoints};
use super::log::{self, Attempt, Outcome};
use super::outbox::OutboxEntry;
use super::send::{verdict, Answer, SendError};
use super::state::{save_state, EndpointState};

/// What one `--once` pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PassReport {
    /// Attempts answered 2xx.
    pub delivered: usize,
    /// Attempts that failed (and will be retried or were given up).
    pub failed: usize,
}

/// What an answer leaves to write: the endpoint's state, the attempt's
/// line of the delivery log, and whether the receiver said it is gone.
pub(super) struct Written {
    state: EndpointState,
    attempt: Option<Attempt>,
    gone: Option<Timestamp>,
}

impl Written {
    /// The state alone.
    pub(super) fn state(state: &EndpointState) -> Self {
        Written {
            state: state.clone(),
            attempt: None,
            gone: None,
        }
    }
}

/// Writes what an answer left (fsyncs, a lock for 410) off the runtime's
/// threads, which serve requests and streams meanwhile; the endpoint's
/// next attempt waits for it, so its cursor is durable before it moves on.
pub(super) async fn write(data_dir: &Path, id: &str, written: Written, lock_timeout: Duration) {
    let (data_dir, id) = (data_dir.to_owned(), id.to_owned());
    let _ = tokio::task::spawn_blocking(move || {
        save_state(&data_dir, &id, &written.state);
        if let Some(attempt) = &written.attempt {
            log::append(&data_dir, attempt);
        }
        if let Some(at) = written.gone {
            disable_gone(&data_dir, &id, at, lock_timeout);
        }
    })
    .await;
}

/// What an endpoint's loop does after an answer.
pub(super) enum Settled {
    /// Delivered, or given up: on to the next entry.
    Next,
    /// The endpoint is gone (410): its loop ends.
    Disabled,
    /// Failed: tried again when its retry is due.
    Retrying,
}

/// Records the answer to an attempt of `entry` (a message that told up to
/// entry `last`): the cursor, the retry schedule, the metrics; says what
/// comes next and what to write ([`write`]).
pub(super) fn settle(
    now: Timestamp,
    endpoint: &Endpoint,
    st: &mut EndpointState,
    (entry, last): (&OutboxEntry, u64),
    answer: Result<Answer, SendError>,
    report: &Mutex<PassReport>,
) -> (Settled, Written) {
    let id = endpoint.id.as_str();
    let written = |st: &EndpointState, attempt: Attempt, gone: Option<Timestamp>| Written {
        state: st.clone(),
        attempt: Some(attempt),
        gone,
    };
    let attempt_no = st.attempts + 1;
    st.paced(endpoint.format, now);
    let verdict = verdict(endpoint.format, &answer);
    let mut attempt = Attempt {
        endpoint: id.to_owned(),
        event: entry.event_type.clone(),
        message: entry.id.clone(),
        at: now,
        attempt: attempt_no,
        status: verdict.status,
        error: verdict.error,
        outcome: Outcome::Delivered,
        next_retry_at: None,
    };
    match verdict.status {
        Some(_) if verdict.delivered => {
            st.move_to(last + 1);
            st.delivered += 1;
            report.lock().expect("not poisoned").delivered += 1;
            crate::metrics::webhook_delivery(DeliveryOutcome::Delivered);
            if let Some(kind) = crate::remind::ReminderKind::of_event_type(&entry.event_type)
                .filter(|k| k.is_reminder())
            {
                crate::metrics::reminder_sent(
                    crate::metrics::ReminderChannel::Webhook,
                    kind.event_type(),
                );
            }
            return (Settled::Next, written(st, attempt, None));
        }
        Some(410) => {
            attempt.outcome = Outcome::Disabled;
            report.lock().expect("not poisoned").failed += 1;
            crate::metrics::webhook_delivery(DeliveryOutcome::Disabled);
            return (Settled::Disabled, written(st, attempt, Some(now)));
        }
        _ => {}
    }
    report.lock().expect("not poisoned").failed += 1;
    // A receiver's Retry-After holds the endpoint, not only this message.
    let asked = st.asked_retry_at(&answer, now);
    if let Some(at) = asked {
        st.hold_until(endpoint.format, at);
    }
    let gave_up = st.failed_attempt(entry, last, &mut attempt, (attempt_no, asked), now);
    if gave_up {
        tracing::warn!(
            "webhook {id}: gave up on {} after {attempt_no} attempts",
            entry.id
        );
        crate::metrics::webhook_delivery(DeliveryOutcome::Failed);
        return (Settled::Next, written(st, attempt, None));
    }
    crate::metrics::webhook_delivery(DeliveryOutcome::Retrying);
    (Settled::Retrying, written(st, attempt, None))
}

/// A 410 Gone: the receiver says the endpoint is no more; disable it.
/// The endpoints file's change wakes the deliverer, which stops sending to it.
fn disable_gone(data_dir: &Path, id: &str, now: Timestamp, lock_timeout: Duration) {
    let store = crate::snapshot::SnapshotStore::new(data_dir);
    let result = store
        .lock(lock_timeout, "resetctl webhook deliverer (410 Gone)")
        .map_err(|e| e.to_string())
        .and_then(|lock| {
            Endpoints::new(data_dir)
                .update(&lock, id, |e| {
                    e.enabled = false;
                    e.disabled_reason = Some(format!("410 Gone at {now}"));
                })
                .map_err(|e| e.to_string())
        });
    match result {
        Ok(_) => tracing::warn!("webhook {id}: the receiver answered 410 Gone; disabled"),
        Err(e) => tracing::error!("webhook {id}: answered 410 Gone but cannot be disabled: {e}"),
    }
}
