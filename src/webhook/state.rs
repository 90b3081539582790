//! An endpoint's delivery state: where its cursor is in the outbox, the
//! attempts of the message at the cursor, what it delivered and gave up
//! on (`webhooks/state/<id>.json`). The deliverer moves it
//! ([`super::deliver`]); the endpoint, `webhook list` and `status` read it.
//! Its file is read and written here.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data_dir::DataDir;
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
    /// How far the endpoint's pace is spent ([`super::pace`]): the next
    /// request may go once the clock is a burst short of it. Absent in a
    /// state written before endpoints were paced: a full burst.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced_to: Option<Timestamp>,
}

/// The delivery state of endpoint `id`, or `None` before its first delivery.
pub fn load_state(data_dir: &Path, id: &str) -> Option<EndpointState> {
    let path = DataDir::of(data_dir).endpoint_state(id);
    match crate::durable::read_data_file(&path, crate::durable::Cap::mib(1)) {
        Ok(bytes) => bytes.and_then(|bytes| serde_json::from_slice(&bytes).ok()),
        Err(e) => {
            tracing::warn!("webhook {id}: starting its delivery state afresh: {e}");
            None
        }
    }
}

/// Saves endpoint `id`'s state (a failure is logged: the cursor on disk
/// stays where it was, so a message is at worst sent again).
pub(super) fn save_state(data_dir: &Path, id: &str, state: &EndpointState) {
    let dir = DataDir::of(data_dir);
    if let Err(e) = crate::durable::create_dir_durable(&dir.endpoint_states()) {
        tracing::error!("webhook {id}: cannot make the delivery state's directory: {e}");
    }
    let bytes = serde_json::to_vec(state).expect("a state serialises");
    if let Err(e) = crate::durable::write_atomic(&dir.endpoint_state(id), &bytes) {
        tracing::error!("webhook {id}: cannot save the delivery state: {e}");
    }
}

/// Removes an endpoint's state (with `webhook remove`).
pub fn remove_state(data_dir: &Path, id: &str) {
    let dir = DataDir::of(data_dir);
    let path = dir.endpoint_state(id);
    if let Err(e) = crate::durable::remove_durable(&dir.endpoint_states(), [path.as_path()]) {
        tracing::warn!("webhook {id}: cannot remove the delivery state: {e}");
    }
}
