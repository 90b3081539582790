//! The endpoints an operator registers, kept in `webhooks/endpoints.json`
//! (with their secrets: the file is made readable by its owner only) and
//! written atomically under the data-dir lock like every other file.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::durable::{write_private, AtomicWriteError, DataDirLock};
use crate::model::Timestamp;
use crate::model::{KindFilter, PlanId};

use super::format::Format;
use super::outbox::OutboxEntry;

/// Every event type an endpoint can subscribe to: the changes
/// ([`crate::changes::EVENT_TYPES`]), the unconfirmed schedule, then the
/// reminders ([`crate::remind::EVENT_TYPES`]).
pub const EVENT_TYPES: [&str; 9] = [
    crate::changes::EVENT_TYPES[0],
    crate::changes::EVENT_TYPES[1],
    crate::changes::EVENT_TYPES[2],
    crate::changes::EVENT_TYPES[3],
    crate::changes::EVENT_TYPES[4],
    crate::remind::ELAPSED_EVENT_TYPE,
    crate::remind::EVENT_TYPES[0],
    crate::remind::EVENT_TYPES[1],
    crate::remind::EVENT_TYPES[2],
];

/// One registered endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// `ep_` + 16 hex digits.
    pub id: String,
    /// The target.
    pub url: String,
    /// How changes are rendered.
    pub format: Format,
    /// The kind filter whose view of the changes this endpoint gets.
    pub kind: String,
    /// Only these event types (empty: every data change, and every
    /// reminder when `remind` is set).
    #[serde(default)]
    pub events: Vec<String>,
    /// Reminders before a reset (`--remind`): the leads of `reset.upcoming`,
    /// in minutes. None: no reminder events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remind: Option<crate::remind::Leads>,
    /// The language of the ready-made formats' messages (`--lang`).
    #[serde(default)]
    pub language: crate::site::i18n::Lang,
    /// The time zone of local times in those messages (`--tz`); UTC when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// Only records whose scope is null or names this plan, `all` or `unknown`.
    #[serde(default)]
    pub plan: Option<PlanId>,
    /// A plan kept by an older version that breaks [`PlanId`]'s rule: the
    /// endpoint is read disabled, and cannot be enabled until `webhook set
    /// --plan` (or `--no-plan`) gives it a filter (see [`Endpoints::load`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_plan: Option<String>,
    /// The operator's note.
    #[serde(default)]
    pub description: Option<String>,
    /// The signing secret (standard format).
    #[serde(default)]
    pub secret: Option<String>,
    /// Whether deliveries run.
    pub enabled: bool,
    /// Why it was disabled (by the operator, or by a 410 Gone).
    #[serde(default)]
    pub disabled_reason: Option<String>,
    /// When it was added.
    pub created_at: Timestamp,
    /// The first outbox entry it gets: changes published before it was
    /// added are not sent.
    pub start: u64,
    /// Whether the target may resolve to a loopback, private or link-local
    /// address (`webhook add --allow-private-targets`). Kept here, not
    /// given to each process, so whichever process delivers agrees.
    #[serde(default)]
    pub allow_private_targets: bool,
    /// Seconds a request may take, answer included (`--webhook-timeout`).
    #[serde(default = "default_timeout_seconds")]
    pub timeout_seconds: f64,
    /// The base URL of the status site's record pages (`--public-base-url`
    /// when added, while the pages are on): messages link to the record's page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_pages: Option<String>,
    /// The contact in the `User-Agent` of its requests
    /// (`--user-agent-contact` when added, `webhook set --contact`): kept
    /// here so whichever process delivers sends the same. Absent for an
    /// endpoint added before it was kept: the delivering process's then.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub user_agent_contact: Option<Option<String>>,
}

/// A field that is present, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

impl Endpoint {
    /// The contact its requests carry: its own, or for an endpoint that
    /// keeps none, `fallback` (the delivering process's).
    pub fn contact<'a>(&'a self, fallback: Option<&'a str>) -> Option<&'a str> {
        match &self.user_agent_contact {
            Some(contact) => contact.as_deref(),
            None => fallback,
        }
    }
}

/// The range of an endpoint's request timeout, in seconds.
pub const TIMEOUT_RANGE: std::ops::RangeInclusive<f64> = 0.1..=60.0;

/// The request timeout of an endpoint that sets none: 10 s.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// An endpoint's request timeout of `seconds`, when it is within
/// [`TIMEOUT_RANGE`].
pub fn check_timeout(seconds: f64) -> Result<std::time::Duration, EndpointError> {
    if TIMEOUT_RANGE.contains(&seconds) {
        Ok(std::time::Duration::from_secs_f64(seconds))
    } else {
        Err(EndpointError::Invalid(format!(
            "webhook-timeout must be {} to {} seconds, got {seconds}",
            TIMEOUT_RANGE.start(),
            TIMEOUT_RANGE.end()
        )))
    }
}

fn default_timeout_seconds() -> f64 {
    DEFAULT_TIMEOUT.as_secs_f64()
}

impl Endpoint {
    /// Where this endpoint's requests may go.
    pub fn reach(&self) -> crate::outbound::Reach {
        crate::outbound::Reach::for_target(self.allow_private_targets)
    }

    /// The request timeout (a hand-edited value out of range reads as the default).
    pub fn timeout(&self) -> std::time::Duration {
        check_timeout(self.timeout_seconds).unwrap_or(DEFAULT_TIMEOUT)
    }

    /// The first outbox change this endpoint has not been sent yet, given
    /// its delivery `state` (none before its first delivery).
    pub fn cursor(&self, state: Option<&super::state::EndpointState>) -> u64 {
        state.map_or(0, |s| s.next).max(self.start)
    }

    /// Whether this endpoint is told about `entry`: a change or a time
    /// event of an event type it takes, of a record its `kind` concerns,
    /// for its plan; a reminder only with `remind` set and for a lead it
    /// names. A format for people skips a fulfilment that the message of
    /// its completion, which it also takes, tells.
    pub fn wants(&self, entry: &OutboxEntry) -> bool {
        if !self.takes(&entry.event_type, &entry.record, &entry.kinds) {
            return false;
        }
        let reminded = match &entry.reminder {
            None => true,
            Some(_) if !is_reminder(&entry.event_type) => true,
            Some(facts) => self
                .remind
                .as_ref()
                .is_some_and(|leads| facts.lead_minutes.is_none_or(|lead| leads.contains(lead))),
        };
        let told_with_its_completion = self.format.is_for_people()
            && entry.told_with.is_some()
            && entry.completion.as_ref().is_some_and(|completion| {
                self.takes(
                    crate::changes::Transition::Created.event_type(),
                    completion,
                    &crate::changes::filters_of(completion),
                )
            });
        reminded && !told_with_its_completion
    }

    /// Whether an event of `event_type` about `record` (heard of under
    /// the filters `kinds`) passes this endpoint's event, kind and plan
    /// filters.
    fn takes(&self, event_type: &str, record: &crate::model::Record, kinds: &[String]) -> bool {
        (self.events.is_empty() || self.events.iter().any(|e| e == event_type))
            && kinds.contains(&self.kind)
            && self
                .plan
                .as_ref()
                .is_none_or(|plan| crate::model::concerns_plan(record, plan.as_str()))
    }

    /// The time zone of its messages' local times (UTC when none, or when
    /// a hand-edited name is not one).
    pub fn zone(&self) -> chrono_tz::Tz {
        self.time_zone
            .as_deref()
            .and_then(|name| crate::civil::parse_zone(name).ok())
            .unwrap_or(chrono_tz::UTC)
    }
}

/// Whether `event_type` is a reminder (sent only to endpoints that take them).
fn is_reminder(event_type: &str) -> bool {
    crate::remind::ReminderKind::of_event_type(event_type).is_some_and(|k| k.is_reminder())
}

/// Checks that `events` and `remind` agree, and turns reminders on (with
/// the default leads) when `events` names one: the one rule of `webhook
/// add` and `webhook set`.
pub fn check_reminders(
    events: &[String],
    remind: Option<crate::remind::Leads>,
) -> Result<Option<crate::remind::Leads>, EndpointError> {
    let names_reminder = events.iter().any(|e| is_reminder(e));
    match remind {
        Some(_) if !events.is_empty() && !names_reminder => Err(EndpointError::Invalid(format!(
            "--remind sends reminder events, which --event {} leaves out; add --event reset.upcoming (or reset.window_started, reset.window_ended)",
            events.join(",")
        ))),
        Some(leads) => Ok(Some(leads)),
        None if names_reminder => Ok(Some(crate::remind::Leads::default())),
        None => Ok(None),
    }
}

/// Why endpoints could not be read, written or changed.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// Reading the file failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file is not a regular file, or over its cap.
    #[error(transparent)]
    Unfit(crate::durable::ReadError),
    /// The file is not what this version writes.
    #[error("{path} is corrupt: {why}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
    /// No endpoint has that id.
    #[error("no webhook endpoint {0}")]
    NoSuchEndpoint(String),
    /// A setting that cannot be used.
    #[error("{0}")]
    Invalid(String),
    /// A target URL that does not fit the endpoint's format.
    #[error(transparent)]
    Target(#[from] super::target::TargetError),
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    endpoints: Vec<Endpoint>,
}

/// The rule for a plan an older version kept that breaks [`PlanId`]'s
/// (it took 1 to 64 of `[a-z0-9_.-]`): the endpoint is read with no plan,
/// its stored one in `refusedPlan`, disabled with a reason that says what
/// to do, so it sends nothing rather than every plan's records. `webhook
/// set --plan` or `--no-plan` clears it; `webhook enable` refuses until then.
fn refuse_stored_plan(endpoint: &mut serde_json::Value) {
    let Some(fields) = endpoint.as_object_mut() else {
        return;
    };
    let Some(plan) = fields.get("plan").and_then(|p| p.as_str()) else {
        return;
    };
    if PlanId::parse(plan).is_some() {
        return;
    }
    let plan = plan.to_owned();
    let id = fields.get("id").and_then(|i| i.as_str()).unwrap_or("ID");
    let reason = refused_plan_reason(id, &plan);
    fields.insert("plan".into(), serde_json::Value::Null);
    fields.insert("refusedPlan".into(), plan.into());
    fields.insert("enabled".into(), false.into());
    fields.insert("disabledReason".into(), reason.into());
}

/// Why an endpoint with a refused plan is disabled, and what to do.
pub fn refused_plan_reason(id: &str, plan: &str) -> String {
    format!(
        "its plan filter {plan:?} is not {}: give it one with `resetctl webhook set {id} --plan PLAN` (or --no-plan for every plan), then enable it",
        PlanId::RULE
    )
}

/// The endpoints of one data dir.
#[derive(Debug, Clone)]
pub struct Endpoints {
    path: PathBuf,
}

/// The largest endpoints file read (an endpoint takes a few hundred bytes).
const ENDPOINTS_CAP: crate::durable::Cap = crate::durable::Cap::mib(16);

impl Endpoints {
    /// The endpoints of `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            path: crate::data_dir::DataDir::of(data_dir).endpoints(),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every endpoint, in the order they were added.
    pub fn load(&self) -> Result<Vec<Endpoint>, EndpointError> {
        let bytes = match crate::durable::read_data_file(&self.path, ENDPOINTS_CAP) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(Vec::new()),
            Err(crate::durable::ReadError::Io { path, source }) => {
                return Err(EndpointError::Read { path, source })
            }
            Err(unfit) => return Err(EndpointError::Unfit(unfit)),
        };
        let corrupt = |e: serde_json::Error| EndpointError::Corrupt {
            path: self.path.clone(),
            why: e.to_string(),
        };
        let mut file: serde_json::Value = serde_json::from_slice(&bytes).map_err(corrupt)?;
        if let Some(endpoints) = file.get_mut("endpoints").and_then(|e| e.as_array_mut()) {
            endpoints.iter_mut().for_each(refuse_stored_plan);
        }
        serde_json::from_value::<File>(file)
            .map(|f| f.endpoints)
            .map_err(corrupt)
    }

    /// One endpoint.
    pub fn get(&self, id: &str) -> Result<Endpoint, EndpointError> {
        self.load()?
            .into_iter()
            .find(|e| e.id == id)
            .ok_or_else(|| EndpointError::NoSuchEndpoint(id.to_owned()))
    }

    /// Replaces the file (owner-only from the first byte: it holds the secrets).
    pub fn save(&self, _lock: &DataDirLock, endpoints: &[Endpoint]) -> Result<(), EndpointError> {
        if let Some(dir) = self.path.parent() {
            crate::durable::create_dir_durable(dir).map_err(|source| EndpointError::Read {
                path: dir.to_owned(),
                source,
            })?;
        }
        let mut bytes = serde_json::to_vec_pretty(&File {
            endpoints: endpoints.to_vec(),
        })
        .expect("endpoints serialise");
        bytes.push(b'\n');
        // Owner-only from the temp file's creation on: it holds the secrets.
        write_private(&self.path, &bytes)?;
        Ok(())
    }

    /// Changes one endpoint under the lock; returns it as saved.
    pub fn update(
        &self,
        lock: &DataDirLock,
        id: &str,
        change: impl FnOnce(&mut Endpoint),
    ) -> Result<Endpoint, EndpointError> {
        let mut all = self.load()?;
        let endpoint = all
            .iter_mut()
            .find(|e| e.id == id)
            .ok_or_else(|| EndpointError::NoSuchEndpoint(id.to_owned()))?;
        change(endpoint);
        let saved = endpoint.clone();
        self.save(lock, &all)?;
        Ok(saved)
    }

    /// Removes one endpoint under the lock.
    pub fn remove(&self, lock: &DataDirLock, id: &str) -> Result<Endpoint, EndpointError> {
        let mut all = self.load()?;
        let index = all
            .iter()
            .position(|e| e.id == id)
            .ok_or_else(|| EndpointError::NoSuchEndpoint(id.to_owned()))?;
        let removed = all.remove(index);
        self.save(lock, &all)?;
        Ok(removed)
    }
}

/// What `webhook add` asks for.
#[derive(Debug, Clone)]
pub struct NewEndpoint {
    /// The target URL.
    pub url: String,
    /// The format.
    pub format: Format,
    /// The kind filter (`all` by default).
    pub kind: Option<String>,
    /// Event types (empty: all).
    pub events: Vec<String>,
    /// The leads of `reset.upcoming` (`--remind`).
    pub remind: Option<crate::remind::Leads>,
    /// The messages' language.
    pub language: Option<crate::site::i18n::Lang>,
    /// The messages' time zone (an IANA name).
    pub time_zone: Option<String>,
    /// A plan id.
    pub plan: Option<PlanId>,
    /// A note.
    pub description: Option<String>,
    /// Allow a loopback, private or link-local target.
    pub allow_private_targets: bool,
    /// The request timeout, in seconds ([`TIMEOUT_RANGE`]).
    pub timeout_seconds: f64,
    /// The record pages' base URL, if notifications should link to them.
    pub record_pages: Option<String>,
    /// The contact in the `User-Agent` of its requests (checked by the settings).
    pub user_agent_contact: Option<String>,
}

impl NewEndpoint {
    /// Checks the settings (not the target's addresses, see
    /// [`crate::outbound::resolve`]) and builds the endpoint.
    pub fn build(self, now: Timestamp, start: u64) -> Result<Endpoint, EndpointError> {
        let kind = self.kind.unwrap_or_else(|| "all".to_owned());
        if KindFilter::parse(&kind).is_none() {
            return Err(EndpointError::Invalid(format!(
                "--kind {kind:?} is not all, reset_scheduled or reset_completed"
            )));
        }
        for event in &self.events {
            if !EVENT_TYPES.contains(&event.as_str()) {
                return Err(EndpointError::Invalid(format!(
                    "--event {event:?} is not one of {}",
                    EVENT_TYPES.join(", ")
                )));
            }
        }
        super::target::target_server(self.format, &self.url)?;
        check_timeout(self.timeout_seconds)?;
        if let Some(zone) = &self.time_zone {
            crate::civil::parse_zone(zone).map_err(|e| EndpointError::Invalid(e.to_string()))?;
        }
        let mut events = self.events;
        events.sort();
        events.dedup();
        let remind = check_reminders(&events, self.remind)?;
        Ok(Endpoint {
            id: format!("ep_{}", crate::random::random_token(8)),
            url: self.url,
            format: self.format,
            kind,
            events,
            remind,
            language: self.language.unwrap_or_default(),
            time_zone: self.time_zone,
            plan: self.plan,
            refused_plan: None,
            description: self.description,
            secret: (self.format == Format::Standard).then(super::sign::generate_secret),
            enabled: true,
            disabled_reason: None,
            created_at: now,
            start,
            allow_private_targets: self.allow_private_targets,
            timeout_seconds: self.timeout_seconds,
            record_pages: self.record_pages,
            user_agent_contact: Some(self.user_agent_contact),
        })
    }
}
