//! Logging to stderr through `tracing`: `RUST_LOG` if set, else the `log`
//! setting (whose default is its row's, in `resetctl::config`). The access log is the `resetctl::access` target.
//! The Redis Cluster client's routine slot-refresh warnings are left out
//! unless the filter names `redis`.
//! `--log-format json` writes the same events and fields as one JSON
//! object per line (`timestamp`, `level`, `target`, `fields`), for log
//! shippers; text is for people (colours only on a terminal), and every
//! message and field value in it is written through
//! [`Shown`](crate::output::Shown), so text from an upstream or a client
//! cannot add a log line of its own.

use tracing_subscriber::EnvFilter;

use resetctl::settings::LogFormat;

/// Installs the subscriber once, its filter replaceable by [`set_filter`].
pub fn init(flag: &str, format: LogFormat) {
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter_of(flag))
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => {
            let builder = builder
                .fmt_fields(one_line_fields())
                .with_ansi(std::io::stderr().is_terminal())
                .with_filter_reloading();
            remember(builder.reload_handle());
            builder.try_init()
        }
        LogFormat::Json => {
            let builder = builder
                .json()
                .with_current_span(false)
                .with_filter_reloading();
            remember(builder.reload_handle());
            builder.try_init()
        }
    };
}

/// Keeps `handle` for [`set_filter`].
fn remember<S: 'static>(handle: tracing_subscriber::reload::Handle<EnvFilter, S>) {
    let _ = RELOAD.set(Box::new(move |f| {
        handle.reload(f).map_err(|e| e.to_string())
    }));
}

/// Replaces the installed subscriber's filter.
type Reload = Box<dyn Fn(EnvFilter) -> Result<(), String> + Send + Sync>;

static RELOAD: std::sync::OnceLock<Reload> = std::sync::OnceLock::new();

/// Applies the `log` setting `flag` read again (a reload): `false` when
/// `RUST_LOG` is set, which wins over it as at start.
pub fn set_filter(flag: &str) -> bool {
    if std::env::var("RUST_LOG").is_ok_and(|v| !v.is_empty()) {
        return false;
    }
    if let Some(reload) = RELOAD.get() {
        if let Err(e) = reload(filter_of(flag)) {
            tracing::warn!("cannot change the log filter: {e}");
        }
    }
    true
}

/// `RUST_LOG` if set, else `flag` (the `log` setting); the Redis Cluster
/// client's routine warnings left out unless it names `redis`.
fn filter_of(flag: &str) -> EnvFilter {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| flag.to_owned());
    let quiet_cluster = !filter.contains("redis");
    let mut filter = EnvFilter::try_new(&filter).unwrap_or_else(|e| {
        // Only RUST_LOG can be refused here: the `log` setting was checked.
        let fallback = resetctl::config::FileConfig::defaults().log();
        eprintln!("resetctl: ignoring log filter {filter:?} ({e}); using {fallback}");
        EnvFilter::new(fallback)
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
    filter
}

/// The text format's fields: as tracing writes them (`message`, then
/// `name=value`, space-delimited), each value on its one line.
fn one_line_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
        let value = crate::output::Shown(format!("{value:?}"));
        if field.name() == "message" {
            write!(writer, "{value}")
        } else {
            write!(writer, "{field}={value}")
        }
    })
    .delimited(" ")
}
