//! [`AccountStore`]: the persistent account table both front doors authenticate against,
//! kept in keyspace `sql_accounts` with an in-memory copy behind a lock.
//!
//! Invariants:
//! - Every change is checked and written under one async write lock: the changed records go to
//!   storage in ONE durable batch, and the in-memory copy is updated only after that batch is
//!   committed, so a failed statement changes nothing and readers never see an unwritten state.
//! - The table is initialised exactly once: the first [`AccountStore::bootstrap_if_new`] on an
//!   empty keyspace writes `root`@`%` (no password, ALL on `*.*`) together with an
//!   "initialised" marker, so dropping every account and restarting does NOT bring a
//!   password-less root back.
//! - [`AccountStore::load`] only reads, so start-up can refuse (for example a non-loopback bind
//!   with a password-less administrator) before anything is written.

use super::record::{
    AccountName, AccountPlugin, AccountPrivileges, AccountRecord, USER_TAG, password_matches,
};
use crate::error::{SqlError, SqlResult};
use crate::session::Credentials;
use orcinus_storage::{Engine, Keyspace};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Name of the keyspace holding the account table.
pub const ACCOUNTS_KEYSPACE: &str = "sql_accounts";
/// Key of the marker written with the first root account.
const INITIALISED_KEY: &[u8] = b"v";

/// The current accounts, by name.
pub type AccountMap = BTreeMap<AccountName, AccountRecord>;

/// One change to the account table.
#[derive(Debug, Clone)]
pub enum AccountChange {
    /// Insert or replace a record.
    Put(AccountRecord),
    /// Remove an account.
    Delete(AccountName),
}

/// The account table (see the module documentation).
pub struct AccountStore {
    engine: Engine,
    ks: Keyspace,
    accounts: RwLock<AccountMap>,
    initialised: AtomicBool,
    write_lock: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for AccountStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountStore")
            .field("accounts", &self.accounts.read().len())
            .finish_non_exhaustive()
    }
}

impl AccountStore {
    /// Reads the account table without writing anything (see [`Self::bootstrap_if_new`]).
    pub fn load(engine: &Engine) -> SqlResult<Self> {
        let ks = engine.keyspace(ACCOUNTS_KEYSPACE)?;
        let snap = engine.snapshot();
        let initialised = snap.get(&ks, INITIALISED_KEY)?.is_some();
        let mut accounts = AccountMap::new();
        for item in snap.prefix(&ks, &[USER_TAG]) {
            let (_, value) = item?;
            let record = AccountRecord::decode(&value)?;
            accounts.insert(record.name.clone(), record);
        }
        Ok(Self {
            engine: engine.clone(),
            ks,
            accounts: RwLock::new(accounts),
            initialised: AtomicBool::new(initialised),
            write_lock: tokio::sync::Mutex::new(()),
        })
    }

    /// [`Self::load`] then [`Self::bootstrap_if_new`].
    pub async fn open(engine: &Engine) -> SqlResult<Self> {
        let store = Self::load(engine)?;
        store.bootstrap_if_new().await?;
        Ok(store)
    }

    /// The account a new data directory starts with: `root`@`%`, no password, ALL on `*.*`.
    #[must_use]
    pub fn initial_root() -> AccountRecord {
        AccountRecord {
            name: AccountName {
                user: "root".into(),
                host: "%".into(),
            },
            plugin: AccountPlugin::CachingSha2,
            credentials: Credentials::NoPassword,
            privileges: AccountPrivileges {
                global_all: true,
                databases: Default::default(),
            },
        }
    }

    /// Writes the initial root account and the marker if the table was never initialised;
    /// returns whether it did.
    pub async fn bootstrap_if_new(&self) -> SqlResult<bool> {
        let _guard = self.write_lock.lock().await;
        if self.initialised.load(Ordering::Acquire) {
            return Ok(false);
        }
        let root = Self::initial_root();
        let mut batch = self.engine.batch();
        batch.put(&self.ks, root.name.key(), root.encode()?)?;
        batch.put(
            &self.ks,
            INITIALISED_KEY,
            vec![super::record::ACCOUNT_FORMAT_V1],
        )?;
        batch.commit().await?;
        self.accounts.write().insert(root.name.clone(), root);
        self.initialised.store(true, Ordering::Release);
        Ok(true)
    }

    /// True once the table has been initialised (by this or an earlier run).
    #[must_use]
    pub fn is_initialised(&self) -> bool {
        self.initialised.load(Ordering::Acquire)
    }

    /// Accounts with ALL on `*.*` and no password; for a table never initialised, the root
    /// account it would be given. Serving non-loopback clients is refused while this is not
    /// empty.
    #[must_use]
    pub fn passwordless_administrators(&self) -> Vec<AccountName> {
        if !self.is_initialised() {
            return vec![Self::initial_root().name];
        }
        self.accounts
            .read()
            .values()
            .filter(|r| r.privileges.global_all && r.credentials == Credentials::NoPassword)
            .map(|r| r.name.clone())
            .collect()
    }

    /// True if some account has a password (so a non-loopback client has a way to log in).
    #[must_use]
    pub fn any_password_account(&self) -> bool {
        self.accounts
            .read()
            .values()
            .any(|r| matches!(r.credentials, Credentials::Password(_)))
    }

    /// A copy of every account.
    #[must_use]
    pub fn accounts(&self) -> AccountMap {
        self.accounts.read().clone()
    }

    /// The account named exactly `name`.
    #[must_use]
    pub fn get(&self, name: &AccountName) -> Option<AccountRecord> {
        self.accounts.read().get(name).cloned()
    }

    /// The account `user` logs in as from `client`: among accounts of that user whose host
    /// pattern admits the client, the most specific (MySQL's rule).
    #[must_use]
    pub fn find_for_login(&self, user: &str, client: IpAddr) -> Option<AccountRecord> {
        Self::match_login(&self.accounts.read(), user, client).cloned()
    }

    pub(crate) fn match_login<'a>(
        accounts: &'a AccountMap,
        user: &str,
        client: IpAddr,
    ) -> Option<&'a AccountRecord> {
        accounts
            .values()
            .filter(|r| r.name.user == user && r.name.admits(client))
            .min_by_key(|r| r.name.specificity())
    }

    /// True if `password` is the password of the account `user` logs in as from `client`.
    /// The password is hashed before the lookup, so an unknown user costs the same work;
    /// accounts without a password never match (see [`password_matches`]).
    #[must_use]
    pub fn verify_password(&self, user: &str, password: &[u8], client: IpAddr) -> bool {
        let candidate = Credentials::from_password(password);
        let accounts = self.accounts.read();
        match Self::match_login(&accounts, user, client) {
            Some(record) => password_matches(&record.credentials, password),
            None => {
                // Same comparison work against a dummy so timing does not reveal the user.
                let _ = password_matches(&candidate, b"\0orcinus-no-such-user");
                false
            }
        }
    }

    /// Whether the account `user` logs in as from `client` may use database `db`; 1044
    /// otherwise (also when the account no longer exists).
    pub fn check_database_access(&self, user: &str, client: IpAddr, db: &str) -> SqlResult<()> {
        let accounts = self.accounts.read();
        let record = Self::match_login(&accounts, user, client);
        match record {
            Some(r) if r.privileges.can_use_database(db) => Ok(()),
            _ => Err(SqlError::DbAccessDenied {
                user: user.to_owned(),
                host: record.map_or_else(
                    || client.to_canonical().to_string(),
                    |r| r.name.host.clone(),
                ),
                db: db.to_owned(),
            }),
        }
    }

    /// Checks and applies a change atomically: `plan` sees the current accounts under the write
    /// lock and returns the changes plus a result; the changes are committed in one durable
    /// batch before the in-memory copy is updated. An error from `plan` writes nothing.
    pub async fn modify<T>(
        &self,
        plan: impl FnOnce(&AccountMap) -> SqlResult<(Vec<AccountChange>, T)>,
    ) -> SqlResult<T> {
        let _guard = self.write_lock.lock().await;
        let (changes, out) = {
            let current = self.accounts.read();
            plan(&current)?
        };
        if changes.is_empty() {
            return Ok(out);
        }
        let mut batch = self.engine.batch();
        for change in &changes {
            match change {
                AccountChange::Put(r) => batch.put(&self.ks, r.name.key(), r.encode()?)?,
                AccountChange::Delete(name) => batch.delete(&self.ks, name.key())?,
            }
        }
        batch.commit().await?;
        let mut accounts = self.accounts.write();
        for change in changes {
            match change {
                AccountChange::Put(r) => {
                    accounts.insert(r.name.clone(), r);
                }
                AccountChange::Delete(name) => {
                    accounts.remove(&name);
                }
            }
        }
        Ok(out)
    }
}
