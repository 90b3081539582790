//! The HTTP API (warp): routes, handlers, error bodies and headers.
//!
//! Three parts, as in warp's own examples: [`routes()`] composes filters and
//! injects the shared state (ending in a catch-all, so no rejection escapes),
//! [`handlers`] call one query function each and build the response,
//! [`errors`] maps every error to the section 7 bodies. No domain decision is made here.
//! `conn` runs the accept loop (hyper-util) and `gate` its connection caps.

mod assets;
mod conn;
pub mod errors;
mod gate;
pub mod handlers;
pub mod mcp;
mod responses;
pub mod routes;
mod server;

pub use gate::{ConnectionLimits, MIN_HEAD_BYTES};
pub use routes::routes;
pub use server::{serve, AppState, ServeOptions};

#[cfg(test)]
mod tests;
