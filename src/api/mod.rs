//! The HTTP API: routes, handlers, error bodies and headers. The public
//! listener answers from its own route table over hyper (`routes`,
//! `router`, `transport/`); warp serves only the admin listener (`admin`).
//!
//! Rooms, from the floor up (a room uses only rooms listed before it; no
//! cycle; `tests/architecture.rs` checks the order):
//!
//! - **Floor**: `responses` (content types, CORS), [`errors`] (the
//!   section 7 bodies and the one panic guard), `jsonrpc` (`/mcp`'s
//!   envelopes), `assets` (the bundled documents), [`routes`](mod@routes)
//!   (the route table: every path once, with its methods, metrics label
//!   and admission class).
//! - **Representations**: `representation` (a body and its coded forms,
//!   made once; `Accept-Encoding` and the choice of coding; the per-view
//!   cache of bodies).
//! - **Request facts**: `conditional` (validators and conditional
//!   requests: the one `If-None-Match` matcher, the answer of an
//!   uncounted route), `clients` (the client key of a request).
//! - **Transport**: `transport` (the accept loop, connection caps,
//!   deadlines, the stream's HTTP/1.1 path); it is handed the routes.
//! - **The request**: `request` (what a request carries, read from its
//!   head).
//! - **Admission**: `admission` decides, for every route, whether a
//!   request is answered 304, counted, refused or flood-guarded ([`Quota`]).
//! - **Features**, each with its own state: [`handlers`] (the record
//!   routes, [`Data`]), `site` (pages, badge), `feeds` (Atom, iCalendar),
//!   `stream` (SSE), [`mcp`], `admin` (the admin listener, the one warp
//!   serves).
//! - **Composition**: `router` (one table lookup per request, the handler
//!   wrapped by its class's admission; each handler given only its
//!   feature's state, as warp's `todos` example does), `server` (builds
//!   the states and runs the listeners).
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
