//! The HTTP API (warp): routes, handlers, error bodies and headers.
//!
//! Rooms, from the floor up (a room uses only rooms below it; no cycle,
//! `tests/architecture.rs` checks):
//!
//! - **Floor**: `responses` (content types, CORS), [`errors`] (the
//!   section 7 bodies and the one panic guard), `jsonrpc` (`/mcp`'s
//!   envelopes), `assets` (the bundled documents).
//! - **Representations**: `representation` (a body and its coded forms,
//!   made once; `Accept-Encoding` and the choice of coding; the per-view
//!   cache of bodies).
//! - **Request facts**: `conditional` (validators and conditional
//!   requests: the one `If-None-Match` matcher, the answer of an
//!   uncounted route), `clients` (the client key of a request).
//! - **Admission**: `admission` decides, for every route, whether a
//!   request is answered 304, counted, refused or flood-guarded ([`Quota`]).
//! - **Transport**: `transport/` (the accept loop, connection caps,
//!   deadlines, the stream's HTTP/1.1 path); it is handed the routes.
//! - **Features**, each with its own state: [`handlers`] (the record
//!   routes, [`Data`]), `feeds` (Atom, iCalendar), `site` (pages, badge),
//!   `stream` (SSE), [`mcp`], `admin` (the admin listener).
//! - **Composition**: [`routes`](mod@routes) (the route table: every path once, with
//!   its methods, metrics label and admission class), `request` (what a
//!   request carries, read from its head), `router` (one table lookup per
//!   request, the handler wrapped by its class's admission; each handler
//!   given only its feature's state, as warp's `todos` example does),
//!   `server` (builds the states and runs the listeners).
//!
//! No domain decision is made here.

mod admin;
mod admission;
mod assets;
mod clients;
mod conditional;
pub mod errors;
mod feeds;
pub mod handlers;
mod jsonrpc;
pub mod mcp;
mod representation;
mod request;
mod responses;
mod router;
pub mod routes;
mod server;
mod site;
mod stream;
mod transport;

pub use admin::{Admin, ExportCache};
pub use admission::Quota;
pub use clients::ClientKeys;
pub use handlers::Data;
pub use router::{routes, Api, Router};
pub use server::{serve, LiveSettings, QuotaChange, ServeOptions};
pub use site::{Site, SiteCache};
pub use stream::{StreamLimits, StreamSlots, Streams};
pub use transport::{ConnectionLimits, MIN_HEAD_BYTES};

#[cfg(test)]
mod tests;
