//! The production wiring (`open_sql` over a storage engine, served by `serve`), driven by
//! `mysql_async`: client probes are answered from session state, SQL runs in the executor.

use mysql_async::Conn;
use mysql_async::prelude::*;
use orcinus_storage::{Engine, StorageConfig};
use tokio::net::TcpListener;

use super::client_library::{opts, server_code};
use crate::mysql::{MysqlSettings, open_sql, serve};

#[tokio::test]
async fn production_engine_over_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let settings = MysqlSettings::default();
    let accounts = std::sync::Arc::new(
        orcinus_sql::accounts::AccountStore::open(&engine)
            .await
            .unwrap(),
    );
    let sql = std::sync::Arc::new(open_sql(engine, &settings, accounts).unwrap());
    tokio::spawn(serve(listener, sql, settings));

    // Default options: mysql_async reads @@max_allowed_packet, @@wait_timeout and @@socket
    // on connect, which the session answers from its variables.
    let defaults = mysql_async::OptsBuilder::default()
        .ip_or_hostname(addr.ip().to_string())
        .tcp_port(addr.port())
        .user(Some("root"));
    let mut conn = Conn::new(defaults).await.unwrap();
    let banner: Option<String> = conn
        .query_first("select @@version_comment limit 1")
        .await
        .unwrap();
    assert_eq!(banner.as_deref(), Some("Orcinus"));
    let (db, version, packet): (Option<String>, String, u64) = conn
        .query_first("SELECT DATABASE(), @@version, @@max_allowed_packet")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (db, version.as_str(), packet),
        (None, "8.0.36-orcinus", 64 << 20)
    );
    conn.query_drop("SET NAMES utf8mb4").await.unwrap();
    conn.query_drop("SET autocommit = 0").await.unwrap();
    let ac: Option<i64> = conn.query_first("SELECT @@autocommit").await.unwrap();
    assert_eq!(ac, Some(0));

    let e = conn
        .query_drop("CREATE TABLE t (id INT)")
        .await
        .unwrap_err();
    assert_eq!(server_code(e).0, 1046);
    let e = conn.query_drop("SHOW TABLES").await.unwrap_err();
    assert_eq!(
        server_code(e).0,
        1046,
        "SHOW TABLES with no database selected"
    );
    let e = conn.query_drop("SHOW PROFILES").await.unwrap_err();
    assert_eq!(server_code(e).0, 1235);
    let e = conn
        .query_drop("SELECT @@no_such_variable")
        .await
        .unwrap_err();
    assert_eq!(server_code(e).0, 1193);
    let e = conn.prep("USE sbtest").await.unwrap_err();
    assert_eq!(server_code(e).0, 1295);
    conn.query_drop("CREATE DATABASE d").await.unwrap();
    conn.query_drop("USE d").await.unwrap();
    conn.query_drop("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))")
        .await
        .unwrap();
    conn.exec_drop("INSERT INTO t VALUES (?, ?)", (1, "one"))
        .await
        .unwrap();
    conn.query_drop("COMMIT").await.unwrap();
    let c: Option<String> = conn
        .exec_first("SELECT c FROM t WHERE id = ?", (1,))
        .await
        .unwrap();
    assert_eq!(c.as_deref(), Some("one"));
    let e = conn.query_drop("USE sbtest").await.unwrap_err();
    assert_eq!(server_code(e).0, 1049);

    let e = Conn::new(opts(addr, "sbtest", None, Some("sbtest")))
        .await
        .unwrap_err();
    assert_eq!(server_code(e).0, 1045);
    let e = Conn::new(opts(addr, "root", None, Some("sbtest")))
        .await
        .unwrap_err();
    assert_eq!(server_code(e).0, 1049);
}
