//! What this build is: the version, the git commit it was built from
//! (recorded by the package's `build.rs`; `-dirty` with uncommitted
//! changes, `unknown` outside a checkout) and what is compiled in. One
//! owner for `resetctl --version` and the `resetctl_build_info` metric.

/// The package version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit of the checkout this was built from.
pub const COMMIT: &str = env!("RESETCTL_GIT_COMMIT");

/// `resetctl --version`: the version, the commit and what is compiled in.
/// resetctl has no optional Cargo features: every build carries all of these.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ncommit: ",
    env!("RESETCTL_GIT_COMMIT"),
    "\nfeatures: quota-memory, quota-redis, sync-rustls, sync-gzip, sync-brotli, \
     feeds-atom-ics, stream-sse, webhooks, mcp, site, metrics-prometheus"
);
