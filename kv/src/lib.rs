//! Redis data types and commands over the storage engine (see DESIGN.md, and FORMAT.md for
//! the byte layouts). No sockets here: the RESP connection (server/src/resp) decodes requests,
//! calls [`KvServer::execute`] with a per-connection [`Session`], and encodes the typed
//! [`Reply`] as RESP2 or RESP3.
//!
//! Invariants: the command table ([`command_table`]) is the single source of names, arities
//! and flags; every data command runs in one storage transaction whose commit (durable) happens
//! before its reply is returned — or, in a write group ([`write_group`]), in a transaction it
//! shares with the pipeline's neighbouring writes, as if run alone; expired keys read as absent
//! everywhere.

pub mod args;
pub mod auth;
pub mod blocking;
pub mod clock;
pub mod cmd;
pub mod command_table;
mod dispatch;
pub mod dump;
pub mod error;
pub mod format;
pub mod glob;
pub mod hash_fields;
pub mod kv_server;
pub mod reply;
pub mod scan_cursor;
pub mod score;
pub mod session;
pub mod store;
pub mod sweeper;
pub mod watch;
pub mod write_group;

pub use auth::{Authenticator, NoAccounts};
pub use bytes::{self, Bytes};
pub use dispatch::{GroupMember, Resolved, Route};
pub use error::{ErrorKind, KvError, KvResult};
pub use kv_server::{KvConfig, KvServer};
pub use reply::{Reply, StoredBulk};
pub use session::{Protocol, Session};
pub use sweeper::spawn_sweeper;
