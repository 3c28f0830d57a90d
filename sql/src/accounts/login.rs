//! The account table as a session sees it, with the client host as the session boundary carries
//! it (`SessionContext::host`, the peer IP address as text): the [`Account`] a MySQL handshake
//! verifies against, the statement dispatcher's entry point, and the database-access check.
//!
//! Invariants: the same host matching as everywhere else ([`AccountStore::find_for_login`]), so
//! the account a client logs in as is the account whose privileges its statements get; a host
//! that is not an IP address is an internal error, never treated as loopback.

use super::execute::{Invoker, execute_sql};
use super::record::AccountName;
use super::store::AccountStore;
use crate::error::{SqlError, SqlResult};
use crate::result::StatementResult;
use crate::session::Account;
use std::net::IpAddr;

/// The client address of a session whose host is `host` (an IP address as text).
pub fn session_client(host: &str) -> SqlResult<IpAddr> {
    host.parse()
        .map_err(|_| SqlError::Internal(format!("session host '{host}' is not an IP address")))
}

/// The statement dispatcher's entry point: runs an account statement (routed by its leading
/// words, named `name` for errors) as `user` connected from `host`. Account statements this
/// module does not implement (RENAME USER, roles …) fail with 1235 naming `name`.
pub async fn account_statement(
    store: &AccountStore,
    user: &str,
    host: &str,
    statement: &str,
    name: &str,
) -> SqlResult<StatementResult> {
    let client = session_client(host)?;
    match execute_sql(store, Invoker { user, client }, statement).await {
        Some(result) => result,
        None => Err(SqlError::NotSupported(name.to_owned())),
    }
}

/// 1044 unless `user` connected from `host` may use database `db` (call before checking that
/// the database exists, as MySQL does).
pub fn database_access(store: &AccountStore, user: &str, host: &str, db: &str) -> SqlResult<()> {
    store.check_database_access(user, session_client(host)?, db)
}

/// True if the account `user` connected from `host` holds the global privileges (ALL ON `*.*`:
/// what MySQL's FILE, PROCESS and CONNECTION_ADMIN checks need here).
#[must_use]
pub fn has_global_privileges(store: &AccountStore, user: &str, host: &str) -> bool {
    session_client(host)
        .ok()
        .and_then(|client| store.find_for_login(user, client))
        .is_some_and(|r| r.privileges.global_all)
}

/// The account `user` logs in as from `client`, if any (`SqlEngine::lookup_account_from`).
#[must_use]
pub fn login_account(store: &AccountStore, user: &str, client: IpAddr) -> Option<Account> {
    store.find_for_login(user, client).map(|r| Account {
        user: r.name.user,
        credentials: r.credentials,
    })
}

/// The account `user`@`%`, for callers that do not know the client (`SqlEngine::lookup_account`).
#[must_use]
pub fn account_named(store: &AccountStore, user: &str) -> Option<Account> {
    let name = AccountName::new(user, "%").ok()?;
    store.get(&name).map(|r| Account {
        user: r.name.user,
        credentials: r.credentials,
    })
}
