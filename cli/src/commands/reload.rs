//! `serve`'s reload: on SIGHUP (`systemctl reload`, a raw `kill -HUP`)
//! the settings are read again as at start and checked as `serve --check`
//! checks them, then what a running server can change is applied
//! ([`resetctl::settings::reload`] says which keys); the rest is named in
//! a warning and waits for a restart. A file `--check` refuses (a quota
//! store that does not answer among them) is refused whole, in one log
//! line saying why, and the running settings are kept.

use resetctl::api::{LiveSettings, QuotaChange};
use resetctl::preflight::{Occasion, Passed};
use resetctl::settings::reload::changes;

use crate::exit::CliError;
use crate::service_manager;
use crate::settings::Settings;

/// Listens for SIGHUP from now on (so one no longer ends the process).
pub fn hangups() -> Result<tokio::signal::unix::Signal, CliError> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .map_err(|e| CliError::io(format!("cannot install a SIGHUP handler: {e}")))
}

/// Applies the settings `reread` returns on each of `hangups`, once the
/// server hands over its [`LiveSettings`]; `status` is what the service
/// manager is told after each.
pub async fn on_hangup(
    started: Settings,
    reread: impl Fn() -> Result<Settings, CliError>,
    mut hangups: tokio::signal::unix::Signal,
    live: tokio::sync::oneshot::Receiver<LiveSettings>,
    status: String,
) {
    let Ok(live) = live.await else { return };
    let mut applied = started.clone();
    while hangups.recv().await.is_some() {
        service_manager::reloading();
        match reload(&started, &applied, &reread, &live).await {
            Ok(read) => applied = read,
            Err(e) => tracing::error!(
                "reload refused, the running settings are kept: {}",
                e.message
            ),
        }
        service_manager::ready(&status);
    }
}

/// One reload: the settings read again and checked as `serve --check`
/// checks them ([`resetctl::preflight::check`]: listeners, files, the
/// quota store answering), then, only once everything passed, what a
/// running server can change applied; returns them.
async fn reload(
    started: &Settings,
    applied: &Settings,
    reread: impl Fn() -> Result<Settings, CliError>,
    live: &LiveSettings,
) -> Result<Settings, CliError> {
    let read = reread()?;
    let runnable = resetctl::preflight::check(&read, Occasion::Check, Passed::default()).await?;
    let live_changes = changes(applied, &read);
    let limits = &read.serve.options.limits;
    let mut done = Vec::new();
    if live_changes.log {
        if crate::logging::set_filter(&read.log) {
            done.push("log");
        } else {
            tracing::warn!("log changed, but RUST_LOG is set and wins over it");
        }
    }
    if live_changes.limiter {
        live.set_quota(limits, QuotaChange::Limiter(runnable.limiter));
        done.push("quota (counted afresh) and flood guard");
    } else if live_changes.flood || live_changes.max_clients {
        let (flood, max_clients) = (live_changes.flood, live_changes.max_clients);
        live.set_quota(limits, QuotaChange::Guards { flood, max_clients });
        if flood {
            done.push("flood-guard (every client's quota kept)");
        }
        if max_clients {
            done.push("rate-limit-max-clients (every client's quota kept)");
        }
    }
    if live_changes.client_keys {
        live.set_client_keys(limits.client_keys.clone());
        done.push("client keys (from every connection's next request)");
    }
    if live_changes.site_name {
        live.set_site_name(read.serve.options.site_name.clone());
        done.push("site-name");
    }
    for (key, running, new) in changes(started, &read).kept {
        tracing::warn!(
            "{key} changed to {new}; it applies at the next restart (serving with {running})"
        );
    }
    if done.is_empty() {
        tracing::info!("settings read again: nothing to apply");
    } else {
        tracing::info!("settings read again: applied {}", done.join(", "));
    }
    Ok(read)
}
