//! System variables over the real MySQL wire: `SET GLOBAL` changes what new sessions and new
//! connections get (autocommit, isolation, wait_timeout, max_connections), not running
//! sessions; a session's own `wait_timeout` is its idle limit; MySQL's scope errors (1228, 1229, 1238, 1621); `SET GLOBAL` needs the admin
//! privilege (1227).

use crate::harness::TestServer;
use crate::mysql_client::{block_on, connect, opts, server_error};
use mysql_async::Conn;
use mysql_async::prelude::*;

async fn code_of(conn: &mut Conn, sql: &str) -> u16 {
    server_error(conn.query_drop(sql).await.unwrap_err()).0
}

#[test]
fn set_global_changes_new_sessions_and_connection_limits() {
    let server = TestServer::start();
    let addr = server.mysql_addr();
    block_on(async {
        let mut admin = connect(addr, None).await;
        admin
            .query_drop("SET GLOBAL autocommit = 0, transaction_isolation = 'READ-COMMITTED', wait_timeout = 77")
            .await
            .unwrap();
        // The running session keeps its values.
        let (ac, iso): (i64, String) = admin
            .query_first("SELECT @@autocommit, @@transaction_isolation")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((ac, iso.as_str()), (1, "REPEATABLE-READ"));
        let (gac, giso, gwait): (i64, String, i64) = admin
            .query_first(
                "SELECT @@global.autocommit, @@global.transaction_isolation, @@global.wait_timeout",
            )
            .await
            .unwrap()
            .unwrap();
        assert_eq!((gac, giso.as_str(), gwait), (0, "READ-COMMITTED", 77));
        // A new session starts from the global values, and autocommit 0 really holds.
        let mut fresh = connect(addr, None).await;
        let (ac, iso, wait): (i64, String, i64) = fresh
            .query_first("SELECT @@autocommit, @@tx_isolation, @@wait_timeout")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((ac, iso.as_str(), wait), (0, "READ-COMMITTED", 77));
        fresh.query_drop("CREATE DATABASE g").await.unwrap();
        fresh
            .query_drop("CREATE TABLE g.t (id INT PRIMARY KEY)")
            .await
            .unwrap();
        fresh
            .query_drop("INSERT INTO g.t VALUES (1)")
            .await
            .unwrap();
        let seen: Option<i64> = admin.query_first("SELECT COUNT(*) FROM g.t").await.unwrap();
        assert_eq!(seen, Some(0), "autocommit=0 leaves the insert uncommitted");
        fresh.query_drop("ROLLBACK").await.unwrap();
        fresh.disconnect().await.unwrap();
        admin
            .query_drop("SET GLOBAL autocommit = DEFAULT, transaction_isolation = DEFAULT, wait_timeout = DEFAULT")
            .await
            .unwrap();

        // Scopes, as MySQL has them.
        assert_eq!(code_of(&mut admin, "SET max_connections = 10").await, 1229);
        assert_eq!(
            code_of(&mut admin, "SET SESSION max_allowed_packet = 4096").await,
            1621
        );
        assert_eq!(
            code_of(&mut admin, "SET GLOBAL orcinus_execution_mode = 'auto'").await,
            1228
        );
        assert_eq!(
            code_of(&mut admin, "SELECT @@session.max_connections").await,
            1238
        );
        assert_eq!(code_of(&mut admin, "SET GLOBAL version = 'x'").await, 1238);
        assert_eq!(
            code_of(&mut admin, "SET GLOBAL no_such_variable = 1").await,
            1193
        );
        assert_eq!(
            code_of(
                &mut admin,
                "SET GLOBAL transaction_isolation = 'SERIALIZABLE'"
            )
            .await,
            1235
        );

        // SET GLOBAL needs the admin privilege.
        admin
            .query_drop("CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'")
            .await
            .unwrap();
        let mut plain = Conn::new(opts(addr, None).user(Some("plain")).pass(Some("pw")))
            .await
            .unwrap();
        assert_eq!(
            code_of(&mut plain, "SET GLOBAL wait_timeout = 5").await,
            1227
        );
        plain
            .query_drop("SET SESSION wait_timeout = 5")
            .await
            .unwrap();
        plain.disconnect().await.unwrap();

        // max_connections applies to connections accepted from now on.
        admin
            .query_drop("SET GLOBAL max_connections = 2")
            .await
            .unwrap();
        let shown: Vec<(String, String)> = admin
            .query("SHOW GLOBAL VARIABLES LIKE 'max_connections'")
            .await
            .unwrap();
        assert_eq!(shown, vec![("max_connections".into(), "2".into())]);
        // Sessions end asynchronously on the server: wait until admin is the only one.
        for _ in 0..100 {
            let rows: Vec<(String, String)> = admin
                .query("SHOW STATUS LIKE 'Threads_connected'")
                .await
                .unwrap();
            if rows.first().is_some_and(|(_, n)| n == "1") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let second = connect(addr, None).await;
        let third = Conn::new(opts(addr, None)).await;
        let Err(e) = third else {
            panic!("a third connection is refused");
        };
        assert_eq!(server_error(e).0, 1040);
        second.disconnect().await.unwrap();
        admin
            .query_drop("SET GLOBAL max_connections = DEFAULT")
            .await
            .unwrap();
        let again = connect(addr, None).await;
        again.disconnect().await.unwrap();

        // A session's own wait_timeout is its idle limit.
        let mut idle = connect(addr, None).await;
        idle.query_drop("SET SESSION wait_timeout = 1")
            .await
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        assert!(
            idle.query_drop("SELECT 1").await.is_err(),
            "an idle session outlived its wait_timeout"
        );
    });
}
