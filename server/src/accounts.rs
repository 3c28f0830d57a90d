//! The RESP port's view of the shared account table: [`AccountAuthenticator`] implements
//! `orcinus_kv::Authenticator` over `orcinus_sql::accounts::AccountStore`, so kv never
//! depends on sql and a user made with CREATE USER can AUTH on the RESP port.
//!
//! Invariants: verification hashes the password and compares stored hashes in constant time
//! (in the store); a user name that is not UTF-8 does the same hashing work and fails.

use orcinus_kv::Authenticator;
use orcinus_sql::accounts::AccountStore;
use std::net::IpAddr;
use std::sync::Arc;

/// `Authenticator` over the account table.
#[derive(Debug, Clone)]
pub struct AccountAuthenticator(pub Arc<AccountStore>);

impl Authenticator for AccountAuthenticator {
    fn verify(&self, user: &[u8], password: &[u8], client: IpAddr) -> bool {
        // A name that is not UTF-8 matches no account; the lookup still hashes the password.
        let user = std::str::from_utf8(user).unwrap_or("\0");
        self.0.verify_password(user, password, client)
    }

    fn has_password_accounts(&self) -> bool {
        self.0.any_password_account()
    }
}
