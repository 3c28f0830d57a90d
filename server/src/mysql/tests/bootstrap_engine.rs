//! The production wiring (`serve` with a storage engine and the bootstrap SQL engine), driven
//! by `mysql_async`: client probes are answered from session state, everything else is an
//! explicit 1235.

use mysql_async::Conn;
use mysql_async::prelude::*;
use orcinus_storage::{Engine, StorageConfig};
use tokio::net::TcpListener;

use super::client_library::{opts, server_code};
use crate::mysql::{MysqlSettings, serve};

#[tokio::test]
async fn bootstrap_engine_over_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accounts = std::sync::Arc::new(
        orcinus_sql::accounts::AccountStore::open(&engine)
            .await
            .unwrap(),
    );
    tokio::spawn(serve(listener, engine, MysqlSettings::default(), accounts));

    // Default options: mysql_async reads @@max_allowed_packet, @@wait_timeout and @@socket
    // on connect, which the bootstrap engine answers from its variables.
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
    assert_eq!(server_code(e).0, 1235);
    let e = conn
        .query_drop("SELECT @@no_such_variable")
        .await
        .unwrap_err();
    assert_eq!(server_code(e).0, 1193);
    let e = conn.prep("SELECT 1").await.unwrap_err();
    assert_eq!(server_code(e).0, 1295);
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
