//! [`ServerError`]: everything that stops the `orcinus` process, from a bad flag to a poisoned
//! engine. One enum for the crate; [`ServerError::kind`] classifies it and
//! [`ServerError::exit_code`] turns it into the process exit status.
//!
//! Invariants: every variant's `Display` is a single line (no embedded newlines) that names the
//! problem, because `main` prints it as the one stderr line of a failed start; usage errors exit
//! with 2, every other failure with 1.

use orcinus_storage::StorageError;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Coarse classification of [`ServerError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad command line (unknown flag, missing or malformed value).
    Usage,
    /// The configuration file could not be read, parsed or validated.
    Config,
    /// A listener could not be bound or the engine could not be opened.
    Startup,
    /// A failure while serving: poisoned engine, a listener that stopped, a failed shutdown.
    Runtime,
}

/// Why the server could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The command line is malformed.
    #[error("{0} (see --help)")]
    Usage(String),
    /// The configuration file could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    ConfigRead {
        /// The path given with `--config`.
        path: PathBuf,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// The configuration file is not valid TOML or does not match the settings tree.
    #[error("invalid config file {}: line {line}: {message}", path.display())]
    ConfigParse {
        /// The path given with `--config`.
        path: PathBuf,
        /// 1-based line of the offending text (1 when unknown).
        line: usize,
        /// The parser's message, flattened to one line.
        message: String,
    },
    /// A setting has a value the server does not accept.
    #[error("invalid configuration: {0}")]
    ConfigInvalid(String),
    /// Another socket already listens on the requested address.
    #[error("{protocol} port {addr} is in use")]
    PortInUse {
        /// `mysql` or `redis`.
        protocol: &'static str,
        /// The address we tried to bind.
        addr: SocketAddr,
    },
    /// Binding a listener failed for another reason (permission, address not available …).
    #[error("cannot listen for {protocol} on {addr}: {source}")]
    Bind {
        /// `mysql` or `redis`.
        protocol: &'static str,
        /// The address we tried to bind.
        addr: SocketAddr,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// Another process holds the data directory's lock.
    #[error("data directory {} is locked by another process (is another orcinus running?)", path.display())]
    DataDirLocked {
        /// The data directory.
        path: PathBuf,
    },
    /// The storage engine failed to open (I/O, recovery).
    #[error("cannot open data directory {}: {source}", path.display())]
    StorageOpen {
        /// The data directory.
        path: PathBuf,
        /// The engine's error.
        source: StorageError,
    },
    /// A front door's service (its keyspaces, catalog) could not be opened on the engine.
    #[error("cannot open the {protocol} service: {reason}")]
    ServiceOpen {
        /// `mysql` or `redis`.
        protocol: &'static str,
        /// What failed, in one line.
        reason: String,
    },
    /// A non-loopback bind while an administrator account has no password (or the data dir is
    /// new, so `root` would have none).
    #[error(
        "server.bind {bind} is not a loopback address and {accounts} has no password; start bound to 127.0.0.1, set one (ALTER USER ... IDENTIFIED BY), then restart"
    )]
    PasswordlessAdmin {
        /// The configured bind address.
        bind: std::net::IpAddr,
        /// The account names, `'user'@'host'`, comma-separated.
        accounts: String,
    },
    /// The async runtime or the signal handlers could not be set up.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// Writing to stdout (the listening lines, --help, --version) failed.
    #[error("cannot write to stdout: {0}")]
    Stdout(std::io::Error),
    /// A listener task ended; the server cannot keep serving that port.
    #[error("{protocol} listener stopped: {reason}")]
    ListenerStopped {
        /// `mysql` or `redis`.
        protocol: &'static str,
        /// What ended it, in one line.
        reason: String,
    },
    /// A sync failed; the engine acknowledges nothing more, so the server exits.
    #[error("storage engine is poisoned after a failed sync; exiting")]
    EnginePoisoned,
    /// The final sync at shutdown failed.
    #[error("shutdown failed: {0}")]
    Shutdown(StorageError),
    /// `orcinus tpch` could not generate or load the TPC-H data.
    #[error("tpch load failed: {0}")]
    TpchLoad(String),
}

impl ServerError {
    /// The kind of failure.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Usage(_) => ErrorKind::Usage,
            Self::ConfigRead { .. } | Self::ConfigParse { .. } | Self::ConfigInvalid(_) => {
                ErrorKind::Config
            }
            Self::PortInUse { .. }
            | Self::Bind { .. }
            | Self::DataDirLocked { .. }
            | Self::StorageOpen { .. }
            | Self::ServiceOpen { .. }
            | Self::PasswordlessAdmin { .. } => ErrorKind::Startup,
            Self::Runtime(_)
            | Self::Stdout(_)
            | Self::ListenerStopped { .. }
            | Self::EnginePoisoned
            | Self::Shutdown(_)
            | Self::TpchLoad(_) => ErrorKind::Runtime,
        }
    }

    /// The process exit status for this failure: 2 for usage errors, 1 otherwise.
    #[must_use]
    pub fn exit_code(&self) -> i32 {
        match self.kind() {
            ErrorKind::Usage => 2,
            ErrorKind::Config | ErrorKind::Startup | ErrorKind::Runtime => 1,
        }
    }

    /// The message as exactly one line, for the stderr report of `main`.
    #[must_use]
    pub fn one_line(&self) -> String {
        flatten_to_one_line(&self.to_string())
    }
}

/// Joins the lines of `text` with "; " so it prints as one line.
#[must_use]
pub fn flatten_to_one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_exit_with_two_and_others_with_one() {
        assert_eq!(ServerError::Usage("unknown flag --x".into()).exit_code(), 2);
        assert_eq!(ServerError::ConfigInvalid("x".into()).exit_code(), 1);
        assert_eq!(ServerError::EnginePoisoned.exit_code(), 1);
    }

    #[test]
    fn messages_are_flattened_to_one_line() {
        let err = ServerError::ConfigInvalid("first\n  second\n\nthird".into());
        assert_eq!(
            err.one_line(),
            "invalid configuration: first; second; third"
        );
    }

    #[test]
    fn port_in_use_names_protocol_and_address() {
        let err = ServerError::PortInUse {
            protocol: "redis",
            addr: SocketAddr::from(([127, 0, 0, 1], 6379)),
        };
        assert_eq!(err.to_string(), "redis port 127.0.0.1:6379 is in use");
    }
}
