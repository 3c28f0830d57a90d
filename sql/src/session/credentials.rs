//! Stored account credentials as the account table keeps them, and how they are derived.
//!
//! Invariants: the cleartext password is never stored. For a password `p` we keep
//! `SHA1(SHA1(p))` (what `mysql_native_password` verifies against) and `SHA256(SHA256(p))`
//! (what `caching_sha2_password` fast auth verifies against; MySQL keeps the same value in its
//! in-memory cache). Keeping the latter persistently means fast auth always has a cache hit, so
//! full authentication (which needs TLS or RSA) is never required. It is unsalted, like the
//! native hash; a salted format can be added with a new variant.

use sha1::Sha1;
use sha2::{Digest, Sha256};

/// The stored hashes of one password.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHashes {
    /// `SHA1(SHA1(password))`.
    pub native_double_sha1: [u8; 20],
    /// `SHA256(SHA256(password))`.
    pub double_sha256: [u8; 32],
}

impl std::fmt::Debug for PasswordHashes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordHashes(..)")
    }
}

/// How an account authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// No password: only an empty authentication response is accepted (and the server admits
    /// such accounts from loopback clients only).
    NoPassword,
    /// A password, stored as hashes.
    Password(PasswordHashes),
}

impl Credentials {
    /// Credentials for `password`; an empty password means [`Credentials::NoPassword`].
    #[must_use]
    pub fn from_password(password: &[u8]) -> Self {
        if password.is_empty() {
            return Self::NoPassword;
        }
        let sha1_once = Sha1::digest(password);
        let sha256_once = Sha256::digest(password);
        Self::Password(PasswordHashes {
            native_double_sha1: Sha1::digest(sha1_once).into(),
            double_sha256: Sha256::digest(sha256_once).into(),
        })
    }
}

/// An account as the authentication step needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// User name.
    pub user: String,
    /// Stored credentials.
    pub credentials: Credentials,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_password_means_no_password() {
        assert_eq!(Credentials::from_password(b""), Credentials::NoPassword);
    }

    #[test]
    fn native_hash_matches_mysql_password_function() {
        // MySQL 5.7: SELECT PASSWORD('password') = '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'.
        let Credentials::Password(h) = Credentials::from_password(b"password") else {
            panic!("expected a password");
        };
        let hex: String = h
            .native_double_sha1
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        assert_eq!(hex, "2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
    }
}
