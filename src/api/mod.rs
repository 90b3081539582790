//! The HTTP API (warp): routes, handlers, error bodies and headers.
//!
//! Three parts, as in warp's own examples: [`routes()`] composes filters and
//! injects the shared state (ending in a catch-all, so no rejection escapes),
//! [`handlers`] call one query function each and build the response,
//! [`errors`] maps every error to the section 7 bodies. No domain decision is made here.
//! `admission` decides, for every route, whether a request is answered
//! 304, counted, refused or flood-guarded; `jsonrpc` holds `/mcp`'s envelopes.
//! `conn` runs the accept loop (hyper-util) and `gate` its connection caps;
//! `stream` answers the live record stream (SSE) and holds its caps;
//! `stream_conn` serves a connection opened for a stream without hyper;
//! `admin` answers the admin listener (`/metrics`, `/healthz`, `/export.json`).

mod admin;
mod admission;
mod assets;
mod conn;
mod deadline;
pub mod errors;
mod feeds;
mod gate;
pub mod handlers;
mod jsonrpc;
pub mod mcp;
mod responses;
pub mod routes;
mod server;
mod site;
mod stream;
mod stream_conn;

pub use admin::ExportCache;
pub use gate::{ConnectionLimits, MIN_HEAD_BYTES};
pub use routes::routes;
pub use server::{serve, AppState, ServeOptions};
pub use site::SiteCache;
pub use stream::{StreamLimits, StreamSlots};

#[cfg(test)]
mod tests;
