//! Tests of the account table and statements without a socket: a temp storage engine per test.

use super::*;
use crate::error::SqlError;
use crate::result::StatementResult;
use crate::session::Credentials;
use crate::types::Datum;
use orcinus_storage::{Engine, StorageConfig};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const REMOTE: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3));

struct Fixture {
    dir: tempfile::TempDir,
    engine: Engine,
    store: AccountStore,
}

impl Fixture {
    async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
        let store = AccountStore::open(&engine).await.unwrap();
        Self { dir, engine, store }
    }

    async fn reopen(self) -> Self {
        let Self { dir, engine, store } = self;
        drop(store);
        engine.shutdown().unwrap();
        drop(engine);
        let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
        let store = AccountStore::open(&engine).await.unwrap();
        Self { dir, engine, store }
    }

    async fn run_as(&self, user: &str, sql: &str) -> Result<StatementResult, SqlError> {
        let invoker = Invoker {
            user,
            client: LOOPBACK,
        };
        execute_sql(&self.store, invoker, sql)
            .await
            .unwrap_or_else(|| panic!("not an account statement: {sql}"))
    }

    async fn root(&self, sql: &str) -> StatementResult {
        self.run_as("root", sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    async fn root_err(&self, sql: &str) -> (u16, String) {
        let e = self.run_as("root", sql).await.unwrap_err();
        (e.code(), e.to_string())
    }

    fn record(&self, user: &str, host: &str) -> Option<AccountRecord> {
        self.store.get(&AccountName::new(user, host).unwrap())
    }
}

fn grants(result: StatementResult) -> (String, Vec<String>) {
    let StatementResult::Rows { columns, rows } = result else {
        panic!("expected rows");
    };
    let lines = rows
        .into_iter()
        .map(|r| match r.as_slice() {
            [Datum::Bytes(b)] => String::from_utf8(b.clone()).unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    (columns[0].name.clone(), lines)
}

#[tokio::test]
async fn first_open_creates_passwordless_root_and_reopen_keeps_users() {
    let f = Fixture::new().await;
    let root = f.record("root", "%").unwrap();
    assert_eq!(root.credentials, Credentials::NoPassword);
    assert!(root.privileges.global_all);
    assert_eq!(f.store.passwordless_administrators().len(), 1);
    assert!(!f.store.any_password_account());
    f.root("CREATE USER 'app'@'%' IDENTIFIED BY 'pw1'").await;
    f.root("ALTER USER root IDENTIFIED BY 'rootpw'").await;
    let f = f.reopen().await;
    assert!(f.store.verify_password("app", b"pw1", REMOTE));
    assert!(f.store.verify_password("root", b"rootpw", REMOTE));
    assert!(f.store.passwordless_administrators().is_empty());
    assert!(f.store.any_password_account());
}

#[tokio::test]
async fn dropping_root_is_not_undone_by_a_restart() {
    let f = Fixture::new().await;
    f.root("CREATE USER admin IDENTIFIED BY 'a'").await;
    f.root("GRANT ALL ON *.* TO admin").await;
    f.root("DROP USER root").await;
    let f = f.reopen().await;
    assert!(f.record("root", "%").is_none());
    assert!(f.record("admin", "%").unwrap().privileges.global_all);
}

#[tokio::test]
async fn load_alone_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let store = AccountStore::load(&engine).unwrap();
    assert!(!store.is_initialised());
    assert!(store.accounts().is_empty());
    assert_eq!(
        store.passwordless_administrators()[0].quoted(),
        "'root'@'%'"
    );
    drop(store);
    let again = AccountStore::load(&engine).unwrap();
    assert!(!again.is_initialised());
    assert!(again.bootstrap_if_new().await.unwrap());
    assert!(!again.bootstrap_if_new().await.unwrap());
}

#[tokio::test]
async fn stored_hashes_are_the_mysql_ones() {
    let f = Fixture::new().await;
    f.root("CREATE USER u IDENTIFIED WITH mysql_native_password BY 'password'")
        .await;
    let r = f.record("u", "%").unwrap();
    assert_eq!(r.plugin, AccountPlugin::Native);
    let Credentials::Password(h) = &r.credentials else {
        panic!("no password stored");
    };
    let hex: String = h
        .native_double_sha1
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    assert_eq!(hex, "2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
    assert_eq!(r.credentials, Credentials::from_password(b"password"));
    let encoded = r.encode().unwrap();
    assert_eq!(encoded[0], ACCOUNT_FORMAT_V1);
    f.root("CREATE USER w IDENTIFIED BY 'zebra-secret'").await;
    let other = f.record("w", "%").unwrap().encode().unwrap();
    assert!(!other.windows(12).any(|w| w == b"zebra-secret"));
    assert_eq!(AccountRecord::decode(&encoded).unwrap(), r);
    let mut future = encoded.clone();
    future[0] = 2;
    assert!(AccountRecord::decode(&future).is_err());
    assert!(AccountRecord::decode(&[]).is_err());
    assert!(AccountRecord::decode(&encoded[..encoded.len() - 1]).is_err());
}

#[tokio::test]
async fn create_user_errors_and_if_not_exists() {
    let f = Fixture::new().await;
    f.root("CREATE USER 'u'@'%' IDENTIFIED BY 'p'").await;
    assert_eq!(
        f.root_err("CREATE USER 'u'@'%' IDENTIFIED BY 'q'").await,
        (1396, "Operation CREATE USER failed for 'u'@'%'".into())
    );
    f.root("CREATE USER IF NOT EXISTS 'u'@'%' IDENTIFIED BY 'q'")
        .await;
    assert!(
        f.store.verify_password("u", b"p", LOOPBACK),
        "IF NOT EXISTS kept the old password"
    );
    // All or nothing: v is not created because u already exists.
    assert_eq!(
        f.root_err("CREATE USER v IDENTIFIED BY 'x', u, w@localhost")
            .await,
        (1396, "Operation CREATE USER failed for 'u'@'%'".into())
    );
    assert!(f.record("v", "%").is_none());
    assert_eq!(
        f.root_err("CREATE USER z IDENTIFIED WITH sha256_password BY 'x'")
            .await,
        (1524, "Plugin 'sha256_password' is not loaded".into())
    );
    assert_eq!(
        f.root_err("CREATE USER 'abcdefghijabcdefghijabcdefghijabc'")
            .await
            .0,
        1470
    );
    let (code, msg) = f
        .root_err("CREATE USER z IDENTIFIED BY 'x' REQUIRE SSL")
        .await;
    assert_eq!(
        (code, msg.contains("CREATE USER ... REQUIRE")),
        (1235, true),
        "{msg}"
    );
    let (code, msg) = f
        .root_err("CREATE USER z IDENTIFIED BY RANDOM PASSWORD")
        .await;
    assert_eq!(
        (code, msg.contains("RANDOM PASSWORD")),
        (1235, true),
        "{msg}"
    );
    assert_eq!(f.root_err("CREATE USER z IDENTIFIED 'x'").await.0, 1064);
    assert!(f.record("z", "%").is_none());
}

#[tokio::test]
async fn alter_drop_and_set_password() {
    let f = Fixture::new().await;
    f.root("CREATE USER a@localhost IDENTIFIED BY 'one', b IDENTIFIED BY 'two'")
        .await;
    f.root("ALTER USER 'a'@'localhost' IDENTIFIED WITH mysql_native_password BY 'uno'")
        .await;
    assert!(f.store.verify_password("a", b"uno", LOOPBACK));
    assert!(!f.store.verify_password("a", b"one", LOOPBACK));
    assert_eq!(
        f.record("a", "localhost").unwrap().plugin,
        AccountPlugin::Native
    );
    assert_eq!(
        f.root_err("ALTER USER nobody IDENTIFIED BY 'x'").await,
        (1396, "Operation ALTER USER failed for 'nobody'@'%'".into())
    );
    f.root("ALTER USER IF EXISTS nobody IDENTIFIED BY 'x'")
        .await;
    assert_eq!(f.root_err("ALTER USER b ACCOUNT LOCK").await.0, 1235);
    f.root("SET PASSWORD FOR b = 'dos'").await;
    assert!(f.store.verify_password("b", b"dos", REMOTE));
    assert_eq!(
        f.root_err("SET PASSWORD FOR nobody = 'x'").await,
        (1133, "Can't find any matching row in the user table".into())
    );
    // A user may change its own password, not someone else's.
    f.run_as("b", "SET PASSWORD = 'tres'").await.unwrap();
    assert!(f.store.verify_password("b", b"tres", REMOTE));
    let e = f
        .run_as("b", "SET PASSWORD FOR root = 'x'")
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Access denied for user 'b'@'%' to database 'mysql'"
    );
    f.run_as("b", "ALTER USER CURRENT_USER() IDENTIFIED BY 'cuatro'")
        .await
        .unwrap();
    assert!(f.store.verify_password("b", b"cuatro", REMOTE));
    assert_eq!(
        f.root_err("DROP USER a@localhost, nobody").await,
        (1396, "Operation DROP USER failed for 'nobody'@'%'".into())
    );
    assert!(f.record("a", "localhost").is_some());
    f.root("DROP USER IF EXISTS a@localhost, nobody").await;
    assert!(f.record("a", "localhost").is_none());
    // Clearing a password makes the account password-less again.
    f.root("ALTER USER b IDENTIFIED BY ''").await;
    assert_eq!(
        f.record("b", "%").unwrap().credentials,
        Credentials::NoPassword
    );
    assert!(!f.store.verify_password("b", b"", LOOPBACK));
}

#[tokio::test]
async fn unprivileged_users_get_1227() {
    let f = Fixture::new().await;
    f.root("CREATE USER u IDENTIFIED BY 'p'").await;
    for sql in [
        "CREATE USER x",
        "DROP USER root",
        "ALTER USER root IDENTIFIED BY 'x'",
    ] {
        let e = f.run_as("u", sql).await.unwrap_err();
        assert_eq!(
            (e.code(), e.to_string().as_str()),
            (
                1227,
                "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation"
            ),
            "{sql}"
        );
    }
    for sql in ["GRANT ALL ON *.* TO u", "REVOKE ALL ON *.* FROM root"] {
        assert_eq!(f.run_as("u", sql).await.unwrap_err().code(), 1227, "{sql}");
    }
    let e = f.run_as("u", "SHOW GRANTS FOR root").await.unwrap_err();
    assert_eq!(e.code(), 1044);
    assert!(f.run_as("u", "SHOW GRANTS").await.is_ok());
    assert!(f.record("x", "%").is_none());
    assert!(f.record("root", "%").is_some());
}

#[tokio::test]
async fn grant_revoke_and_show_grants() {
    let f = Fixture::new().await;
    f.root("CREATE USER 'u'@'%' IDENTIFIED BY 'p'").await;
    let (title, lines) = grants(f.root("SHOW GRANTS FOR u").await);
    assert_eq!(title, "Grants for u@%");
    assert_eq!(lines, ["GRANT USAGE ON *.* TO `u`@`%`"]);
    f.root("GRANT ALL PRIVILEGES ON shop.* TO u").await;
    f.root("GRANT ALL ON `my``db`.* TO 'u'@'%'").await;
    let (_, lines) = grants(f.root("SHOW GRANTS FOR 'u'@'%'").await);
    assert_eq!(
        lines,
        [
            "GRANT USAGE ON *.* TO `u`@`%`",
            "GRANT ALL PRIVILEGES ON `my``db`.* TO `u`@`%`",
            "GRANT ALL PRIVILEGES ON `shop`.* TO `u`@`%`",
        ]
    );
    assert!(f.store.check_database_access("u", REMOTE, "shop").is_ok());
    let e = f
        .store
        .check_database_access("u", REMOTE, "other")
        .unwrap_err();
    assert_eq!(
        (e.code(), e.to_string().as_str()),
        (1044, "Access denied for user 'u'@'%' to database 'other'")
    );
    assert!(
        f.store
            .check_database_access("u", REMOTE, "information_schema")
            .is_ok()
    );
    f.root("REVOKE ALL PRIVILEGES ON shop.* FROM u").await;
    assert!(f.store.check_database_access("u", REMOTE, "shop").is_err());
    assert_eq!(
        f.root_err("REVOKE ALL ON shop.* FROM u").await,
        (
            1141,
            "There is no such grant defined for user 'u' on host '%'".into()
        )
    );
    assert_eq!(f.root_err("REVOKE ALL ON *.* FROM u").await.0, 1141);
    // With ALL on *.*, u manages accounts.
    f.root("GRANT ALL ON *.* TO u").await;
    f.run_as("u", "CREATE USER v").await.unwrap();
    let (_, lines) = grants(f.run_as("u", "SHOW GRANTS").await.unwrap());
    assert_eq!(lines[0], "GRANT ALL PRIVILEGES ON *.* TO `u`@`%`");
    f.root("REVOKE ALL PRIVILEGES, GRANT OPTION FROM u").await;
    let (_, lines) = grants(f.root("SHOW GRANTS FOR u").await);
    assert_eq!(lines, ["GRANT USAGE ON *.* TO `u`@`%`"]);
    assert_eq!(
        f.root_err("GRANT ALL ON *.* TO nobody").await,
        (
            1410,
            "You are not allowed to create a user with GRANT".into()
        )
    );
    assert_eq!(
        f.root_err("SHOW GRANTS FOR nobody@localhost").await,
        (
            1141,
            "There is no such grant defined for user 'nobody' on host 'localhost'".into()
        )
    );
    for (sql, what) in [
        ("GRANT SELECT ON *.* TO u", "only ALL"),
        ("GRANT ALL ON shop.t1 TO u", "table-level"),
        ("GRANT ALL ON * TO u", "current database"),
        (
            "GRANT ALL ON *.* TO u WITH GRANT OPTION",
            "WITH GRANT OPTION",
        ),
        ("GRANT ALL ON TABLE t TO u", "only *.* and db.*"),
        ("SHOW GRANTS FOR u USING r", "roles"),
    ] {
        let (code, msg) = f.root_err(sql).await;
        assert_eq!(code, 1235, "{sql}: {msg}");
        assert!(msg.contains(what), "{sql}: {msg}");
    }
}

#[tokio::test]
async fn login_matches_the_most_specific_host() {
    let f = Fixture::new().await;
    f.root("CREATE USER u@'%' IDENTIFIED BY 'any', u@localhost IDENTIFIED BY 'local'")
        .await;
    f.root("CREATE USER u@'10.1.%' IDENTIFIED BY 'net'").await;
    let found = |ip| f.store.find_for_login("u", ip).map(|r| r.name.host);
    assert_eq!(found(LOOPBACK).as_deref(), Some("localhost"));
    assert_eq!(
        found(IpAddr::V6(Ipv6Addr::LOCALHOST)).as_deref(),
        Some("localhost")
    );
    assert_eq!(found(REMOTE).as_deref(), Some("10.1.%"));
    assert_eq!(
        found(IpAddr::V4(Ipv4Addr::new(10, 2, 0, 1))).as_deref(),
        Some("%")
    );
    assert!(f.store.verify_password("u", b"local", LOOPBACK));
    assert!(!f.store.verify_password("u", b"any", LOOPBACK));
    assert!(f.store.verify_password("u", b"net", REMOTE));
    assert!(!f.store.verify_password("nobody", b"x", REMOTE));
    f.root("CREATE USER only@'192.168.0.5' IDENTIFIED BY 'x'")
        .await;
    assert!(f.store.find_for_login("only", REMOTE).is_none());
    assert!(
        f.store
            .find_for_login("only", "192.168.0.5".parse().unwrap())
            .is_some()
    );
    assert!(
        f.store
            .find_for_login("ONLY", "192.168.0.5".parse().unwrap())
            .is_none()
    );
}

#[test]
fn recognize_claims_only_account_statements() {
    for sql in [
        "SELECT 1",
        "CREATE TABLE user (id INT)",
        "DROP TABLE user",
        "SET autocommit = 1",
        "SHOW TABLES",
        "ALTER TABLE users ADD c INT",
    ] {
        assert!(recognize(sql).is_none(), "{sql}");
    }
    let parsed =
        recognize("/* c */ create user if not exists 'a b'@\"h\" identified by 'it''s\\n';")
            .unwrap()
            .unwrap();
    assert_eq!(
        parsed,
        AccountStatement::CreateUser {
            if_not_exists: true,
            users: vec![UserSpec {
                name: UserRef::Named(AccountName::new("a b", "h").unwrap()),
                auth: Some(AuthSpec {
                    plugin: None,
                    password: "it's\n".into()
                }),
            }],
        }
    );
    assert_eq!(
        recognize("SHOW GRANTS FOR CURRENT_USER").unwrap().unwrap(),
        AccountStatement::ShowGrants {
            user: Some(UserRef::Current)
        }
    );
    assert_eq!(
        recognize("GRANT ALL ON `Shop`.* TO x@'%', y")
            .unwrap()
            .unwrap(),
        AccountStatement::Grant {
            level: GrantLevel::Database("Shop".into()),
            users: vec![
                UserRef::Named(AccountName::new("x", "%").unwrap()),
                UserRef::Named(AccountName::new("y", "%").unwrap()),
            ],
        }
    );
    for bad in [
        "CREATE USER",
        "CREATE USER 'x' IDENTIFIED BY",
        "DROP USER x y",
        "GRANT ALL ON *.* u",
        "SET PASSWORD 'x'",
        "CREATE USER 'unterminated",
    ] {
        match recognize(bad) {
            Some(Err(SqlError::Parse(_))) | None => {}
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn dispatcher_entry_point_takes_the_session_host_as_text() {
    let f = Fixture::new().await;
    let ok = account_statement(
        &f.store,
        "root",
        "::1",
        "CREATE USER d IDENTIFIED BY 'p'",
        "CREATE USER",
    )
    .await;
    assert!(ok.is_ok(), "{ok:?}");
    assert!(f.store.verify_password("d", b"p", REMOTE));
    // Routed as an account statement by its leading words, but not one this module has.
    let e = account_statement(
        &f.store,
        "root",
        "127.0.0.1",
        "RENAME USER d TO e",
        "RENAME USER",
    )
    .await
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "This version of Orcinus doesn't yet support 'RENAME USER'"
    );
    let e = account_statement(&f.store, "root", "not-an-ip", "DROP USER d", "DROP USER")
        .await
        .unwrap_err();
    assert_eq!(e.code(), 1105);
    assert!(f.record("d", "%").is_some());
    assert_eq!(
        database_access(&f.store, "d", "10.0.0.1", "shop")
            .unwrap_err()
            .code(),
        1044
    );
    assert!(database_access(&f.store, "root", "10.0.0.1", "shop").is_ok());
}

/// Why `parse.rs` exists: sqlparser 0.62 (MySQL dialect) rejects most MySQL account forms,
/// and parses `SHOW GRANTS FOR 'u'@'%'` as `SHOW VARIABLE grants for`, silently dropping the
/// account. If an upgrade changes this, consider moving to its AST.
#[test]
fn sqlparser_does_not_parse_the_mysql_account_forms() {
    use datafusion::sql::sqlparser::ast::Statement;
    use datafusion::sql::sqlparser::dialect::MySqlDialect;
    use datafusion::sql::sqlparser::parser::Parser;
    for sql in [
        "CREATE USER 'u'@'h' IDENTIFIED BY 'p'",
        "ALTER USER 'u'@'%' IDENTIFIED BY 'p'",
        "DROP USER 'u'@'%'",
        "SET PASSWORD FOR 'u'@'%' = 'p'",
    ] {
        assert!(
            Parser::parse_sql(&MySqlDialect {}, sql).is_err(),
            "{sql} now parses"
        );
    }
    let show = Parser::parse_sql(&MySqlDialect {}, "SHOW GRANTS FOR 'u'@'%'").unwrap();
    assert!(matches!(show.as_slice(), [Statement::ShowVariable { .. }]));
}
