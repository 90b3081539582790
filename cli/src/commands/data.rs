//! `seed`, `publish`, `export` and `status`.

use std::io::Read;
use std::path::Path;

use resetctl::standalone;
use resetctl::status::{status_report, StatusReport};

use crate::exit::CliError;
use crate::output::{json, print, shown};
use crate::settings::Settings;

pub fn seed(settings: &Settings, file: Option<&Path>) -> Result<(), CliError> {
    let (name, bytes) = match file {
        None => (
            "bundled history".to_owned(),
            resetctl::BUNDLED_SEED_HISTORY.to_vec(),
        ),
        Some(path) => read_input(path)?,
    };
    let store = settings.store();
    let report = standalone::seed(&store, &name, &bytes, settings.publish())?;
    print(&format!(
        "seeded from {name}: {} added, {} already present; snapshot {} is current ({} records)\n",
        report.added,
        report.unchanged,
        report.snapshot.sequence,
        report.snapshot.records.len()
    ))
}

pub fn publish(settings: &Settings) -> Result<(), CliError> {
    let snapshot = standalone::publish(&settings.store(), settings.publish())?;
    print(&format!(
        "published snapshot {} ({} records) at {}\n",
        snapshot.sequence,
        snapshot.records.len(),
        snapshot.published_at
    ))
}

pub fn export(settings: &Settings, output: Option<&Path>) -> Result<(), CliError> {
    let store = settings.store();
    let snapshot = store
        .load_current_explained()?
        .ok_or_else(|| nothing_published(settings, None))?;
    let mut text =
        serde_json::to_string_pretty(&snapshot.to_document()).expect("records serialise");
    text.push('\n');
    match output {
        None => print(&text),
        Some(path) => {
            resetctl::durable::write_atomic(path, text.as_bytes())
                .map_err(|e| CliError::io(e.to_string()))?;
            eprintln!(
                "exported snapshot {} ({} records) to {}",
                snapshot.sequence,
                snapshot.records.len(),
                path.display()
            );
            Ok(())
        }
    }
}

pub fn status(settings: &Settings, as_json: bool) -> Result<(), CliError> {
    let configured = settings.sync.as_ref().map(|s| s.source.url.as_str());
    let report = status_report(&settings.store(), settings.now, configured)?;
    let limits = settings.serve.options.limits.describe();
    let webhooks = resetctl::webhook::summaries(&settings.data_dir)?;
    if as_json {
        let mut value = serde_json::to_value(&report).expect("plain data");
        let quota: serde_json::Map<String, serde_json::Value> = limits
            .into_iter()
            .map(|(k, v)| (camel_case(k), v.into()))
            .collect();
        value["limits"] = quota.into();
        value["webhooks"] = serde_json::to_value(&webhooks).expect("plain data");
        print(&json(&value))?;
    } else {
        let mut text = render(&report);
        text.push_str("limits:\n");
        for (name, value) in limits {
            text.push_str(&format!("  {:<17}{value}\n", format!("{name}:")));
        }
        text.push_str(&render_webhooks(&webhooks));
        print(&text)?;
    }
    if report.snapshot.is_none() {
        return Err(nothing_published(settings, Some(&report)));
    }
    if let Some(first) = report.unreadable.first() {
        let unfit = report.unreadable.iter().any(|f| f.unfit);
        return Err(CliError::unreadable(unfit, first.problem.clone()));
    }
    if report.stale {
        return Err(CliError::stale(stale_in_words(report.sync.as_ref())));
    }
    if report.check_overdue {
        let at = report
            .snapshot
            .as_ref()
            .and_then(|s| s.last_successful_check_at)
            .map_or_else(String::new, |at| at.to_string());
        return Err(CliError::stale(format!(
                "the last successful check ({at}) is more than {} hours old, so the status page says Unknown: check the source, then run `resetctl mark-checked`",
                resetctl::site::verdict::TRUST_HOURS
            ),
        ));
    }
    Ok(())
}

/// Why a mirror is stale, and where to look: the last sync failed (its
/// error), or none has run within the maximum age (is one scheduled?).
fn stale_in_words(sync: Option<&resetctl::status::SyncReport>) -> String {
    let Some(sync) = sync else {
        return "the served data is stale".to_owned();
    };
    let since = sync
        .synced_at
        .map_or_else(|| "never".to_owned(), |at| at.to_string());
    match &sync.last_error {
        Some(error) if sync.consecutive_failures > 0 => format!(
            "the served data is stale: the last sync failed ({error}); the last good one was at {since}"
        ),
        _ => format!(
            "the served data is stale: no sync has succeeded since {since}, more than {} minutes ago; \
             is the sync timer or daemon running? (`systemctl list-timers resetctl-sync.timer`)",
            sync.source.max_age_minutes
        ),
    }
}

/// The webhook lines of `status`: one per endpoint, failed deliveries first-class.
fn render_webhooks(webhooks: &[resetctl::webhook::EndpointSummary]) -> String {
    if webhooks.is_empty() {
        return String::new();
    }
    let mut out = "webhooks:\n".to_owned();
    if let Some(why) = webhooks.iter().find_map(|w| w.held.as_ref()) {
        out.push_str(&shown!("  held, sending nothing: {}\n", why));
    }
    for w in webhooks {
        out.push_str(&shown!(
            "  {}  {}  {}  {}: delivered {}, pending {}, {} failed\n",
            w.id,
            w.format.as_str(),
            w.url,
            match (w.enabled, &w.held) {
                (true, Some(_)) => "held",
                (true, None) => "enabled",
                (false, _) => "disabled",
            },
            w.delivered,
            w.pending,
            w.failed
        ));
        if let Some(last) = w.recent_failures.last() {
            out.push_str(&shown!(
                "    last failed: {} {} at {} ({})\n",
                last.event,
                last.message,
                last.at,
                last.last_error
            ));
        }
        if let Some(at) = w.next_retry_at {
            out.push_str(&shown!("    retrying; next attempt {}\n", at));
        }
    }
    out
}

/// The data dir exists; else the error that names it (exit 69), and,
/// when a deployed instance's config or data dir exists elsewhere, where.
pub fn require_data_dir(settings: &Settings) -> Result<(), CliError> {
    if settings.data_dir.exists() {
        return Ok(());
    }
    let mut message = format!(
        "the data dir {} does not exist: is the path right? (`--data-dir`, `RESETCTL_DATA_DIR` or `data-dir` in the config file)",
        settings.data_dir.display()
    );
    if let Some(hint) =
        resetctl::config::elsewhere_hint(&settings.data_dir, settings.config_path.as_deref())
    {
        message.push_str(&format!("; is the instance elsewhere? {hint}"));
    }
    Err(CliError::unavailable(message))
}

/// Nothing is published in the data dir: what to run, or, when a deployed
/// instance's config or data dir exists elsewhere, where to look instead.
/// Exit 69 with what to do, in words that fit the data dir: one that does
/// not exist (a mistyped path must not be seeded), a mirror whose syncs
/// have not succeeded, a standalone instance with unpublished entries, an
/// empty one, or an instance that may be elsewhere.
fn nothing_published(settings: &Settings, report: Option<&StatusReport>) -> CliError {
    let dir = settings.data_dir.display();
    if let Err(missing) = require_data_dir(settings) {
        return missing;
    }
    let what = format!("nothing is published yet in {dir}");
    let sync = report.and_then(|r| r.sync.as_ref());
    let ledger = report.is_some_and(|r| r.ledger.is_some());
    let configured = report.and_then(|r| r.configured_upstream.as_deref());
    let message = match (sync, ledger) {
        (Some(sync), _) if configured.is_some_and(|c| c != sync.source.url) => format!(
            "{what}: it is set to mirror {}, which no sync has tried yet; run `resetctl sync --once`",
            configured.unwrap_or_default()
        ),
        (Some(sync), _) => format!(
            "{what}: it mirrors {}, and no sync has succeeded yet{}; run `resetctl sync --once` when the upstream answers",
            sync.source.url,
            sync.last_error_detail
                .as_deref()
                .or(sync.last_error.as_deref())
                .map(|e| format!(" (the last one: {e})"))
                .unwrap_or_default()
        ),
        (None, true) => format!("{what}: the ledger has entries; run `resetctl publish`"),
        (None, false) => match resetctl::config::elsewhere_hint(
            &settings.data_dir,
            settings.config_path.as_deref(),
        ) {
            None => format!(
                "{what}; run `resetctl seed` (a standalone instance) or `resetctl sync --upstream URL --once` (a mirror)"
            ),
            Some(hint) => format!("{what}; is the instance elsewhere? {hint}"),
        },
    };
    CliError::unavailable(message)
}

fn render(report: &StatusReport) -> String {
    let mut out = shown!("data dir:  {}\n", report.data_dir.display());
    let Some(s) = &report.snapshot else {
        out.push_str("snapshot:  none published\n");
        out.push_str(&render_ledger(report));
        out.push_str(&render_sync(report));
        return out;
    };
    let counts = |map: &std::collections::BTreeMap<&str, usize>| {
        map.iter()
            .map(|(k, v)| shown!("{} {}", k, v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push_str(&shown!("mode:      {}\n", report.mode.unwrap_or("-")));
    out.push_str(&shown!(
        "snapshot:  #{} ({})\n",
        s.sequence,
        s.path.display()
    ));
    out.push_str(&shown!(
        "generated: {} ({} ago)\n",
        s.generated_at,
        human_age(s.age_seconds)
    ));
    out.push_str(&shown!("published: {}\n", s.published_at));
    out.push_str(&shown!(
        "checked:   {}{}\n",
        s.last_successful_check_at
            .map_or("never".to_owned(), |t| t.to_string()),
        if report.check_overdue {
            " (overdue: the status page says Unknown)"
        } else {
            ""
        }
    ));
    out.push_str(&shown!(
        "records:   {} ({})\n",
        s.records,
        counts(&s.by_kind)
    ));
    out.push_str(&shown!("schedules: {}\n", counts(&s.by_schedule_state)));
    out.push_str(&shown!("versions:  {} on disk\n", s.versions_on_disk));
    out.push_str(&render_ledger(report));
    out.push_str(&render_sync(report));
    out
}

fn render_ledger(report: &StatusReport) -> String {
    let mut out = String::new();
    for file in &report.unreadable {
        out.push_str(&shown!("UNREADABLE: {}\n", file.problem));
    }
    let Some(l) = &report.ledger else {
        return out;
    };
    out.push_str(&shown!(
        "ledger:    {} entries (last entry {}), published through entry {}\n",
        l.entries,
        l.last_entry,
        l.published_through
            .map_or("none".to_owned(), |n| n.to_string())
    ));
    if l.unpublished > 0 {
        out.push_str(&shown!(
            "  unpublished:     {} entries recorded but not published; run `resetctl publish`\n",
            l.unpublished
        ));
    }
    if l.torn_lines > 0 {
        out.push_str(&shown!(
            "  torn lines:      {} (an interrupted append; kept and skipped)\n",
            l.torn_lines
        ));
    }
    if let Some(corrupt) = &l.corrupt {
        out.push_str(&shown!("  CORRUPT:         {}\n", corrupt));
    }
    out
}

fn render_sync(report: &StatusReport) -> String {
    let Some(sync) = &report.sync else {
        return String::new();
    };
    let s = sync;
    let time =
        |t: Option<resetctl::model::Timestamp>| t.map_or("never".to_owned(), |t| t.to_string());
    let status = sync.status;
    let mut out = shown!(
        "sync:      {} ({})\n",
        status,
        match sync.status {
            resetctl::model::DataSourceStatus::Ok => "the cache is fresh",
            resetctl::model::DataSourceStatus::Stale =>
                "serving the last good snapshot; the last sync failed or it is too old",
            resetctl::model::DataSourceStatus::Error => "no usable cache and the last sync failed",
            resetctl::model::DataSourceStatus::Pending => "waiting for the first sync",
        }
    );
    match report.configured_upstream.as_deref() {
        Some(configured) if configured != s.source.url => out.push_str(&shown!(
            "  upstream:        {} (configured; no sync has run against it yet)\n  last synced from: {} ({})\n",
            configured,
            s.source.url,
            s.source.name
        )),
        _ => out.push_str(&shown!(
            "  upstream:        {} ({})\n",
            s.source.url,
            s.source.name
        )),
    }
    out.push_str(&shown!(
        "  interval:        {} min (stale after {} min)\n",
        s.source.interval_minutes,
        s.source.max_age_minutes
    ));
    out.push_str(&shown!("  last synced:     {}\n", time(s.synced_at)));
    out.push_str(&shown!("  last fetched:    {}\n", time(s.fetched_at)));
    out.push_str(&shown!(
        "  upstream data:   generated {}\n",
        time(s.upstream_generated_at)
    ));
    out.push_str(&shown!(
        "  last error:      {}\n",
        s.last_error_detail
            .as_deref()
            .or(s.last_error.as_deref())
            .unwrap_or("none")
    ));
    if s.last_error_detail.is_some() {
        out.push_str(&shown!(
            "  published as:    {}\n",
            s.last_error.as_deref().unwrap_or("none")
        ));
    }
    out.push_str(&shown!(
        "  failures:        {} in a row\n",
        s.consecutive_failures
    ));
    out.push_str(&shown!(
        "  next attempt:    {}\n",
        s.next_attempt_at.map_or("any time".to_owned(), |t| shown!(
            "not before {} (backing off)",
            t
        ))
    ));
    if let Some(monitor) = &s.upstream_monitor {
        out.push_str(&shown!(
            "  feed monitor:    {}{}\n",
            monitor.status,
            monitor
                .error_code
                .as_deref()
                .map(|c| shown!(" ({})", c))
                .unwrap_or_default()
        ));
    }
    if !s.skipped.is_empty() {
        out.push_str(&shown!("  skipped records: {}\n", s.skipped.join("; ")));
    }
    if let Some(origin) = &s.origin {
        // A mirror of another instance serves that instance's dataSource.
        out.push_str(&match &origin.data_source {
            Some(d) => shown!(
                "  origin:          {} ({}), {}, synced {}\n",
                d.url,
                d.name,
                d.status,
                time(d.synced_at)
            ),
            None => "  origin:          a standalone instance (no dataSource is served)\n".into(),
        });
    }
    out
}

fn human_age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        7200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// `trusted proxies` → `trustedProxies`.
fn camel_case(label: &str) -> String {
    let mut words = label.split(' ');
    let mut out = words.next().unwrap_or_default().to_owned();
    for word in words {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

pub fn convert(settings: &Settings, file: &Path) -> Result<(), CliError> {
    let (_, bytes) = read_input(file)?;
    let doc = resetctl::upstream::decode_upstream(&bytes, settings.now)
        .map_err(|e| CliError::data(format!("{}: {e}", file.display())))?;
    let (document, skipped) = match doc {
        resetctl::upstream::UpstreamDocument::Records(d) => (*d, Vec::new()),
        resetctl::upstream::UpstreamDocument::Feed(f) => (
            resetctl::document::RecordsDocument {
                generated_at: f.generated_at,
                last_successful_check_at: f.last_successful_check_at,
                records: f.records,
                data_source: None,
            },
            f.skipped,
        ),
    };
    for item in &skipped {
        crate::output::warn(&format!("skipped {item}"));
    }
    print(&json(&document))
}

/// Reads a file, or stdin for "-"; returns a name for messages and the bytes.
fn read_input(path: &Path) -> Result<(String, Vec<u8>), CliError> {
    if path == Path::new("-") {
        let cap = resetctl::document::DOCUMENT_CAP.bytes;
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(cap + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::io(format!("cannot read stdin: {e}")))?;
        if bytes.len() as u64 > cap {
            return Err(CliError::data(format!(
                "stdin holds more than {cap} bytes, the most a document may hold"
            )));
        }
        return Ok(("stdin".to_owned(), bytes));
    }
    let bytes = resetctl::durable::read_existing(path, resetctl::document::DOCUMENT_CAP)?;
    Ok((path.display().to_string(), bytes))
}
