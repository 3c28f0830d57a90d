//! The account table shared by both front doors: who may log in (MySQL handshake, RESP AUTH),
//! with which password hashes, and what they may do.
//!
//! - `record`: one account (name, plugin, hashes, privileges), its versioned encoding and
//!   MySQL host-pattern matching;
//! - `store`: [`AccountStore`], the persistent table with an in-memory copy;
//! - `parse`: the account statements' grammar (CREATE/ALTER/DROP USER, GRANT, REVOKE,
//!   SET PASSWORD, SHOW GRANTS);
//! - `execute`: running them with MySQL's privilege checks and errors;
//! - `login`: the [`crate::session::Account`] a MySQL handshake verifies against;
//!
//! Invariants: cleartext passwords are never stored or logged; secrets are compared in
//! constant time; a statement either commits all of its changes durably or none.
//! Privileges are coarse: ALL on `*.*` (which includes managing accounts) or ALL on listed
//! databases; an account with neither has USAGE only.

mod execute;
mod login;
mod parse;
mod record;
mod store;
#[cfg(test)]
mod tests;

pub use execute::{Invoker, execute, execute_sql};
pub use login::{
    account_named, account_statement, database_access, has_global_privileges, login_account,
    session_client,
};
pub use parse::{AccountStatement, AuthSpec, GrantLevel, UserRef, UserSpec, recognize};
pub use record::{
    ACCOUNT_FORMAT_V1, AccountName, AccountPlugin, AccountPrivileges, AccountRecord,
    constant_time_eq, password_matches,
};
pub use store::{ACCOUNTS_KEYSPACE, AccountChange, AccountMap, AccountStore};
