//! What `serve` and the service manager tell each other, in systemd's
//! protocols (which other managers follow): the listening sockets it may
//! pass (`LISTEN_FDS`, socket activation, so a restart keeps the socket
//! and its queued connections), and the states this process reports on
//! `NOTIFY_SOCKET` (ready once it answers, reloading, stopping). Without
//! either variable, nothing is passed and nothing is sent.

use crate::exit::CliError;

/// The name (`FileDescriptorName=`) of a passed socket that is the admin
/// listener; any other passed socket is the API's.
pub const ADMIN_SOCKET_NAME: &str = "admin";

/// The listening sockets the service manager passed, if any.
#[derive(Debug, Default)]
pub struct Passed {
    /// The API's.
    pub api: Option<std::net::TcpListener>,
    /// The admin listener's.
    pub admin: Option<std::net::TcpListener>,
}

/// Takes the sockets passed to this process (`LISTEN_PID` naming it):
/// one named [`ADMIN_SOCKET_NAME`] is the admin listener's, one other the
/// API's. A passed descriptor that is not a TCP socket, or more than one
/// for a listener, is a usage error (the unit is wrong).
pub fn passed_listeners() -> Result<Passed, CliError> {
    let names = sd_notify::listen_fds_with_names()
        .map_err(|e| CliError::usage(format!("the sockets passed (LISTEN_FDS): {e}")))?;
    let mut fds = listenfd::ListenFd::from_env();
    let mut passed = Passed::default();
    for (index, (fd, name)) in names.enumerate() {
        let listener = fds.take_tcp_listener(index).ok().flatten().ok_or_else(|| {
            CliError::usage(format!(
                "the socket passed as fd {fd} ({name}) is not a TCP socket; \
                     the .socket unit needs ListenStream=ADDRESS:PORT"
            ))
        })?;
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

fn send(states: &[sd_notify::NotifyState]) {
    if let Err(e) = sd_notify::notify(states) {
        tracing::warn!("cannot tell the service manager (NOTIFY_SOCKET): {e}");
    }
}
