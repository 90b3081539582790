//! How fast an endpoint is asked: a pace per format, at or under what each
//! service documents it accepts, so a flood (a publish of 24,000 records:
//! one digest per person, but one standard event per record) never pushes
//! thousands of requests at a receiver in seconds.
//!
//! Each endpoint's pace is a GCRA ("generic cell rate algorithm", the
//! token bucket `governor` runs for the flood guard) kept as one instant in
//! its durable state ([`EndpointState::paced_to`]): a request may go at
//! `now` when `now ≥ paced_to − (burst − 1) × interval`, and moves
//! `paced_to` one interval on. One instant survives a restart and the
//! separate processes of `webhook deliver --once`, on the deliverer's
//! injectable clock. Every request counts, answered or not: the services
//! count failed requests too. A receiver's `Retry-After`
//! ([`super::retry::asked_retry_at`]) holds the pace back to its instant,
//! for every message after the one it answered too.

use crate::model::Timestamp;

use super::format::Format;
use super::state::EndpointState;

/// One format's pace: one request per `interval_ms` on average, up to
/// `burst` at once after a quiet spell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// The average interval between two requests, in milliseconds.
    pub interval_ms: i64,
    /// How many requests may go at once after a quiet spell.
    pub burst: u32,
}

impl Pace {
    /// The pace of `format`, from what its service documents:
    ///
    /// - Discord: a webhook's bucket answers `X-RateLimit-Limit: 5` with a
    ///   reset after 2 s, and a channel takes about 30 messages a minute
    ///   ("Rate Limits", <https://discord.com/developers/docs/topics/rate-limits>,
    ///   which says to honour the headers and `Retry-After`, as this does):
    ///   one every 2 s, 5 at once.
    /// - Slack: incoming webhooks take "1 per second", "short bursts >1
    ///   allowed" (<https://docs.slack.dev/apis/web-api/rate-limits>): one
    ///   a second, 3 at once.
    /// - Telegram: "avoid sending more than one message per second" to a
    ///   chat, and "not more than 20 messages per minute to the same group"
    ///   (Bots FAQ, <https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this>);
    ///   a target may be a group, so one every 3 s, 3 at once.
    /// - ntfy: each visitor (this server's address, shared by its
    ///   endpoints) may send 60 requests at once, then one every 5 s
    ///   (`visitor-request-limit-burst`, `…-replenish`,
    ///   <https://docs.ntfy.sh/config/#rate-limiting>): one every 5 s,
    ///   10 at once.
    /// - Bark: bark-server documents no limit; it pushes through Apple's
    ///   APNs, which answers 429 `TooManyRequests` to "too many requests
    ///   … consecutively to the same device token"
    ///   (<https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns>):
    ///   one a second, 5 at once.
    /// - Feishu: a custom bot takes "100 次/分钟，5 次/秒" (100 a minute,
    ///   5 a second; "Custom bot usage guide",
    ///   <https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot>):
    ///   one every 0.6 s, 5 at once.
    /// - E-mail: mail services cap sending rates per account, the
    ///   strictest common one being Amazon SES's sandbox at 1 message a
    ///   second ("Service quotas in Amazon SES",
    ///   <https://docs.aws.amazon.com/ses/latest/dg/quotas.html>):
    ///   one a second, 5 at once.
    /// - Standard Webhooks define no rate; receivers are programs. Ten a
    ///   second, 20 at once: a 24,000-event flood takes 40 minutes, never
    ///   thousands of requests in seconds.
    pub const fn of(format: Format) -> Pace {
        let (interval_ms, burst) = match format {
            Format::Standard => (100, 20),
            Format::Discord => (2_000, 5),
            Format::Slack => (1_000, 3),
            Format::Telegram => (3_000, 3),
            Format::Ntfy => (5_000, 10),
            Format::Bark => (1_000, 5),
            Format::Feishu => (600, 5),
            Format::Email => (1_000, 5),
        };
        Pace { interval_ms, burst }
    }

    /// How far `paced_to` may run ahead of the clock with a request still
    /// allowed: the burst, less the request itself.
    const fn slack_ms(self) -> i64 {
        (self.burst as i64 - 1) * self.interval_ms
    }
}

impl EndpointState {
    /// The instant the endpoint's next request may go by the pace of
    /// `format`; `None`: now.
    pub(super) fn pace_ready_at(&self, format: Format, now: Timestamp) -> Option<Timestamp> {
        let ready = self.paced_to?.add_millis(-Pace::of(format).slack_ms());
        (ready > now).then_some(ready)
    }

    /// A request went to the endpoint at `at`: one interval of its pace.
    pub(super) fn paced(&mut self, format: Format, at: Timestamp) {
        let pace = Pace::of(format);
        let from = self.paced_to.map_or(at, |to| to.max(at));
        self.paced_to = Some(from.add_millis(pace.interval_ms));
    }

    /// The receiver asked for no request before `until` (`Retry-After`):
    /// the pace is held back so the next one goes at `until`, and those
    /// after it one interval apart (no burst straight after a 429).
    pub(super) fn hold_until(&mut self, format: Format, until: Timestamp) {
        let held = until.add_millis(Pace::of(format).slack_ms());
        self.paced_to = Some(self.paced_to.map_or(held, |to| to.max(held)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_millis(1_800_000_000_000 + ms)
    }

    #[test]
    fn a_burst_goes_at_once_then_one_request_per_interval() {
        let mut st = EndpointState::default();
        let f = Format::Standard;
        let mut sent = 0;
        while st.pace_ready_at(f, at(0)).is_none() {
            st.paced(f, at(0));
            sent += 1;
        }
        assert_eq!(sent, 20, "the burst");
        assert_eq!(st.pace_ready_at(f, at(0)), Some(at(100)));
        // A second later: ten more, one per 100 ms.
        let mut more = 0;
        while st.pace_ready_at(f, at(1_000)).is_none() {
            st.paced(f, at(1_000));
            more += 1;
        }
        assert_eq!(more, 10);
    }

    #[test]
    fn a_hold_puts_the_next_request_at_its_instant_and_no_burst_after_it() {
        let mut st = EndpointState::default();
        let f = Format::Slack;
        st.paced(f, at(0));
        st.hold_until(f, at(30_000));
        assert_eq!(st.pace_ready_at(f, at(0)), Some(at(30_000)));
        assert_eq!(st.pace_ready_at(f, at(30_000)), None);
        st.paced(f, at(30_000));
        assert_eq!(st.pace_ready_at(f, at(30_000)), Some(at(31_000)));
        // An earlier hold does not shorten a longer one.
        st.hold_until(f, at(5_000));
        assert_eq!(st.pace_ready_at(f, at(30_000)), Some(at(31_000)));
    }
}
