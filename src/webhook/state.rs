//! An endpoint's delivery state: where its cursor is in the outbox, the
//! attempts of the message at the cursor, what it delivered and gave up
//! on (`webhooks/state/<id>.json`). The deliverer moves it
//! ([`super::deliver`]); the endpoint, `webhook list` and `status` read it.

use serde::{Deserialize, Serialize};

use crate::model::Timestamp;

/// One failed message, kept for `status` and `webhook show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedMessage {
    /// The message id.
    pub message: String,
    /// The event type.
    pub event: String,
    /// When it was given up.
    pub at: Timestamp,
    /// The last error or status.
    pub last_error: String,
}

/// An endpoint's durable delivery state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointState {
    /// The next outbox entry to consider.
    pub next: u64,
    /// Failed attempts of the entry at the cursor.
    pub attempts: u32,
    /// When the entry at the cursor was first tried.
    pub first_attempt_at: Option<Timestamp>,
    /// When it is tried again.
    pub next_attempt_at: Option<Timestamp>,
    /// Messages delivered so far.
    pub delivered: u64,
    /// The newest messages given up on.
    pub failed: Vec<FailedMessage>,
    /// Messages given up on, in all.
    pub failed_total: u64,
}
