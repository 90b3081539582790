//! `resetctl`: records of announced and completed usage-limit resets,
//! published as versioned JSON snapshots and served as a read-only API.
//!
//! # Layout
//!
//! - [`model`]: records, their parts, meta, timestamps and validation rules;
//! - [`document`]: the records document (seed files, export, upstream);
//! - [`schedule`]: schedule states at publish time (injectable clock);
//! - [`durable`]: atomic writes, durable directories and removals, the data-dir lock;
//! - [`publish`]: the one publish step (snapshot, outbox, pointer, prune);
//! - [`snapshot`]: versioned snapshots (publish, load, list, prune, rollback);
//! - [`history`]: seeded history of a standalone instance;
//! - [`standalone`]: seeding and publishing a standalone instance;
//! - [`config`]: the raw layers of settings (flags, env, file) and their precedence;
//! - [`settings`]: every setting validated once into typed settings;
//! - [`preflight`]: whether a configuration can run (start, `serve --check`, a reload);
//! - [`status`]: what an operator sees in `resetctl status`;
//! - [`query`]: strict query parsing, filters, ordering, the precomputed view;
//! - [`changes`]: the change diff between two published versions (SSE, webhooks);
//! - [`live`]: the broadcast of view swaps and the record stream's events;
//! - [`metrics`]: Prometheus metrics, recorded at the seams, off until enabled;
//! - [`feeds`]: the Atom feed and the iCalendar calendar of a view (pure);
//! - [`site`]: the status page, the record pages and the badge of a view (pure);
//! - [`encoding`]: content codings of a body (gzip, brotli, zstd), made once, and their tags;
//! - [`reload`]: watches the data dir and swaps the published view atomically;
//! - [`api`]: the route table over hyper (warp only for the admin listener), handlers, error
//!   bodies, the accept loop (translation only);
//! - [`clock`]: the injectable clock;
//! - [`build`]: the version and commit of this build (`--version`, `resetctl_build_info`);
//! - [`redact`]: the one redacted form of URLs that may carry secrets;
//! - [`random`]: randomness, made once: ids, secrets and jitter from the OS generator;
//! - [`outbound`]: the one policy of every outbound request (addresses, redirects, headers across origins, timeouts);
//! - [`sync`]: upstream-sync mode (conditional GET, sync state, back-off);
//! - [`upstream`]: the public status feed (detection, conversion into records);
//! - [`ledger`]: the operator ledger of a standalone instance;
//! - [`limit`]: the per-client quota (in process or in Redis), client keys, flood guard;
//! - [`civil`]: civil days in a time zone as UTC windows;
//! - [`webhook`]: the webhook outbox, endpoints, formats, signing and the deliverer;
//! - [`testhook`]: test-only hooks, inert unless `RESETCTL_TEST_*` is set.
//!
//! Nothing here knows about clap; HTTP lives only in `api`.

// warp's route tree is one nested type; clippy computes its layout deeper than the default limit.
#![recursion_limit = "256"]
// The limit on a function's length (clippy.toml) is for the code, not
// its unit tests.
#![cfg_attr(test, allow(clippy::too_many_lines))]

/// The seed history bundled with the project (`snapshots/seed-history.json`),
/// built into the binary so `resetctl seed` works on a fresh machine.
pub const BUNDLED_SEED_HISTORY: &[u8] = include_bytes!("../snapshots/seed-history.json");

pub mod api;
pub mod build;
pub mod changes;
pub mod civil;
pub mod clock;
pub mod config;
pub mod data_dir;
pub mod document;
pub mod durable;
pub mod encoding;
pub mod feeds;
pub mod history;
pub mod ledger;
pub mod limit;
pub mod live;
pub mod metrics;
pub mod model;
pub mod outbound;
pub mod paths;
pub mod preflight;
pub mod publish;
pub mod query;
pub mod random;
pub mod redact;
pub mod reload;
pub mod remind;
pub mod schedule;
pub mod settings;
pub mod site;
pub mod snapshot;
pub mod standalone;
pub mod status;
pub mod sync;
pub mod testhook;
pub mod upstream;
pub mod webhook;
