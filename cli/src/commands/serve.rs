//! `resetctl serve`: bind, print the address, serve until a signal.

use std::net::SocketAddr;
use std::time::Duration;

use resetctl::api::{serve, ServeOptions};
use resetctl::config::{layer, seconds_setting};
use resetctl::reload::WatchMode;

use crate::args::{ServeArgs, WatchArg};
use crate::exit::{CliError, Code};
use crate::output::print;
use crate::settings::Settings;

/// How long in-flight requests get after SIGINT/SIGTERM.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

pub fn run(settings: &Settings, args: &ServeArgs) -> Result<(), CliError> {
    let listen = args
        .listen
        .clone()
        .or_else(|| settings.file.listen.clone())
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let watch = match (args.watch, settings.file.watch.as_deref()) {
        (Some(WatchArg::Auto), _) | (None, None | Some("auto")) => WatchMode::Auto,
        (Some(WatchArg::Poll), _) | (None, Some("poll")) => WatchMode::Poll,
        (None, Some(other)) => {
            return Err(CliError::new(
                Code::Usage,
                format!("config file: watch = {other:?} is not auto or poll"),
            ))
        }
    };
    let mcp_allowed_origins = if args.mcp_allow_origin.is_empty() {
        settings.file.mcp_allow_origin.clone().unwrap_or_default()
    } else {
        args.mcp_allow_origin.clone()
    };
    let republish = args.republish || settings.file.republish.unwrap_or(false);
    let republish_every = layer(args.republish_every, settings.file.republish_every, 15.0);
    let options = ServeOptions {
        data_dir: settings.data_dir.clone(),
        watch,
        panic_on_query: std::env::var("RESETCTL_TEST_PANIC_QUERY").ok(),
        limits: crate::limits::resolve(&args.limits, &settings.file)?,
        mcp_allowed_origins,
        republish: match republish {
            true => Some((
                settings.publish(),
                seconds_setting("republish-every", republish_every, 0.1, 86_400.0)?,
            )),
            false => None,
        },
    };
    // `--now` freezes the server's clock (tests and demos); otherwise the system clock.
    let clock = settings.clock();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Code::IoErr, format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = bind(&listen).await?;
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

/// Binds `listen` (IP:PORT, or HOST:PORT tried address by address): a name
/// that does not resolve is a usage error, an address in use exit 71.
async fn bind(listen: &str) -> Result<tokio::net::TcpListener, CliError> {
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host(listen)
        .await
        .map_err(|e| {
            CliError::new(
                Code::Usage,
                format!("listen {listen:?} is not an address like 127.0.0.1:8080 or localhost:8080: {e}"),
            )
        })?
        .collect();
    let mut last = None;
    for address in addresses {
        match tokio::net::TcpListener::bind(address).await {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    let why = last.map_or_else(|| "the name has no address".to_owned(), |e| e.to_string());
    Err(CliError::new(
        Code::Listen,
        format!("cannot listen on {listen}: {why}"),
    ))
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
