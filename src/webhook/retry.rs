//! When a message that failed is tried again, and when it is given up:
//! the retry schedule of the message at an endpoint's cursor, kept in its
//! state ([`super::state`]) by the deliverer ([`super::deliver`]).

use crate::model::Timestamp;

use super::format::Format;
use super::log::{Attempt, Outcome};
use super::outbox::OutboxEntry;
use super::state::{EndpointState, FailedMessage};

/// The retry delays after the 1st, 2nd, … failure (the last repeats), in seconds.
pub const RETRY_DELAYS: [i64; 5] = [5, 60, 600, 3600, 6 * 3600];
/// How long a message is retried before it is marked failed.
pub const RETRY_WINDOW_MS: i64 = 24 * 3600 * 1000;
/// Failed messages remembered per endpoint (for `status`).
const FAILED_KEPT: usize = 20;
impl EndpointState {
    /// Moves the cursor to `next` with no attempt made of it yet.
    pub(super) fn move_to(&mut self, next: u64) {
        self.next = next;
        self.attempts = 0;
        self.first_attempt_at = None;
        self.next_attempt_at = None;
    }

    /// A failed attempt (number `attempt_no`) of `entry` at `now`: gives up
    /// once the retry window is over (the message joins the failed ones and
    /// the cursor moves on; `true`), else schedules the next try.
    pub(super) fn failed_attempt(
        &mut self,
        entry: &OutboxEntry,
        last: u64,
        attempt: &mut Attempt,
        attempt_no: u32,
        now: Timestamp,
    ) -> bool {
        let first = *self.first_attempt_at.get_or_insert(now);
        self.attempts = attempt_no;
        let deadline = first.add_millis(RETRY_WINDOW_MS);
        if now >= deadline {
            attempt.outcome = Outcome::Failed;
            self.failed.push(FailedMessage {
                message: entry.id.clone(),
                event: entry.event_type.clone(),
                at: now,
                last_error: attempt
                    .error
                    .clone()
                    .unwrap_or_else(|| format!("status {}", attempt.status.unwrap_or(0))),
            });
            if self.failed.len() > FAILED_KEPT {
                self.failed.remove(0);
            }
            self.failed_total += 1;
            self.move_to(last + 1);
            return true;
        }
        let jitter = crate::webhook::random_bytes(8)
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let next = now
            .add_millis(retry_delay_ms(attempt_no, jitter))
            .min(deadline);
        self.next_attempt_at = Some(next);
        attempt.outcome = Outcome::Retrying;
        attempt.next_retry_at = Some(next);
        false
    }
}

/// What the message at an endpoint's cursor waits for before it is tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Wait {
    /// The instant it may be tried.
    pub until: Timestamp,
    /// Whether its own retry is not due yet (a one-shot pass leaves it to
    /// the next pass; the pace alone it waits out while its clock runs).
    pub retry: bool,
}

impl EndpointState {
    /// What the message at the cursor waits for at `now`, if anything: its
    /// retry when it failed, the endpoint's pace ([`super::pace`]),
    /// whichever is later.
    pub(super) fn wait(&self, format: Format, now: Timestamp) -> Option<Wait> {
        let retry = self.next_attempt_at.filter(|at| *at > now);
        let until = retry.max(self.pace_ready_at(format, now))?;
        Some(Wait {
            until,
            retry: retry.is_some(),
        })
    }
}

/// The retry delay after `failures` failures, with ±20 % jitter (`jitter`
/// is a random number), in milliseconds.
pub fn retry_delay_ms(failures: u32, jitter: u64) -> i64 {
    let index = (failures.max(1) as usize - 1).min(RETRY_DELAYS.len() - 1);
    let base = RETRY_DELAYS[index] * 1000;
    let spread = base / 5;
    base - spread + (jitter % (2 * spread as u64 + 1)) as i64
}
