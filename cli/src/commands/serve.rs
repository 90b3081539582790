//! `resetctl serve`: bind, print the address, serve until a signal.

use std::net::SocketAddr;
use std::time::Duration;

use resetctl::api::{serve, ServeOptions};
use resetctl::reload::WatchMode;

use crate::args::{ServeArgs, WatchArg};
use crate::exit::{CliError, Code};
use crate::output::print;
use crate::settings::Settings;

/// How long in-flight requests get after SIGINT/SIGTERM.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

pub fn run(settings: &Settings, args: &ServeArgs) -> Result<(), CliError> {
    let listen: SocketAddr = match (args.listen, settings.file.listen.as_deref()) {
        (Some(addr), _) => addr,
        (None, Some(text)) => text.parse().map_err(|_| {
            CliError::new(
                Code::Usage,
                format!("config file: listen = {text:?} is not an address like 127.0.0.1:8080"),
            )
        })?,
        (None, None) => SocketAddr::from(([127, 0, 0, 1], 8080)),
    };
    let options = ServeOptions {
        data_dir: settings.data_dir.clone(),
        watch: match args.watch.unwrap_or(WatchArg::Auto) {
            WatchArg::Auto => WatchMode::Auto,
            WatchArg::Poll => WatchMode::Poll,
        },
        panic_on_query: std::env::var("RESETCTL_TEST_PANIC_QUERY").ok(),
        limits: crate::limits::resolve(&args.limits, &settings.file)?,
        mcp_allowed_origins: args.mcp_allow_origin.clone(),
        republish: args.republish.then(|| {
            let every =
                std::time::Duration::from_secs_f64(args.republish_every.unwrap_or(15.0).max(0.1));
            (settings.publish(), every)
        }),
    };
    // `--now` freezes the server's clock (tests and demos); otherwise the system clock.
    let clock = settings.clock();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Code::IoErr, format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
            CliError::new(Code::Unavailable, format!("cannot listen on {listen}: {e}"))
        })?;
        let local = listener
            .local_addr()
            .map_err(|e| CliError::new(Code::IoErr, e.to_string()))?;
        print(&format!("listening on http://{local}\n"))?;
        tracing::info!(data_dir = %options.data_dir.display(), "listening on http://{local}");
        for (name, value) in options.limits.describe() {
            tracing::info!("{name}: {value}");
        }
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutting down: no new connections, finishing in-flight requests");
            let _ = stop_tx.send(true);
        });
        let mut drained = stop_rx.clone();
        let mut stop = stop_rx;
        let server = serve(listener, options, clock, async move {
            let _ = stop.wait_for(|s| *s).await;
        });
        tokio::select! {
            result = server => result.map_err(|e| CliError::new(Code::Usage, e))?,
            _ = async {
                let _ = drained.wait_for(|s| *s).await;
                tokio::time::sleep(DRAIN_TIMEOUT).await;
            } => tracing::warn!("connections still open after {DRAIN_TIMEOUT:?}; exiting"),
        }
        Ok(())
    })
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
