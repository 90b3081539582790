//! The table of settings: one row per setting, and nothing else. A row
//! says everything of its setting but what it does: its help (the doc
//! comment, as `--help`, the man pages and the manual show it), its type,
//! its marks (`Live`: a reload applies it; `Secret`: never shown), the
//! commands whose flag it is, its help heading, its value's name, its
//! choices or range, and its default (`= VALUE`; a row without one has a
//! rule its help says in words). Its flag, its variable, its config key,
//! its `--help` line and its `serve --check` line are all made from the
//! row (`settings_keys!`); its builder in `settings/` reads the merged
//! value, the default included. A new setting is a row here and the code
//! that uses it.

use std::path::PathBuf;

use super::{env_value, flag_value, EnvError, FlagError};
use super::{first, Declared, Mark, Merged, Setting, Source, Text};
use serde::Deserialize;

settings_keys! {
    /// Data directory (snapshots, history, locks). Default: the platform data dir.
    data_dir: PathBuf [] in ["global"] under "Global options" as "DIR",
    /// How many snapshot versions to keep after a publish.
    keep: usize [] in ["global"] under "Global options" as "N" at least 1 = 50,
    /// Seconds to wait for the data-dir lock before giving up with exit code 75.
    lock_timeout: f64 [] in ["global"] under "Global options" as "SECONDS"
        range 0 to 86_400 = 10.0,
    /// Log filter: a level (error, warn, info, debug, trace, off) or comma-separated
    /// directives, each a level or TARGET=LEVEL (info,resetctl::access=warn); any other
    /// directive is an error naming it. RUST_LOG wins.
    log: String [Live] in ["global"] under "Global options" as "FILTER" = "info",
    /// Log line format on stderr: text or json. Text is for people; json is one object per line,
    /// for log shippers, with the same fields.
    log_format: String [] in ["global"] under "Global options" as "FORMAT"
        one of ["text", "json"] = "text",
    /// Minutes outside a schedule window a completion still fulfils it. Auto-fulfilment tolerance:
    /// a completion up to this many minutes outside a schedule window still fulfils it.
    match_tolerance_minutes: u32 [] in ["global"] under "Global options" as "N" = 180,
    /// Address to listen on. IP:PORT or HOST:PORT (every address the name resolves to is tried in
    /// turn).
    listen: String [] in ["serve"] under "Serving" as "ADDR" = "127.0.0.1:8080",
    /// Private address for /metrics and /export.json. A second address, for a private
    /// network, answering GET /metrics (Prometheus; OpenMetrics when the Accept header asks),
    /// /healthz and /export.json (the served snapshot and
    /// dataSource as a records document with a strong ETag, for replicas that sync from this
    /// instance and then serve its meta). Not counted, not flood-guarded. Metrics are recorded
    /// only with it. Default: off.
    admin_listen: String [] in ["serve"] under "Serving" as "ADDR",
    /// How to notice new snapshots: auto or poll. File events with a polling fallback (auto), or
    /// polling only.
    watch: String [] in ["serve"] under "Serving" as "MODE" one of ["auto", "poll"] = "auto",
    /// Republish when states change with time (standalone mode). States are re-evaluated
    /// periodically, so `elapsed` appears within a minute of a window's end.
    republish: bool [] in ["serve"] under "Serving",
    /// With --republish: seconds between re-evaluations.
    republish_every: f64 [] in ["serve"] under "Serving" as "SECONDS"
        range 0.1 to 86_400 = 15.0,
    /// Public address of this API and its pages. The base of the Atom feed's self link and of
    /// the links to the record pages, in the pages and in webhook notifications (unless no-site
    /// is set): an absolute http:// or https:// URL without query or fragment, with the path
    /// prefix a proxy adds, if any. Default: the request's Host (as http://HOST; links are
    /// relative when that is not a plain host and port; notifications then have no link).
    public_base_url: String [Secret] in ["serve", "webhook add"] under "Serving" as "URL",
    /// Serve the API only: no status page at / and no record pages (/records/ID,
    /// /en/, /zh/), which then answer 404. The badge and the API are unchanged.
    no_site: bool [] in ["serve"] under "Serving",
    /// The pages' name in their header and titles. 1 to 80 characters, no control characters.
    site_name: String [Live] in ["serve"] under "Serving" as "NAME" = "resetctl",
    /// Seconds in-flight requests get to finish when serve stops (SIGINT, SIGTERM); a
    /// connection still open then is cut.
    drain_timeout: f64 [] in ["serve"] under "Serving" as "SECONDS" range 0.1 to 3600 = 10.0,
    /// An Origin allowed to call /mcp (repeatable); requests carrying any other Origin
    /// header are refused (DNS-rebinding protection). Default: none.
    mcp_allow_origin: Vec<String> [] in ["serve"] under "Serving" as "ORIGIN",
    /// Who records it. Default: $USER@hostname.
    actor: String [] in ["restore", "record schedule", "record completion", "record complete",
        "record link", "record unlink", "record dismiss", "record undo", "record move",
        "record edit", "mark-checked"] under "Recording changes" as "NAME",
    /// Requests per sliding window per client. As N/SECONDS.
    rate_limit: String [Live] in ["serve", "status"] under "Quota" as "N/SECONDS"
        = crate::limit::QuotaPolicy::default().to_string(),
    /// Turn the quota off (and drop the X-RateLimit-* headers).
    no_rate_limit: bool [Live] in ["serve", "status"] under "Quota",
    /// Seconds a client gets to send a request head. Counted from accept and from the end of each
    /// response (so also the idle keep-alive timeout).
    header_timeout: f64 [] in ["serve"] under "Connections" as "SECONDS"
        range 0.1 to 3600 = 10.0,
    /// Seconds a request body gets to arrive whole. Counted from its head (HTTP/1 and HTTP/2); past
    /// it the request is answered with a JSON 408 and the connection is closed.
    body_timeout: f64 [] in ["serve"] under "Connections" as "SECONDS"
        range 0.1 to 3600 = 10.0,
    /// Connections held at once, in all; past it a new connection gets a JSON 503
    /// (too_many_connections) and is closed.
    max_connections: u64 [] in ["serve"] under "Connections" as "N" at least 1 = 10_000,
    /// Connections held at once from one address (trusted proxies are exempt).
    max_connections_per_ip: u64 [] in ["serve"] under "Connections" as "N" at least 1 = 256,
    /// Largest request head (request line and headers) in bytes; a larger one gets 431.
    max_head_bytes: u64 [] in ["serve"] under "Connections" as "BYTES"
        range (crate::api::MIN_HEAD_BYTES) to (16 * 1024 * 1024) = 32 * 1024,
    /// Connections the kernel queues unaccepted. The listen backlog: connections the kernel queues
    /// before they are accepted, so bursts are not dropped (nginx's default is 511).
    listen_backlog: u32 [] in ["serve"] under "Connections" as "N" range 1 to 65_535 = 1024,
    /// Record streams one client may hold open at once; past it a JSON 429 (too_many_streams).
    stream_max_per_client: u32 [] in ["serve"] under "Record stream" as "N" at least 1 = 2,
    /// Record streams open at once, in all; past it a JSON 503 (streams_unavailable).
    stream_max: u64 [] in ["serve"] under "Record stream" as "N" at least 1 = 10_000,
    /// Seconds between an idle stream's heartbeats. Comment lines that keep proxies from cutting
    /// it.
    stream_heartbeat: f64 [] in ["serve"] under "Record stream" as "SECONDS"
        range 0.1 to 3600 = 25.0,
    /// Most clients tracked in process. Past it, new clients get 503 rate_limit_unavailable
    /// (clients already tracked are unaffected) until idle ones leave the window. A full table
    /// at the default size takes about 256 MiB.
    rate_limit_max_clients: u64 [Live] in ["serve", "status"] under "Quota" as "N" at least 1
        = crate::limit::DEFAULT_MAX_CLIENTS as u64,
    /// Quota store: memory or a Redis URL. "memory" (this process), or, shared by instances,
    /// redis://HOST:PORT/DB (rediss:// with TLS) for one server;
    /// redis+cluster://HOST:PORT,HOST:PORT… for a Redis Cluster;
    /// redis+sentinel://HOST:PORT,HOST:PORT…/MASTER[/DB] for the master the sentinels name
    /// (rediss+cluster://, rediss+sentinel:// with TLS).
    rate_limit_store: String [Live, Secret] in ["serve", "status"] under "Quota" as "URL"
        = "memory",
    /// CA of a TLS quota store (PEM). The store's certificate is checked against it.
    /// Default: the system's roots.
    redis_ca_file: PathBuf [Live] in ["serve", "status"] under "Quota" as "PEM",
    /// The client certificate (PEM) shown to a TLS quota store that asks for one (mutual
    /// TLS); with --redis-key-file. Default: none.
    redis_cert_file: PathBuf [Live] in ["serve", "status"] under "Quota" as "PEM",
    /// The client certificate's private key (PEM); with --redis-cert-file. Default: none.
    redis_key_file: PathBuf [Live] in ["serve", "status"] under "Quota" as "PEM",
    /// Believe the client IP header (--client-ip-header) from peers in this range
    /// (repeatable, or comma-separated in the env). A range of every address (0.0.0.0/0,
    /// ::/0, or ranges that together hold every address) is refused: it would let every
    /// client choose its own quota key. Default: none.
    trust_proxy: Vec<String> [Live] in ["serve", "status"] under "Quota" as "CIDR",
    /// The trusted proxy's client header. The one header your trusted proxy sets with the client's
    /// address: x-forwarded-for, forwarded (RFC 7239), or another name such as x-real-ip. Every
    /// other forwarding header is ignored.
    client_ip_header: String [Live] in ["serve", "status"] under "Quota" as "NAME"
        = "x-forwarded-for",
    /// IPv6 clients are keyed by this prefix length.
    ipv6_prefix_len: u8 [Live] in ["serve", "status"] under "Quota" as "BITS" range 1 to 128
        = 64,
    /// Burst guard of uncounted routes, or off. As PER_SECOND/BURST per client, or "off".
    flood_guard: String [Live] in ["serve", "status"] under "Quota" as "RATE/BURST"
        = "50/200",
    /// The upstream: a records document (another instance's export), the public status feed,
    /// or "public" for the public feed's preset (URL, page URL, source id and name).
    /// Default: none (sync then says what to pass).
    upstream: String [Secret] in ["sync"] under "Sync" as "URL",
    /// An extra request header for the upstream, "NAME: VALUE" (repeatable): the place for
    /// a secret such as "Authorization: Bearer …". Never printed, logged or published.
    /// Default: none.
    upstream_header: Vec<String> [Secret, Unsplit] in ["sync"] under "Sync" as "HEADER",
    /// The upstream URL as published in dataSource.url. Default: the upstream URL, without
    /// its secrets (userinfo, query or fragment).
    public_url: String [] in ["sync"] under "Sync" as "URL",
    /// The upstream's public page (dataSource.pageUrl). Default: the upstream's origin.
    page_url: String [] in ["sync"] under "Sync" as "URL",
    /// dataSource.sourceId. Default: the upstream's host.
    source_id: String [] in ["sync"] under "Sync" as "ID",
    /// dataSource.name. Default: the upstream's host.
    source_name: String [] in ["sync"] under "Sync" as "NAME",
    /// Minutes between syncs, plus a small random jitter. The public feed's maintainers ask
    /// mirrors not to poll more often than hourly.
    interval_minutes: u32 [] in ["sync"] under "Sync" as "N" at least 5 = 60,
    /// Minutes after which a cache with no good sync is stale. Default: 3 × interval.
    max_age_minutes: u32 [] in ["sync"] under "Sync" as "N" at least 1,
    /// Longest back-off after failures, in minutes.
    backoff_cap_minutes: u32 [] in ["sync"] under "Sync" as "N" at least 1 = 360,
    /// Connect timeout in seconds.
    connect_timeout: f64 [] in ["sync"] under "Sync" as "SECONDS"
        range 0.001 to 3600 = 10.0,
    /// Whole-request timeout in seconds, body included.
    timeout: f64 [] in ["sync"] under "Sync" as "SECONDS" range 0.001 to 3600 = 30.0,
    /// Largest accepted body in bytes, enforced while streaming.
    max_body_bytes: u64 [] in ["sync"] under "Sync" as "BYTES" = 16 * 1024 * 1024,
    /// Most redirects followed.
    max_redirects: usize [] in ["sync"] under "Sync" as "N" = 5,
    /// Allow this endpoint's target to resolve to a loopback, private or link-local address
    /// (refused by default, when added and at each delivery).
    allow_private_targets: bool [] in ["webhook add"] under "Webhook delivery",
    /// Seconds a request to this endpoint may take, answer included.
    webhook_timeout: f64 [] in ["webhook add"] under "Webhook delivery" as "SECONDS"
        range (*crate::webhook::endpoint::TIMEOUT_RANGE.start())
        to (*crate::webhook::endpoint::TIMEOUT_RANGE.end())
        = crate::webhook::endpoint::DEFAULT_TIMEOUT.as_secs_f64(),
    /// How upstream and webhook operators reach you, in the User-Agent. An https:// URL, a
    /// mailto: URL or an e-mail address, sent in the User-Agent of every outbound request
    /// (resetctl/VERSION (+CONTACT)). Default: none (resetctl/VERSION).
    user_agent_contact: String [] in ["global"] under "Global options" as "CONTACT",
}
