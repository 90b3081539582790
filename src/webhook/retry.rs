//! When a message that failed is tried again, and when it is given up:
//! the retry schedule of the message at an endpoint's cursor, kept in its
//! state ([`super::state`]) by the deliverer ([`super::deliver`]), and the
//! wait a receiver asks for (`Retry-After`).

use crate::model::Timestamp;

use super::format::Format;
use super::log::{Attempt, Outcome};
use super::outbox::OutboxEntry;
use super::send::{Answer, SendError};
use super::state::{EndpointState, FailedMessage};

/// The retry delays, in seconds, by how long the message has failed:
/// after its first failure, then until the first hour is over, the second,
/// the sixth, and after that. A receiver that is back gets its backlog
/// within a minute through the first hour of an outage (the common one: a
/// restart, a deploy), and a long one costs it a request an hour, then
/// four a day.
pub const RETRY_DELAYS: [(i64, i64); 5] = [
    (0, 5),
    (3_600, 60),
    (2 * 3_600, 600),
    (6 * 3_600, 3_600),
    (i64::MAX, 6 * 3_600),
];
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

    /// When the receiver asked, in `answer` to an attempt at `now`, not to
    /// be asked again before ([`asked_retry_at`]), no later than the end of
    /// the retry window of the message at the cursor: a receiver cannot
    /// keep a message past its window, nor an endpoint waiting longer.
    pub(super) fn asked_retry_at(
        &self,
        answer: &Result<Answer, SendError>,
        now: Timestamp,
    ) -> Option<Timestamp> {
        let end = self
            .first_attempt_at
            .unwrap_or(now)
            .add_millis(RETRY_WINDOW_MS);
        Some(asked_retry_at(answer.as_ref().ok()?, now)?.min(end))
    }

    /// A failed attempt (number `attempt_no`) of `entry` at `now`: gives up
    /// once the retry window is over (the message joins the failed ones and
    /// the cursor moves on; `true`), else schedules the next try, no sooner
    /// than `asked` (the receiver's `Retry-After`).
    pub(super) fn failed_attempt(
        &mut self,
        entry: &OutboxEntry,
        last: u64,
        attempt: &mut Attempt,
        (attempt_no, asked): (u32, Option<Timestamp>),
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
        let jitter = crate::random::random_u64();
        let failing_ms = now.as_millis() - first.as_millis();
        let next = now
            .add_millis(retry_delay_ms(attempt_no, failing_ms, jitter))
            .max(asked.unwrap_or(now))
            .min(deadline);
        self.next_attempt_at = Some(next);
        attempt.outcome = Outcome::Retrying;
        attempt.next_retry_at = Some(next);
        false
    }
}

/// The instant a receiver asked not to be asked again before, in an
/// answer at `now` of 429 Too Many Requests or 503 Service Unavailable: its
/// `Retry-After`, a number of seconds or an HTTP date in any of the forms
/// RFC 9110 (sections 10.2.3 and 5.6.7) makes a recipient accept, else the
/// seconds its body names where the service puts them there: Telegram's
/// `parameters.retry_after` ("the number of seconds left to wait before the
/// request can be repeated", <https://core.telegram.org/bots/api#responseparameters>)
/// and Discord's `retry_after` (<https://discord.com/developers/docs/topics/rate-limits#exceeding-a-rate-limit>).
/// A date already past asks for nothing more than now.
pub fn asked_retry_at(answer: &Answer, now: Timestamp) -> Option<Timestamp> {
    if !matches!(answer.status, 429 | 503) {
        return None;
    }
    let longest = RETRY_WINDOW_MS as f64 / 1000.0;
    let after = |seconds: f64| now.add_millis((seconds.clamp(0.0, longest) * 1000.0) as i64);
    if let Some(value) = answer.retry_after.as_deref().map(str::trim) {
        if let Ok(seconds) = value.parse::<u64>() {
            return Some(after(seconds as f64));
        }
        if let Ok(at) = httpdate::parse_http_date(value) {
            let millis = at
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            return Some(Timestamp::from_millis(millis).max(now));
        }
    }
    let body: serde_json::Value = serde_json::from_slice(&answer.body).ok()?;
    let seconds = body["parameters"]["retry_after"]
        .as_f64()
        .or_else(|| body["retry_after"].as_f64())?;
    Some(after(seconds))
}

/// What the message at an endpoint's cursor waits for before it is tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Wait {
    /// The instant it may be tried.
    pub until: Timestamp,
    /// Whether a one-shot pass leaves it to the next pass: its own retry
    /// is not due yet, or the receiver asked for a wait (`Retry-After`:
    /// longer than one interval of the pace, which the pace alone never
    /// asks). The pace alone a pass waits out while its clock runs.
    pub later: bool,
}

impl EndpointState {
    /// What the message `entry` at the cursor waits for at `now`, if
    /// anything: its retry when it failed, the endpoint's pace
    /// ([`super::pace`]), whichever is later; but no later than the
    /// message lives (a reminder's expiry). Each message expires on its
    /// own: woken then, the deliverer drops it and tries the next at once,
    /// whose time has not passed, instead of sleeping to the expired one's
    /// retry and finding both gone.
    pub(super) fn wait(&self, format: Format, entry: &OutboxEntry, now: Timestamp) -> Option<Wait> {
        let retry = self.next_attempt_at.filter(|at| *at > now);
        let until = retry.max(self.pace_ready_at(format, now))?;
        let expires = entry.reminder.as_ref().map(|r| r.expires_at);
        let held = until.as_millis() - now.as_millis() > super::pace::Pace::of(format).interval_ms;
        Some(Wait {
            until: expires.map_or(until, |e| e.min(until)),
            later: retry.is_some() || held,
        })
    }
}

/// The retry delay after `failures` failures of a message failing for
/// `failing_ms` since its first attempt, in milliseconds: [`RETRY_DELAYS`],
/// up to 20 % sooner by `jitter` (a random number).
/// The jitter only shortens a delay, so "every minute" is never more than
/// a minute, and endpoints that failed together do not retry in step.
pub fn retry_delay_ms(failures: u32, failing_ms: i64, jitter: u64) -> i64 {
    let base = if failures <= 1 {
        RETRY_DELAYS[0].1
    } else {
        let failing = failing_ms / 1000;
        RETRY_DELAYS[1..]
            .iter()
            .find(|(until, _)| failing < *until)
            .map_or(RETRY_DELAYS[4].1, |(_, delay)| *delay)
    } * 1000;
    let spread = base / 5;
    base - (jitter % (spread as u64 + 1)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, retry_after: Option<&str>, body: &str) -> Answer {
        Answer {
            status,
            body: body.as_bytes().to_vec(),
            retry_after: retry_after.map(str::to_owned),
        }
    }

    #[test]
    fn retry_after_is_read_in_every_form_a_recipient_must_accept() {
        let now = Timestamp::parse("1994-11-06T08:49:00.000Z").unwrap();
        let at = Timestamp::parse("1994-11-06T08:49:37.000Z").unwrap();
        for value in [
            "37",
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                asked_retry_at(&answer(429, Some(value), ""), now),
                Some(at),
                "{value}"
            );
        }
        // A date already past: now; a 500 asks for nothing; junk neither.
        let past = answer(503, Some("Sat, 05 Nov 1994 08:49:37 GMT"), "");
        assert_eq!(asked_retry_at(&past, now), Some(now));
        assert_eq!(asked_retry_at(&answer(500, Some("37"), ""), now), None);
        assert_eq!(asked_retry_at(&answer(429, Some("soon"), ""), now), None);
        // Discord's body says it in seconds, with a fraction.
        let discord = answer(
            429,
            None,
            r#"{"message":"You are being rate limited.","retry_after":0.25,"global":false}"#,
        );
        assert_eq!(asked_retry_at(&discord, now), Some(now.add_millis(250)));
    }

    #[test]
    fn a_failing_message_is_retried_every_minute_for_an_hour_then_less_often() {
        let minute = 60_000;
        // (failures, failing for, the delay without and with full jitter)
        for (failures, failing, base) in [
            (1, 0, 5_000),
            (2, 5_000, minute),
            (30, 59 * minute, minute),
            (61, 60 * minute, 10 * minute),
            (70, 3 * 60 * minute, 60 * minute),
            (75, 7 * 60 * minute, 6 * 60 * minute),
        ] {
            assert_eq!(retry_delay_ms(failures, failing, 0), base);
            let sooner = retry_delay_ms(failures, failing, base as u64 / 5);
            assert_eq!(sooner, base - base / 5, "up to 20 % sooner, never later");
        }
    }

    #[test]
    fn a_pass_waits_out_the_pace_but_leaves_a_retry_or_a_receivers_wait() {
        let now = Timestamp::parse("2026-11-20T10:00:00.000Z").unwrap();
        let record = crate::document::RecordsDocument::from_slice(crate::BUNDLED_SEED_HISTORY)
            .unwrap()
            .records
            .remove(0);
        // A change, not a reminder: it never expires.
        let entry: OutboxEntry = serde_json::from_value(serde_json::json!({
            "n": 1, "id": "msg_x_1_00000000", "type": "record.created",
            "kinds": ["all"], "sequence": 1, "generatedAt": now, "publishedAt": now,
            "record": record,
        }))
        .unwrap();
        let f = Format::Standard;
        let mut st = EndpointState::default();
        assert_eq!(st.wait(f, &entry, now), None);
        // A spent burst: the pace alone, one interval at most.
        for _ in 0..20 {
            st.paced(f, now);
        }
        let paced = st.wait(f, &entry, now).unwrap();
        assert_eq!((paced.until, paced.later), (now.add_millis(100), false));
        // A receiver's wait is left to the next pass, as a retry is.
        st.hold_until(f, now.add_millis(30_000));
        assert!(st.wait(f, &entry, now).unwrap().later);
    }
}
