//! `resetctl webhook …`: manage endpoints, send a test, show attempts, run
//! the deliverer. Each subcommand is one library call.

use resetctl::webhook::deliver;
use resetctl::webhook::endpoint::NewEndpoint;
use resetctl::webhook::manage::{self, DeliveryChange};
use resetctl::webhook::request::TEST_EVENT;
use resetctl::webhook::{log, Endpoints};

use crate::args::{SetArgs, WebhookCommand};
use crate::exit::CliError;
use crate::output::{json, print, shown};
use crate::settings::Settings;

/// How many attempts `deliveries` shows by default.
const DEFAULT_LIMIT: usize = 20;

/// An endpoint's reminder leads as lists show them: `60m,10m` or `off`.
fn leads_text(remind: Option<&resetctl::remind::Leads>) -> String {
    remind.map_or_else(|| "off".to_owned(), |l| l.to_text())
}

/// What an endpoint is told of, and in which words, as `list` shows it:
/// `reminders 60m,10m, zh, Asia/Shanghai`.
fn reminder_summary(
    remind: Option<&resetctl::remind::Leads>,
    language: resetctl::site::i18n::Lang,
    time_zone: Option<&str>,
) -> String {
    shown!(
        "reminders {}, {}, {}",
        leads_text(remind),
        language.segment(),
        time_zone.unwrap_or("UTC")
    )
}

/// An endpoint's delivery settings, one per line.
fn delivery_lines(endpoint: &resetctl::webhook::Endpoint) -> String {
    let contact = match &endpoint.user_agent_contact {
        Some(contact) => contact.as_deref().unwrap_or("none"),
        None => "the delivering process's",
    };
    shown!(
        "reminders:   {}\nlanguage:    {}\ntime zone:   {}\nprivate targets: {}\ntimeout:     {} s\nrecord pages: {}\ncontact:     {}\n",
        leads_text(endpoint.remind.as_ref())
            + if endpoint.remind.is_some() {
                " before a window starts, then its start and end"
            } else {
                ""
            },
        endpoint.language.segment(),
        endpoint.time_zone.as_deref().unwrap_or("UTC"),
        if endpoint.allow_private_targets {
            "allowed"
        } else {
            "refused"
        },
        endpoint.timeout_seconds,
        endpoint.record_pages.as_deref().unwrap_or("none"),
        contact,
    )
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::io(format!("cannot start the runtime: {e}")))
}

pub fn run(settings: &Settings, command: WebhookCommand) -> Result<(), CliError> {
    match command {
        WebhookCommand::Add {
            url,
            format,
            kind,
            events,
            remind,
            lang,
            tz,
            plan,
            description,
        } => add(
            settings,
            NewEndpoint {
                url,
                format: format.unwrap_or_default(),
                kind,
                events,
                remind,
                language: lang,
                time_zone: tz,
                plan,
                description,
                allow_private_targets: settings.endpoints.allow_private_targets,
                timeout_seconds: settings.endpoints.timeout_seconds,
                record_pages: settings.endpoints.record_pages.clone(),
                user_agent_contact: settings.endpoints.user_agent_contact.clone(),
            },
        ),
        WebhookCommand::List { json: as_json } => list(settings, as_json),
        WebhookCommand::Show { id, json: as_json } => show(settings, id, as_json),
        WebhookCommand::Set(args) => set(settings, args),
        WebhookCommand::Remove { id } => remove(settings, id),
        WebhookCommand::Disable { id } => disable(settings, id),
        WebhookCommand::Enable { id } => enable(settings, id),
        WebhookCommand::Test { id, moved } => test(settings, id, moved),
        WebhookCommand::Deliveries {
            id,
            limit,
            json: as_json,
        } => deliveries(settings, id, limit, as_json),
        WebhookCommand::Deliver { once, moved } => deliver_changes(settings, once, moved),
    }
}

/// `webhook add`.
fn add(settings: &Settings, endpoint: NewEndpoint) -> Result<(), CliError> {
    let endpoint = runtime()?.block_on(manage::add(
        &settings.data_dir,
        endpoint,
        settings.now,
        settings.lock_timeout,
    ))?;
    let mut out = shown!("{}\n", endpoint.id);
    if let Some(secret) = &endpoint.secret {
        out.push_str(&shown!(
            "secret: {}\n(shown once: receivers verify the webhook-signature header with it)\n",
            secret
        ));
    }
    print(&out)
}

/// `webhook list`.
fn list(settings: &Settings, as_json: bool) -> Result<(), CliError> {
    let summaries = resetctl::webhook::summaries(&settings.data_dir)?;
    if as_json {
        return print(&json(&summaries));
    }
    if summaries.is_empty() {
        return print("no webhook endpoints\n");
    }
    let mut out = String::new();
    if let Some(why) = summaries.iter().find_map(|s| s.held.as_ref()) {
        out.push_str(&shown!("held, sending nothing: {}\n", why));
    }
    for s in summaries {
        out.push_str(&shown!(
            "{}  {:<8}  {:<8}  {}  delivered {}, pending {}, failed {}; {}\n",
            s.id,
            s.format.as_str(),
            match (s.enabled, &s.held) {
                (true, Some(_)) => "held",
                (true, None) => "enabled",
                (false, _) => "disabled",
            },
            s.url,
            s.delivered,
            s.pending,
            s.failed,
            reminder_summary(s.remind.as_ref(), s.language, s.time_zone.as_deref()),
        ));
    }
    print(&out)
}

/// `webhook show`.
fn show(settings: &Settings, id: String, as_json: bool) -> Result<(), CliError> {
    let endpoint = Endpoints::new(&settings.data_dir).get(&id)?;
    let summary = resetctl::webhook::summaries(&settings.data_dir)?
        .into_iter()
        .find(|s| s.id == id);
    if as_json {
        let mut value = serde_json::to_value(&endpoint).expect("plain data");
        value["url"] = resetctl::webhook::shown_target(&endpoint).into();
        value["delivery"] = serde_json::to_value(&summary).expect("plain data");
        return print(&json(&value));
    }
    let mut out = shown!(
            "id:          {}\nurl:         {}\nformat:      {}\nkind:        {}\nevents:      {}\nplan:        {}\ndescription: {}\nstatus:      {}\ncreated:     {}\n",
            endpoint.id,
            resetctl::webhook::shown_target(&endpoint),
            endpoint.format.as_str(),
            endpoint.kind,
            if endpoint.events.is_empty() { "all".to_owned() } else { endpoint.events.join(", ") },
            match (&endpoint.plan, &endpoint.refused_plan) {
                (_, Some(refused)) => format!("{refused:?}, refused: see status"),
                (Some(plan), None) => plan.as_str().to_owned(),
                (None, None) => "any".to_owned(),
            },
            endpoint.description.as_deref().unwrap_or("-"),
            match (&endpoint.enabled, &endpoint.disabled_reason) {
                (true, _) => "enabled".to_owned(),
                (false, Some(why)) => shown!("disabled ({})", why),
                (false, None) => "disabled".to_owned(),
            },
            endpoint.created_at,
        );
    if let Some(secret) = &endpoint.secret {
        out.push_str(&shown!("secret:      {}\n", secret));
    }
    out.push_str(&delivery_lines(&endpoint));
    if let Some(s) = summary {
        out.push_str(&shown!(
            "delivered:   {}\npending:     {}\nfailed:      {}\n",
            s.delivered,
            s.pending,
            s.failed
        ));
        if let Some(why) = &s.held {
            out.push_str(&shown!("held:        sending nothing: {}\n", why));
        }
        if let Some(at) = s.next_retry_at {
            out.push_str(&shown!("next retry:  {}\n", at));
        }
    }
    print(&out)
}

/// `webhook set`.
fn set(settings: &Settings, args: SetArgs) -> Result<(), CliError> {
    let pages = args
        .public_base_url
        .as_deref()
        .map(|text| {
            resetctl::settings::serve::parse_public_base_url(text)
                .map(|base| base.as_str().to_owned())
                .map_err(|e| CliError::usage(e.to_string()))
        })
        .transpose()?;
    let change = DeliveryChange {
        allow_private_targets: (args.allow_private_targets || args.no_allow_private_targets)
            .then_some(args.allow_private_targets),
        timeout_seconds: args.webhook_timeout,
        record_pages: (pages.is_some() || args.no_public_base_url).then_some(pages),
        user_agent_contact: (args.contact.is_some() || args.no_contact).then_some(args.contact),
        remind: (args.remind.is_some() || args.no_remind).then_some(args.remind),
        language: args.lang,
        time_zone: (args.tz.is_some() || args.no_tz).then_some(args.tz),
        plan: (args.plan.is_some() || args.no_plan).then_some(args.plan),
    };
    let id = args.id;
    let endpoint = manage::set_delivery(&settings.data_dir, &id, change, settings.lock_timeout)?;
    print(&format!("{id}\n{}", delivery_lines(&endpoint)))
}

/// `webhook remove`.
fn remove(settings: &Settings, id: String) -> Result<(), CliError> {
    manage::remove(&settings.data_dir, &id, settings.lock_timeout)?;
    print(&format!("removed {id}\n"))
}

/// `webhook disable`.
fn disable(settings: &Settings, id: String) -> Result<(), CliError> {
    manage::set_enabled(&settings.data_dir, &id, false, settings.lock_timeout)?;
    print(&format!("disabled {id}\n"))
}

/// `webhook enable`.
fn enable(settings: &Settings, id: String) -> Result<(), CliError> {
    manage::set_enabled(&settings.data_dir, &id, true, settings.lock_timeout)?;
    print(&format!("enabled {id}\n"))
}

/// `webhook test`.
fn test(
    settings: &Settings,
    id: String,
    moved: crate::args::MovedDeliveryArgs,
) -> Result<(), CliError> {
    moved.warn();
    let delivery = settings.delivery();
    let sent = runtime()?.block_on(manage::send_test(
        &settings.data_dir,
        &id,
        &delivery,
        settings.now,
    ))?;
    let message = &sent.message;
    let verdict = &sent.verdict;
    match (verdict.status, &verdict.error) {
        (Some(status), _) if verdict.delivered => {
            print(&format!("{id}: {TEST_EVENT} {message} answered {status}\n"))
        }
        (Some(status), Some(why)) => Err(CliError::unavailable(format!(
            "{id}: {TEST_EVENT} {message} answered {status}, {why}"
        ))),
        (Some(status), None) => Err(CliError::unavailable(format!(
            "{id}: {TEST_EVENT} {message} answered {status}"
        ))),
        (None, why) => Err(CliError::unavailable(format!(
            "{id}: {TEST_EVENT} {message} failed: {}",
            why.as_deref().unwrap_or("no answer")
        ))),
    }
}

/// `webhook deliveries`.
fn deliveries(
    settings: &Settings,
    id: Option<String>,
    limit: Option<usize>,
    as_json: bool,
) -> Result<(), CliError> {
    if let Some(id) = &id {
        Endpoints::new(&settings.data_dir).get(id)?;
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
            (Some(status), Some(why)) => shown!("{} {}", status, why),
            (Some(status), None) => status.to_string(),
            (None, Some(e)) => shown!("error: {}", e),
            (None, None) => "-".to_owned(),
        };
        let next = a
            .next_retry_at
            .map_or(String::new(), |t| shown!("  next retry {}", t));
        out.push_str(&shown!(
            "{}  {}  {}  {}  attempt {}  {}  {}{}\n",
            a.at,
            a.endpoint,
            a.event,
            a.message,
            a.attempt,
            a.outcome.as_str(),
            answer,
            next
        ));
    }
    print(&out)
}

/// `webhook deliver`.
fn deliver_changes(
    settings: &Settings,
    once: bool,
    moved: crate::args::MovedDeliveryArgs,
) -> Result<(), CliError> {
    moved.warn();
    let delivery = settings.delivery();
    if once {
        let report = runtime()?.block_on(manage::deliver_pending(
            &settings.data_dir,
            delivery,
            settings.lock_timeout,
        ))?;
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
