//! Prometheus metrics: one registry per process, recorded at the seams
//! (the accept loop, admission, the connection gate, reload, the MCP tool
//! dispatch, the webhook deliverer), never in handlers, and exposed by
//! `serve --admin-listen` at `/metrics`.
//!
//! Recording is off until [`enable`] is called (the server does, when it
//! is given an admin listener): every recording function first reads
//! one `OnceLock`, so a server without metrics pays one load per seam. The
//! state that already lives elsewhere (the served snapshot, the sync state
//! file, the open streams, the quota's tracked clients, the outbox) is
//! read when scraped, through [`Scrape`], never copied on the hot path.
//!
//! The format is the `prometheus-client` crate's OpenMetrics text. The
//! classic Prometheus text format (what a scraper gets unless its `Accept`
//! asks for OpenMetrics) differs from it in three ways only, applied to the
//! crate's output by `classic`: a counter's `HELP` and `TYPE` lines name
//! its sample (`foo_total`, where OpenMetrics names the family `foo`), and
//! there are no `# UNIT` and `# EOF` lines.

mod process;
mod scrape;

pub use scrape::{render, Scrape, SyncScrape, OPENMETRICS_TEXT, PROMETHEUS_TEXT};

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

/// The label of one HTTP answer.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteStatus {
    route: &'static str,
    status: u16,
}

/// A fixed label value: a route, a decision, an outcome, a tool.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Route {
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Decision {
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Tool {
    tool: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReminderLabels {
    channel: &'static str,
    event: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SyncStatusLabel {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
    commit: &'static str,
}

type FloatGauge = Gauge<f64, AtomicU64>;

/// Every metric of the process, by the seam that records it (registered
/// in this order, which is the order a scrape shows them in).
#[derive(Debug)]
struct Metrics {
    registry: Registry,
    requests: Requests,
    served: Served,
    features: Features,
    deliveries: Deliveries,
    view_bodies: ViewBodies,
}

/// The metrics of answering requests (the accept loop, admission, the
/// connection gate).
#[derive(Debug)]
struct Requests {
    http_requests: Family<RouteStatus, Counter>,
    http_duration: Family<Route, Histogram>,
    quota_decisions: Family<Decision, Counter>,
    quota_clients: Gauge,
    refusals: Family<Reason, Counter>,
}

impl Requests {
    fn register(registry: &mut Registry) -> Self {
        Self {
            http_requests: register(
                registry,
                "http_requests",
                None,
                "HTTP requests answered, by route (a fixed name, never the raw path) and status",
                Family::<RouteStatus, Counter>::default(),
            ),
            http_duration: register(
                registry,
                "http_request_duration",
                Some(Unit::Seconds),
                "Time from a request's head to its answer's head, by route",
                Family::<Route, Histogram>::new_with_constructor(duration_buckets as fn() -> Histogram),
            ),
            quota_decisions: register(
                registry,
                "quota_decisions",
                None,
                "Quota decisions on data requests: admitted, limited (429), unavailable (503, the store did not answer), not_modified (304, uncounted)",
                Family::<Decision, Counter>::default(),
            ),
            quota_clients: register(
                registry,
                "quota_tracked_clients",
                None,
                "Clients the in-process quota currently tracks (0 with Redis or without a quota)",
                Gauge::default(),
            ),
            refusals: register(
                registry,
                "refusals",
                None,
                "Requests and connections refused before any route: flood_guard (429 of the uncounted routes), connection_cap (accept-time caps)",
                Family::<Reason, Counter>::default(),
            ),
        }
    }
}

/// The metrics of what is served: the snapshot and its reloads.
#[derive(Debug)]
struct Served {
    snapshot_sequence: Gauge,
    snapshot_age: FloatGauge,
    last_check: FloatGauge,
    reloads: Counter,
    reloads_refused: Counter,
}

impl Served {
    fn register(registry: &mut Registry) -> Self {
        Self {
            snapshot_sequence: register(
                registry,
                "snapshot_sequence",
                None,
                "Sequence number of the served snapshot (0: none)",
                Gauge::default(),
            ),
            snapshot_age: register(
                registry,
                "snapshot_age",
                Some(Unit::Seconds),
                "Age of the served snapshot's generatedAt (an upstream mirror's is the upstream's own)",
                FloatGauge::default(),
            ),
            last_check: register(
                registry,
                "last_successful_check_timestamp",
                Some(Unit::Seconds),
                "When the served data was last checked successfully (meta.lastSuccessfulCheckAt, Unix time; 0: never); the status page distrusts a check older than 30 hours",
                FloatGauge::default(),
            ),
            reloads: register(
                registry,
                "snapshot_reloads",
                None,
                "Snapshots loaded and swapped in by the reloader",
                Counter::default(),
            ),
            reloads_refused: register(
                registry,
                "snapshot_reloads_refused",
                None,
                "Snapshots the reloader refused (unreadable or invalid): the previous one stayed served",
                Counter::default(),
            ),
        }
    }
}

/// The metrics of the features that hold state: MCP tool calls and the
/// open record streams.
#[derive(Debug)]
struct Features {
    mcp_calls: Family<Tool, Counter>,
    streams_open: Gauge,
}

impl Features {
    fn register(registry: &mut Registry) -> Self {
        Self {
            mcp_calls: register(
                registry,
                "mcp_tool_calls",
                None,
                "MCP tool calls, by tool",
                Family::<Tool, Counter>::default(),
            ),
            streams_open: register(
                registry,
                "streams_open",
                None,
                "Record streams (SSE) open now",
                Gauge::default(),
            ),
        }
    }
}

/// The metrics of telling people: webhook deliveries, reminders sent and
/// the outbox.
#[derive(Debug)]
struct Deliveries {
    webhook_deliveries: Family<Outcome, Counter>,
    reminders_sent: Family<ReminderLabels, Counter>,
    webhook_backlog: Gauge,
    webhook_outbox_bytes: Gauge,
}

impl Deliveries {
    fn register(registry: &mut Registry) -> Self {
        Self {
            webhook_deliveries: register(
                registry,
                "webhook_deliveries",
                None,
                "Webhook delivery attempts by this process's deliverer, by outcome: delivered, retrying, failed (given up after the retry window), disabled (410 Gone)",
                Family::<Outcome, Counter>::default(),
            ),
            reminders_sent: register(
                registry,
                "reminders_sent",
                None,
                "Reminders sent by this process, by channel (webhook: delivered to an endpoint; stream: sent on a record stream) and event (reset.upcoming, reset.window_started, reset.window_ended)",
                Family::<ReminderLabels, Counter>::default(),
            ),
            webhook_backlog: register(
                registry,
                "webhook_outbox_backlog",
                None,
                "Deliveries waiting in the outbox, over every enabled endpoint",
                Gauge::default(),
            ),
            webhook_outbox_bytes: register(
                registry,
                "webhook_outbox",
                Some(Unit::Bytes),
                "Size of the webhook outbox file (at most 32 MiB plus one publish's changes)",
                Gauge::default(),
            ),
        }
    }
}

/// The metrics of the cache of bodies made from the served view.
#[derive(Debug)]
struct ViewBodies {
    view_bodies_bytes: Gauge,
    view_bodies_memory_bytes: Gauge,
}

impl ViewBodies {
    fn register(registry: &mut Registry) -> Self {
        Self {
            view_bodies_bytes: register(
                registry,
                "view_bodies",
                Some(Unit::Bytes),
                "Bytes of the data routes' bodies made from the served view, identity and coded forms",
                Gauge::default(),
            ),
            view_bodies_memory_bytes: register(
                registry,
                "view_bodies_memory",
                Some(Unit::Bytes),
                "Memory the cache of those bodies counts against its bound: bodies, keys, tags and entries",
                Gauge::default(),
            ),
        }
    }
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// The buckets of the request duration histogram, in seconds: 50 µs to
/// about 3.3 s (a JSON page takes tens of microseconds; a stream's
/// "duration" is the time to its first byte).
fn duration_buckets() -> Histogram {
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        0.000_05, 4.0, 9,
    ))
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::with_prefix("resetctl");
        let requests = Requests::register(&mut registry);
        let served = Served::register(&mut registry);
        let features = Features::register(&mut registry);
        let deliveries = Deliveries::register(&mut registry);
        let view_bodies = ViewBodies::register(&mut registry);
        Self {
            registry,
            requests,
            served,
            features,
            deliveries,
            view_bodies,
        }
    }
}

/// Registers `metric` under `name` (with `unit`, when it has one) and
/// returns the handle that records into it.
fn register<M: prometheus_client::registry::Metric + Clone>(
    registry: &mut Registry,
    name: &str,
    unit: Option<Unit>,
    help: &str,
    metric: M,
) -> M {
    add(registry, name, unit, help, metric.clone());
    metric
}

/// Adds `metric` under `name`, with `unit` when it has one (a constant
/// of one scrape, or the registry's copy of a handle).
fn add(
    registry: &mut Registry,
    name: &str,
    unit: Option<Unit>,
    help: &str,
    metric: impl prometheus_client::registry::Metric,
) {
    match unit {
        Some(unit) => registry.register_with_unit(name, help, unit, metric),
        None => registry.register(name, help, metric),
    }
}

/// A count as a gauge's value (saturating: a gauge is an `i64`).
fn gauge_value(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Turns recording on for the rest of the process.
pub fn enable() {
    METRICS.get_or_init(Metrics::new);
}

/// Whether recording is on.
pub fn enabled() -> bool {
    METRICS.get().is_some()
}

/// One answered request (the accept loop); `route` is the label the route
/// table gives it (never the raw path, so a client cannot grow the label set). The hot path: each thread keeps
/// the handles it has used (a few routes and statuses), so a request costs
/// a short scan, an atomic add and one histogram observation, never the
/// families' lock and hash.
pub fn http_request(route: &'static str, status: u16, took: Duration) {
    let Some(m) = METRICS.get() else {
        return;
    };
    thread_local! {
        static HANDLES: std::cell::RefCell<Vec<(&'static str, u16, Counter, Histogram)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    HANDLES.with_borrow_mut(|handles| {
        let found = handles
            .iter()
            .position(|(r, s, _, _)| std::ptr::eq(*r, route) && *s == status);
        let at = found.unwrap_or_else(|| {
            let counter = m
                .requests
                .http_requests
                .get_or_create_owned(&RouteStatus { route, status });
            let histogram = m
                .requests
                .http_duration
                .get_or_create_owned(&Route { route });
            handles.push((route, status, counter, histogram));
            handles.len() - 1
        });
        let (_, _, counter, histogram) = &handles[at];
        counter.inc();
        histogram.observe(took.as_secs_f64());
    });
}

/// What the quota decided about one data request (admission).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuotaOutcome {
    /// Counted and answered.
    Admitted,
    /// 429.
    Limited,
    /// 503: the store did not answer.
    Unavailable,
    /// 304: answered from the client's copy, not counted.
    NotModified,
}

/// One quota decision (admission).
pub fn quota_decision(outcome: QuotaOutcome) {
    if let Some(m) = METRICS.get() {
        let decision = match outcome {
            QuotaOutcome::Admitted => "admitted",
            QuotaOutcome::Limited => "limited",
            QuotaOutcome::Unavailable => "unavailable",
            QuotaOutcome::NotModified => "not_modified",
        };
        m.requests
            .quota_decisions
            .get_or_create(&Decision { decision })
            .inc();
    }
}

/// One refusal before any route: `flood_guard` or `connection_cap`.
pub fn refused(reason: &'static str) {
    if let Some(m) = METRICS.get() {
        m.requests.refusals.get_or_create(&Reason { reason }).inc();
    }
}

/// One reload: swapped in, or refused.
pub fn reload(accepted: bool) {
    if let Some(m) = METRICS.get() {
        match accepted {
            true => m.served.reloads.inc(),
            false => m.served.reloads_refused.inc(),
        };
    }
}

/// One MCP tool call.
pub fn mcp_call(tool: &str) {
    if let Some(m) = METRICS.get() {
        // Only the tools the server has: an unknown name is "unknown".
        let tool = match tool {
            "get_latest_reset" => "get_latest_reset",
            "list_resets" => "list_resets",
            _ => "unknown",
        };
        m.features.mcp_calls.get_or_create(&Tool { tool }).inc();
    }
}

/// How one webhook delivery attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// 2xx.
    Delivered,
    /// Failed; will be tried again.
    Retrying,
    /// Failed past the retry window: given up.
    Failed,
    /// 410 Gone: the endpoint was disabled.
    Disabled,
}

/// One webhook delivery attempt (the deliverer).
pub fn webhook_delivery(outcome: DeliveryOutcome) {
    if let Some(m) = METRICS.get() {
        let outcome = match outcome {
            DeliveryOutcome::Delivered => "delivered",
            DeliveryOutcome::Retrying => "retrying",
            DeliveryOutcome::Failed => "failed",
            DeliveryOutcome::Disabled => "disabled",
        };
        m.deliveries
            .webhook_deliveries
            .get_or_create(&Outcome { outcome })
            .inc();
    }
}

/// The channel a reminder went out on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReminderChannel {
    /// Delivered to a webhook endpoint.
    Webhook,
    /// Sent on a record stream.
    Stream,
}

/// One reminder sent (`event` is one of [`crate::remind::EVENT_TYPES`]).
pub fn reminder_sent(channel: ReminderChannel, event: &'static str) {
    if let Some(m) = METRICS.get() {
        let channel = match channel {
            ReminderChannel::Webhook => "webhook",
            ReminderChannel::Stream => "stream",
        };
        m.deliveries
            .reminders_sent
            .get_or_create(&ReminderLabels { channel, event })
            .inc();
    }
}

#[cfg(test)]
mod tests {
    use super::scrape::classic;

    #[test]
    fn the_classic_format_names_counter_samples_and_drops_units_and_eof() {
        let om =
            "# HELP a_requests Requests.\n# TYPE a_requests counter\na_requests_total{r=\"x\"} 1\n\
                  # HELP a_age Age.\n# TYPE a_age gauge\n# UNIT a_age seconds\na_age 2.5\n# EOF\n";
        assert_eq!(
            classic(om),
            "# HELP a_requests_total Requests.\n# TYPE a_requests_total counter\na_requests_total{r=\"x\"} 1\n\
             # HELP a_age Age.\n# TYPE a_age gauge\na_age 2.5\n"
        );
    }
}
