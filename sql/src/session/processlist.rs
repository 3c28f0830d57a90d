//! The server's sessions as `SHOW [FULL] PROCESSLIST` lists them and `KILL` finds them.
//!
//! Every open [`super::FrontendSession`] has one [`Process`] entry under its connection id (the
//! handshake's id, which `CONNECTION_ID()` also reports), added when the session opens and
//! removed when it is dropped. A statement runs inside its process's [`Interrupt`] scope, so
//! `KILL QUERY` ends it at its next interruption point (a lock wait, the analytical executor's
//! stream, LOAD DATA between rows) with 1317, and the session stays usable. `KILL CONNECTION`
//! does the same and also marks the process killed; the protocol, waiting on
//! [`Process::wait_killed`], closes the connection, and closing the session rolls back its
//! transaction.
//!
//! Invariant: killing needs the target's user name to be the killer's, or the killer to hold
//! the global privileges (1095 otherwise); an id that is not in the list is 1094.

use std::collections::BTreeMap;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use orcinus_storage::Interrupt;
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::error::{SqlError, SqlResult};

/// What a process is doing, for the listing.
#[derive(Debug, Clone)]
struct Activity {
    db: Option<String>,
    /// The running statement's text; `None` while idle.
    info: Option<String>,
    /// When the current state began.
    since: Instant,
}

/// One session's entry.
#[derive(Debug)]
pub(super) struct Process {
    pub id: u32,
    pub user: String,
    pub host: String,
    activity: Mutex<Activity>,
    /// The running statement's interrupt (KILL QUERY fires it).
    pub interrupt: Interrupt,
    killed: AtomicBool,
    kill_notify: Notify,
}

/// One row of the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ProcessRow {
    pub id: u32,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    pub command: &'static str,
    pub time: u64,
    pub state: &'static str,
    pub info: Option<String>,
}

impl Process {
    /// Marks the start of a statement (clearing an earlier, unconsumed KILL QUERY).
    pub fn begin_statement(&self, text: &str, db: Option<&str>) {
        self.interrupt.clear();
        *self.activity.lock() = Activity {
            db: db.map(str::to_owned),
            info: Some(text.trim().to_owned()),
            since: Instant::now(),
        };
    }

    /// Marks the end of a statement.
    pub fn end_statement(&self, db: Option<&str>) {
        *self.activity.lock() = Activity {
            db: db.map(str::to_owned),
            info: None,
            since: Instant::now(),
        };
    }

    /// True once `KILL CONNECTION` named this process.
    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }

    fn kill(&self, connection: bool) {
        if connection {
            self.killed.store(true, Ordering::SeqCst);
            self.kill_notify.notify_waiters();
        }
        self.interrupt.fire();
    }

    /// Resolves once the process is killed (at once if it already is).
    pub async fn wait_killed(self: Arc<Self>) {
        loop {
            let mut notified = pin!(self.kill_notify.notified());
            notified.as_mut().enable();
            if self.is_killed() {
                return;
            }
            notified.await;
        }
    }

    fn row(&self, full: bool) -> ProcessRow {
        let activity = self.activity.lock().clone();
        let running = activity.info.is_some();
        ProcessRow {
            id: self.id,
            user: self.user.clone(),
            host: self.host.clone(),
            db: activity.db,
            command: if self.is_killed() {
                "Killed"
            } else if running {
                "Query"
            } else {
                "Sleep"
            },
            time: activity.since.elapsed().as_secs(),
            state: if running { "executing" } else { "" },
            info: activity.info.map(|text| {
                if full {
                    text
                } else {
                    text.chars().take(100).collect()
                }
            }),
        }
    }
}

/// All sessions of the server.
#[derive(Debug, Default)]
pub(super) struct ProcessList {
    entries: Mutex<BTreeMap<u32, Arc<Process>>>,
}

impl ProcessList {
    /// Adds the session with connection `id`.
    pub fn register(&self, id: u32, user: &str, host: &str, db: Option<&str>) -> Arc<Process> {
        let process = Arc::new(Process {
            id,
            user: user.to_owned(),
            host: host.to_owned(),
            activity: Mutex::new(Activity {
                db: db.map(str::to_owned),
                info: None,
                since: Instant::now(),
            }),
            interrupt: Interrupt::new(),
            killed: AtomicBool::new(false),
            kill_notify: Notify::new(),
        });
        self.entries.lock().insert(id, Arc::clone(&process));
        process
    }

    /// Removes `process` (only this entry: a reused id of a newer session stays).
    pub fn remove(&self, process: &Arc<Process>) {
        let mut entries = self.entries.lock();
        if entries
            .get(&process.id)
            .is_some_and(|p| Arc::ptr_eq(p, process))
        {
            entries.remove(&process.id);
        }
    }

    /// The rows `user` may see: all with the global privileges, else the user's own.
    pub fn rows(&self, user: &str, see_all: bool, full: bool) -> Vec<ProcessRow> {
        self.entries
            .lock()
            .values()
            .filter(|p| see_all || p.user == user)
            .map(|p| p.row(full))
            .collect()
    }

    /// `KILL [QUERY | CONNECTION] id` by `user` (with the global privileges if `admin`).
    pub fn kill(&self, id: u64, connection: bool, user: &str, admin: bool) -> SqlResult<()> {
        let target = u32::try_from(id)
            .ok()
            .and_then(|id| self.entries.lock().get(&id).cloned())
            .ok_or(SqlError::UnknownThread(id))?;
        if !admin && target.user != user {
            return Err(SqlError::NotThreadOwner(id));
        }
        target.kill(connection);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_checks_the_id_and_the_owner() {
        let list = ProcessList::default();
        let a = list.register(1, "alice", "127.0.0.1", None);
        let _b = list.register(2, "bob", "127.0.0.1", Some("db"));
        assert_eq!(
            list.kill(9, false, "alice", false).unwrap_err().code(),
            1094
        );
        assert_eq!(
            list.kill(2, false, "alice", false).unwrap_err().code(),
            1095
        );
        a.begin_statement("SELECT 1", None);
        list.kill(1, false, "alice", false).unwrap();
        assert!(a.interrupt.is_fired() && !a.is_killed());
        list.kill(1, true, "root", true).unwrap();
        assert!(a.is_killed());
        assert_eq!(list.rows("alice", false, false).len(), 1);
        assert_eq!(list.rows("root", true, false).len(), 2);
        list.remove(&a);
        assert_eq!(
            list.kill(1, false, "alice", false).unwrap_err().code(),
            1094
        );
    }
}
