//! Whether a configuration can run: the one check that `serve` makes at
//! start, that `serve --check` makes, and that a reload makes before it
//! applies anything (so a file `--check` refuses changes nothing, whatever
//! sends the signal). Every setting's value was validated when the
//! settings were built ([`crate::settings`]); this is what only trying
//! shows, as the user the server runs as: the data dir read, every
//! listener bound (the admin listener on an address of its own), the
//! quota store answering a `PING` and loading its script.
//!
//! At start the listeners are bound and kept, and a quota store that does
//! not answer yet is only logged (data requests are answered 503 until it
//! does). Checking, a listener's port is only tried (one a running server
//! holds is reported, not refused: the check runs beside it), and a store
//! that does not answer is refused.

use std::net::SocketAddr;
use std::path::Path;

use crate::limit::{Limiter, SettingError};
use crate::settings::Settings;

/// What the configuration is checked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occasion {
    /// `serve` starting: the listeners are bound and kept.
    Start,
    /// `serve --check`, or a reload: nothing is kept, nothing may fail later.
    Check,
}

/// Listening sockets a service manager passed (`LISTEN_FDS`): each
/// replaces binding its address.
#[derive(Debug, Default)]
pub struct Passed {
    /// The API's.
    pub api: Option<std::net::TcpListener>,
    /// The admin listener's.
    pub admin: Option<std::net::TcpListener>,
}

/// The listeners of a start.
#[derive(Debug)]
pub struct Listeners {
    /// The API's, and its address.
    pub api: (tokio::net::TcpListener, SocketAddr),
    /// The admin listener's, when one is configured or passed.
    pub admin: Option<tokio::net::TcpListener>,
}

/// A configuration that can run.
#[derive(Debug)]
pub struct Runnable {
    /// The quota's limiter, connected.
    pub limiter: Limiter,
    /// The listeners, bound (a start only).
    pub listeners: Option<Listeners>,
    /// What was tried, a line each (`listen: 127.0.0.1:8080 can be listened on`).
    pub report: Vec<String>,
}

/// Why a configuration cannot run. Each message's first line names the
/// setting or the file and why.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// A listen address that is not one, or the admin listener on the
    /// API's address (a usage error).
    #[error("{0}")]
    Address(String),
    /// An address that cannot be listened on: not this host's, in use
    /// (at start), or a port this user may not bind.
    #[error("{0}")]
    Listen(String),
    /// The data dir cannot be read by the user the server runs as.
    #[error("{0}")]
    DataDir(String),
    /// The quota store refuses us, or (checking) does not answer.
    #[error(transparent)]
    Store(#[from] SettingError),
}

/// Decides whether `settings` can run, trying what `serve` does at
/// start: the data dir read, the quota store asked, the listeners bound
/// (or `passed` taken). At [`Occasion::Start`] the listeners are kept.
pub async fn check(
    settings: &Settings,
    occasion: Occasion,
    passed: Passed,
) -> Result<Runnable, Refusal> {
    readable(&settings.data_dir)?;
    let serve = &settings.serve;
    // The quota store before anything listens: one that refuses us for
    // good stops the start.
    let limiter = serve
        .options
        .limits
        .connect(occasion == Occasion::Check)
        .await?;
    let mut report = Vec::new();
    let listeners = match occasion {
        Occasion::Start => Some(bind_all(settings, passed).await?),
        Occasion::Check => {
            let listen = resolve("listen", &serve.listen).await?;
            report.push(format!("listen: {}", try_address(&serve.listen, &listen)?));
            if let Some(admin) = &serve.admin_listen {
                let at = resolve("admin-listen", admin).await?;
                apart(admin, &at, &serve.listen, &listen)?;
                report.push(format!("admin-listen: {}", try_address(admin, &at)?));
            }
            None
        }
    };
    report.push(format!(
        "quota store: {} answers",
        serve.options.limits.store_shown()
    ));
    Ok(Runnable {
        limiter,
        listeners,
        report,
    })
}

/// The listeners of a start: the sockets passed, or else the addresses
/// bound with the configured backlog (the admin listener apart from the API's).
async fn bind_all(settings: &Settings, passed: Passed) -> Result<Listeners, Refusal> {
    let serve = &settings.serve;
    let api = match passed.api {
        Some(socket) => adopt(socket)?,
        None => bind(
            &serve.listen,
            &resolve("listen", &serve.listen).await?,
            serve.backlog,
        )?,
    };
    let local = api
        .local_addr()
        .map_err(|e| Refusal::Listen(e.to_string()))?;
    let admin = match (passed.admin, &serve.admin_listen) {
        (Some(socket), _) => Some(adopt(socket)?),
        (None, Some(admin)) => {
            let at = resolve("admin-listen", admin).await?;
            apart(admin, &at, &local.to_string(), &[local])?;
            Some(bind(admin, &at, serve.backlog)?)
        }
        (None, None) => None,
    };
    Ok(Listeners {
        api: (api, local),
        admin,
    })
}

/// The data dir, when it exists, and its versions' directory and pointer,
/// read as this process's user (a missing one is made by `serve`).
fn readable(data_dir: &Path) -> Result<(), Refusal> {
    let layout = crate::data_dir::DataDir::of(data_dir);
    let refused = |what: &Path, e: std::io::Error| {
        let inside = match what == data_dir {
            true => String::new(),
            false => format!("{}: ", what.display()),
        };
        Refusal::DataDir(format!(
            "the data dir {} cannot be read by user {}: {inside}{e}",
            data_dir.display(),
            user_name(),
        ))
    };
    for dir in [data_dir.to_owned(), layout.snapshots()] {
        match std::fs::read_dir(&dir) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(refused(&dir, e)),
        }
    }
    let pointer = layout.pointer();
    match std::fs::File::open(&pointer) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(refused(&pointer, e)),
        _ => Ok(()),
    }
}

/// The addresses `address` (IP:PORT or HOST:PORT) names; `key` is its setting.
async fn resolve(key: &str, address: &str) -> Result<Vec<SocketAddr>, Refusal> {
    let found: Vec<SocketAddr> = tokio::net::lookup_host(address)
        .await
        .map_err(|e| {
            Refusal::Address(format!(
                "{key} {address:?} is not an address like 127.0.0.1:8080 or localhost:8080: {e}"
            ))
        })?
        .collect();
    if found.is_empty() {
        return Err(Refusal::Address(format!(
            "{key} {address:?} names no address"
        )));
    }
    Ok(found)
}

/// Refuses an admin listener that would share the API's port: the same
/// address, or one of the two on every address (`0.0.0.0`, `::`).
fn apart(
    admin: &str,
    admin_at: &[SocketAddr],
    listen: &str,
    listen_at: &[SocketAddr],
) -> Result<(), Refusal> {
    let overlap = admin_at.iter().any(|a| {
        listen_at.iter().any(|l| {
            a.port() != 0
                && a.port() == l.port()
                && (a.ip() == l.ip() || a.ip().is_unspecified() || l.ip().is_unspecified())
        })
    });
    match overlap {
        false => Ok(()),
        true => Err(Refusal::Address(format!(
            "admin-listen {admin} is the address of listen ({listen}): the admin listener \
             (metrics, healthz, export) needs a port of its own"
        ))),
    }
}

/// Binds the first of `addresses` (of `listen`) that can be, with `backlog`.
fn bind(
    listen: &str,
    addresses: &[SocketAddr],
    backlog: u32,
) -> Result<tokio::net::TcpListener, Refusal> {
    let mut last = None;
    for address in addresses {
        let socket = match address {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
        };
        let bound = socket.and_then(|socket| {
            socket.set_reuseaddr(true)?;
            socket.bind(*address)?;
            socket.listen(backlog)
        });
        match bound {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some((*address, e)),
        }
    }
    Err(cannot_listen(listen, last))
}

/// Why `listen` cannot be listened on, in the words start and the check
/// share: who holds a port in use, which user may not bind a low port.
fn cannot_listen(listen: &str, error: Option<(SocketAddr, std::io::Error)>) -> Refusal {
    let why = match error {
        None => "the name has no address".to_owned(),
        Some((at, e)) if e.kind() == std::io::ErrorKind::AddrNotAvailable => {
            format!("{} is not this host's: {e}", at.ip())
        }
        // Who holds it is one command away; say which.
        Some((_, e)) if e.kind() == std::io::ErrorKind::AddrInUse => format!(
            "{e}: another server holds it (`ss -ltnp 'sport = :{}'` names it; under systemd, \
             resetctl-serve.socket holds it for the service)",
            listen.rsplit(':').next().unwrap_or(listen)
        ),
        Some((_, e)) if e.kind() == std::io::ErrorKind::PermissionDenied => format!(
            "permission denied for user {} (a port below 1024 needs root or \
             CAP_NET_BIND_SERVICE: under systemd, resetctl-serve.socket can bind it, or a \
             drop-in gives the capability)",
            user_name()
        ),
        Some((_, e)) => e.to_string(),
    };
    Refusal::Listen(format!("cannot listen on {listen}: {why}"))
}

/// Whether `address` (resolved to `addresses`) can be listened on here,
/// as start would bind it: each IP this host's (bound on another port to
/// find out, so a running server's port is no failure), and its port
/// free, or held (a running server: reported), or refused as start would
/// be refused (a port this user may not bind).
fn try_address(address: &str, addresses: &[SocketAddr]) -> Result<String, Refusal> {
    let mut free = false;
    for at in addresses {
        let mut any_port = *at;
        any_port.set_port(0);
        std::net::TcpListener::bind(any_port)
            .map_err(|e| cannot_listen(address, Some((*at, e))))?;
        match std::net::TcpListener::bind(at) {
            Ok(_) => free = true,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {}
            Err(e) => return Err(cannot_listen(address, Some((*at, e)))),
        }
    }
    Ok(if free {
        format!("{address} can be listened on")
    } else {
        format!("{address} is this host's; its port is in use now (a running server?)")
    })
}

/// A socket the service manager passed, as the runtime's listener.
fn adopt(socket: std::net::TcpListener) -> Result<tokio::net::TcpListener, Refusal> {
    let listener = tokio::net::TcpListener::from_std(socket)
        .map_err(|e| Refusal::Listen(format!("the socket passed: {e}")))?;
    if let Ok(at) = listener.local_addr() {
        tracing::info!("on the socket the service manager passed ({at}), kept across restarts");
    }
    Ok(listener)
}

/// The name of the user this process runs as (its effective uid, by
/// `/etc/passwd`), or `uid N` when it has none.
pub fn user_name() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .unwrap_or("?")
        .to_owned();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|fields| fields.len() > 2 && fields[2] == uid)
        .map_or_else(|| format!("uid {uid}"), |fields| fields[0].to_owned())
}
