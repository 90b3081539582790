//! `resetctl serve`: bind, print the address, serve until a signal.

use std::net::SocketAddr;
use std::time::Duration;

use resetctl::api::serve;
use resetctl::preflight::Occasion;

use crate::args::ServeArgs;
use crate::exit::CliError;
use crate::output::{print, shown};
use crate::service_manager;
use crate::settings::Settings;

/// Says at start, where the operator reads it, that nothing is published
/// in the data dir `serve` looks at, naming it (absolute) and whether it
/// existed: a mistyped `--data-dir` is then found in the first log line,
/// not by a browser's 503. The server still starts, and serves the first
/// snapshot published there the moment it lands.
fn warn_if_nothing_published(settings: &Settings) {
    let store = settings.store();
    if !matches!(store.current_sequence(), Ok(None)) {
        return;
    }
    let dir = std::path::absolute(&settings.data_dir).unwrap_or_else(|_| settings.data_dir.clone());
    let existed = settings.data_dir.exists();
    tracing::warn!(
        "nothing is published in {}{}: every data request is answered 503 and the pages say so \
         until a snapshot is published there (resetctl seed, record or sync); is this the data dir you meant?",
        dir.display(),
        if existed {
            ""
        } else {
            " (it did not exist; it is made now, to watch for snapshots)"
        }
    );
}

/// `serve --check`: every effective setting and where it came from, then
/// what start would try ([`resetctl::preflight::check`], the one check
/// start and a reload make too); exits as `serve` would fail, without serving.
fn check(settings: &Settings) -> Result<(), CliError> {
    let shown = resetctl::settings::effective::effective(settings, settings.config_path.as_deref());
    let width = shown
        .iter()
        .map(|e| e.key.len() + 3 + e.value.len())
        .max()
        .unwrap_or(0)
        + 2;
    let mut out = format!(
        "# the settings `resetctl serve` would use (config file: {})\n",
        settings
            .config_path
            .as_deref()
            .map_or_else(|| "none".to_owned(), |p| p.display().to_string())
    );
    for e in &shown {
        let line = shown!("{} = {}", e.key, e.value);
        // `line` is shown already; the padding goes around it.
        out.push_str(&format!("{line:<width$}# {}\n", shown!("{}", e.source)));
    }
    print(&out)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::io(format!("cannot start the runtime: {e}")))?;
    let runnable = runtime.block_on(resetctl::preflight::check(
        settings,
        Occasion::Check,
        Default::default(),
    ))?;
    let mut report = String::new();
    for line in &runnable.report {
        report.push_str(&shown!("# {}\n", line));
    }
    report.push_str("# the settings are good\n");
    print(&report)
}

pub fn run(
    settings: &Settings,
    args: &ServeArgs,
    reread: impl Fn() -> Result<Settings, CliError> + Send + Sync + 'static,
) -> Result<(), CliError> {
    if args.check {
        return check(settings);
    }
    let resetctl::settings::serve::ServeSettings {
        republish, options, ..
    } = settings.serve.clone();
    ensure_open_files(options.connections.max_connections);
    args.moved.warn();
    let delivery = settings.delivery();
    // `--now` freezes the server's clock (tests and demos); otherwise the system clock.
    let clock = settings.clock();
    // Before any thread starts: it unsets the socket-activation variables.
    let passed = service_manager::passed_listeners()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::io(format!("cannot start the runtime: {e}")))?;
    let started = settings.clone();
    let served = runtime.block_on(async move {
        // From here on a SIGHUP reloads (it no longer ends the process).
        let hangups = super::reload::hangups()?;
        // What `serve --check` and a reload try, tried and kept: a
        // configuration either of them refuses does not start.
        let runnable = resetctl::preflight::check(settings, Occasion::Start, passed).await?;
        let limiter = runnable.limiter;
        let (listener, local, admin) = announce(runnable.listeners.expect("bound at start"))?;
        say_started(settings, &options, local);
        let stop_rx = stop_on_signal();
        // Standalone mode: the republisher runs beside the server, which only reads.
        let republisher = republish.map(|every| {
            tokio::spawn(resetctl::standalone::republish_periodically(
                settings.store(),
                settings.publish(),
                every,
                clock.clone(),
            ))
        });
        // The webhook deliverer, when this process holds the data dir's deliverer lock.
        let deliverer = tokio::spawn(resetctl::webhook::deliver::run(
            settings.data_dir.clone(),
            delivery,
            "resetctl serve".to_owned(),
            stop_rx.clone(),
        ));
        let drained = stop_rx.clone();
        let mut stop = stop_rx;
        let status = format!("serving on http://{local}");
        let (live_tx, live_rx) = tokio::sync::oneshot::channel();
        let reloader = tokio::spawn(super::reload::on_hangup(
            started,
            reread,
            hangups,
            live_rx,
            status.clone(),
        ));
        let ready = move |live| {
            service_manager::ready(&status);
            let _ = live_tx.send(live);
        };
        let server = serve(
            listener,
            admin,
            options,
            limiter,
            clock,
            ready,
            async move {
                let _ = stop.wait_for(|s| *s).await;
            },
        );
        let drain = Duration::from_secs_f64(settings.values.drain_timeout());
        serve_until_drained(server, drained, drain).await;
        if let Some(task) = republisher {
            task.abort();
        }
        deliverer.abort();
        reloader.abort();
        Ok(())
    });
    // Exit without waiting for blocking work still running: compressing a
    // view's bodies can take seconds on a loaded machine, and nothing else
    // there needs finishing (every file is written atomically, so a write
    // cut short leaves the last good one).
    runtime.shutdown_background();
    served
}

/// Says where `serve` listens (`local`), which data dir it serves and
/// its quota, and that nothing is published there yet if so.
fn say_started(settings: &Settings, options: &resetctl::api::ServeOptions, local: SocketAddr) {
    warn_if_nothing_published(settings);
    tracing::info!(data_dir = %options.data_dir.display(), "listening on http://{local}");
    for (name, value) in options.limits.describe() {
        tracing::info!("{name}: {value}");
    }
}

/// A flag that turns true at the first SIGTERM or SIGINT, once the service
/// manager and the log are told the server is stopping.
fn stop_on_signal() -> tokio::sync::watch::Receiver<bool> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        service_manager::stopping();
        tracing::info!("shutting down: no new connections, finishing in-flight requests");
        let _ = stop_tx.send(true);
    });
    stop_rx
}

/// Runs `server` until it ends, or until `drain` (`drain-timeout`) after
/// `stopping` turned true (connections still open then are left).
async fn serve_until_drained(
    server: impl std::future::Future<Output = ()>,
    mut stopping: tokio::sync::watch::Receiver<bool>,
    drain: Duration,
) {
    tokio::select! {
        () = server => {}
        _ = async {
            let _ = stopping.wait_for(|s| *s).await;
            tokio::time::sleep(drain).await;
        } => tracing::warn!("connections still open after {drain:?}; exiting"),
    }
}

/// Raises the soft open-file limit so it can hold `max_connections` (plus
/// the files the server itself keeps open), up to the hard limit; says what
/// to set when the hard limit is lower.
fn ensure_open_files(max_connections: usize) {
    let wanted = max_connections as u64 + 64;
    match rlimit::increase_nofile_limit(wanted) {
        Ok(got) if got >= wanted => {}
        Ok(got) => tracing::warn!(
            "the open-file limit is {got}, below the {wanted} that --max-connections {max_connections} needs: \
             past it, accepts fail until connections close; raise it (systemd: LimitNOFILE={wanted}) or lower --max-connections"
        ),
        Err(e) => tracing::warn!("cannot read or raise the open-file limit: {e}"),
    }
}

/// Prints (stdout) and logs the address of each listener bound.
fn announce(
    listeners: resetctl::preflight::Listeners,
) -> Result<
    (
        tokio::net::TcpListener,
        SocketAddr,
        Option<tokio::net::TcpListener>,
    ),
    CliError,
> {
    let (listener, local) = listeners.api;
    print(&format!("listening on http://{local}\n"))?;
    if let Some(admin) = &listeners.admin {
        let at = admin
            .local_addr()
            .map_err(|e| CliError::io(e.to_string()))?;
        print(&format!("admin listening on http://{at}\n"))?;
        tracing::info!("admin (metrics, healthz, export) listening on http://{at}");
    }
    Ok((listener, local, listeners.admin))
}

pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing a SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
