//! The server configuration: ONE serde struct tree ([`Config`]) with defaults for every setting,
//! read from an optional TOML file, overridden by command-line flags, validated in
//! [`Config::validate`] and nowhere else.
//!
//! Invariants:
//! - Every table denies unknown keys, so a typo is an error, never a silently ignored setting.
//! - `storage.path` is not a setting: the engine lives directly in `server.data_dir`, and
//!   [`Config::resolve`] copies the data dir into it; a file that sets it is rejected.
//! - Loading, overriding and validating touch nothing on disk except reading the file.
//! - A non-loopback `server.bind` is checked at start-up, not here: it needs the account
//!   table (see `startup::check_public_bind`).

use crate::cli::CliOverrides;
use crate::error::{ServerError, flatten_to_one_line};
use crate::mysql::MysqlSettings;
use crate::resp::RespSettings;
use orcinus_storage::StorageConfig;
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

/// The whole configuration; each field is one table of the TOML file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[server]`: addresses, data directory, logging.
    pub server: ServerSettings,
    /// `[storage]`: the engine (durability policy, caches, lock-wait timeout).
    pub storage: StorageConfig,
    /// `[mysql]`: the MySQL-protocol port's limits.
    pub mysql: MysqlSettings,
    /// `[resp]`: the RESP port's limits and password.
    pub resp: RespSettings,
}

/// The `[server]` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    /// IP address both listeners bind to.
    pub bind: IpAddr,
    /// MySQL-protocol port; 0 picks a free port.
    pub mysql_port: u16,
    /// RESP port; 0 picks a free port.
    pub redis_port: u16,
    /// Directory holding the engine's files (created on first start).
    pub data_dir: PathBuf,
    /// Log level used when `RUST_LOG` is not set.
    pub log_level: LogLevel,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            mysql_port: 3306,
            redis_port: 6379,
            data_dir: PathBuf::from("orcinus-data"),
            log_level: LogLevel::Info,
        }
    }
}

/// Verbosity of the stderr log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Only errors.
    Error,
    /// Errors and warnings.
    Warn,
    /// Start-up, shutdown and other notable events. Default.
    #[default]
    Info,
    /// Per-connection detail.
    Debug,
    /// Everything.
    Trace,
}

impl LogLevel {
    /// The level as a `tracing` filter directive.
    #[must_use]
    pub fn as_directive(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }
}

impl Config {
    /// Builds the configuration the command line asks for: the file named by `--config` (or
    /// the defaults), then the flags, then [`Config::resolve`].
    pub fn from_cli(overrides: &CliOverrides) -> Result<Self, ServerError> {
        let mut config = match &overrides.config_file {
            Some(path) => Self::load(path)?,
            None => Self::default(),
        };
        config.apply(overrides);
        config.resolve()
    }

    /// Reads and parses a TOML file (not yet validated).
    pub fn load(path: &Path) -> Result<Self, ServerError> {
        let text = std::fs::read_to_string(path).map_err(|source| ServerError::ConfigRead {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse_toml(&text, path)
    }

    /// Parses TOML text; `path` only names the source in errors.
    pub fn parse_toml(text: &str, path: &Path) -> Result<Self, ServerError> {
        let parse_error = |err: toml::de::Error| ServerError::ConfigParse {
            path: path.to_path_buf(),
            line: err
                .span()
                .and_then(|span| text.get(..span.start))
                .map_or(1, |before| before.matches('\n').count() + 1),
            message: flatten_to_one_line(err.message()),
        };
        let config: Self = toml::from_str(text).map_err(parse_error)?;
        let raw: toml::Table = toml::from_str(text).map_err(parse_error)?;
        let sets_storage_path = raw
            .get("storage")
            .and_then(toml::Value::as_table)
            .is_some_and(|storage| storage.contains_key("path"));
        if sets_storage_path {
            return Err(ServerError::ConfigInvalid(
                "storage.path cannot be set: the engine lives in server.data_dir \
                 (set that, or pass --data-dir)"
                    .into(),
            ));
        }
        Ok(config)
    }

    /// Applies command-line flags over the file's settings.
    pub fn apply(&mut self, overrides: &CliOverrides) {
        let server = &mut self.server;
        if let Some(dir) = &overrides.data_dir {
            server.data_dir.clone_from(dir);
        }
        if let Some(bind) = overrides.bind {
            server.bind = bind;
        }
        if let Some(port) = overrides.mysql_port {
            server.mysql_port = port;
        }
        if let Some(port) = overrides.redis_port {
            server.redis_port = port;
        }
    }

    /// Points the engine at the data dir and validates everything.
    pub fn resolve(mut self) -> Result<Self, ServerError> {
        self.storage.path.clone_from(&self.server.data_dir);
        self.validate()?;
        Ok(self)
    }

    /// Checks every setting; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ServerError> {
        let invalid = |message: String| Err(ServerError::ConfigInvalid(message));
        let server = &self.server;
        if server.data_dir.as_os_str().is_empty() {
            return invalid("server.data_dir must not be empty".into());
        }
        if server.mysql_port != 0 && server.mysql_port == server.redis_port {
            return invalid(format!(
                "server.mysql_port and server.redis_port are both {}",
                server.mysql_port
            ));
        }
        if self.storage.path != server.data_dir {
            return invalid("storage.path must equal server.data_dir".into());
        }
        self.storage
            .validate()
            .map_err(ServerError::ConfigInvalid)?;
        self.mysql.validate().map_err(ServerError::ConfigInvalid)?;
        if self.resp.max_clients == 0 {
            return invalid("resp.max_clients must be at least 1".into());
        }
        if self.resp.proto_max_bulk_len < 1024 * 1024 {
            return invalid("resp.proto_max_bulk_len must be at least 1048576".into());
        }
        if self.resp.sweep_interval_ms == 0 {
            return invalid("resp.sweep_interval_ms must be positive".into());
        }
        if self.resp.client_query_buffer_limit < 1024 * 1024 {
            return invalid("resp.client_query_buffer_limit must be at least 1048576".into());
        }
        if self.resp.client_output_buffer_limit < 1024 * 1024 {
            return invalid("resp.client_output_buffer_limit must be at least 1048576".into());
        }
        Ok(())
    }

    /// A valid configuration for tests: ports 0 on loopback, tiny engine caches so flush and
    /// compaction paths run, the engine in `data_dir`.
    #[cfg(test)]
    #[must_use]
    pub fn for_test(data_dir: PathBuf) -> Self {
        Self {
            server: ServerSettings {
                bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
                mysql_port: 0,
                redis_port: 0,
                data_dir: data_dir.clone(),
                log_level: LogLevel::Debug,
            },
            storage: StorageConfig::for_test(data_dir),
            mysql: MysqlSettings::default(),
            resp: RespSettings::default(),
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
