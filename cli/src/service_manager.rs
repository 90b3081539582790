//! What `serve` and the service manager tell each other, in systemd's
//! protocols (which other managers follow): the listening sockets it may
//! pass (`LISTEN_FDS`, socket activation, so a restart keeps the socket
//! and its queued connections), and the states this process reports on
//! `NOTIFY_SOCKET` (ready once it answers, reloading, stopping). Without
//! either variable, nothing is passed and nothing is sent.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;

use crate::exit::CliError;

/// The name (`FileDescriptorName=`) of a passed socket that is the admin
/// listener; any other passed socket is the API's.
pub const ADMIN_SOCKET_NAME: &str = "admin";

/// The variables of socket activation (`sd_listen_fds(3)`).
const LISTEN_VARIABLES: [&str; 3] = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"];

/// The listening sockets the service manager passed, if any.
pub use resetctl::preflight::Passed;

/// Takes the sockets passed to this process: one named
/// [`ADMIN_SOCKET_NAME`] is the admin listener's, one other the API's.
/// Called before any thread starts, since it unsets the variables (so no
/// child inherits them), as `sd_listen_fds(3)` does.
///
/// As `sd_listen_fds(3)` says, the variables are this process's only when
/// `LISTEN_PID` names it: a wrapper that runs `resetctl` without `exec`
/// passes variables meant for itself, and they are ignored (and unset).
/// A passed descriptor that is not a listening TCP socket (`SO_ACCEPTCONN`:
/// a connection of an `Accept=yes` unit, or a socket nobody listens on)
/// cannot be served on: exit 71, as any listener `serve` cannot take, which
/// a unit's `Restart=` retries (64, a usage error, is the one it does not).
/// More than one socket for a listener is a usage error (the unit is wrong).
pub fn passed_listeners() -> Result<Passed, CliError> {
    let pid = std::env::var("LISTEN_PID").ok();
    let ours = pid.as_deref().and_then(|p| p.parse::<u32>().ok()) == Some(std::process::id());
    if !ours {
        if let (Some(pid), Ok(count)) = (&pid, std::env::var("LISTEN_FDS")) {
            tracing::warn!(
                "LISTEN_FDS={count} names process {pid}, not this one ({}): ignored, as \
                 sd_listen_fds(3) says; a wrapper script must `exec resetctl` for socket activation",
                std::process::id()
            );
        }
        forget_listen_variables();
        return Ok(Passed::default());
    }
    let names = sd_notify::listen_fds_with_names()
        .map_err(|e| CliError::usage(format!("the sockets passed (LISTEN_FDS): {e}")))?
        .collect::<Vec<_>>();
    let mut fds = listenfd::ListenFd::from_env();
    forget_listen_variables();
    let mut passed = Passed::default();
    for (index, (fd, name)) in names.into_iter().enumerate() {
        let listener = fds.take_tcp_listener(index).ok().flatten().ok_or_else(|| {
            CliError::listen(format!(
                "the socket passed as fd {fd} ({name}) is not a TCP socket; \
                     the .socket unit needs ListenStream=ADDRESS:PORT"
            ))
        })?;
        let listener = listening(listener, fd, &name)?;
        listener
            .set_nonblocking(true)
            .map_err(|e| CliError::io(format!("the socket passed as fd {fd}: {e}")))?;
        let admin = name == ADMIN_SOCKET_NAME;
        let slot = if admin {
            &mut passed.admin
        } else {
            &mut passed.api
        };
        if slot.replace(listener).is_some() {
            return Err(CliError::usage(format!(
                "more than one socket was passed for the {} listener (LISTEN_FDNAMES); pass one, \
                 named {ADMIN_SOCKET_NAME:?} for the admin listener",
                if admin { "admin" } else { "API" }
            )));
        }
    }
    Ok(passed)
}

/// `socket` when it listens (`SO_ACCEPTCONN`); otherwise the error naming
/// what it is instead.
fn listening(
    socket: std::net::TcpListener,
    fd: std::os::fd::RawFd,
    name: &str,
) -> Result<std::net::TcpListener, CliError> {
    let socket = socket2::Socket::from(socket);
    match socket.is_listener() {
        Ok(true) => Ok(socket.into()),
        Ok(false) => Err(CliError::listen(match socket.peer_addr() {
            Ok(_) => format!(
                "the socket passed as fd {fd} ({name}) is a connection, not a listening socket: \
                 the .socket unit needs Accept=no (an Accept=yes unit passes each connection)"
            ),
            Err(_) => format!(
                "the socket passed as fd {fd} ({name}) is not listening (no listen(2) on it): \
                 nothing could connect to it"
            ),
        })),
        Err(e) => Err(CliError::listen(format!(
            "the socket passed as fd {fd} ({name}): cannot tell whether it listens: {e}"
        ))),
    }
}

/// Unsets the socket-activation variables, so no child takes them for its own.
fn forget_listen_variables() {
    for name in LISTEN_VARIABLES {
        std::env::remove_var(name);
    }
}

/// Tells the service manager that `serve` answers: its listeners accept
/// and a view is loaded (or nothing is published yet, which it serves as
/// such). `status` is the one line `systemctl status` shows.
pub fn ready(status: &str) {
    send(&[
        sd_notify::NotifyState::Ready,
        sd_notify::NotifyState::Status(status),
    ]);
}

/// Tells the service manager that the settings are being read again;
/// [`ready`] follows when they apply (or were refused).
pub fn reloading() {
    let mut states = vec![sd_notify::NotifyState::Reloading];
    if let Ok(now) = sd_notify::NotifyState::monotonic_usec_now() {
        states.push(now);
    }
    send(&states);
}

/// Tells the service manager that `serve` is stopping (draining).
pub fn stopping() {
    send(&[
        sd_notify::NotifyState::Stopping,
        sd_notify::NotifyState::Status("stopping: finishing in-flight requests"),
    ]);
}

/// Sends `states` as one datagram to `NOTIFY_SOCKET`, never waiting: the
/// callers are the runtime's own threads, and a manager that does not read
/// (its queue full) must not stop `serve` from answering or from stopping.
/// A notification that cannot go at once is dropped with a warning.
fn send(states: &[sd_notify::NotifyState]) {
    let Some(socket) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let message: String = states.iter().map(|state| format!("{state}\n")).collect();
    if let Err(e) = send_now(&socket, message.as_bytes()) {
        let why = if e.kind() == io::ErrorKind::WouldBlock {
            "its queue is full (the service manager is not reading)".to_owned()
        } else {
            e.to_string()
        };
        tracing::warn!(
            "cannot tell the service manager {} (NOTIFY_SOCKET {}): {why}; dropped, serving goes on",
            message.lines().next().unwrap_or_default(),
            socket.to_string_lossy()
        );
    }
}

/// One non-blocking datagram of `message` to `socket` (a path, or `@NAME`
/// in the abstract namespace, as `sd_notify(3)` reads it).
fn send_now(socket: &OsStr, message: &[u8]) -> io::Result<()> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixDatagram};
    let address = match socket.as_bytes().strip_prefix(b"@") {
        Some(name) => SocketAddr::from_abstract_name(name)?,
        None => SocketAddr::from_pathname(socket)?,
    };
    let datagram = UnixDatagram::unbound()?;
    datagram.set_nonblocking(true)?;
    let sent = datagram.send_to_addr(message, &address)?;
    if sent == message.len() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::WriteZero,
            "a partial datagram",
        ))
    }
}
