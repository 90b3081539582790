//! `resetctl webhook …`: manage endpoints, send a test, show attempts, run
//! the deliverer. Each subcommand is one library call.

use resetctl::outbound;
use resetctl::webhook::deliver::{self, DeliverSettings};
use resetctl::webhook::endpoint::NewEndpoint;
use resetctl::webhook::request::{Event, TEST_EVENT};
use resetctl::webhook::{log, Endpoints, Outbox};

use crate::args::{DeliveryArgs, WebhookCommand};
use crate::exit::{CliError, Code};
use crate::output::{json, print};
use crate::settings::Settings;

/// How many attempts `deliveries` shows by default.
const DEFAULT_LIMIT: usize = 20;

/// What the deliverer process brings (everything else is kept with each endpoint).
pub fn delivery_settings(settings: &Settings) -> DeliverSettings {
    DeliverSettings {
        clock: settings.clock(),
        lock_timeout: settings.lock_timeout,
        contact: settings.user_agent_contact.clone(),
    }
}

/// How a new endpoint is delivered to: flags > env > config file > defaults.
pub(super) struct EndpointDelivery {
    allow_private_targets: bool,
    timeout_seconds: f64,
    record_pages: Option<String>,
}

pub(super) fn endpoint_delivery(
    settings: &Settings,
    args: &DeliveryArgs,
) -> Result<EndpointDelivery, CliError> {
    let timeout_seconds = args
        .webhook_timeout
        .or(settings.file.webhook_timeout)
        .unwrap_or(deliver::DEFAULT_TIMEOUT.as_secs_f64());
    resetctl::webhook::endpoint::check_timeout(timeout_seconds)?;
    let base = args
        .public_base_url
        .as_deref()
        .or(settings.file.public_base_url.as_deref());
    let record_pages = match base {
        Some(_) if settings.file.no_site.unwrap_or(false) => None,
        Some(text) => Some(record_pages_base(text)?),
        None => None,
    };
    Ok(EndpointDelivery {
        allow_private_targets: args.allow_private_targets
            || settings.file.allow_private_targets.unwrap_or(false),
        timeout_seconds,
        record_pages,
    })
}

/// The record pages' base URL as kept with an endpoint.
fn record_pages_base(text: &str) -> Result<String, CliError> {
    resetctl::feeds::BaseUrl::parse(text)
        .map(|base| base.as_str().to_owned())
        .map_err(|why| {
            CliError::new(
                Code::Usage,
                format!(
                    "public-base-url {:?} must be an absolute http:// or https:// URL without query or fragment: {why}",
                    resetctl::redact::redact_url(text)
                ),
            )
        })
}

/// An endpoint's delivery settings, one per line.
fn delivery_lines(endpoint: &resetctl::webhook::Endpoint) -> String {
    format!(
        "private targets: {}\ntimeout:     {} s\nrecord pages: {}\n",
        if endpoint.allow_private_targets {
            "allowed"
        } else {
            "refused"
        },
        endpoint.timeout_seconds,
        endpoint.record_pages.as_deref().unwrap_or("none"),
    )
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Code::IoErr, format!("cannot start the runtime: {e}")))
}

pub fn run(settings: &Settings, command: WebhookCommand) -> Result<(), CliError> {
    let endpoints = Endpoints::new(&settings.data_dir);
    let store = settings.store();
    match command {
        WebhookCommand::Add {
            url,
            format,
            kind,
            events,
            plan,
            description,
            delivery,
        } => {
            let delivery = endpoint_delivery(settings, &delivery)?;
            let format = format.unwrap_or_default();
            let parsed = outbound::parse_target(&url)
                .map_err(|e| CliError::new(Code::Usage, e.to_string()))?;
            let reach = outbound::Reach::for_target(delivery.allow_private_targets);
            runtime()?
                .block_on(outbound::resolve(&parsed, reach))
                .map_err(|e| match e {
                    outbound::OutboundError::Refused { .. } => CliError::new(
                        Code::Usage,
                        format!("{e} (allow such a target with --allow-private-targets)"),
                    ),
                    e => CliError::new(Code::Usage, e.to_string()),
                })?;
            let lock = store.lock(settings.lock_timeout, "resetctl webhook add")?;
            let start = Outbox::new(&settings.data_dir)
                .index()
                .map_err(|e| CliError::new(Code::IoErr, e.to_string()))?
                .next;
            let endpoint = NewEndpoint {
                url,
                format,
                kind,
                events,
                plan,
                description,
                allow_private_targets: delivery.allow_private_targets,
                timeout_seconds: delivery.timeout_seconds,
                record_pages: delivery.record_pages,
            }
            .build(settings.now, start)?;
            let mut all = endpoints.load()?;
            all.push(endpoint.clone());
            endpoints.save(&lock, &all)?;
            drop(lock);
            let mut out = format!("{}\n", endpoint.id);
            if let Some(secret) = &endpoint.secret {
                out.push_str(&format!(
                    "secret: {secret}\n(shown once: receivers verify the webhook-signature header with it)\n"
                ));
            }
            print(&out)
        }
        WebhookCommand::List { json: as_json } => {
            let summaries = resetctl::webhook::summaries(&settings.data_dir)?;
            if as_json {
                return print(&json(&summaries));
            }
            if summaries.is_empty() {
                return print("no webhook endpoints\n");
            }
            let mut out = String::new();
            for s in summaries {
                out.push_str(&format!(
                    "{}  {:<8}  {:<8}  {}  delivered {}, pending {}, failed {}\n",
                    s.id,
                    s.format.as_str(),
                    if s.enabled { "enabled" } else { "disabled" },
                    s.url,
                    s.delivered,
                    s.pending,
                    s.failed
                ));
            }
            print(&out)
        }
        WebhookCommand::Show { id, json: as_json } => {
            let endpoint = endpoints.get(&id)?;
            let summary = resetctl::webhook::summaries(&settings.data_dir)?
                .into_iter()
                .find(|s| s.id == id);
            if as_json {
                let mut value = serde_json::to_value(&endpoint).expect("plain data");
                value["delivery"] = serde_json::to_value(&summary).expect("plain data");
                return print(&json(&value));
            }
            let mut out = format!(
                "id:          {}\nurl:         {}\nformat:      {}\nkind:        {}\nevents:      {}\nplan:        {}\ndescription: {}\nstatus:      {}\ncreated:     {}\n",
                endpoint.id,
                endpoint.url,
                endpoint.format.as_str(),
                endpoint.kind,
                if endpoint.events.is_empty() { "all".to_owned() } else { endpoint.events.join(", ") },
                endpoint.plan.as_deref().unwrap_or("any"),
                endpoint.description.as_deref().unwrap_or("-"),
                match (&endpoint.enabled, &endpoint.disabled_reason) {
                    (true, _) => "enabled".to_owned(),
                    (false, Some(why)) => format!("disabled ({why})"),
                    (false, None) => "disabled".to_owned(),
                },
                endpoint.created_at,
            );
            if let Some(secret) = &endpoint.secret {
                out.push_str(&format!("secret:      {secret}\n"));
            }
            out.push_str(&delivery_lines(&endpoint));
            if let Some(s) = summary {
                out.push_str(&format!(
                    "delivered:   {}\npending:     {}\nfailed:      {}\n",
                    s.delivered, s.pending, s.failed
                ));
                if let Some(at) = s.next_retry_at {
                    out.push_str(&format!("next retry:  {at}\n"));
                }
            }
            print(&out)
        }
        WebhookCommand::Set {
            id,
            allow_private_targets,
            no_allow_private_targets,
            webhook_timeout,
            public_base_url,
            no_public_base_url,
        } => {
            let timeout = webhook_timeout
                .map(resetctl::webhook::endpoint::check_timeout)
                .transpose()?;
            let pages = public_base_url
                .as_deref()
                .map(record_pages_base)
                .transpose()?;
            let lock = store.lock(settings.lock_timeout, "resetctl webhook set")?;
            let endpoint = endpoints.update(&lock, &id, |e| {
                if allow_private_targets || no_allow_private_targets {
                    e.allow_private_targets = allow_private_targets;
                }
                if let Some(timeout) = timeout {
                    e.timeout_seconds = timeout.as_secs_f64();
                }
                if pages.is_some() || no_public_base_url {
                    e.record_pages = pages;
                }
            })?;
            print(&format!("{id}\n{}", delivery_lines(&endpoint)))
        }
        WebhookCommand::Remove { id } => {
            let lock = store.lock(settings.lock_timeout, "resetctl webhook remove")?;
            endpoints.remove(&lock, &id)?;
            deliver::remove_state(&settings.data_dir, &id);
            print(&format!("removed {id}\n"))
        }
        WebhookCommand::Disable { id } => {
            let lock = store.lock(settings.lock_timeout, "resetctl webhook disable")?;
            endpoints.update(&lock, &id, |e| {
                e.enabled = false;
                e.disabled_reason = Some("disabled by the operator".to_owned());
            })?;
            print(&format!("disabled {id}\n"))
        }
        WebhookCommand::Enable { id } => {
            let lock = store.lock(settings.lock_timeout, "resetctl webhook enable")?;
            endpoints.update(&lock, &id, |e| {
                e.enabled = true;
                e.disabled_reason = None;
            })?;
            print(&format!("enabled {id}\n"))
        }
        WebhookCommand::Test { id, moved } => {
            moved.warn();
            let delivery = delivery_settings(settings);
            let endpoint = endpoints.get(&id)?;
            let head = store.load_current().ok().flatten();
            let message = format!("msg_test_{}", resetctl::webhook::random_token(8));
            let event = Event {
                id: &message,
                event_type: TEST_EVENT,
                timestamp: settings.now,
                record: None,
                page: None,
                sequence: head.as_ref().map(|s| s.sequence),
                generated_at: head.as_ref().map(|s| s.generated_at),
            };
            let answer = runtime()?.block_on(deliver::send(&delivery, &endpoint, &event));
            log::append(
                &settings.data_dir,
                &log::Attempt {
                    endpoint: id.clone(),
                    event: TEST_EVENT.to_owned(),
                    message: message.clone(),
                    at: settings.now,
                    attempt: 1,
                    status: answer.as_ref().ok().copied(),
                    error: answer.as_ref().err().map(ToString::to_string),
                    outcome: match answer {
                        Ok(status) if (200..300).contains(&status) => log::Outcome::Delivered,
                        _ => log::Outcome::Failed,
                    },
                    next_retry_at: None,
                },
            );
            match answer {
                Ok(status) if (200..300).contains(&status) => {
                    print(&format!("{id}: {TEST_EVENT} {message} answered {status}\n"))
                }
                Ok(status) => Err(CliError::new(
                    Code::Unavailable,
                    format!("{id}: {TEST_EVENT} {message} answered {status}"),
                )),
                Err(e) => Err(CliError::new(
                    Code::Unavailable,
                    format!("{id}: {TEST_EVENT} {message} failed: {e}"),
                )),
            }
        }
        WebhookCommand::Deliveries {
            id,
            limit,
            json: as_json,
        } => {
            if let Some(id) = &id {
                endpoints.get(id)?;
            }
            let attempts = log::recent(
                &settings.data_dir,
                id.as_deref(),
                limit.unwrap_or(DEFAULT_LIMIT),
            );
            if as_json {
                let mut out = String::new();
                for a in &attempts {
                    out.push_str(&serde_json::to_string(a).expect("plain data"));
                    out.push('\n');
                }
                return print(&out);
            }
            if attempts.is_empty() {
                return print("no delivery attempts yet\n");
            }
            let mut out = String::new();
            for a in attempts {
                let answer = match (a.status, &a.error) {
                    (Some(status), _) => status.to_string(),
                    (None, Some(e)) => format!("error: {e}"),
                    (None, None) => "-".to_owned(),
                };
                let next = a
                    .next_retry_at
                    .map_or(String::new(), |t| format!("  next retry {t}"));
                out.push_str(&format!(
                    "{}  {}  {}  {}  attempt {}  {}  {}{next}\n",
                    a.at,
                    a.endpoint,
                    a.event,
                    a.message,
                    a.attempt,
                    a.outcome.as_str(),
                    answer
                ));
            }
            print(&out)
        }
        WebhookCommand::Deliver { once, moved } => {
            moved.warn();
            let delivery = delivery_settings(settings);
            if once {
                let lock = deliver::lock(
                    &settings.data_dir,
                    settings.lock_timeout,
                    "resetctl webhook deliver --once",
                )?;
                let report =
                    runtime()?.block_on(deliver::deliver_once(&settings.data_dir, delivery, &lock));
                return print(&format!(
                    "delivered {}, failed {}\n",
                    report.delivered, report.failed
                ));
            }
            let data_dir = settings.data_dir.clone();
            runtime()?.block_on(async move {
                let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
                tokio::spawn(async move {
                    crate::commands::serve::shutdown_signal().await;
                    let _ = stop_tx.send(true);
                });
                deliver::run(
                    data_dir,
                    delivery,
                    "resetctl webhook deliver".to_owned(),
                    stop_rx,
                )
                .await;
            });
            Ok(())
        }
    }
}
