//! `resetctl sync`: resolve the settings, run once or as a daemon, map the
//! outcome to a line and an exit code.

use resetctl::settings::sync::NO_UPSTREAM;
use resetctl::sync::{run_daemon, sync_once, SyncOutcome, SyncSettings};

use crate::args::SyncArgs;
use crate::exit::CliError;
use crate::output::{print, shown};
use crate::settings::Settings;

fn describe(outcome: &SyncOutcome, url: &str) -> String {
    match outcome {
        SyncOutcome::Published { sequence, records } => shown!(
            "published snapshot {} ({} records) from {}",
            sequence,
            records,
            url
        ),
        SyncOutcome::Unchanged => shown!("fetched {}: content unchanged, no new snapshot", url),
        SyncOutcome::NotModified => shown!("{} not modified (304); sync time updated", url),
    }
}

pub fn run(settings: &Settings, args: &SyncArgs) -> Result<(), CliError> {
    let sync = SyncSettings {
        force: args.force,
        ..settings
            .sync
            .clone()
            .ok_or_else(|| CliError::usage(NO_UPSTREAM))?
    };
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
            // Every key as `serve --check` shows it, with where it came from.
            "settings": resetctl::settings::effective::effective(settings, settings.config_path.as_deref()),
        })));
    }
    let clock = settings.clock();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::io(format!("cannot start the runtime: {e}")))?;
    let data_dir = settings.data_dir.clone();
    if args.once {
        let outcome = runtime
            .block_on(sync_once(&data_dir, &sync, clock.as_ref()))
            .map_err(CliError::from)?;
        return print(&format!("{}\n", describe(&outcome, &sync.source.url)));
    }
    tracing::info!(
        upstream = %sync.source.url,
        "sync daemon: every {} min, back-off capped at {} min",
        sync.source.interval_minutes,
        sync.backoff_cap.as_secs() / 60
    );
    args.moved.warn();
    let delivery = settings.delivery();
    let ended = runtime.block_on(async {
        // The webhook deliverer, when this process holds the data dir's deliverer lock.
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let deliverer = tokio::spawn(resetctl::webhook::deliver::run(
            data_dir.clone(),
            delivery,
            "resetctl sync --daemon".to_owned(),
            stop_rx,
        ));
        let ended = run_daemon(
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
        ended
    });
    // A refusal no attempt can change ends the daemon as it ends `--once`
    // (its exit code, so a unit fails instead of ending quietly).
    ended.map_err(CliError::from)?;
    tracing::info!("sync daemon stopped");
    Ok(())
}
