//! One account table, both ports: accounts made by account statements on the real store log
//! in over MySQL (mysql_native_password and caching_sha2_password fast auth, raw packets and
//! `mysql_async`) and AUTH on the RESP port (all AUTH forms and HELLO AUTH), and wrong
//! passwords get 1045 / WRONGPASS.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use mysql_async::Conn;
use mysql_async::prelude::*;
use orcinus_sql::accounts::{AccountStore, Invoker, execute_sql};
use orcinus_storage::{Engine, StorageConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::client_library::{opts, server_code};
use super::raw_client::{CLIENT_CAPS, RawClient, err_code, native_scramble, sha2_scramble};
use crate::accounts::AccountAuthenticator;
use crate::mysql::{MysqlSettings, open_sql, serve};
use crate::resp::{RespService, RespSettings};

struct Ports {
    mysql: SocketAddr,
    redis: SocketAddr,
    store: Arc<AccountStore>,
    _dir: tempfile::TempDir,
}

async fn as_root(store: &AccountStore, sql: &str) {
    let root = Invoker {
        user: "root",
        client: IpAddr::V4(Ipv4Addr::LOCALHOST),
    };
    execute_sql(store, root, sql)
        .await
        .expect("an account statement")
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Both ports on one engine and one account table, with `nat` (native plugin) and `sha`
/// (caching_sha2) created through account statements.
async fn start_both(requirepass: Option<&str>) -> Ports {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let store = Arc::new(AccountStore::open(&engine).await.unwrap());
    as_root(
        &store,
        "CREATE USER 'nat'@'%' IDENTIFIED WITH mysql_native_password BY 'pw-n', \
         'sha'@'localhost' IDENTIFIED WITH caching_sha2_password BY 'pw-s'",
    )
    .await;
    let mysql_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resp_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (mysql, redis) = (
        mysql_listener.local_addr().unwrap(),
        resp_listener.local_addr().unwrap(),
    );
    let settings = RespSettings {
        requirepass: requirepass.map(str::to_owned),
        ..RespSettings::default()
    };
    let authenticator = Arc::new(AccountAuthenticator(store.clone()));
    let resp = RespService::open(engine.clone(), settings, redis.port(), authenticator).unwrap();
    tokio::spawn(resp.serve(resp_listener));
    let settings = MysqlSettings::default();
    let sql = Arc::new(open_sql(engine, &settings, store.clone()).unwrap());
    tokio::spawn(serve(mysql_listener, sql, settings));
    Ports {
        mysql,
        redis,
        store,
        _dir: dir,
    }
}

fn err_message(packet: &[u8]) -> String {
    String::from_utf8_lossy(&packet[9..]).into_owned()
}

async fn raw_login(addr: SocketAddr, user: &str, password: &[u8], plugin: &str) -> Vec<u8> {
    let (mut c, _) = RawClient::connect(addr).await;
    let auth = match plugin {
        "mysql_native_password" if !password.is_empty() => native_scramble(password, &c.nonce),
        "caching_sha2_password" if !password.is_empty() => sha2_scramble(password, &c.nonce),
        _ => Vec::new(),
    };
    let reply = c.send_login(CLIENT_CAPS, user, &auth, None, plugin).await;
    if reply == [0x01, 0x03] {
        // caching_sha2 fast_auth_success; the OK follows.
        return c.read().await;
    }
    reply
}

#[tokio::test]
async fn created_users_log_in_over_mysql_with_both_plugins() {
    let p = start_both(None).await;
    for (user, password) in [("nat", b"pw-n".as_slice()), ("sha", b"pw-s".as_slice())] {
        for plugin in ["mysql_native_password", "caching_sha2_password"] {
            let reply = raw_login(p.mysql, user, password, plugin).await;
            assert_eq!(reply[0], 0, "{user} with {plugin}: {reply:?}");
            let reply = raw_login(p.mysql, user, b"wrong", plugin).await;
            assert_eq!(err_code(&reply), 1045, "{user} with {plugin}");
            assert_eq!(
                err_message(&reply),
                format!("Access denied for user '{user}'@'127.0.0.1' (using password: YES)")
            );
        }
    }
    let reply = raw_login(p.mysql, "nobody", b"pw-n", "mysql_native_password").await;
    assert_eq!(err_code(&reply), 1045);

    // mysql_async follows the server's default plugin (caching_sha2_password, fast auth).
    let mut conn = Conn::new(opts(p.mysql, "sha", Some("pw-s"), None))
        .await
        .unwrap();
    let one: Option<i64> = conn.query_first("SELECT 1").await.unwrap();
    assert_eq!(one, Some(1));
    conn.disconnect().await.unwrap();
    let e = Conn::new(opts(p.mysql, "nat", Some("bad"), None))
        .await
        .unwrap_err();
    assert_eq!(server_code(e), (1045, "28000".into()));

    // Changes apply to the next login, without a restart.
    as_root(&p.store, "ALTER USER nat IDENTIFIED BY 'pw-n2'").await;
    let reply = raw_login(p.mysql, "nat", b"pw-n", "mysql_native_password").await;
    assert_eq!(err_code(&reply), 1045);
    let reply = raw_login(p.mysql, "nat", b"pw-n2", "mysql_native_password").await;
    assert_eq!(reply[0], 0);
    as_root(&p.store, "DROP USER nat").await;
    let reply = raw_login(p.mysql, "nat", b"pw-n2", "mysql_native_password").await;
    assert_eq!(err_code(&reply), 1045);

    // Root has no password: loopback logs in with an empty response; once it has one, the
    // empty response is refused with "using password: NO".
    assert_eq!(
        raw_login(p.mysql, "root", b"", "mysql_native_password").await[0],
        0
    );
    as_root(&p.store, "ALTER USER root IDENTIFIED BY 'r00t'").await;
    let reply = raw_login(p.mysql, "root", b"", "mysql_native_password").await;
    assert_eq!(
        err_message(&reply),
        "Access denied for user 'root'@'127.0.0.1' (using password: NO)"
    );
    assert_eq!(
        raw_login(p.mysql, "root", b"r00t", "caching_sha2_password").await[0],
        0
    );
}

async fn resp(stream: &mut TcpStream, request: &str) -> String {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

const WRONGPASS: &str = "-WRONGPASS invalid username-password pair or user is disabled.\r\n";

#[tokio::test]
async fn created_users_auth_on_the_resp_port() {
    let p = start_both(Some("redis-pw")).await;
    let cases = [
        ("AUTH nat pw-n\r\n", "+OK\r\n"),
        ("AUTH nat:pw-n\r\n", "+OK\r\n"),
        ("AUTH sha:pw-s\r\n", "+OK\r\n"),
        ("AUTH redis-pw\r\n", "+OK\r\n"),
        ("AUTH default redis-pw\r\n", "+OK\r\n"),
        ("AUTH nat wrong\r\n", WRONGPASS),
        ("AUTH nat:wrong\r\n", WRONGPASS),
        ("AUTH pw-n\r\n", WRONGPASS),
        ("AUTH root x\r\n", WRONGPASS),
    ];
    for (request, expected) in cases {
        let mut c = TcpStream::connect(p.redis).await.unwrap();
        assert_eq!(resp(&mut c, request).await, expected, "{request}");
        let after = resp(&mut c, "GET k\r\n").await;
        let served = if expected == WRONGPASS {
            "-NOAUTH Authentication required.\r\n"
        } else {
            "$-1\r\n"
        };
        assert_eq!(after, served, "{request}");
    }
    for hello in ["HELLO 3 AUTH sha pw-s\r\n", "HELLO 2 AUTH nat:pw-n\r\n"] {
        let mut c = TcpStream::connect(p.redis).await.unwrap();
        let reply = resp(&mut c, hello).await;
        assert!(
            reply.starts_with('%') || reply.starts_with('*'),
            "{hello}: {reply}"
        );
    }
    let mut c = TcpStream::connect(p.redis).await.unwrap();
    assert_eq!(resp(&mut c, "HELLO 3 AUTH nat nope\r\n").await, WRONGPASS);
    // A user created after the port opened can AUTH at once.
    as_root(&p.store, "CREATE USER late IDENTIFIED BY 'l8'").await;
    assert_eq!(resp(&mut c, "AUTH late l8\r\n").await, "+OK\r\n");
    assert!(resp(&mut c, "CLIENT INFO\r\n").await.contains("user=late"));
}

#[tokio::test]
async fn without_requirepass_accounts_still_authenticate() {
    let p = start_both(None).await;
    let mut c = TcpStream::connect(p.redis).await.unwrap();
    // Loopback clients start as the password-less default user.
    assert_eq!(resp(&mut c, "GET k\r\n").await, "$-1\r\n");
    assert_eq!(resp(&mut c, "AUTH nat:pw-n\r\n").await, "+OK\r\n");
    assert_eq!(resp(&mut c, "AUTH nat:bad\r\n").await, WRONGPASS);
    assert_eq!(
        resp(&mut c, "AUTH something\r\n").await,
        "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"
    );
}

#[tokio::test]
async fn account_statements_over_the_wire_and_database_privileges() {
    let p = start_both(None).await;
    let mut root = Conn::new(opts(p.mysql, "root", None, None)).await.unwrap();
    root.query_drop("CREATE USER 'web'@'%' IDENTIFIED BY 'w3b'")
        .await
        .unwrap();
    let e = root
        .query_drop("CREATE USER 'web'@'%' IDENTIFIED BY 'x'")
        .await
        .unwrap_err();
    assert_eq!(server_code(e), (1396, "HY000".into()));

    let mut web = Conn::new(opts(p.mysql, "web", Some("w3b"), None))
        .await
        .unwrap();
    let grants: Vec<String> = web.query("SHOW GRANTS").await.unwrap();
    assert_eq!(grants, ["GRANT USAGE ON *.* TO `web`@`%`"]);
    let e = web.query_drop("CREATE USER intruder").await.unwrap_err();
    assert_eq!(server_code(e), (1227, "42000".into()));
    let e = web.query_drop("USE shop").await.unwrap_err();
    assert_eq!(server_code(e), (1044, "42000".into()));
    let e = Conn::new(opts(p.mysql, "web", Some("w3b"), Some("shop")))
        .await
        .unwrap_err();
    assert_eq!(server_code(e), (1044, "42000".into()));

    root.query_drop("GRANT ALL PRIVILEGES ON shop.* TO web")
        .await
        .unwrap();
    // Privileges apply at the next statement; `shop` does not exist, so an allowed name is
    // then checked for existence (1049).
    let e = web.query_drop("USE shop").await.unwrap_err();
    assert_eq!(server_code(e), (1049, "42000".into()));
    let grants: Vec<String> = root.query("SHOW GRANTS FOR web").await.unwrap();
    assert_eq!(
        grants,
        [
            "GRANT USAGE ON *.* TO `web`@`%`",
            "GRANT ALL PRIVILEGES ON `shop`.* TO `web`@`%`"
        ]
    );
    web.query_drop("SET PASSWORD = 'n3w'").await.unwrap();

    // The same account on the RESP port, with its new password.
    let mut c = TcpStream::connect(p.redis).await.unwrap();
    assert_eq!(resp(&mut c, "AUTH web w3b\r\n").await, WRONGPASS);
    assert_eq!(resp(&mut c, "AUTH web n3w\r\n").await, "+OK\r\n");
    root.query_drop("DROP USER web").await.unwrap();
    assert_eq!(resp(&mut c, "AUTH web n3w\r\n").await, WRONGPASS);
    web.disconnect().await.unwrap();
    root.disconnect().await.unwrap();
}
