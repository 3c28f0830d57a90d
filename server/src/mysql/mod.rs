//! MySQL front door: the MySQL client/server protocol (text and binary), served to
//! `orcinus_sql` through the [`orcinus_sql::session`] handler traits.
//!
//! Decision: the protocol is written here from the MySQL protocol documentation rather than
//! with `opensrv-mysql` 0.7. opensrv's API cannot express what real clients need: its
//! handshake hard-codes status flags 0 and omits CLIENT_MULTI_STATEMENTS / MULTI_RESULTS, its
//! column definitions force charset 33, length 1024 and decimals 0, it answers COM_STATISTICS,
//! COM_RESET_CONNECTION, COM_CHANGE_USER and COM_STMT_RESET with a plain OK, and it has no
//! caching_sha2_password exchange (needed by MySQL 9 clients). Patching that would be a fork.
//!
//! Layout: `packet` (framing), `codec` (wire primitives), `login`, `handshake` + `auth` (connection
//! phase), `connection` (command loop), `results` / `response` (result encoding), `binary` +
//! `statements` (prepared statements), `error` (the one mapping of errors to MySQL codes),
//! `stats` (COM_STATISTICS counters).
//!
//! Invariants: no input from the network can panic the server; a failing connection affects
//! no other; connections above `max_connections` get ERR 1040 instead of a handshake; an
//! `accept` error is logged and retried, never fatal.

mod auth;
mod binary;
mod codec;
mod connection;
mod constants;
mod error;
mod handshake;
mod login;
mod packet;
mod response;
mod results;
mod statements;
mod stats;
#[cfg(test)]
mod tests;

use orcinus_sql::analytics::AnalyticsConfig;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use orcinus_sql::accounts::AccountStore;
use orcinus_sql::session::{SqlEngine, SqlError, SqlFrontend, VariableDefaults};
use orcinus_storage::Engine;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

use self::connection::ConnectionSetup;
use self::error::ErrPacket;
use self::packet::PacketStream;
use self::response::err_packet;
use self::stats::ServerStats;

/// Settings of the MySQL port (the `[mysql]` table of the config file).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MysqlSettings {
    /// Maximum simultaneous connections (MySQL `max_connections`). The default, 4096, is far
    /// above MySQL's 151 on purpose: a connection here is one tokio task and a few KiB, not a
    /// thread, and benchmarks such as sysbench with `--threads=500` open one connection per
    /// client thread and treat a refused connection as fatal.
    pub max_connections: usize,
    /// Largest accepted packet in bytes (MySQL `max_allowed_packet`).
    pub max_allowed_packet: u64,
    /// Seconds an idle non-interactive connection is kept (MySQL `wait_timeout`).
    pub wait_timeout_secs: u64,
    /// Seconds an idle interactive connection is kept (MySQL `interactive_timeout`).
    pub interactive_timeout_secs: u64,
    /// Seconds to receive the rest of a started packet (MySQL `net_read_timeout`).
    pub net_read_timeout_secs: u64,
    /// Seconds to send a response (MySQL `net_write_timeout`).
    pub net_write_timeout_secs: u64,
    /// Whether `LOAD DATA LOCAL INFILE` is allowed (MySQL `local_infile`). On by default, as in
    /// MariaDB (MySQL 8.0 defaults to off): the client must enable it as well, and it only ever
    /// sends a file its user named, so the server gains no access to anything.
    pub local_infile: bool,
    /// The directory server-side `LOAD DATA INFILE` may read from (MySQL `secure_file_priv`),
    /// relative to the data directory; `"NULL"` disables server-side loads, `""` allows any
    /// file. The default, `mysql-files`, is created inside the data directory on start.
    pub secure_file_priv: String,
    /// Bytes of decoded table columns the analytical executor keeps in memory between queries
    /// (its column cache; 0 turns it off). Unset: an eighth of physical memory, at least
    /// 256 MiB.
    pub analytics_column_cache_bytes: Option<u64>,
    /// How many transactions that span statements (BEGIN … COMMIT, or any with autocommit off)
    /// run at once; later ones wait for a slot before they start (0: no limit). Past about
    /// this many, more open transactions only age their snapshots and hold their row locks
    /// longer, so throughput falls (see `orcinus_sql::admission`).
    pub max_active_transactions: usize,
}

impl Default for MysqlSettings {
    fn default() -> Self {
        Self {
            max_connections: 4096,
            max_allowed_packet: 64 * 1024 * 1024,
            wait_timeout_secs: 28_800,
            interactive_timeout_secs: 28_800,
            net_read_timeout_secs: 30,
            net_write_timeout_secs: 60,
            local_infile: true,
            secure_file_priv: "mysql-files".to_owned(),
            analytics_column_cache_bytes: None,
            max_active_transactions: orcinus_sql::engine::DEFAULT_MAX_ACTIVE_TRANSACTIONS,
        }
    }
}

impl MysqlSettings {
    /// Checks the ranges MySQL accepts for these variables.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_connections == 0 {
            return Err("mysql.max_connections must be at least 1".into());
        }
        if !(1024..=1 << 30).contains(&self.max_allowed_packet) {
            return Err("mysql.max_allowed_packet must be between 1024 and 1073741824".into());
        }
        let timeouts = [
            ("wait_timeout_secs", self.wait_timeout_secs),
            ("interactive_timeout_secs", self.interactive_timeout_secs),
            ("net_read_timeout_secs", self.net_read_timeout_secs),
            ("net_write_timeout_secs", self.net_write_timeout_secs),
        ];
        for (name, secs) in timeouts {
            if !(1..=31_536_000).contains(&secs) {
                return Err(format!("mysql.{name} must be between 1 and 31536000"));
            }
        }
        Ok(())
    }
}

/// Opens the SQL engine the port serves over `storage`: the statement executor behind the
/// session boundary, with session variables that report what `settings` and the storage
/// configuration enforce.
pub fn open_sql(
    storage: Engine,
    settings: &MysqlSettings,
    accounts: Arc<AccountStore>,
) -> Result<SqlFrontend, SqlError> {
    let lock_wait_ms = storage.config().lock_wait_timeout_ms;
    let secure_file_priv = secure_file_dir(&settings.secure_file_priv, &storage.config().path)?;
    let defaults = VariableDefaults {
        version: constants::SERVER_VERSION.to_owned(),
        max_allowed_packet: settings.max_allowed_packet,
        wait_timeout: settings.wait_timeout_secs,
        interactive_timeout: settings.interactive_timeout_secs,
        net_read_timeout: settings.net_read_timeout_secs,
        net_write_timeout: settings.net_write_timeout_secs,
        max_connections: settings.max_connections as u64,
        lock_wait_timeout: lock_wait_ms.div_ceil(1000),
        local_infile: settings.local_infile,
        secure_file_priv,
        max_active_transactions: settings.max_active_transactions as u64,
    };
    let mut analytics = AnalyticsConfig::default();
    if let Some(bytes) = settings.analytics_column_cache_bytes {
        analytics.column_cache_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    }
    SqlFrontend::open_with(storage, defaults, accounts, analytics)
}

/// The `secure_file_priv` directory: `None` for "NULL", an empty path for "" (any file), else
/// the directory (relative to `data_dir`), created if missing.
fn secure_file_dir(
    setting: &str,
    data_dir: &std::path::Path,
) -> Result<Option<std::path::PathBuf>, SqlError> {
    if setting.eq_ignore_ascii_case("NULL") {
        return Ok(None);
    }
    if setting.is_empty() {
        return Ok(Some(std::path::PathBuf::new()));
    }
    let dir = data_dir.join(setting);
    std::fs::create_dir_all(&dir).map_err(|e| {
        SqlError::QueryFailed(format!(
            "cannot create secure_file_priv directory {}: {e}",
            dir.display()
        ))
    })?;
    Ok(Some(dir))
}

/// Serves MySQL clients on `listener` with any SQL engine. Invalid settings are an
/// `InvalidInput` error before anything is served.
pub async fn serve<E: SqlEngine>(
    listener: TcpListener,
    engine: Arc<E>,
    settings: MysqlSettings,
) -> std::io::Result<()> {
    settings
        .validate()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let stats = Arc::new(ServerStats::default());
    let next_id = AtomicU32::new(1);
    loop {
        let (socket, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "mysql accept failed; retrying");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = socket.set_nodelay(true);
        let connection_id = next_id.fetch_add(1, Ordering::Relaxed);
        // `SET GLOBAL` may have changed these since start-up; they apply to new connections.
        let limit = |name: &str, configured: u64| engine.global_limit(name).unwrap_or(configured);
        let max_connections =
            usize::try_from(limit("max_connections", settings.max_connections as u64))
                .unwrap_or(settings.max_connections);
        let Some(slot) = stats.try_connect(max_connections) else {
            tokio::spawn(async move {
                let mut stream = PacketStream::new(socket, 0);
                stream.write_packet(&err_packet(&ErrPacket::new(
                    1040,
                    "08004",
                    "Too many connections",
                )));
                let _ = stream.flush().await;
            });
            continue;
        };
        let setup = ConnectionSetup {
            engine: Arc::clone(&engine),
            stats: Arc::clone(&stats),
            connection_id,
            peer: peer.ip(),
            max_allowed_packet: limit("max_allowed_packet", settings.max_allowed_packet),
            wait_timeout: Duration::from_secs(limit("wait_timeout", settings.wait_timeout_secs)),
            interactive_timeout: Duration::from_secs(limit(
                "interactive_timeout",
                settings.interactive_timeout_secs,
            )),
            net_read_timeout: Duration::from_secs(limit(
                "net_read_timeout",
                settings.net_read_timeout_secs,
            )),
            net_write_timeout: Duration::from_secs(limit(
                "net_write_timeout",
                settings.net_write_timeout_secs,
            )),
        };
        tokio::spawn(async move {
            let _slot = slot;
            if let Err(e) = connection::run(socket, setup).await {
                tracing::debug!(connection_id, kind = e.kind(), error = %e, "mysql connection ended");
            }
        });
    }
}
