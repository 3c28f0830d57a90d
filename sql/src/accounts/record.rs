//! One account record: its name (`'user'@'host pattern'`), authentication plugin, stored
//! password hashes and coarse privileges, with the versioned byte encoding kept in keyspace
//! `sql_accounts` (layout in `sql/FORMAT.md`) and MySQL's host-pattern matching.
//!
//! Invariants: user names are compared case-sensitively and host patterns case-insensitively
//! (stored lowercased), as MySQL does; an empty host is stored as `%`; no cleartext password is
//! ever part of a record; a record that does not start with [`ACCOUNT_FORMAT_V1`] is refused.

use crate::error::{SqlError, SqlResult};
use crate::session::{Credentials, PasswordHashes};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::net::IpAddr;

/// Format version byte in front of every account record.
pub const ACCOUNT_FORMAT_V1: u8 = 1;
/// Longest user name MySQL 8.0 accepts.
pub const MAX_USER_LEN: usize = 32;
/// Longest host name MySQL 8.0 accepts.
pub const MAX_HOST_LEN: usize = 255;
pub(crate) const USER_TAG: u8 = b'u';

/// An account name: `'user'@'host'`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AccountName {
    /// User name (case-sensitive).
    pub user: String,
    /// Host pattern (`%`, `localhost`, an IP address, or a pattern with `%` / `_`), lowercased.
    pub host: String,
}

impl AccountName {
    /// A name with the host normalised (lowercased; empty means `%`) and both parts checked
    /// against MySQL's limits.
    pub fn new(user: &str, host: &str) -> SqlResult<Self> {
        if user.is_empty() {
            return Err(SqlError::unsupported(
                "anonymous accounts (empty user name)",
            ));
        }
        if user.chars().count() > MAX_USER_LEN {
            return Err(SqlError::WrongStringLength {
                value: user.to_owned(),
                what: "user name",
                max: MAX_USER_LEN,
            });
        }
        if host.chars().count() > MAX_HOST_LEN {
            return Err(SqlError::WrongStringLength {
                value: host.to_owned(),
                what: "host name",
                max: MAX_HOST_LEN,
            });
        }
        if user.contains('\0') || host.contains('\0') {
            return Err(SqlError::unsupported("NUL bytes in account names"));
        }
        if host.contains('/') {
            return Err(SqlError::unsupported("host netmasks in account names"));
        }
        let host = if host.is_empty() { "%" } else { host };
        Ok(Self {
            user: user.to_owned(),
            host: host.to_lowercase(),
        })
    }

    /// The name as MySQL prints it in error messages: `'user'@'host'`.
    #[must_use]
    pub fn quoted(&self) -> String {
        format!("'{}'@'{}'", self.user, self.host)
    }

    /// The name as SHOW GRANTS prints it: `` `user`@`host` ``.
    #[must_use]
    pub fn backquoted(&self) -> String {
        format!("{}@{}", backquote(&self.user), backquote(&self.host))
    }

    /// The storage key: tag · user · 0x00 · host.
    pub(crate) fn key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(2 + self.user.len() + self.host.len());
        k.push(USER_TAG);
        k.extend_from_slice(self.user.as_bytes());
        k.push(0);
        k.extend_from_slice(self.host.as_bytes());
        k
    }

    /// True if this account's host pattern admits a client at `client`.
    #[must_use]
    pub fn admits(&self, client: IpAddr) -> bool {
        let client = client.to_canonical();
        if self.host == "localhost" {
            return client.is_loopback();
        }
        like_match(self.host.as_bytes(), client.to_string().as_bytes())
    }

    /// Sort key for choosing among matching accounts: literal hosts first, then patterns with
    /// the longest literal prefix; `%` last (MySQL's ordering of the user table).
    pub(crate) fn specificity(&self) -> (bool, std::cmp::Reverse<usize>) {
        let literal = self
            .host
            .bytes()
            .take_while(|&b| b != b'%' && b != b'_')
            .count();
        (literal < self.host.len(), std::cmp::Reverse(literal))
    }
}

/// `` `name` `` with backquotes doubled.
#[must_use]
pub fn backquote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// SQL LIKE matching (`%` any run, `_` one byte), ASCII case-insensitive.
fn like_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'%', rest)) => {
            (0..=text.len()).any(|i| text.get(i..).is_some_and(|t| like_match(rest, t)))
        }
        Some((&p, rest)) => match text.split_first() {
            Some((&t, text_rest)) => {
                (p == b'_' || p.eq_ignore_ascii_case(&t)) && like_match(rest, text_rest)
            }
            None => false,
        },
    }
}

/// The authentication plugins an account can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountPlugin {
    /// `mysql_native_password`.
    Native,
    /// `caching_sha2_password` (MySQL 8.0's default).
    CachingSha2,
}

impl AccountPlugin {
    /// The plugin for `name` (case-insensitive); 1524 for any other name.
    pub fn from_name(name: &str) -> SqlResult<Self> {
        match name.to_ascii_lowercase().as_str() {
            "mysql_native_password" => Ok(Self::Native),
            "caching_sha2_password" => Ok(Self::CachingSha2),
            _ => Err(SqlError::PluginNotLoaded(name.to_owned())),
        }
    }

    /// The plugin's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "mysql_native_password",
            Self::CachingSha2 => "caching_sha2_password",
        }
    }
}

/// Coarse privileges: ALL on `*.*`, or ALL on listed databases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountPrivileges {
    /// ALL PRIVILEGES ON *.* (includes managing accounts).
    pub global_all: bool,
    /// Databases with ALL PRIVILEGES ON `db`.*.
    pub databases: BTreeSet<String>,
}

impl AccountPrivileges {
    /// True if the account may use database `db`.
    #[must_use]
    pub fn can_use_database(&self, db: &str) -> bool {
        self.global_all
            || db.eq_ignore_ascii_case("information_schema")
            || self.databases.contains(db)
    }
}

/// One row of the account table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRecord {
    /// `'user'@'host'`.
    pub name: AccountName,
    /// Plugin the account was created with (what `SHOW CREATE USER` would report).
    pub plugin: AccountPlugin,
    /// Stored password hashes, or no password.
    pub credentials: Credentials,
    /// What the account may do.
    pub privileges: AccountPrivileges,
}

#[derive(Serialize, Deserialize)]
struct StoredAccount {
    user: String,
    host: String,
    plugin: String,
    /// Hex of SHA1(SHA1(p)); absent = no password.
    native_double_sha1: Option<String>,
    /// Hex of SHA256(SHA256(p)); present exactly when `native_double_sha1` is.
    double_sha256: Option<String>,
    global_all: bool,
    databases: Vec<String>,
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex<const N: usize>(text: &str) -> SqlResult<[u8; N]> {
    let bad = || SqlError::Internal(format!("account record: bad hash '{text}'"));
    if text.len() != 2 * N {
        return Err(bad());
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        let pair = text.get(2 * i..2 * i + 2).ok_or_else(bad)?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

impl AccountRecord {
    /// `0x01` · JSON body (see `sql/FORMAT.md`).
    pub(crate) fn encode(&self) -> SqlResult<Vec<u8>> {
        let (native, sha256) = match &self.credentials {
            Credentials::NoPassword => (None, None),
            Credentials::Password(h) => (
                Some(to_hex(&h.native_double_sha1)),
                Some(to_hex(&h.double_sha256)),
            ),
        };
        let stored = StoredAccount {
            user: self.name.user.clone(),
            host: self.name.host.clone(),
            plugin: self.plugin.name().to_owned(),
            native_double_sha1: native,
            double_sha256: sha256,
            global_all: self.privileges.global_all,
            databases: self.privileges.databases.iter().cloned().collect(),
        };
        let mut out = vec![ACCOUNT_FORMAT_V1];
        serde_json::to_writer(&mut out, &stored)
            .map_err(|e| SqlError::Internal(format!("account encode: {e}")))?;
        Ok(out)
    }

    /// Decodes a stored record; another version byte or a malformed body is an error.
    pub(crate) fn decode(bytes: &[u8]) -> SqlResult<Self> {
        let body = match bytes.split_first() {
            Some((&ACCOUNT_FORMAT_V1, body)) => body,
            Some((v, _)) => {
                return Err(SqlError::Internal(format!(
                    "account record format version {v} is not supported by this build"
                )));
            }
            None => return Err(SqlError::Internal("empty account record".into())),
        };
        let s: StoredAccount = serde_json::from_slice(body)
            .map_err(|e| SqlError::Internal(format!("account record: {e}")))?;
        let credentials = match (&s.native_double_sha1, &s.double_sha256) {
            (None, None) => Credentials::NoPassword,
            (Some(n), Some(d)) => Credentials::Password(PasswordHashes {
                native_double_sha1: from_hex(n)?,
                double_sha256: from_hex(d)?,
            }),
            _ => {
                return Err(SqlError::Internal(
                    "account record: only one of the two password hashes".into(),
                ));
            }
        };
        Ok(Self {
            name: AccountName {
                user: s.user,
                host: s.host,
            },
            plugin: AccountPlugin::from_name(&s.plugin)
                .map_err(|_| SqlError::Internal(format!("account record: plugin {}", s.plugin)))?,
            credentials,
            privileges: AccountPrivileges {
                global_all: s.global_all,
                databases: s.databases.into_iter().collect(),
            },
        })
    }
}

/// Compares two byte strings in time independent of where they differ.
#[must_use]
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// True if `password` is the one behind `credentials` (an account without a password matches
/// nothing: it can only log in over MySQL from loopback with an empty response). Both hashes
/// are compared, in constant time.
#[must_use]
pub fn password_matches(credentials: &Credentials, password: &[u8]) -> bool {
    let candidate = Credentials::from_password(password);
    match (credentials, &candidate) {
        (Credentials::Password(stored), Credentials::Password(given)) => {
            let native = constant_time_eq(&stored.native_double_sha1, &given.native_double_sha1);
            let sha256 = constant_time_eq(&stored.double_sha256, &given.double_sha256);
            native & sha256
        }
        _ => false,
    }
}
