//! Runs account statements against the [`AccountStore`] with MySQL 8.0's checks and errors.
//!
//! Invariants: only an account with ALL on `*.*` may create, alter, drop, grant or revoke
//! (1227 otherwise), except that any account may change its own password (ALTER USER /
//! SET PASSWORD) and see its own grants. A statement naming several accounts is all or
//! nothing: if any account fails, nothing is written and 1396 lists the failing ones. The
//! invoker's account is resolved from the live table on every statement, so a privilege
//! revoked or an account dropped takes effect on open sessions at their next statement.

use super::parse::{AccountStatement, AuthSpec, GrantLevel, UserRef, UserSpec, recognize};
use super::record::{AccountName, AccountPlugin, AccountPrivileges, AccountRecord};
use super::store::{AccountChange, AccountMap, AccountStore};
use crate::error::{SqlError, SqlResult};
use crate::result::{OutputColumn, StatementResult};
use crate::session::Credentials;
use crate::types::{Datum, SqlType};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Who runs a statement: the user name the session logged in with and the client address.
#[derive(Debug, Clone, Copy)]
pub struct Invoker<'a> {
    /// The login user name.
    pub user: &'a str,
    /// The client's address.
    pub client: IpAddr,
}

impl Invoker<'_> {
    fn account<'m>(&self, accounts: &'m AccountMap) -> Option<&'m AccountRecord> {
        AccountStore::match_login(accounts, self.user, self.client)
    }

    fn is_admin(&self, accounts: &AccountMap) -> bool {
        self.account(accounts)
            .is_some_and(|r| r.privileges.global_all)
    }

    fn host_text(&self) -> String {
        self.client.to_canonical().to_string()
    }

    /// MySQL's error for reading or changing another account's row without privileges.
    fn denied_on_mysql_db(&self, accounts: &AccountMap) -> SqlError {
        SqlError::DbAccessDenied {
            user: self.user.to_owned(),
            host: self
                .account(accounts)
                .map_or_else(|| self.host_text(), |r| r.name.host.clone()),
            db: "mysql".into(),
        }
    }

    fn resolve(&self, accounts: &AccountMap, user: &UserRef) -> SqlResult<AccountName> {
        match user {
            UserRef::Named(name) => Ok(name.clone()),
            UserRef::Current => self
                .account(accounts)
                .map(|r| r.name.clone())
                .ok_or_else(|| SqlError::NonexistingGrant {
                    user: self.user.to_owned(),
                    host: self.host_text(),
                }),
        }
    }
}

/// Runs `sql` if it is an account statement (see [`recognize`]); `None` if it is not one, so
/// the caller hands it to the main parser.
pub async fn execute_sql(
    store: &AccountStore,
    invoker: Invoker<'_>,
    sql: &str,
) -> Option<SqlResult<StatementResult>> {
    let statement = recognize(sql)?;
    Some(match statement {
        Ok(s) => execute(store, invoker, s).await,
        Err(e) => Err(e),
    })
}

/// Runs one parsed account statement.
pub async fn execute(
    store: &AccountStore,
    invoker: Invoker<'_>,
    statement: AccountStatement,
) -> SqlResult<StatementResult> {
    match statement {
        AccountStatement::ShowGrants { user } => show_grants(store, invoker, user.as_ref()),
        other => {
            store
                .modify(|accounts| Ok((plan_change(accounts, invoker, &other)?, ())))
                .await?;
            Ok(StatementResult::affected(0))
        }
    }
}

fn require_admin(
    accounts: &AccountMap,
    invoker: Invoker<'_>,
    privilege: &'static str,
) -> SqlResult<()> {
    if invoker.is_admin(accounts) {
        Ok(())
    } else {
        Err(SqlError::SpecificAccessDenied(privilege))
    }
}

fn failed(operation: &'static str, names: &[AccountName]) -> SqlError {
    SqlError::CannotUser {
        operation,
        accounts: names
            .iter()
            .map(AccountName::quoted)
            .collect::<Vec<_>>()
            .join(","),
    }
}

fn credentials(auth: &AuthSpec, default_plugin: AccountPlugin) -> (AccountPlugin, Credentials) {
    (
        auth.plugin.unwrap_or(default_plugin),
        Credentials::from_password(auth.password.as_bytes()),
    )
}

/// The changes a statement makes, or its error; nothing is written by this function.
fn plan_change(
    accounts: &AccountMap,
    invoker: Invoker<'_>,
    statement: &AccountStatement,
) -> SqlResult<Vec<AccountChange>> {
    // Accounts as this statement leaves them, so later names see earlier changes.
    let mut next: BTreeMap<AccountName, Option<AccountRecord>> = BTreeMap::new();
    let lookup = |next: &BTreeMap<AccountName, Option<AccountRecord>>, name: &AccountName| {
        next.get(name)
            .cloned()
            .unwrap_or_else(|| accounts.get(name).cloned())
    };
    let mut failures = Vec::new();
    let operation = match statement {
        AccountStatement::CreateUser {
            if_not_exists,
            users,
        } => {
            require_admin(accounts, invoker, "CREATE USER")?;
            for UserSpec { name, auth } in users {
                let name = invoker.resolve(accounts, name)?;
                if lookup(&next, &name).is_some() {
                    if !if_not_exists {
                        failures.push(name);
                    }
                    continue;
                }
                let (plugin, credentials) = match auth {
                    Some(a) => credentials(a, AccountPlugin::CachingSha2),
                    None => (AccountPlugin::CachingSha2, Credentials::NoPassword),
                };
                let record = AccountRecord {
                    name: name.clone(),
                    plugin,
                    credentials,
                    privileges: AccountPrivileges::default(),
                };
                next.insert(name, Some(record));
            }
            "CREATE USER"
        }
        AccountStatement::AlterUser { if_exists, users } => {
            for UserSpec { name, auth } in users {
                let name = invoker.resolve(accounts, name)?;
                let is_self = invoker.account(accounts).is_some_and(|r| r.name == name);
                if !is_self {
                    require_admin(accounts, invoker, "CREATE USER")?;
                }
                let Some(mut record) = lookup(&next, &name) else {
                    if !if_exists {
                        failures.push(name);
                    }
                    continue;
                };
                if let Some(auth) = auth {
                    (record.plugin, record.credentials) = credentials(auth, record.plugin);
                }
                next.insert(name, Some(record));
            }
            "ALTER USER"
        }
        AccountStatement::DropUser { if_exists, users } => {
            require_admin(accounts, invoker, "CREATE USER")?;
            for user in users {
                let name = invoker.resolve(accounts, user)?;
                if lookup(&next, &name).is_none() {
                    if !if_exists {
                        failures.push(name);
                    }
                    continue;
                }
                next.insert(name, None);
            }
            "DROP USER"
        }
        AccountStatement::Grant { level, users } => {
            require_admin(accounts, invoker, "GRANT OPTION")?;
            for user in users {
                let name = invoker.resolve(accounts, user)?;
                let mut record = lookup(&next, &name).ok_or(SqlError::CantCreateUserWithGrant)?;
                match level {
                    GrantLevel::Global => record.privileges.global_all = true,
                    GrantLevel::Database(db) => {
                        record.privileges.databases.insert(db.clone());
                    }
                }
                next.insert(name, Some(record));
            }
            "GRANT"
        }
        AccountStatement::Revoke { level, users } => {
            require_admin(accounts, invoker, "GRANT OPTION")?;
            for user in users {
                let name = invoker.resolve(accounts, user)?;
                let no_grant = || SqlError::NonexistingGrant {
                    user: name.user.clone(),
                    host: name.host.clone(),
                };
                let mut record = lookup(&next, &name).ok_or_else(no_grant)?;
                match level {
                    None => record.privileges = AccountPrivileges::default(),
                    Some(GrantLevel::Global) if record.privileges.global_all => {
                        record.privileges.global_all = false;
                    }
                    Some(GrantLevel::Database(db)) if record.privileges.databases.remove(db) => {}
                    Some(_) => return Err(no_grant()),
                }
                next.insert(name, Some(record));
            }
            "REVOKE"
        }
        AccountStatement::SetPassword { user, password } => {
            let name = match user {
                Some(u) => invoker.resolve(accounts, u)?,
                None => invoker
                    .account(accounts)
                    .map(|r| r.name.clone())
                    .ok_or(SqlError::PasswordNoMatch)?,
            };
            let is_self = invoker.account(accounts).is_some_and(|r| r.name == name);
            if !is_self && !invoker.is_admin(accounts) {
                return Err(invoker.denied_on_mysql_db(accounts));
            }
            let mut record = lookup(&next, &name).ok_or(SqlError::PasswordNoMatch)?;
            record.credentials = Credentials::from_password(password.as_bytes());
            next.insert(name, Some(record));
            "SET PASSWORD"
        }
        AccountStatement::ShowGrants { .. } => {
            return Err(SqlError::Internal("SHOW GRANTS changes nothing".into()));
        }
    };
    if !failures.is_empty() {
        return Err(failed(operation, &failures));
    }
    Ok(next
        .into_iter()
        .map(|(name, record)| match record {
            Some(r) => AccountChange::Put(r),
            None => AccountChange::Delete(name),
        })
        .collect())
}

fn show_grants(
    store: &AccountStore,
    invoker: Invoker<'_>,
    user: Option<&UserRef>,
) -> SqlResult<StatementResult> {
    let accounts = store.accounts();
    let name = invoker.resolve(&accounts, user.unwrap_or(&UserRef::Current))?;
    let is_self = invoker.account(&accounts).is_some_and(|r| r.name == name);
    if !is_self && !invoker.is_admin(&accounts) {
        return Err(invoker.denied_on_mysql_db(&accounts));
    }
    let record = accounts
        .get(&name)
        .ok_or_else(|| SqlError::NonexistingGrant {
            user: name.user.clone(),
            host: name.host.clone(),
        })?;
    let to = name.backquoted();
    let mut rows = vec![if record.privileges.global_all {
        format!("GRANT ALL PRIVILEGES ON *.* TO {to}")
    } else {
        format!("GRANT USAGE ON *.* TO {to}")
    }];
    for db in &record.privileges.databases {
        rows.push(format!(
            "GRANT ALL PRIVILEGES ON {}.* TO {to}",
            super::record::backquote(db)
        ));
    }
    Ok(StatementResult::Rows {
        columns: vec![OutputColumn {
            name: format!("Grants for {}@{}", name.user, name.host),
            org_name: String::new(),
            table: String::new(),
            db: String::new(),
            sql_type: SqlType::Text,
            nullable: false,
        }],
        rows: rows
            .into_iter()
            .map(|r| vec![Datum::Bytes(r.into_bytes())])
            .collect(),
    })
}
