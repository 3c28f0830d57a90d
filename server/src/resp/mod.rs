//! RESP listener: accepts Redis-protocol clients and serves them from `orcinus_kv`.
//! (Placeholder accept loop until the RESP front door lands.)

use orcinus_storage::Engine;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// Settings of the RESP port (the `[resp]` table of the config file).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RespSettings {
    /// Password of the `default` user (Redis `requirepass`); none means loopback-only service.
    pub requirepass: Option<String>,
    /// Maximum simultaneous clients.
    pub max_clients: usize,
    /// Maximum bulk string length in bytes (Redis `proto-max-bulk-len`).
    pub proto_max_bulk_len: u64,
}

impl Default for RespSettings {
    fn default() -> Self {
        Self {
            requirepass: None,
            max_clients: 10_000,
            proto_max_bulk_len: 512 * 1024 * 1024,
        }
    }
}

/// Serves RESP clients on `listener` until the task is dropped.
pub async fn serve(
    listener: TcpListener,
    engine: Engine,
    settings: RespSettings,
) -> std::io::Result<()> {
    let _ = (engine, settings);
    loop {
        let (socket, _) = listener.accept().await?;
        drop(socket);
    }
}
