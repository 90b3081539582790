//! Logging to stderr through `tracing`: `RUST_LOG` if set, else `--log`,
//! else `info`. The access log is the `resetctl::access` target.
//! The Redis Cluster client's routine slot-refresh warnings are left out
//! unless the filter names `redis`.
//! `--log-format json` writes the same events and fields as one JSON
//! object per line (`timestamp`, `level`, `target`, `fields`), for log
//! shippers; text is for people (colours only on a terminal).

use tracing_subscriber::EnvFilter;

use resetctl::settings::LogFormat;

/// Installs the subscriber once.
pub fn init(flag: Option<&str>, format: LogFormat) {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.is_empty())
        .or_else(|| flag.map(str::to_owned))
        .unwrap_or_else(|| "info".to_owned());
    let quiet_cluster = !filter.contains("redis");
    let mut filter = EnvFilter::try_new(&filter).unwrap_or_else(|e| {
        eprintln!("resetctl: ignoring log filter {filter:?} ({e}); using info");
        EnvFilter::new("info")
    });
    if quiet_cluster {
        // The cluster client warns on every slot refresh, which a moving
        // slot (a reshard) makes routine; what fails reaches the log as
        // resetctl's own (rate-limited) 503 warning. A filter naming
        // `redis` shows them.
        filter = filter.add_directive(
            "redis::cluster_handling=error"
                .parse()
                .expect("a valid directive"),
        );
    }
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().with_current_span(false).try_init(),
    };
}
