//! Black-box tests: each module runs the real `resetctl` binary against a
//! fresh data dir (and, for the server, talks HTTP to it).

mod util;

mod cli;
mod crash;
mod seed;
mod snapshots;
