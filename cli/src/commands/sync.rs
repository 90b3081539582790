//! `resetctl sync`: resolve the settings, run once or as a daemon, map the
//! outcome to a line and an exit code.

use std::time::Duration;

use resetctl::config::seconds_setting;
use resetctl::redact::redact_url;
use resetctl::sync::fetch::{FetchSettings, UpstreamRequest};
use resetctl::sync::state::SourceSettings;
use resetctl::sync::{run_daemon, sync_once, SyncError, SyncOutcome, SyncSettings};
use resetctl::upstream::PUBLIC_FEED;

use crate::args::SyncArgs;
use crate::exit::{CliError, Code};
use crate::output::print;
use crate::settings::Settings;
use resetctl::config::FileConfig;

/// The default sync interval.
const DEFAULT_INTERVAL_MINUTES: u32 = 60;

/// Bounds of the fetch timeouts, in seconds.
const MIN_TIMEOUT_SECONDS: f64 = 0.001;
const MAX_TIMEOUT_SECONDS: f64 = 3600.0;

fn usage(message: impl Into<String>) -> CliError {
    CliError::new(Code::Usage, message)
}

/// Flags > env > config file > defaults, validated.
pub(super) fn resolve(settings: &Settings, args: &SyncArgs) -> Result<SyncSettings, CliError> {
    let file = &settings.file;
    let url_text = args
        .upstream
        .clone()
        .or_else(|| file.upstream.clone())
        .ok_or_else(|| usage("no upstream: pass --upstream URL (or set RESETCTL_UPSTREAM, or upstream = \"…\" in the config file)"))?;
    let preset = (url_text == PUBLIC_FEED.name).then_some(PUBLIC_FEED);
    let url_text = preset.map_or(url_text, |p| p.url.to_owned());
    // The URL may carry a secret: errors name its redacted form only.
    let shown = redact_url(&url_text);
    let url = reqwest::Url::parse(&url_text)
        .map_err(|e| usage(format!("--upstream {shown} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(usage(format!(
            "--upstream {shown} must be an http:// or https:// URL"
        )));
    }
    let public_url = args
        .public_url
        .clone()
        .or_else(|| file.public_url.clone())
        .unwrap_or_else(|| shown.clone());
    let public = reqwest::Url::parse(&public_url)
        .map_err(|e| usage(format!("--public-url {public_url:?} is not a URL: {e}")))?;
    if public.password().is_some() || !public.username().is_empty() {
        return Err(usage(
            "--public-url must not carry userinfo: it is published as dataSource.url",
        ));
    }
    let headers = upstream_headers(args, file)?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let origin = url.origin().ascii_serialization();
    // Hourly by default: the public feed's maintainers ask mirrors not to poll more often.
    let interval_minutes = args
        .interval_minutes
        .or(file.interval_minutes)
        .unwrap_or(DEFAULT_INTERVAL_MINUTES);
    if interval_minutes < 5 {
        return Err(usage(format!(
            "--interval-minutes must be at least 5 (the spec's minimum), got {interval_minutes}"
        )));
    }
    let max_age_minutes = args
        .max_age_minutes
        .or(file.max_age_minutes)
        .unwrap_or(interval_minutes.saturating_mul(3));
    if max_age_minutes == 0 {
        return Err(usage("--max-age-minutes must be at least 1"));
    }
    let page_url = args
        .page_url
        .clone()
        .or_else(|| file.page_url.clone())
        .unwrap_or(format!("{origin}/"));
    reqwest::Url::parse(&page_url)
        .map_err(|e| usage(format!("--page-url {page_url:?} is not a URL: {e}")))?;
    let defaults = FetchSettings::default();
    // A timeout of zero would fail every fetch; more than an hour is a typo.
    let seconds = |name: &'static str, flag: Option<f64>, file: Option<f64>, default: Duration| {
        flag.or(file).map_or(Ok(default), |value| {
            seconds_setting(name, value, MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS)
        })
    };
    let fetch = FetchSettings {
        connect_timeout: seconds(
            "connect-timeout",
            args.connect_timeout,
            file.connect_timeout,
            defaults.connect_timeout,
        )?,
        timeout: seconds("timeout", args.timeout, file.timeout, defaults.timeout)?,
        max_body_bytes: args
            .max_body_bytes
            .or(file.max_body_bytes)
            .unwrap_or(defaults.max_body_bytes),
        max_redirects: args
            .max_redirects
            .or(file.max_redirects)
            .unwrap_or(defaults.max_redirects),
        contact: settings.user_agent_contact.clone(),
    };
    let cap_minutes = args
        .backoff_cap_minutes
        .or(file.backoff_cap_minutes)
        .unwrap_or(360);
    Ok(SyncSettings {
        source: SourceSettings {
            source_id: args
                .source_id
                .clone()
                .or_else(|| file.source_id.clone())
                .or_else(|| preset.map(|p| p.source_id.to_owned()))
                .unwrap_or_else(|| host.clone()),
            name: args
                .source_name
                .clone()
                .or_else(|| file.source_name.clone())
                .or_else(|| preset.map(|p| p.source_name.to_owned()))
                .unwrap_or(host),
            url: public_url,
            page_url,
            interval_minutes,
            max_age_minutes,
        },
        upstream: UpstreamRequest {
            url: url_text,
            headers,
        },
        fetch,
        backoff_cap: Duration::from_secs(u64::from(cap_minutes.max(1)) * 60),
        force: args.force,
        lock_timeout: settings.lock_timeout,
        keep: settings.keep,
    })
}

/// `--upstream-header "NAME: VALUE"` (flag, env or file), checked; a bad
/// one is named by its header name only (its value may be a secret).
fn upstream_headers(args: &SyncArgs, file: &FileConfig) -> Result<Vec<(String, String)>, CliError> {
    let given = if args.upstream_header.is_empty() {
        file.upstream_header.clone().unwrap_or_default()
    } else {
        args.upstream_header.clone()
    };
    given
        .iter()
        .map(|text| {
            let (name, value) = text.split_once(':').ok_or_else(|| {
                usage("--upstream-header must look like \"NAME: VALUE\" (for example \"Authorization: Bearer …\")")
            })?;
            let (name, value) = (name.trim(), value.trim());
            reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| usage(format!("--upstream-header: {name:?} is not a header name")))?;
            reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                usage(format!("--upstream-header {name}: the value is not a valid header value"))
            })?;
            Ok((name.to_owned(), value.to_owned()))
        })
        .collect()
}

fn describe(outcome: &SyncOutcome, url: &str) -> String {
    match outcome {
        SyncOutcome::Published { sequence, records } => {
            format!("published snapshot {sequence} ({records} records) from {url}")
        }
        SyncOutcome::Unchanged => format!("fetched {url}: content unchanged, no new snapshot"),
        SyncOutcome::NotModified => format!("{url} not modified (304); sync time updated"),
    }
}

fn to_cli_error(err: SyncError) -> CliError {
    let code = match &err {
        SyncError::BackingOff { .. } | SyncError::Busy(_) => Code::TempFail,
        SyncError::WrongMode(_) => Code::Usage,
        SyncError::Fetch { .. } => Code::Unavailable,
        SyncError::Invalid { .. } => Code::DataErr,
        SyncError::State(_) | SyncError::Lock(_) => Code::IoErr,
        SyncError::Snapshot(_) => {
            return CliError::from(match err {
                SyncError::Snapshot(e) => e,
                _ => unreachable!(),
            })
        }
    };
    CliError::new(code, err.to_string())
}

pub fn run(settings: &Settings, args: &SyncArgs) -> Result<(), CliError> {
    let sync = resolve(settings, args)?;
    if args.check {
        let fetch = &sync.fetch;
        return print(&crate::output::json(&serde_json::json!({
            "source": sync.source,
            "upstreamHeaders": sync.upstream.headers.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            "fetch": {
                "connectTimeoutSeconds": fetch.connect_timeout.as_secs_f64(),
                "timeoutSeconds": fetch.timeout.as_secs_f64(),
                "maxBodyBytes": fetch.max_body_bytes,
                "maxRedirects": fetch.max_redirects,
            },
            "backoffCapMinutes": sync.backoff_cap.as_secs() / 60,
        })));
    }
    let clock = settings.clock();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Code::IoErr, format!("cannot start the runtime: {e}")))?;
    let data_dir = settings.data_dir.clone();
    if args.once {
        let outcome = runtime
            .block_on(sync_once(&data_dir, &sync, clock.as_ref()))
            .map_err(to_cli_error)?;
        return print(&format!("{}\n", describe(&outcome, &sync.source.url)));
    }
    tracing::info!(
        upstream = %sync.source.url,
        "sync daemon: every {} min, back-off capped at {} min",
        sync.source.interval_minutes,
        sync.backoff_cap.as_secs() / 60
    );
    args.moved.warn();
    let delivery = super::webhook::delivery_settings(settings);
    runtime.block_on(async {
        // The webhook deliverer, when this process holds the data dir's deliverer lock.
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let deliverer = tokio::spawn(resetctl::webhook::deliver::run(
            data_dir.clone(),
            delivery,
            "resetctl sync --daemon".to_owned(),
            stop_rx,
        ));
        run_daemon(
            &data_dir,
            &sync,
            clock,
            crate::commands::serve::shutdown_signal(),
            |result| match result {
                Ok(outcome) => tracing::info!("{}", describe(outcome, &sync.source.url)),
                Err(e) => tracing::warn!("{e}"),
            },
        )
        .await;
        let _ = stop_tx.send(true);
        deliverer.abort();
    });
    tracing::info!("sync daemon stopped");
    Ok(())
}
