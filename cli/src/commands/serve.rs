//! `resetctl serve`: bind, print the address, serve until a signal.

use std::net::SocketAddr;
use std::time::Duration;

use resetctl::api::{serve, ConnectionLimits, ServeOptions, StreamLimits, MIN_HEAD_BYTES};
use resetctl::config::{layer, seconds_setting};
use resetctl::feeds::BaseUrl;
use resetctl::reload::WatchMode;

use crate::args::{ServeArgs, WatchArg};
use crate::exit::{CliError, Code};
use crate::output::print;
use crate::settings::Settings;

/// How long in-flight requests get after SIGINT/SIGTERM.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// What `serve` runs with: every setting resolved (flag > env > file >
/// default) and checked, before anything is bound.
pub(super) struct ServeSettings {
    listen: String,
    admin_listen: Option<String>,
    backlog: u32,
    republish: Option<Duration>,
    options: ServeOptions,
}

/// Resolves and checks `serve`'s settings; no side effect, so every
/// subcommand runs it to check the environment and config file
/// ([`super::check_every_setting`]).
pub(super) fn resolve(settings: &Settings, args: &ServeArgs) -> Result<ServeSettings, CliError> {
    let listen = args
        .listen
        .clone()
        .or_else(|| settings.file.listen.clone())
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let admin_listen = args
        .admin_listen
        .clone()
        .or_else(|| settings.file.admin_listen.clone());
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
    let (connections, backlog) = connection_limits(settings, &args.connections)?;
    let republish = match republish {
        true => Some(seconds_setting(
            "republish-every",
            republish_every,
            0.1,
            86_400.0,
        )?),
        false => None,
    };
    let public_base_url = match args
        .public_base_url
        .as_deref()
        .or(settings.file.public_base_url.as_deref())
    {
        // A value with user info is named by its redacted form only.
        Some(text) => Some(BaseUrl::parse(text).map_err(|why| {
            CliError::new(
                Code::Usage,
                format!(
                    "public-base-url {:?} must be an absolute http:// or https:// URL without query or fragment: {why}",
                    resetctl::redact::redact_url(text)
                ),
            )
        })?),
        None => None,
    };
    let options = ServeOptions {
        data_dir: settings.data_dir.clone(),
        watch,
        limits: crate::limits::resolve(&args.limits, &settings.file)?,
        mcp_allowed_origins,
        connections,
        public_base_url,
        site: !(args.no_site || settings.file.no_site.unwrap_or(false)),
        streams: stream_limits(settings, &args.streams)?,
    };
    Ok(ServeSettings {
        listen,
        admin_listen,
        backlog,
        republish,
        options,
    })
}

pub fn run(settings: &Settings, args: &ServeArgs) -> Result<(), CliError> {
    let ServeSettings {
        listen,
        admin_listen,
        backlog,
        republish,
        options,
    } = resolve(settings, args)?;
    ensure_open_files(options.connections.max_connections);
    args.moved.warn();
    let delivery = super::webhook::delivery_settings(settings);
    // `--now` freezes the server's clock (tests and demos); otherwise the system clock.
    let clock = settings.clock();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(Code::IoErr, format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = bind(&listen, backlog).await?;
        let local = listener
            .local_addr()
            .map_err(|e| CliError::new(Code::IoErr, e.to_string()))?;
        let admin = match &admin_listen {
            Some(address) => Some(bind(address, backlog).await?),
            None => None,
        };
        print(&format!("listening on http://{local}\n"))?;
        if let Some(admin) = &admin {
            let at = admin
                .local_addr()
                .map_err(|e| CliError::new(Code::IoErr, e.to_string()))?;
            print(&format!("admin listening on http://{at}\n"))?;
            tracing::info!("admin (metrics, healthz, export) listening on http://{at}");
        }
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
        let mut drained = stop_rx.clone();
        let mut stop = stop_rx;
        let server = serve(listener, admin, options, clock, async move {
            let _ = stop.wait_for(|s| *s).await;
        });
        tokio::select! {
            result = server => result?,
            _ = async {
                let _ = drained.wait_for(|s| *s).await;
                tokio::time::sleep(DRAIN_TIMEOUT).await;
            } => tracing::warn!("connections still open after {DRAIN_TIMEOUT:?}; exiting"),
        }
        if let Some(task) = republisher {
            task.abort();
        }
        deliverer.abort();
        Ok(())
    })
}

/// The record stream settings (flag > env > file > default).
fn stream_limits(
    settings: &Settings,
    args: &crate::args::StreamArgs,
) -> Result<StreamLimits, CliError> {
    let file = &settings.file;
    let defaults = StreamLimits::default();
    let heartbeat = seconds_setting(
        "stream-heartbeat",
        layer(
            args.stream_heartbeat,
            file.stream_heartbeat,
            defaults.heartbeat.as_secs_f64(),
        ),
        0.1,
        3600.0,
    )?;
    let per_client = args
        .stream_max_per_client
        .or(file.stream_max_per_client)
        .unwrap_or(defaults.per_client);
    let total = args
        .stream_max
        .or(file.stream_max)
        .map_or(defaults.total, |n| n as usize);
    if per_client == 0 || total == 0 {
        return Err(CliError::new(
            Code::Usage,
            "stream-max-per-client and stream-max must be at least 1",
        ));
    }
    Ok(StreamLimits {
        per_client,
        total,
        heartbeat,
    })
}

/// The connection settings (flag > env > file > default) and the backlog.
fn connection_limits(
    settings: &Settings,
    args: &crate::args::ConnectionArgs,
) -> Result<(ConnectionLimits, u32), CliError> {
    let file = &settings.file;
    let defaults = ConnectionLimits::default();
    let header_timeout = seconds_setting(
        "header-timeout",
        layer(
            args.header_timeout,
            file.header_timeout,
            defaults.header_timeout.as_secs_f64(),
        ),
        0.1,
        3600.0,
    )?;
    let body_timeout = seconds_setting(
        "body-timeout",
        layer(
            args.body_timeout,
            file.body_timeout,
            defaults.body_timeout.as_secs_f64(),
        ),
        0.1,
        3600.0,
    )?;
    let count = |flag: Option<u64>, file: Option<u64>, default: usize, name: &str| {
        let n = flag.or(file).map_or(default, |n| n as usize);
        if n == 0 {
            return Err(CliError::new(
                Code::Usage,
                format!("{name} must be at least 1"),
            ));
        }
        Ok(n)
    };
    let max_head_bytes = count(
        args.max_head_bytes,
        file.max_head_bytes,
        defaults.max_head_bytes,
        "max-head-bytes",
    )?;
    if max_head_bytes < MIN_HEAD_BYTES {
        return Err(CliError::new(
            Code::Usage,
            format!("max-head-bytes must be at least {MIN_HEAD_BYTES}, got {max_head_bytes}"),
        ));
    }
    let limits = ConnectionLimits {
        header_timeout,
        body_timeout,
        max_connections: count(
            args.max_connections,
            file.max_connections,
            defaults.max_connections,
            "max-connections",
        )?,
        max_connections_per_ip: count(
            args.max_connections_per_ip,
            file.max_connections_per_ip,
            defaults.max_connections_per_ip,
            "max-connections-per-ip",
        )?,
        max_head_bytes,
    };
    let backlog = args.listen_backlog.or(file.listen_backlog).unwrap_or(1024);
    Ok((limits, backlog))
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

/// Binds `listen` (IP:PORT, or HOST:PORT tried address by address) with
/// `backlog`: a name that does not resolve is a usage error, an address in
/// use exit 71.
async fn bind(listen: &str, backlog: u32) -> Result<tokio::net::TcpListener, CliError> {
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
        let socket = match address {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
        };
        let bound = socket.and_then(|socket| {
            socket.set_reuseaddr(true)?;
            socket.bind(address)?;
            socket.listen(backlog)
        });
        match bound {
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
