//! RESP listener: accepts Redis-protocol clients and serves them from `orcinus_kv`.
//!
//! - `decoder` turns bytes into requests (multibulk and inline, pipelined, with limits);
//! - `encoder` turns typed replies into RESP2 / RESP3 bytes;
//! - `reply_buffer` holds encoded replies until they are written (large values by reference,
//!   written with vectored I/O);
//! - `connection` runs one client: decode → `CommandHandler::execute` → encode, in order;
//! - `client_stream` is the client's socket, whose replies the commit pipeline may write;
//! - `handler` is the seam to the engine (`KvServer` in production, fakes in tests).
//!
//! Invariants: with no `requirepass` and no account with a password in the shared account
//! table, only loopback peers are served (others get one `-DENIED` line and are closed); with
//! no `requirepass` but such accounts, other peers are served and must AUTH with an account; at `max_clients` new clients get
//! `-ERR max number of clients reached` and are closed; accept errors (EMFILE …) are logged
//! and retried, never fatal. Dropping the `serve` future stops the sweeper and all
//! connection tasks.

mod client_stream;
mod connection;
mod decoder;
mod encoder;
mod handler;
mod reply_buffer;
#[cfg(test)]
mod tests;

use orcinus_kv::{Authenticator, KvConfig, KvServer, spawn_sweeper};
use orcinus_storage::Engine;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Settings of the RESP port (the `[resp]` table of the config file).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RespSettings {
    /// Password of the `default` user (Redis `requirepass`); none means the default user serves
    /// loopback clients only (others AUTH with an account).
    pub requirepass: Option<String>,
    /// Maximum simultaneous clients.
    pub max_clients: usize,
    /// Maximum bulk string length in bytes (Redis `proto-max-bulk-len`).
    pub proto_max_bulk_len: u64,
    /// Maximum buffered, not yet executed input per client once authenticated, in bytes.
    pub client_query_buffer_limit: u64,
    /// Largest single reply sent to a client, in bytes; a bigger one closes the connection.
    pub client_output_buffer_limit: u64,
    /// Period of the background sweep (expired keys, stale collection members), in ms.
    pub sweep_interval_ms: u64,
}

impl Default for RespSettings {
    fn default() -> Self {
        Self {
            requirepass: None,
            max_clients: 10_000,
            proto_max_bulk_len: 512 * 1024 * 1024,
            client_query_buffer_limit: 1024 * 1024 * 1024,
            client_output_buffer_limit: 1024 * 1024 * 1024,
            sweep_interval_ms: 100,
        }
    }
}

const DENIED: &str = "-DENIED Orcinus is running without a password (resp.requirepass), so it only serves loopback clients. Set a password or connect from 127.0.0.1.\r\n";
const MAX_CLIENTS: &str = "-ERR max number of clients reached\r\n";

fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().to_canonical().is_loopback()
}

/// Aborts the sweeper when `serve` ends or is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The RESP service with its keyspaces open: opened before the port is announced, so a ready
/// announcement means the store is ready too.
pub struct RespService {
    server: Arc<KvServer>,
    settings: RespSettings,
}

impl RespService {
    /// Opens the kv store on `engine`; `tcp_port` is what INFO reports.
    pub fn open(
        engine: Engine,
        settings: RespSettings,
        tcp_port: u16,
        authenticator: Arc<dyn Authenticator>,
    ) -> std::io::Result<Self> {
        let config = KvConfig {
            requirepass: settings.requirepass.clone(),
            proto_max_bulk_len: settings.proto_max_bulk_len,
            max_clients: settings.max_clients,
            tcp_port,
        };
        let server = Arc::new(
            KvServer::open(engine, config)
                .map_err(std::io::Error::other)?
                .with_authenticator(authenticator),
        );
        Ok(Self { server, settings })
    }

    /// Serves RESP clients on `listener` (and runs the background sweeper) until the task is
    /// dropped.
    pub async fn serve(self, listener: TcpListener) -> std::io::Result<()> {
        let Self { server, settings } = self;
        let _sweeper = AbortOnDrop(spawn_sweeper(
            server.clone(),
            Duration::from_millis(settings.sweep_interval_ms.max(1)),
        ));
        let settings = Arc::new(settings);
        let mut connections = JoinSet::new();
        loop {
            while connections.try_join_next().is_some() {}
            let (socket, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("RESP accept failed: {e}; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            if let Some(refusal) = refusal(&server, &settings, &peer) {
                orcinus_kv::kv_server::Stats::bump(&server.stats.rejected_connections);
                connections.spawn(refuse(socket, refusal));
                continue;
            }
            let _ = socket.set_nodelay(true);
            let local = socket
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default();
            let session = server.new_client_session(peer, local);
            let (server, settings) = (server.clone(), settings.clone());
            connections.spawn(async move {
                let client = client_stream::TcpClient::new(socket);
                if let Err(e) = connection::run(client, server, settings, session).await {
                    tracing::debug!("RESP client {peer} ended: {e}");
                }
            });
        }
    }
}

/// Opens the service and serves `listener` (for tests that need no separate open step).
#[cfg(test)]
pub async fn serve(
    listener: TcpListener,
    engine: Engine,
    settings: RespSettings,
) -> std::io::Result<()> {
    let port = listener.local_addr()?.port();
    RespService::open(engine, settings, port, Arc::new(orcinus_kv::NoAccounts))?
        .serve(listener)
        .await
}

fn refusal(server: &KvServer, settings: &RespSettings, peer: &SocketAddr) -> Option<&'static str> {
    if settings.requirepass.is_none()
        && !is_loopback(peer)
        && !server.authenticator().has_password_accounts()
    {
        return Some(DENIED);
    }
    if server.client_count() >= settings.max_clients {
        return Some(MAX_CLIENTS);
    }
    None
}

async fn refuse(mut socket: TcpStream, line: &'static str) {
    let _ = socket.write_all(line.as_bytes()).await;
    let _ = socket.shutdown().await;
}
