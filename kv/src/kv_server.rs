//! [`KvServer`]: the state shared by all RESP connections — the store, settings, client
//! registry, WATCH epochs, SCAN cursors and counters. Cheap to share behind an `Arc`.

use crate::auth::{Authenticator, NoAccounts};
use crate::blocking::BlockingKeys;
use crate::error::KvResult;
use crate::scan_cursor::ScanCursors;
use crate::session::{ClientRegistry, Session};
use crate::store::Store;
use crate::watch::Watches;
use orcinus_storage::Engine;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Number of logical databases (SELECT 0–15).
pub const DATABASES: u8 = 16;

/// Settings the kv layer needs (a subset of the server's RESP settings).
#[derive(Debug, Clone)]
pub struct KvConfig {
    /// Password of the `default` user; `None` = no authentication required.
    pub requirepass: Option<String>,
    /// Largest bulk string (and string value) accepted, in bytes.
    pub proto_max_bulk_len: u64,
    /// Maximum simultaneous clients (reported by INFO / CONFIG GET).
    pub max_clients: usize,
    /// TCP port (reported by INFO / CONFIG GET).
    pub tcp_port: u16,
}

impl Default for KvConfig {
    fn default() -> Self {
        Self {
            requirepass: None,
            proto_max_bulk_len: 512 * 1024 * 1024,
            max_clients: 10_000,
            tcp_port: 0,
        }
    }
}

/// Counters for INFO stats.
#[derive(Default)]
pub struct Stats {
    /// Connections accepted.
    pub connections_received: AtomicU64,
    /// Connections refused (max clients, protected mode).
    pub rejected_connections: AtomicU64,
    /// Commands executed.
    pub commands_processed: AtomicU64,
    /// Reads that found their key.
    pub keyspace_hits: AtomicU64,
    /// Reads that did not.
    pub keyspace_misses: AtomicU64,
    /// Keys removed by the expiry sweeper.
    pub expired_keys: AtomicU64,
    /// Stale collection members removed by the sweeper.
    pub swept_members: AtomicU64,
}

impl Stats {
    /// Adds one to `counter`.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Resets the counters CONFIG RESETSTAT resets.
    pub fn reset(&self) {
        for c in [
            &self.connections_received,
            &self.rejected_connections,
            &self.commands_processed,
            &self.keyspace_hits,
            &self.keyspace_misses,
            &self.expired_keys,
            &self.swept_members,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// Shared kv service state.
pub struct KvServer {
    pub(crate) store: Store,
    pub(crate) config: KvConfig,
    pub(crate) clients: Arc<ClientRegistry>,
    pub(crate) watches: Arc<Watches>,
    pub(crate) cursors: ScanCursors,
    pub(crate) started: Instant,
    pub(crate) blocking: Arc<BlockingKeys>,
    pub(crate) authenticator: Arc<dyn Authenticator>,
    /// Counters.
    pub stats: Stats,
}

impl KvServer {
    /// Opens the kv keyspaces on `engine`.
    pub fn open(engine: Engine, config: KvConfig) -> KvResult<Self> {
        Ok(Self {
            store: Store::open(engine)?,
            config,
            clients: Arc::new(ClientRegistry::default()),
            watches: Arc::new(Watches::default()),
            cursors: ScanCursors::default(),
            started: Instant::now(),
            blocking: Arc::new(BlockingKeys::default()),
            authenticator: Arc::new(NoAccounts),
            stats: Stats::default(),
        })
    }

    /// Uses `authenticator` for AUTH / HELLO AUTH with a user name other than `default`.
    #[must_use]
    pub fn with_authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        self.authenticator = authenticator;
        self
    }

    /// The account checker.
    #[must_use]
    pub fn authenticator(&self) -> &dyn Authenticator {
        self.authenticator.as_ref()
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &KvConfig {
        &self.config
    }

    /// The store.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Number of connected clients.
    #[must_use]
    pub fn client_count(&self) -> usize {
        self.clients.len()
    }

    /// True if connections must authenticate.
    #[must_use]
    pub fn requires_auth(&self) -> bool {
        self.config.requirepass.is_some()
    }

    /// True if a client at `client` must authenticate: always with `requirepass`; otherwise
    /// only clients that are not on loopback (the password-less `default` user serves
    /// loopback clients only). An unknown address is treated as [`Self::requires_auth`].
    #[must_use]
    pub fn requires_auth_for(&self, client: Option<IpAddr>) -> bool {
        self.requires_auth() || client.is_some_and(|ip| !ip.to_canonical().is_loopback())
    }

    /// A session for a new connection from `peer` to `laddr`.
    pub fn new_client_session(&self, peer: SocketAddr, laddr: String) -> Session {
        Stats::bump(&self.stats.connections_received);
        let client = Some(peer.ip());
        let mut session =
            self.clients
                .register(peer.to_string(), laddr, !self.requires_auth_for(client));
        session.client_ip = client;
        session.watches = Some(self.watches.clone());
        session
    }

    /// A session for a new connection (`addr`, `laddr` as text for CLIENT LIST).
    pub fn new_session(&self, addr: String, laddr: String) -> Session {
        Stats::bump(&self.stats.connections_received);
        let mut session = self.clients.register(addr, laddr, !self.requires_auth());
        session.watches = Some(self.watches.clone());
        session
    }

    /// Number of clients blocked in BLPOP-style commands (for tests and INFO).
    #[must_use]
    pub fn blocked_clients(&self) -> usize {
        self.blocking.blocked_clients()
    }

    /// Number of keys some session is WATCHing (for tests and INFO).
    #[must_use]
    pub fn watched_key_count(&self) -> usize {
        self.watches.len()
    }
}
