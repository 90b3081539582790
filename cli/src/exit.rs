//! Exit codes (sysexits-style) and the mapping from library errors to them.
//!
//! One exhaustive match per library error type, so a new error variant
//! cannot ship without a decided exit code.

use std::process::ExitCode;

use resetctl::config::ConfigError;
use resetctl::durable::LockError;
use resetctl::history::HistoryError;
use resetctl::snapshot::SnapshotError;
use resetctl::standalone::StandaloneError;

/// Declares [`Code`] and its table in one list, so a code cannot be added
/// without the words `--help` shows for it.
macro_rules! codes {
    ($($(#[doc = $doc:literal])* $name:ident = $n:literal, $help:literal;)*) => {
        /// The documented exit codes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Code {
            $($(#[doc = $doc])* $name = $n,)*
        }

        impl Code {
            /// Every code, in order, with what `--help` says of it.
            pub const TABLE: &[(Code, &str)] = &[$((Code::$name, $help),)*];
        }
    };
}

codes! {
    /// Success.
    Ok = 0, "ok";
    /// `status`: a snapshot is served, but it is stale (an upstream mirror
    /// whose sync status is `stale` or `error`); for monitoring.
    Stale = 1, "status: served but stale";
    /// A flag, argument or config key is wrong (EX_USAGE).
    Usage = 64, "usage";
    /// Input data is invalid: a seed file, a snapshot, an upstream body (EX_DATAERR).
    DataErr = 65, "bad data";
    /// An input named does not exist or holds nothing to read (EX_NOINPUT).
    NoInput = 66, "no input (restore: no backup in the directory)";
    /// Nothing to serve or report: no snapshot published yet (EX_UNAVAILABLE).
    Unavailable = 69, "nothing published (serve: a quota store refuses TLS or credentials)";
    /// `serve` cannot listen: the address is in use or not this host's (EX_OSERR).
    Listen = 71, "cannot listen (serve: the address is in use or not ours)";
    /// Reading or writing a file failed (EX_IOERR).
    IoErr = 74, "I/O error";
    /// Try again later: the data dir is locked by another command (EX_TEMPFAIL).
    TempFail = 75, "temporary failure (locked; try again)";
}

/// `examples` followed by the table of exit codes: `resetctl --help`'s
/// closing text (and the man page's), made from [`Code::TABLE`].
pub fn with_exit_codes(examples: &str) -> String {
    let mut text = format!("{examples}\n\nExit codes:");
    for (code, help) in Code::TABLE {
        text.push_str(&format!("\n  {:<3} {help}", *code as u8));
    }
    text
}

impl From<Code> for ExitCode {
    fn from(code: Code) -> Self {
        ExitCode::from(code as u8)
    }
}

/// A failed command: one line for the operator and the exit code.
#[derive(Debug)]
pub struct CliError {
    /// The exit code.
    pub code: Code,
    /// The message, printed after `resetctl: `.
    pub message: String,
}

impl CliError {
    /// An error with an explicit code (this module's mappings).
    fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A flag, argument or setting is wrong: 64.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Code::Usage, message)
    }

    /// Input data is invalid (a document, a file unfit to read): 65.
    pub fn data(message: impl Into<String>) -> Self {
        Self::new(Code::DataErr, message)
    }

    /// Nothing to serve or report: 69.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(Code::Unavailable, message)
    }

    /// `serve` cannot listen: 71.
    pub fn listen(message: impl Into<String>) -> Self {
        Self::new(Code::Listen, message)
    }

    /// Reading or writing failed (a file, stdout, the runtime): 74.
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(Code::IoErr, message)
    }

    /// A file could not be read: bad data when it is unfit to read (not a
    /// regular file, over its cap), else an I/O error.
    pub fn unreadable(unfit: bool, message: impl Into<String>) -> Self {
        Self::new(unreadable_code(unfit), message)
    }

    /// `status`: what is served is stale: 1.
    pub fn stale(message: impl Into<String>) -> Self {
        Self::new(Code::Stale, message)
    }
}

/// The exit code of a command line clap refused (64), or of the help and
/// version it printed (0).
pub fn clap_code(err: &clap::Error) -> Code {
    if err.use_stderr() {
        Code::Usage
    } else {
        Code::Ok
    }
}

/// A guarded read's failure: a file unfit to read (not a regular file,
/// over its cap) is bad data; an I/O error is an I/O error.
pub fn read_code(e: &resetctl::durable::ReadError) -> Code {
    unreadable_code(e.is_unfit())
}

/// A file unfit to read is bad data (65); one that failed to read, an I/O
/// error (74).
fn unreadable_code(unfit: bool) -> Code {
    if unfit {
        Code::DataErr
    } else {
        Code::IoErr
    }
}

impl From<resetctl::durable::ReadError> for CliError {
    fn from(err: resetctl::durable::ReadError) -> Self {
        CliError::new(read_code(&err), err.to_string())
    }
}

impl From<LockError> for CliError {
    fn from(err: LockError) -> Self {
        let code = match &err {
            LockError::Busy { .. } => Code::TempFail,
            LockError::Io { .. } => Code::IoErr,
        };
        CliError::new(code, err.to_string())
    }
}

impl From<SnapshotError> for CliError {
    fn from(err: SnapshotError) -> Self {
        CliError::new(snapshot_code(&err), err.to_string())
    }
}

/// The exit code of a snapshot error, wherever it is carried.
pub fn snapshot_code(err: &SnapshotError) -> Code {
    match err {
        SnapshotError::Read { .. } | SnapshotError::Write(_) => Code::IoErr,
        SnapshotError::Lock(LockError::Busy { .. }) => Code::TempFail,
        SnapshotError::Lock(LockError::Io { .. }) => Code::IoErr,
        SnapshotError::Corrupt { .. }
        | SnapshotError::BadPointer { .. }
        | SnapshotError::Unfit(_)
        | SnapshotError::SequenceExhausted(_)
        | SnapshotError::BrokenPointer { .. }
        | SnapshotError::LinkedDir(_) => Code::DataErr,
        SnapshotError::NoSuchSequence(_) | SnapshotError::Refused(_) => Code::Usage,
    }
}

impl From<resetctl::publish::PublishError> for CliError {
    fn from(err: resetctl::publish::PublishError) -> Self {
        CliError::new(publish_code(&err), err.to_string())
    }
}

/// The exit code of a failed publish, wherever it is carried.
pub fn publish_code(err: &resetctl::publish::PublishError) -> Code {
    use resetctl::publish::PublishError;
    match err {
        PublishError::Snapshot(e) => snapshot_code(e),
        PublishError::Outbox(_) => Code::IoErr,
    }
}

impl From<resetctl::data_dir::LinkedDir> for CliError {
    fn from(err: resetctl::data_dir::LinkedDir) -> Self {
        CliError::new(Code::DataErr, err.to_string())
    }
}

impl From<HistoryError> for CliError {
    fn from(err: HistoryError) -> Self {
        let code = match &err {
            HistoryError::Read(e) => read_code(e),
            HistoryError::Write(_) => Code::IoErr,
            HistoryError::Corrupt { .. } => Code::DataErr,
        };
        CliError::new(code, err.to_string())
    }
}

impl From<StandaloneError> for CliError {
    fn from(err: StandaloneError) -> Self {
        let message = err.to_string();
        match err {
            // The message names what was not published; the code is its cause's.
            StandaloneError::Unpublished { source, .. } => {
                CliError::new(CliError::from(*source).code, message)
            }
            StandaloneError::WrongMode(message) => CliError::new(Code::Usage, message),
            StandaloneError::History(e) => e.into(),
            StandaloneError::Snapshot(e) => e.into(),
            StandaloneError::Publish(e) => e.into(),
            e @ (StandaloneError::BadSeed { .. }
            | StandaloneError::Conflicts(_)
            | StandaloneError::Invalid(_)) => CliError::new(Code::DataErr, e.to_string()),
            StandaloneError::Ledger(e) => e.into(),
            StandaloneError::Refused(message) => CliError::new(Code::Usage, message),
            StandaloneError::NoBackup(message) => CliError::new(Code::NoInput, message),
        }
    }
}

impl From<resetctl::ledger::LedgerError> for CliError {
    fn from(err: resetctl::ledger::LedgerError) -> Self {
        use resetctl::ledger::LedgerError;
        let code = match &err {
            LedgerError::Corrupt { .. } | LedgerError::Unfit(_) => Code::DataErr,
            LedgerError::Io { .. } => Code::IoErr,
        };
        CliError::new(code, err.to_string())
    }
}

impl From<ConfigError> for CliError {
    fn from(err: ConfigError) -> Self {
        let code = match &err {
            ConfigError::Read(e) => read_code(e),
            ConfigError::Missing { .. } | ConfigError::Invalid { .. } => Code::Usage,
        };
        CliError::new(code, err.to_string())
    }
}

impl From<resetctl::webhook::EndpointError> for CliError {
    fn from(err: resetctl::webhook::EndpointError) -> Self {
        use resetctl::webhook::EndpointError;
        let code = match &err {
            EndpointError::Read { .. } | EndpointError::Write(_) => Code::IoErr,
            EndpointError::Corrupt { .. } | EndpointError::Unfit(_) => Code::DataErr,
            EndpointError::NoSuchEndpoint(_)
            | EndpointError::Invalid(_)
            | EndpointError::Target(_) => Code::Usage,
        };
        CliError::new(code, err.to_string())
    }
}

impl From<resetctl::limit::SettingError> for CliError {
    fn from(err: resetctl::limit::SettingError) -> Self {
        use resetctl::limit::SettingError;
        // Exhaustive: a new kind of setting error gets its code here.
        let code = match err {
            SettingError::RedisRefused { .. } | SettingError::RedisUnavailable { .. } => {
                Code::Unavailable
            }
            SettingError::RedisTlsFile { unfit: true, .. } => Code::DataErr,
            SettingError::RedisTlsFile { unfit: false, .. }
            | SettingError::Rate(_)
            | SettingError::Range(_)
            | SettingError::TrustsEveryone(_)
            | SettingError::Header(_)
            | SettingError::RedisUrl { .. }
            | SettingError::RedisTlsPair
            | SettingError::RedisTlsUnused(_)
            | SettingError::RedisSetup { .. } => Code::Usage,
        };
        CliError::new(code, err.to_string())
    }
}

impl From<resetctl::preflight::Refusal> for CliError {
    fn from(err: resetctl::preflight::Refusal) -> Self {
        use resetctl::preflight::Refusal;
        match err {
            Refusal::Address(why) => CliError::new(Code::Usage, why),
            Refusal::Listen(why) => CliError::new(Code::Listen, why),
            Refusal::DataDir(why) => CliError::new(Code::IoErr, why),
            Refusal::Store(e) => e.into(),
        }
    }
}

impl From<resetctl::sync::SyncError> for CliError {
    fn from(err: resetctl::sync::SyncError) -> Self {
        use resetctl::sync::state::SyncStateError;
        use resetctl::sync::SyncError;
        let code = match &err {
            SyncError::BackingOff { .. } | SyncError::Busy(_) => Code::TempFail,
            SyncError::WrongMode(_) => Code::Usage,
            SyncError::Fetch { .. } => Code::Unavailable,
            SyncError::Invalid { .. } => Code::DataErr,
            SyncError::State(SyncStateError::Read(e)) => read_code(e),
            SyncError::State(_) | SyncError::Lock(_) => Code::IoErr,
            SyncError::Snapshot(e) => snapshot_code(e),
            SyncError::Publish(e) => publish_code(e),
        };
        CliError::new(code, err.to_string())
    }
}

impl From<resetctl::standalone::actions::ActionError> for CliError {
    fn from(err: resetctl::standalone::actions::ActionError) -> Self {
        CliError::new(Code::Usage, err.to_string())
    }
}

impl From<resetctl::settings::SettingsError> for CliError {
    fn from(err: resetctl::settings::SettingsError) -> Self {
        use resetctl::settings::SettingsError;
        let code = match &err {
            SettingsError::Invalid { .. } | SettingsError::Env(_) => Code::Usage,
            SettingsError::UnfitFile(_) => Code::DataErr,
        };
        CliError::new(code, err.to_string())
    }
}

impl From<resetctl::webhook::manage::ManageError> for CliError {
    fn from(err: resetctl::webhook::manage::ManageError) -> Self {
        use resetctl::webhook::manage::ManageError;
        match err {
            ManageError::Endpoint(e) => e.into(),
            ManageError::Lock(e) => e.into(),
            ManageError::Outbox(why) => CliError::new(Code::IoErr, why),
            e @ (ManageError::Target(_) | ManageError::Private(_) | ManageError::Replica(_)) => {
                CliError::new(Code::Usage, e.to_string())
            }
        }
    }
}
