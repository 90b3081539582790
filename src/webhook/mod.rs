//! Webhooks: the durable outbox of published changes, the endpoints an
//! operator registers, how each format renders a change into a request,
//! Standard Webhooks signing, and the one deliverer per data dir.
//!
//! Layout under `<data-dir>/webhooks/`:
//! - `outbox.jsonl`: every change, appended by the publish step ([`outbox`]),
//!   and every reminder, appended when it falls due ([`remind`]);
//! - `endpoints.json`: the endpoints and their secrets, written atomically
//!   under the data-dir lock ([`endpoint`]);
//! - `deliver.lock`: held by the one deliverer ([`deliver`]);
//! - `state/<endpoint>.json`: each endpoint's durable cursor and retry state;
//! - `deliveries.jsonl`: recent attempts, for `webhook deliveries` and `status`.
//!
//! What an operator does to endpoints (add, set, enable, remove, test) is
//! [`manage`]'s, each one call that takes the lock itself.

pub mod deliver;
pub mod email;
pub mod endpoint;
pub mod format;
pub mod log;
pub mod manage;
pub mod markup;
pub mod message;
pub mod outbox;
pub mod pace;
pub mod remind;
pub mod replica;
pub mod request;
pub mod retry;
pub mod send;
pub mod settle;
pub mod sign;
pub mod state;
pub mod target;

pub use endpoint::{Endpoint, EndpointError, Endpoints};
pub use format::Format;
pub use outbox::{Outbox, OutboxEntry};

/// The lowest outbox change number an endpoint still needs, or `None`
/// when there is no endpoint: what the publish step keeps in the outbox. A
/// disabled endpoint counts too, so `enable` resumes exactly where it
/// stopped (within the outbox's bound). Endpoints that cannot be read keep
/// everything (`Some(0)`).
pub fn needed(data_dir: &std::path::Path) -> Option<u64> {
    match Endpoints::new(data_dir).load() {
        Ok(endpoints) => endpoints
            .iter()
            .map(|e| e.cursor(state::load_state(data_dir, &e.id).as_ref()))
            .min(),
        Err(e) => {
            tracing::warn!("{e}; the outbox keeps every change");
            Some(0)
        }
    }
}

/// One endpoint as `status`, `webhook list` and `webhook show` report it.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointSummary {
    /// The endpoint id.
    pub id: String,
    /// The target, redacted (a query or userinfo may carry a token):
    /// [`listed_target`].
    pub url: String,
    /// The format.
    pub format: Format,
    /// Whether deliveries run.
    pub enabled: bool,
    /// The event types it takes (empty: every data change, and every
    /// reminder when reminders are on).
    pub events: Vec<String>,
    /// The leads of its `reset.upcoming` reminders, in minutes; null: no reminders.
    pub remind: Option<crate::remind::Leads>,
    /// Its messages' language and time zone (ready-made formats).
    pub language: crate::site::i18n::Lang,
    /// The IANA zone of its messages' local times (null: UTC).
    pub time_zone: Option<String>,
    /// Why not.
    pub disabled_reason: Option<String>,
    /// Messages delivered.
    pub delivered: u64,
    /// Messages given up on after the retry window.
    pub failed: u64,
    /// Changes waiting for this endpoint (at most what the outbox holds).
    pub pending: u64,
    /// The newest messages given up on.
    pub recent_failures: Vec<state::FailedMessage>,
    /// When the message at the cursor is tried again, while retrying.
    pub next_retry_at: Option<crate::model::Timestamp>,
    /// Why it sends nothing though enabled: the data dir is a replica
    /// ([`replica`]); null otherwise.
    pub held: Option<String>,
}

/// An endpoint's target as `webhook show` prints it to its operator: the
/// URL whole (the operator set it), except an e-mail target's password,
/// which is never printed ([`target::EmailTarget::shown`]).
pub fn shown_target(endpoint: &Endpoint) -> String {
    if endpoint.format != Format::Email {
        return endpoint.url.clone();
    }
    email_target(endpoint, target::EmailTarget::shown)
}

/// An endpoint's target as lists show it (`webhook list`, `status`): a
/// web target's origin ([`crate::redact::redact_target`]: chat services
/// put tokens in the path and the query), an e-mail target's server and
/// recipients ([`target::EmailTarget::listed`]: an `smtp://` URL has no web
/// origin, and its user and password stay out).
pub fn listed_target(endpoint: &Endpoint) -> String {
    if endpoint.format != Format::Email {
        return crate::redact::redact_target(&endpoint.url);
    }
    email_target(endpoint, target::EmailTarget::listed)
}

/// An e-mail endpoint's target in the form `show` makes of it; nothing of
/// it when it does not read as one.
fn email_target(endpoint: &Endpoint, show: impl Fn(&target::EmailTarget) -> String) -> String {
    reqwest::Url::parse(&endpoint.url)
        .ok()
        .and_then(|url| target::EmailTarget::parse(&url).ok())
        .map_or_else(|| crate::redact::NOT_SHOWN.to_owned(), |t| show(&t))
}

/// The delivery summary of every endpoint of `data_dir`.
pub fn summaries(data_dir: &std::path::Path) -> Result<Vec<EndpointSummary>, EndpointError> {
    let committed = Outbox::new(data_dir).read().unwrap_or_default();
    summaries_of(data_dir, &committed)
}

/// [`summaries`] against `committed`, the outbox as the caller last read
/// it: a process that asks often (`/metrics`) keeps one and reads only
/// what was appended since ([`Outbox::read_from`]), instead of decoding
/// the whole outbox each time.
pub fn summaries_of(
    data_dir: &std::path::Path,
    committed: &outbox::Committed,
) -> Result<Vec<EndpointSummary>, EndpointError> {
    let endpoints = Endpoints::new(data_dir).load()?;
    let held = replica::now(data_dir).map(|r| r.to_string());
    Ok(endpoints
        .into_iter()
        .map(|e| {
            let state = state::load_state(data_dir, &e.id);
            let cursor = e.cursor(state.as_ref());
            let state = state.unwrap_or_default();
            let pending = committed
                .from(cursor)
                .iter()
                .filter(|entry| e.wants(entry))
                .count() as u64;
            EndpointSummary {
                url: listed_target(&e),
                id: e.id,
                format: e.format,
                enabled: e.enabled,
                events: e.events,
                remind: e.remind,
                language: e.language,
                time_zone: e.time_zone,
                disabled_reason: e.disabled_reason,
                delivered: state.delivered,
                failed: state.failed_total,
                pending,
                recent_failures: state.failed,
                next_retry_at: state.next_attempt_at,
                held: held.clone(),
            }
        })
        .collect())
}
