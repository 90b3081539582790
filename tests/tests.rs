//! Black-box tests: each module runs the real `resetctl` binary against a
//! fresh data dir (and, for the server, talks HTTP to it).

// The test crate links the CLI's library, whose server future (warp's route
// tree, the MCP handler) has its layout computed deeper than the default
// limit: a build without incremental state (CI) stops there otherwise.
#![recursion_limit = "256"]
// A test reads as one story (set up, act, check each promise): the limit
// on a function's length (clippy.toml) is for the code it tests.
#![allow(clippy::too_many_lines)]

mod api;
mod architecture;
mod bidi;
mod cli;
mod cli_io;
mod clients;
mod command_line;
mod compression;
mod conditional;
mod connections;
mod crash;
mod deployment;
mod deployment_as_pasted;
mod dist;
mod docs_page;
mod documents;
mod email;
mod feed;
mod feeds;
mod fetch;
mod files;
mod fuzz_corpora;
mod headers;
mod http_protocol;
mod human_output;
mod image;
mod keying;
mod ledger;
mod ledger_integrity;
mod links;
mod make_run;
mod mcp;
mod mcp_limits;
mod memory;
mod metrics;
mod openapi;
mod operations;
mod outbound;
mod outbox_bound;
mod package;
mod power_loss;
mod precedence;
mod promises_over_time;
mod quota;
mod quota_model;
mod quota_stores;
mod real_clock;
mod reload;
mod reminders;
mod schemathesis;
mod secrets;
mod seed;
mod service_manager;
mod settings_table;
mod site;
mod site_page;
mod site_words;
mod slow_clients;
mod snapshots;
mod special_files;
mod startup_checks;
mod status_feed;
mod stream;
mod sync;
mod sync_integrity;
mod system_config;
mod timelines;
mod told;
mod topology;
mod troubleshooting;
mod upgrade;
mod util;
mod webhook_answers;
mod webhook_delivery;
mod webhook_formats;
mod webhook_outages;
mod webhook_pacing;
mod webhook_replicas;
mod webhooks;
