//! Logging to stderr through `tracing`: `RUST_LOG` if set, else `--log`,
//! else `info`. The access log is the `resetctl::access` target.

use tracing_subscriber::EnvFilter;

/// Installs the subscriber once.
pub fn init(flag: Option<&str>) {
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
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
