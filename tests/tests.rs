//! Black-box tests: each module runs the real `resetctl` binary against a
//! fresh data dir (and, for the server, talks HTTP to it).

mod util;

mod api;
mod cli;
mod cli_io;
mod conditional;
mod crash;
mod deployment;
mod docs_page;
mod edges;
mod edges_http;
mod feed;
mod feeds;
mod fetch;
mod files;
mod hardening;
mod headers;
mod keying;
mod ledger;
mod ledger_integrity;
mod links;
mod mcp;
mod mcp_limits;
mod metrics;
mod openapi;
mod operations;
mod outbound;
mod outbox_bound;
mod quota;
mod quota_model;
mod reload;
mod schemathesis;
mod seed;
mod site;
mod site_page;
mod slow_clients;
mod snapshots;
mod status_feed;
mod stream;
mod sync;
mod sync_integrity;
mod topology;
mod webhook_delivery;
mod webhook_formats;
mod webhooks;
