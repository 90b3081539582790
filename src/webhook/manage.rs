//! What an operator does to endpoints, each one call: add (its target's
//! addresses checked, its cursor set at the outbox's next change), change
//! its delivery settings, enable, disable, remove (with its cursor), and
//! send a test event. Each takes the data-dir lock itself for as long as
//! it writes, so the command line holds no lock and knows no file.

use std::path::Path;
use std::time::Duration;

use super::deliver::{self, DeliverSettings};
use super::endpoint::{
    check_reminders, check_timeout, Endpoint, EndpointError, Endpoints, NewEndpoint,
};
use super::request::{Event, TEST_EVENT};
use super::{log, Outbox};
use crate::durable::DataDirLock;
use crate::model::Timestamp;
use crate::outbound::{self, OutboundError};
use crate::snapshot::{SnapshotError, SnapshotStore};

/// Why an endpoint could not be managed; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    /// The endpoints file.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The data-dir lock.
    #[error(transparent)]
    Lock(#[from] SnapshotError),
    /// The outbox cannot be read (a new endpoint's start).
    #[error("{0}")]
    Outbox(String),
    /// The target's URL or addresses.
    #[error("{0}")]
    Target(OutboundError),
    /// The target resolves to a private address the endpoint may not reach.
    #[error("{0} (allow such a target with --allow-private-targets)")]
    Private(OutboundError),
    /// The data dir mirrors another resetctl instance, whose webhooks tell everything.
    #[error(transparent)]
    Replica(#[from] super::replica::Replica),
}

/// The data-dir lock for `purpose`.
fn lock(data_dir: &Path, timeout: Duration, purpose: &str) -> Result<DataDirLock, ManageError> {
    Ok(SnapshotStore::new(data_dir).lock(timeout, purpose)?)
}

/// Adds `endpoint`: refused on a replica ([`super::replica`]); its settings
/// are checked first, then its target's addresses (a private one only when
/// allowed), then it starts at the outbox's next change.
pub async fn add(
    data_dir: &Path,
    endpoint: NewEndpoint,
    now: Timestamp,
    lock_timeout: Duration,
) -> Result<Endpoint, ManageError> {
    if let Some(replica) = super::replica::now(data_dir) {
        return Err(replica.into());
    }
    // Every setting is checked before the target's name is looked up.
    let mut endpoint = endpoint.build(now, 0)?;
    let target = super::target::target_server(endpoint.format, &endpoint.url)
        .map_err(|e| EndpointError::Invalid(e.to_string()))?;
    let reach = outbound::Reach::for_target(endpoint.allow_private_targets);
    outbound::resolve(&target, reach)
        .await
        .map_err(|e| match e {
            OutboundError::Refused { .. } => ManageError::Private(e),
            e => ManageError::Target(e),
        })?;
    let lock = lock(data_dir, lock_timeout, "resetctl webhook add")?;
    endpoint.start = Outbox::new(data_dir)
        .index()
        .map_err(|e| ManageError::Outbox(e.to_string()))?
        .next;
    let endpoints = Endpoints::new(data_dir);
    let mut all = endpoints.load()?;
    all.push(endpoint.clone());
    endpoints.save(&lock, &all)?;
    Ok(endpoint)
}

/// A change of an endpoint's delivery settings; `None` keeps a setting.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeliveryChange {
    /// Allow (or refuse) private targets.
    pub allow_private_targets: Option<bool>,
    /// The request timeout, in seconds.
    pub timeout_seconds: Option<f64>,
    /// The record pages' base (`Some(None)`: no links to pages).
    pub record_pages: Option<Option<String>>,
    /// The `User-Agent` contact (`Some(None)`: none).
    pub user_agent_contact: Option<Option<String>>,
    /// The reminders' leads (`Some(None)`: no reminders).
    pub remind: Option<Option<crate::remind::Leads>>,
    /// The messages' language.
    pub language: Option<crate::site::i18n::Lang>,
    /// The messages' time zone (`Some(None)`: UTC only).
    pub time_zone: Option<Option<String>>,
    /// The plan filter (`Some(None)`: every plan).
    pub plan: Option<Option<crate::model::PlanId>>,
}

/// Changes `id`'s delivery settings (and what it is reminded of, in which words).
pub fn set_delivery(
    data_dir: &Path,
    id: &str,
    change: DeliveryChange,
    lock_timeout: Duration,
) -> Result<Endpoint, ManageError> {
    if let Some(seconds) = change.timeout_seconds {
        check_timeout(seconds)?;
    }
    if let Some(Some(contact)) = &change.user_agent_contact {
        outbound::check_contact(contact).map_err(|e| EndpointError::Invalid(e.to_string()))?;
    }
    if let Some(Some(zone)) = &change.time_zone {
        crate::civil::parse_zone(zone).map_err(|e| EndpointError::Invalid(e.to_string()))?;
    }
    let lock = lock(data_dir, lock_timeout, "resetctl webhook set")?;
    let endpoints = Endpoints::new(data_dir);
    if let Some(remind) = &change.remind {
        let events = endpoints.get(id)?.events;
        if remind.is_none() && check_reminders(&events, None)?.is_some() {
            return Err(EndpointError::Invalid(format!(
                "--no-remind would leave this endpoint nothing to send: its --event list ({}) names reminders; remove it and add it again with other --event types",
                events.join(",")
            ))
            .into());
        }
        check_reminders(&events, remind.clone())?;
    }
    Ok(endpoints.update(&lock, id, |e| {
        if let Some(remind) = change.remind {
            e.remind = remind;
        }
        if let Some(language) = change.language {
            e.language = language;
        }
        if let Some(zone) = change.time_zone {
            e.time_zone = zone;
        }
        if let Some(allow) = change.allow_private_targets {
            e.allow_private_targets = allow;
        }
        if let Some(seconds) = change.timeout_seconds {
            e.timeout_seconds = seconds;
        }
        if let Some(pages) = change.record_pages {
            e.record_pages = pages;
        }
        if let Some(contact) = change.user_agent_contact {
            e.user_agent_contact = Some(contact);
        }
        if let Some(plan) = change.plan {
            e.plan = plan;
            if let Some(refused) = e.refused_plan.take() {
                e.disabled_reason = Some(format!(
                    "disabled while its plan filter {refused:?} was refused; it has one now: `resetctl webhook enable {}` resumes it",
                    e.id
                ));
            }
        }
    })?)
}

/// Enables `id` (it resumes at its cursor) or disables it by the operator's hand.
pub fn set_enabled(
    data_dir: &Path,
    id: &str,
    enabled: bool,
    lock_timeout: Duration,
) -> Result<Endpoint, ManageError> {
    let purpose = if enabled {
        "resetctl webhook enable"
    } else {
        "resetctl webhook disable"
    };
    let lock = lock(data_dir, lock_timeout, purpose)?;
    let endpoints = Endpoints::new(data_dir);
    if let Some(plan) = endpoints.get(id)?.refused_plan.filter(|_| enabled) {
        return Err(EndpointError::Invalid(super::endpoint::refused_plan_reason(id, &plan)).into());
    }
    Ok(endpoints.update(&lock, id, |e| {
        e.enabled = enabled;
        e.disabled_reason = (!enabled).then(|| "disabled by the operator".to_owned());
    })?)
}

/// Removes `id` and its cursor.
pub fn remove(data_dir: &Path, id: &str, lock_timeout: Duration) -> Result<(), ManageError> {
    let lock = lock(data_dir, lock_timeout, "resetctl webhook remove")?;
    Endpoints::new(data_dir).remove(&lock, id)?;
    super::state::remove_state(data_dir, id);
    Ok(())
}

/// What a test event got.
#[derive(Debug)]
pub struct TestSent {
    /// The test message's id.
    pub message: String,
    /// What came of it, judged as every delivery is ([`super::send::verdict`]).
    pub verdict: super::send::Verdict,
}

/// Sends `id` a signed test event about the served snapshot, outside the
/// outbox, and logs the attempt with the others.
pub async fn send_test(
    data_dir: &Path,
    id: &str,
    settings: &DeliverSettings,
    now: Timestamp,
) -> Result<TestSent, ManageError> {
    let endpoint = Endpoints::new(data_dir).get(id)?;
    let head = SnapshotStore::new(data_dir).load_current().ok().flatten();
    let message = format!("msg_test_{}", crate::random::random_token(8));
    let event = Event {
        id: &message,
        event_type: TEST_EVENT,
        timestamp: now,
        record: None,
        sequence: head.as_ref().map(|s| s.sequence),
        generated_at: head.as_ref().map(|s| s.generated_at),
        reminder: None,
        previous_window: None,
        completion: None,
    };
    let contact = settings.contact.as_deref();
    let answer = if endpoint.format.is_for_people() {
        let words = super::message::test_message(&message, endpoint.language);
        super::send::send_message(contact, &endpoint, &words, &message).await
    } else {
        super::send::send(contact, &endpoint, &event).await
    };
    let sent = TestSent {
        message,
        verdict: super::send::verdict(endpoint.format, &answer),
    };
    log::append(
        data_dir,
        &log::Attempt {
            endpoint: id.to_owned(),
            event: TEST_EVENT.to_owned(),
            message: sent.message.clone(),
            at: now,
            attempt: 1,
            status: sent.verdict.status,
            error: sent.verdict.error.clone(),
            outcome: if sent.verdict.delivered {
                log::Outcome::Delivered
            } else {
                log::Outcome::Failed
            },
            next_retry_at: None,
        },
    );
    Ok(sent)
}

/// One delivery pass (`webhook deliver --once`) under the deliverer lock,
/// waited for at most `lock_timeout`.
pub async fn deliver_pending(
    data_dir: &Path,
    settings: DeliverSettings,
    lock_timeout: Duration,
) -> Result<deliver::PassReport, crate::durable::LockError> {
    let lock = deliver::lock(data_dir, lock_timeout, "resetctl webhook deliver --once")?;
    Ok(deliver::deliver_once(data_dir, settings, &lock).await)
}
