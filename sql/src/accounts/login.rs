//! The account table as the login step of a protocol sees it: the [`Account`] (user name and
//! stored credentials) a MySQL handshake verifies against.
//!
//! Invariant: the same host matching as everywhere else ([`AccountStore::find_for_login`]), so
//! the account a client logs in as is the account whose privileges its statements get.

use super::record::AccountName;
use super::store::AccountStore;
use crate::session::Account;
use std::net::IpAddr;

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
