//! Transport: everything between a socket and the routes. The accept loop
//! (`conn`, on hyper-util's HTTP/1.1 and HTTP/2), its connection caps
//! (`gate`), what a request head must hold (`head`), the header, body and
//! idle deadlines (`deadline`), the socket as hyper sees it with its JSON
//! rewrite of hyper's own errors (`hyper_io`), and the record stream's
//! HTTP/1.1 path that answers without hyper (`stream_conn`). It knows no
//! route: it is handed them as a service, with the client-key rules the
//! caps and the access log use.

mod conn;
mod deadline;
mod gate;
mod head;
mod hyper_io;
mod stream_conn;

pub(crate) use conn::{run, PeerAddr, TargetForm};
pub use gate::{ConnectionLimits, MIN_HEAD_BYTES};
