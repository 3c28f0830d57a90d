//! Structured logging to stderr with `tracing-subscriber`.
//!
//! The filter comes from `RUST_LOG` when it is set (an invalid value is a configuration error,
//! not silently replaced), else from `server.log_level`. Colour only when stderr is a terminal.
//! Nothing is logged before start-up succeeds, so a failed start prints exactly one stderr line.

use crate::config::LogLevel;
use crate::error::ServerError;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Call once, after the configuration is valid.
pub fn init(level: LogLevel) -> Result<(), ServerError> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) => EnvFilter::try_new(&directives).map_err(|err| {
            ServerError::ConfigInvalid(format!(
                "RUST_LOG={directives:?} is not a valid filter: {err}"
            ))
        })?,
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(ServerError::ConfigInvalid("RUST_LOG is not UTF-8".into()));
        }
        Err(std::env::VarError::NotPresent) => EnvFilter::new(level.as_directive()),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init()
        .map_err(|err| {
            ServerError::Runtime(std::io::Error::other(format!(
                "cannot install the logger: {err}"
            )))
        })
}
