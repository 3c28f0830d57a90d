//! Password verification for `mysql_native_password` and `caching_sha2_password` (fast auth).
//!
//! Invariants: only stored hashes are used (never a cleartext password); every comparison of
//! secret-derived bytes is constant-time; an account without a password accepts only an empty
//! response, and an account with a password never accepts an empty one.

use orcinus_sql::accounts::constant_time_eq;
use orcinus_sql::session::{Credentials, PasswordHashes};
use sha1::Sha1;
use sha2::{Digest, Sha256};

use super::constants::{CACHING_SHA2_PASSWORD, NATIVE_PASSWORD};

/// A supported authentication method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthPlugin {
    /// `mysql_native_password`: SHA1 challenge/response.
    Native,
    /// `caching_sha2_password`: SHA256 fast authentication.
    CachingSha2,
}

impl AuthPlugin {
    /// The plugin for a name the client sent, if supported.
    #[must_use]
    pub fn from_name(name: &[u8]) -> Option<Self> {
        match name {
            n if n == NATIVE_PASSWORD.as_bytes() => Some(Self::Native),
            n if n == CACHING_SHA2_PASSWORD.as_bytes() => Some(Self::CachingSha2),
            _ => None,
        }
    }

    /// The plugin's protocol name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => NATIVE_PASSWORD,
            Self::CachingSha2 => CACHING_SHA2_PASSWORD,
        }
    }
}

/// True if `response` proves knowledge of the password behind `credentials` for `nonce`.
#[must_use]
pub fn verify(
    plugin: AuthPlugin,
    credentials: &Credentials,
    nonce: &[u8],
    response: &[u8],
) -> bool {
    match credentials {
        Credentials::NoPassword => is_empty_password(plugin, response),
        Credentials::Password(hashes) => match plugin {
            AuthPlugin::Native => verify_native(hashes, nonce, response),
            AuthPlugin::CachingSha2 => verify_sha2(hashes, nonce, response),
        },
    }
}

/// True if `response` is how a client sends an empty password: nothing, or for
/// `caching_sha2_password` a single NUL byte (Connector/J does this; MySQL's server accepts both).
fn is_empty_password(plugin: AuthPlugin, response: &[u8]) -> bool {
    response.is_empty() || (plugin == AuthPlugin::CachingSha2 && response == [0])
}

/// `response = SHA1(p) XOR SHA1(nonce || SHA1(SHA1(p)))`; recover `SHA1(p)` and hash it.
fn verify_native(hashes: &PasswordHashes, nonce: &[u8], response: &[u8]) -> bool {
    let stored = &hashes.native_double_sha1;
    if response.len() != stored.len() {
        return false;
    }
    let mask = Sha1::new()
        .chain_update(nonce)
        .chain_update(stored)
        .finalize();
    let candidate: Vec<u8> = response
        .iter()
        .zip(mask.iter())
        .map(|(a, b)| a ^ b)
        .collect();
    constant_time_eq(&Sha1::digest(&candidate), stored)
}

/// `response = SHA256(p) XOR SHA256(SHA256(SHA256(p)) || nonce)`; recover `SHA256(p)`.
fn verify_sha2(hashes: &PasswordHashes, nonce: &[u8], response: &[u8]) -> bool {
    let stored = &hashes.double_sha256;
    if response.len() != stored.len() {
        return false;
    }
    let mask = Sha256::new()
        .chain_update(stored)
        .chain_update(nonce)
        .finalize();
    let candidate: Vec<u8> = response
        .iter()
        .zip(mask.iter())
        .map(|(a, b)| a ^ b)
        .collect();
    constant_time_eq(&Sha256::digest(&candidate), stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    // Vectors computed independently (Python hashlib) for password "password" and the nonce
    // 0x01..=0x14, following the client algorithms of libmysqlclient.
    const NONCE: [u8; 20] = [
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    ];

    #[test]
    fn native_scramble_known_vector() {
        let creds = Credentials::from_password(b"password");
        let response = hex("c17d6009a5cb47e59f7483fcf05553bbbf7dd0d6");
        assert!(verify(AuthPlugin::Native, &creds, &NONCE, &response));
        let mut wrong = response.clone();
        wrong[0] ^= 1;
        assert!(!verify(AuthPlugin::Native, &creds, &NONCE, &wrong));
        assert!(!verify(AuthPlugin::Native, &creds, &NONCE, &response[..19]));
        assert!(!verify(AuthPlugin::Native, &creds, &NONCE, b""));
    }

    #[test]
    fn caching_sha2_scramble_known_vector() {
        let creds = Credentials::from_password(b"password");
        let response = hex("f7ab1c623a6e98dceab35e926290e5746a3141116115f4dd8ccca994393eccdd");
        assert!(verify(AuthPlugin::CachingSha2, &creds, &NONCE, &response));
        assert!(!verify(
            AuthPlugin::CachingSha2,
            &creds,
            &[0u8; 20],
            &response
        ));
        assert!(!verify(AuthPlugin::Native, &creds, &NONCE, &response));
    }

    #[test]
    fn no_password_accepts_only_empty_response() {
        let creds = Credentials::NoPassword;
        assert!(verify(AuthPlugin::Native, &creds, &NONCE, b""));
        assert!(!verify(AuthPlugin::CachingSha2, &creds, &NONCE, &[0u8; 32]));
        assert!(verify(AuthPlugin::CachingSha2, &creds, &NONCE, &[0]));
        assert!(!verify(AuthPlugin::Native, &creds, &NONCE, &[0]));
    }

    #[test]
    fn constant_time_eq_basics() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
