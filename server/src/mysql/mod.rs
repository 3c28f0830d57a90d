//! MySQL-protocol listener: accepts MySQL clients and serves them from `orcinus_sql`.
//! (Placeholder accept loop until the MySQL front door lands.)

use orcinus_storage::Engine;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// Settings of the MySQL port (the `[mysql]` table of the config file).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MysqlSettings {
    /// Maximum simultaneous connections (MySQL `max_connections`).
    pub max_connections: usize,
    /// Largest accepted packet in bytes (MySQL `max_allowed_packet`).
    pub max_allowed_packet: u64,
}

impl Default for MysqlSettings {
    fn default() -> Self {
        Self {
            max_connections: 4096,
            max_allowed_packet: 64 * 1024 * 1024,
        }
    }
}

/// Serves MySQL clients on `listener` until the task is dropped.
pub async fn serve(
    listener: TcpListener,
    engine: Engine,
    settings: MysqlSettings,
) -> std::io::Result<()> {
    let _ = (engine, settings);
    loop {
        let (socket, _) = listener.accept().await?;
        drop(socket);
    }
}
