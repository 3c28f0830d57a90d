//! Per-connection state ([`Session`]: id, db, protocol, auth, name, MULTI queue) and the
//! [`ClientRegistry`] that CLIENT LIST / INFO clients read. No sockets here: the connection
//! passes addresses in as text. Invariant: a session is in the registry exactly as long as it
//! lives (registration in `register`, removal in `Drop`), and its WATCHed keys are released
//! when it ends.

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The RESP version a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2 (default).
    Resp2,
    /// RESP3 (after `HELLO 3`).
    Resp3,
}

impl Protocol {
    /// 2 or 3.
    #[must_use]
    pub fn number(self) -> i64 {
        match self {
            Self::Resp2 => 2,
            Self::Resp3 => 3,
        }
    }
}

/// What CLIENT LIST shows about a connection.
#[derive(Debug, Clone)]
pub struct ClientEntry {
    /// Client id.
    pub id: u64,
    /// Peer address.
    pub addr: String,
    /// Local address.
    pub laddr: String,
    /// CLIENT SETNAME name (empty if none).
    pub name: String,
    /// Selected db.
    pub db: u8,
    /// Connect time.
    pub created: Instant,
    /// Time of the last command.
    pub last_active: Instant,
    /// Last command name (`client|list` style).
    pub last_cmd: String,
    /// RESP version.
    pub resp: i64,
    /// CLIENT SETINFO LIB-NAME.
    pub lib_name: String,
    /// CLIENT SETINFO LIB-VER.
    pub lib_ver: String,
    /// Commands queued in MULTI, or -1.
    pub multi: i64,
    /// Authenticated user.
    pub user: String,
}

impl ClientEntry {
    /// One CLIENT LIST / CLIENT INFO line (without the trailing newline).
    #[must_use]
    pub fn describe(&self) -> String {
        let now = Instant::now();
        format!(
            "id={} addr={} laddr={} name={} age={} idle={} flags=N db={} multi={} user={} resp={} lib-name={} lib-ver={} cmd={}",
            self.id,
            self.addr,
            self.laddr,
            self.name,
            now.duration_since(self.created).as_secs(),
            now.duration_since(self.last_active).as_secs(),
            self.db,
            self.multi,
            self.user,
            self.resp,
            self.lib_name,
            self.lib_ver,
            if self.last_cmd.is_empty() {
                "NULL"
            } else {
                &self.last_cmd
            },
        )
    }
}

/// All live client sessions.
#[derive(Default)]
pub struct ClientRegistry {
    clients: Mutex<BTreeMap<u64, Arc<Mutex<ClientEntry>>>>,
    next_id: AtomicU64,
}

impl ClientRegistry {
    /// Number of live sessions.
    #[must_use]
    pub fn len(&self) -> usize {
        self.clients.lock().len()
    }

    /// True if no session is live.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Snapshot of all entries, in id order.
    #[must_use]
    pub fn entries(&self) -> Vec<ClientEntry> {
        self.clients
            .lock()
            .values()
            .map(|e| e.lock().clone())
            .collect()
    }

    /// Registers a new session for a connection from `addr` to `laddr`.
    pub fn register(self: &Arc<Self>, addr: String, laddr: String, authenticated: bool) -> Session {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let now = Instant::now();
        let entry = Arc::new(Mutex::new(ClientEntry {
            id,
            addr,
            laddr,
            name: String::new(),
            db: 0,
            created: now,
            last_active: now,
            last_cmd: String::new(),
            resp: 2,
            lib_name: String::new(),
            lib_ver: String::new(),
            multi: -1,
            user: "default".into(),
        }));
        self.clients.lock().insert(id, entry.clone());
        Session {
            id,
            db: 0,
            protocol: Protocol::Resp2,
            authenticated,
            client_ip: None,
            name: None,
            closing: false,
            multi: None,
            watched: Vec::new(),
            entry,
            registry: self.clone(),
            watches: None,
            disconnect: Arc::new(crate::blocking::Disconnect::default()),
            unpublished: None,
        }
    }
}

/// State of an open MULTI.
#[derive(Debug, Default)]
pub struct MultiState {
    /// Queued commands.
    pub queued: Vec<Vec<Bytes>>,
    /// A queued command was rejected (unknown, arity): EXEC must abort.
    pub dirty: bool,
}

/// One connection's state.
pub struct Session {
    /// Client id (CLIENT ID).
    pub id: u64,
    /// Selected db (0–15).
    pub db: u8,
    /// RESP version for encoding replies.
    pub protocol: Protocol,
    /// True once authenticated (or if no password is required).
    pub authenticated: bool,
    /// The client's address when the connection knows it (account host matching, and the
    /// `default` user's no-password access, which is for loopback clients only).
    pub client_ip: Option<IpAddr>,
    /// CLIENT SETNAME name.
    pub name: Option<Bytes>,
    /// Set by QUIT: the connection closes after sending this reply.
    pub closing: bool,
    /// Open MULTI, if any.
    pub multi: Option<MultiState>,
    /// WATCHed keys: (db, key, epoch seen at WATCH time).
    pub watched: Vec<(u8, Bytes, u64)>,
    entry: Arc<Mutex<ClientEntry>>,
    registry: Arc<ClientRegistry>,
    // Where `watched` is registered; its keys are released when the session ends.
    pub(crate) watches: Option<Arc<crate::watch::Watches>>,
    // Fired by the connection when the client goes away (ends a blocking wait).
    disconnect: Arc<crate::blocking::Disconnect>,
    // The last command, run since the registry entry last saw one (`publish_activity`).
    unpublished: Option<&'static str>,
}

impl Session {
    /// Updates the registry entry with `f`.
    pub fn update_entry(&self, f: impl FnOnce(&mut ClientEntry)) {
        f(&mut self.entry.lock());
    }

    /// Records `command` (a table name) as the last one run, for the registry entry to show
    /// once [`Session::publish_activity`] runs; until then CLIENT LIST shows the one before.
    pub fn defer_activity(&mut self, command: &'static str) {
        self.unpublished = Some(command);
    }

    /// Drops a deferred command: a later one is being written to the entry directly.
    pub fn forget_deferred_activity(&mut self) {
        self.unpublished = None;
    }

    /// Writes the last deferred command, and now as its time, to the registry entry. The
    /// connection calls it before it writes replies (so another client's CLIENT LIST sees a
    /// pipeline's activity once its replies are on their way); a no-op if nothing was deferred.
    pub fn publish_activity(&mut self) {
        if let Some(command) = self.unpublished.take() {
            self.update_entry(|e| {
                e.last_active = Instant::now();
                e.last_cmd.clear();
                e.last_cmd.push_str(command);
            });
        }
    }

    /// The handle the connection fires when its client disconnects while a blocking
    /// command (BLPOP …) waits; the command then returns at once.
    #[must_use]
    pub fn disconnect_handle(&self) -> Arc<crate::blocking::Disconnect> {
        self.disconnect.clone()
    }

    /// A copy of this session's registry entry.
    #[must_use]
    pub fn entry(&self) -> ClientEntry {
        self.entry.lock().clone()
    }

    /// Publishes db, protocol, name and MULTI state to the registry entry.
    pub fn sync_entry(&self) {
        let mut e = self.entry.lock();
        e.db = self.db;
        e.resp = self.protocol.number();
        e.name = self
            .name
            .as_ref()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default();
        e.multi = self
            .multi
            .as_ref()
            .map_or(-1, |m| i64::try_from(m.queued.len()).unwrap_or(i64::MAX));
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(watches) = &self.watches {
            watches.unwatch(&self.watched);
        }
        self.registry.clients.lock().remove(&self.id);
    }
}
