//! Logging to stderr through `tracing`: `RUST_LOG` if set, else `--log`,
//! else `info`. The access log is the `resetctl::access` target.
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
    let filter = EnvFilter::try_new(&filter).unwrap_or_else(|e| {
        eprintln!("resetctl: ignoring log filter {filter:?} ({e}); using info");
        EnvFilter::new("info")
    });
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
