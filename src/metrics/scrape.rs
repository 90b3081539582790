//! A scrape: the state read when `/metrics` is asked (the served view,
//! the quota, streams, sync, outbox) and the exposition in either text
//! format, with the process's own families.

use prometheus_client::encoding::text;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::registry::{Registry, Unit};

use super::{add, gauge_value, process, BuildLabels, SyncStatusLabel, METRICS};

/// The state read when scraped.
#[derive(Debug, Default)]
pub struct Scrape {
    /// The served snapshot's sequence and generatedAt age in seconds.
    pub snapshot: Option<(u64, f64)>,
    /// The served snapshot's `lastSuccessfulCheckAt`, as Unix seconds.
    pub last_check: Option<f64>,
    /// Clients tracked by the in-process quota.
    pub quota_clients: u64,
    /// Open record streams.
    pub streams_open: u64,
    /// The sync state: status (as of now), consecutive failures, syncedAt
    /// and fetchedAt as Unix seconds.
    pub sync: Option<SyncScrape>,
    /// Deliveries waiting in the outbox.
    pub webhook_backlog: u64,
    /// The outbox file's size in bytes.
    pub webhook_outbox_bytes: u64,
    /// Bytes of the data routes' bodies made from the served view.
    pub view_bodies_bytes: u64,
    /// The memory those bodies' cache counts (bodies, keys, entries).
    pub view_bodies_memory_bytes: u64,
}

/// The content type of the classic Prometheus text format.
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The content type of the OpenMetrics text format.
pub const OPENMETRICS_TEXT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The exposition, with `scrape`'s state, in OpenMetrics text
/// (`openmetrics`) or the classic text format; `None` while recording is off.
pub fn render(scrape: &Scrape, openmetrics: bool) -> Option<String> {
    let m = METRICS.get()?;
    match scrape.snapshot {
        Some((sequence, age)) => {
            m.served.snapshot_sequence.set(gauge_value(sequence));
            m.served.snapshot_age.set(age);
        }
        None => {
            m.served.snapshot_sequence.set(0);
            m.served.snapshot_age.set(0.0);
        }
    }
    m.served.last_check.set(scrape.last_check.unwrap_or(0.0));
    m.requests
        .quota_clients
        .set(gauge_value(scrape.quota_clients));
    m.features
        .streams_open
        .set(gauge_value(scrape.streams_open));
    m.deliveries
        .webhook_backlog
        .set(gauge_value(scrape.webhook_backlog));
    m.deliveries
        .webhook_outbox_bytes
        .set(gauge_value(scrape.webhook_outbox_bytes));
    m.view_bodies
        .view_bodies_bytes
        .set(gauge_value(scrape.view_bodies_bytes));
    m.view_bodies
        .view_bodies_memory_bytes
        .set(gauge_value(scrape.view_bodies_memory_bytes));
    let scraped = scraped_registry(scrape.sync);
    let mut out = String::with_capacity(8192);
    let encoded = text::encode_registry(&mut out, &m.registry)
        .and_then(|()| text::encode_registry(&mut out, &scraped))
        .and_then(|()| text::encode_eof(&mut out));
    encoded.expect("writing to a String");
    Some(if openmetrics { out } else { classic(&out) })
}

/// The sync state as scraped: status (as of now), consecutive failures,
/// syncedAt and fetchedAt as Unix seconds.
pub type SyncScrape = (&'static str, u64, Option<f64>, Option<f64>);

/// The families made anew at each scrape, after the recorded ones: what
/// this build is, the process (the standard `process_*` families every
/// Prometheus exporter has, unprefixed, read from `/proc`: a family that
/// cannot be read is left out), and the
/// sync families, only where there is a sync state (an upstream mirror; a
/// standalone instance has none, and a zero there would mean nothing).
fn scraped_registry(sync: Option<SyncScrape>) -> Registry {
    let mut root = Registry::default();
    process_families(&mut root);
    let ours = root.sub_registry_with_prefix("resetctl");
    let build = Family::<BuildLabels, Gauge>::default();
    build
        .get_or_create(&BuildLabels {
            version: crate::build::VERSION,
            commit: crate::build::COMMIT,
        })
        .set(1);
    ours.register(
        "build_info",
        "Always 1: the version and the git commit this binary was built from (`unknown` outside a checkout)",
        build,
    );
    let Some((status, failures, synced, fetched)) = sync else {
        return root;
    };
    let statuses = Family::<SyncStatusLabel, Gauge>::default();
    for each in ["ok", "stale", "error", "pending"] {
        statuses
            .get_or_create(&SyncStatusLabel { status: each })
            .set(i64::from(each == status));
    }
    ours.register(
        "sync_status",
        "1 for the data dir's sync status as of the scrape (ok, stale, error, pending), 0 for the others; absent in standalone mode",
        statuses,
    );
    ours.register(
        "sync_consecutive_failures",
        "Failed sync attempts since the last good one; absent in standalone mode",
        ConstGauge::new(gauge_value(failures)),
    );
    add(
        ours,
        "sync_synced_at_timestamp",
        Some(Unit::Seconds),
        "When the upstream was last fetched or revalidated (Unix time; 0: never); absent in standalone mode",
        ConstGauge::new(synced.unwrap_or(0.0)),
    );
    add(
        ours,
        "sync_fetched_at_timestamp",
        Some(Unit::Seconds),
        "When an upstream body was last fetched (Unix time; 0: never); absent in standalone mode",
        ConstGauge::new(fetched.unwrap_or(0.0)),
    );
    root
}

/// The standard process families (names and help as the Prometheus
/// client libraries write them), from [`process::collect`].
fn process_families(registry: &mut Registry) {
    let now = process::collect();
    if let Some(seconds) = now.cpu_seconds {
        registry.register(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            ConstCounter::new(seconds),
        );
    }
    let gauges = [
        (
            "process_open_fds",
            "Number of open file descriptors.",
            None,
            now.open_fds,
        ),
        (
            "process_max_fds",
            "Maximum number of open file descriptors.",
            None,
            now.max_fds,
        ),
        (
            "process_virtual_memory",
            "Virtual memory size in bytes.",
            Some(Unit::Bytes),
            now.virtual_memory_bytes,
        ),
        (
            "process_resident_memory",
            "Resident memory size in bytes.",
            Some(Unit::Bytes),
            now.resident_memory_bytes,
        ),
        (
            "process_start_time",
            "Start time of the process since unix epoch in seconds.",
            Some(Unit::Seconds),
            now.start_time_seconds,
        ),
        (
            "process_threads",
            "Number of OS threads in the process.",
            None,
            now.threads,
        ),
    ];
    for (name, help, unit, value) in gauges {
        if let Some(value) = value {
            add(
                registry,
                name,
                unit,
                help,
                ConstGauge::new(gauge_value(value)),
            );
        }
    }
}

/// The classic text format of an OpenMetrics text exposition.
pub(super) fn classic(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let described = ["# HELP ", "# TYPE "].into_iter().find_map(|kind| {
            let rest = line.strip_prefix(kind)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{kind}{name}_total {tail}"))
        });
        match described {
            Some(line) => out.push_str(&line),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}
