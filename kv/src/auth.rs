//! [`Authenticator`]: how AUTH and HELLO AUTH check a named account. kv does not know where
//! accounts live: the server implements this trait over the SQL account table (one table
//! serves both ports), and tests use fakes.
//!
//! Invariants: implementations compare secrets in constant time and do the same work whether
//! or not the user exists; an account without a password never verifies (password-less
//! accounts serve loopback clients only, and those need no AUTH unless `requirepass` is set).

use std::net::IpAddr;

/// Verifies account credentials for the RESP port.
pub trait Authenticator: Send + Sync + 'static {
    /// True if `password` is the password of the account `user` logs in as from `client`.
    fn verify(&self, user: &[u8], password: &[u8], client: IpAddr) -> bool;

    /// True if at least one account has a password, so a client that is not on loopback has
    /// a way to authenticate even without `requirepass`.
    fn has_password_accounts(&self) -> bool;
}

/// The authenticator of a server without an account table: no account verifies.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAccounts;

impl Authenticator for NoAccounts {
    fn verify(&self, _user: &[u8], _password: &[u8], _client: IpAddr) -> bool {
        false
    }

    fn has_password_accounts(&self) -> bool {
        false
    }
}
