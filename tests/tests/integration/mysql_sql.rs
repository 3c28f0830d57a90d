//! SQL end to end over the real MySQL wire (`mysql_async` against the `orcinus` binary): DDL,
//! AUTO_INCREMENT and LAST_INSERT_ID, prepared statements with typed parameters, ranges,
//! sorting and grouping, transactions and autocommit, deadlocks and lock wait timeouts between
//! connections, MySQL's error codes and messages, and durability of an acknowledged COMMIT
//! across kill -9.

use crate::harness::TestServer;
use crate::mysql_client::{block_on, connect, server_error};
use mysql_async::prelude::*;
use mysql_async::{Conn, Row};
use std::time::{Duration, Instant};

const ITEMS: &str = "CREATE TABLE items (\
    id INT NOT NULL AUTO_INCREMENT, \
    k INT NOT NULL, \
    name VARCHAR(40) NOT NULL, \
    price DECIMAL(10,2), \
    PRIMARY KEY (id), \
    KEY k_idx (k))";

async fn shop(server: &TestServer) -> Conn {
    let mut conn = connect(server.mysql_addr(), None).await;
    conn.query_drop("CREATE DATABASE shop").await.unwrap();
    conn.query_drop("USE shop").await.unwrap();
    conn.query_drop(ITEMS).await.unwrap();
    conn
}

#[test]
fn ddl_inserts_prepared_statements_and_queries() {
    let server = TestServer::start();
    block_on(async {
        let mut conn = shop(&server).await;
        let db: Option<String> = conn.query_first("SELECT DATABASE()").await.unwrap();
        assert_eq!(db.as_deref(), Some("shop"));

        // Multi-row INSERT: generated ids, affected rows and LAST_INSERT_ID in the OK packet.
        conn.query_drop(
            "INSERT INTO items (k, name, price) VALUES \
             (10, 'apple', 1.50), (20, 'pear', 2.25), (10, 'plum', NULL), (30, 'fig', 9.99)",
        )
        .await
        .unwrap();
        assert_eq!(conn.affected_rows(), 4);
        assert_eq!(conn.last_insert_id(), Some(1));
        let last: Option<u64> = conn.query_first("SELECT LAST_INSERT_ID()").await.unwrap();
        assert_eq!(last, Some(1));
        conn.query_drop("INSERT INTO items (k, name) VALUES (40, 'kiwi')")
            .await
            .unwrap();
        assert_eq!(conn.last_insert_id(), Some(5));

        // Prepared SELECT with an integer parameter, through the binary protocol.
        let select = conn
            .prep("SELECT name, price FROM items WHERE id = ?")
            .await
            .unwrap();
        let row: Option<(String, Option<String>)> = conn.exec_first(&select, (2,)).await.unwrap();
        assert_eq!(row, Some(("pear".into(), Some("2.25".into()))));
        let row: Option<(String, Option<String>)> = conn.exec_first(&select, (3,)).await.unwrap();
        assert_eq!(row, Some(("plum".into(), None)));

        // Prepared UPDATE / DELETE with text, decimal and integer parameters.
        conn.exec_drop(
            "UPDATE items SET name = ?, price = ? WHERE id = ?",
            ("green apple", 1.75_f64, 1_i64),
        )
        .await
        .unwrap();
        assert_eq!(conn.affected_rows(), 1);
        conn.exec_drop("UPDATE items SET k = k + 1 WHERE k = ?", (10,))
            .await
            .unwrap();
        assert_eq!(conn.affected_rows(), 2);
        conn.exec_drop("DELETE FROM items WHERE id = ?", (4,))
            .await
            .unwrap();
        assert_eq!(conn.affected_rows(), 1);
        let name: Option<String> = conn
            .exec_first(&select, (1,))
            .await
            .unwrap()
            .map(|(n, _): (String, Option<String>)| n);
        assert_eq!(name.as_deref(), Some("green apple"));

        // BETWEEN on the primary key and on the secondary index, prepared and as text.
        let ids: Vec<u32> = conn
            .exec(
                "SELECT id FROM items WHERE id BETWEEN ? AND ? ORDER BY id",
                (2, 5),
            )
            .await
            .unwrap();
        assert_eq!(ids, vec![2, 3, 5]);
        let ids: Vec<u32> = conn
            .query("SELECT id FROM items WHERE k BETWEEN 11 AND 20 ORDER BY id")
            .await
            .unwrap();
        assert_eq!(ids, vec![1, 2, 3]);

        // ORDER BY / LIMIT / GROUP BY.
        let names: Vec<String> = conn
            .query("SELECT name FROM items ORDER BY name DESC LIMIT 2")
            .await
            .unwrap();
        assert_eq!(names, vec!["plum", "pear"]);
        let groups: Vec<(i64, i64)> = conn
            .query("SELECT k, COUNT(*) FROM items GROUP BY k ORDER BY k")
            .await
            .unwrap();
        assert_eq!(groups, vec![(11, 2), (20, 1), (40, 1)]);
        let sum: Option<String> = conn
            .exec_first(
                "SELECT SUM(price) FROM items WHERE id BETWEEN ? AND ?",
                (1, 5),
            )
            .await
            .unwrap();
        assert_eq!(sum.as_deref(), Some("4.00"));

        // The connection's statement cache re-executes the same server-side statement.
        for id in 1..=3 {
            let n: Option<String> = conn
                .exec_first("SELECT name FROM items WHERE id = ?", (id,))
                .await
                .unwrap();
            assert!(n.is_some(), "id {id}");
        }
        conn.disconnect().await.unwrap();
    });
}

async fn count(c: &mut Conn) -> i64 {
    c.query_first("SELECT COUNT(*) FROM items")
        .await
        .unwrap()
        .unwrap()
}

#[test]
fn transactions_and_autocommit() {
    let server = TestServer::start();
    block_on(async {
        let mut a = shop(&server).await;
        let mut b = connect(server.mysql_addr(), Some("shop")).await;

        a.query_drop("BEGIN").await.unwrap();
        a.query_drop("INSERT INTO items (k, name) VALUES (1, 'x')")
            .await
            .unwrap();
        assert_eq!(count(&mut a).await, 1, "a transaction sees its own writes");
        assert_eq!(count(&mut b).await, 0, "others do not before COMMIT");
        a.query_drop("ROLLBACK").await.unwrap();
        assert_eq!(count(&mut a).await, 0);

        a.query_drop("START TRANSACTION").await.unwrap();
        a.query_drop("INSERT INTO items (k, name) VALUES (2, 'y')")
            .await
            .unwrap();
        a.query_drop("COMMIT").await.unwrap();
        assert_eq!(count(&mut b).await, 1);

        // autocommit = 0: statements open a transaction that lasts until COMMIT.
        a.query_drop("SET autocommit = 0").await.unwrap();
        let ac: Option<i64> = a.query_first("SELECT @@autocommit").await.unwrap();
        assert_eq!(ac, Some(0));
        a.query_drop("INSERT INTO items (k, name) VALUES (3, 'z')")
            .await
            .unwrap();
        assert_eq!(count(&mut b).await, 1);
        a.query_drop("COMMIT").await.unwrap();
        assert_eq!(count(&mut b).await, 2);
        a.query_drop("DELETE FROM items").await.unwrap();
        a.query_drop("ROLLBACK").await.unwrap();
        assert_eq!(count(&mut b).await, 2);
        // Turning autocommit back on commits the open transaction.
        a.query_drop("INSERT INTO items (k, name) VALUES (4, 'w')")
            .await
            .unwrap();
        a.query_drop("SET autocommit = 1").await.unwrap();
        assert_eq!(count(&mut b).await, 3);

        // COM_RESET_CONNECTION rolls back and restores the session's defaults.
        a.query_drop("SET autocommit = 0").await.unwrap();
        a.query_drop("DELETE FROM items").await.unwrap();
        a.reset().await.unwrap();
        let ac: Option<i64> = a.query_first("SELECT @@autocommit").await.unwrap();
        assert_eq!(ac, Some(1));
        assert_eq!(count(&mut b).await, 3);
        assert_eq!(count(&mut a).await, 3);

        // A dropped connection rolls its transaction back.
        a.query_drop("BEGIN").await.unwrap();
        a.query_drop("DELETE FROM items").await.unwrap();
        a.disconnect().await.unwrap();
        assert_eq!(count(&mut b).await, 3);
    });
}

#[test]
fn deadlock_and_lock_wait_timeout_between_connections() {
    // The harness config sets storage.lock_wait_timeout_ms = 2000.
    let server = TestServer::start();
    block_on(async {
        let mut setup = shop(&server).await;
        setup
            .query_drop("INSERT INTO items (k, name) VALUES (1, 'one'), (2, 'two')")
            .await
            .unwrap();
        let timeout: Option<i64> = setup
            .query_first("SELECT @@innodb_lock_wait_timeout")
            .await
            .unwrap();
        assert_eq!(timeout, Some(2));

        // Deadlock: a locks 1 then wants 2; b locks 2 then wants 1.
        let addr = server.mysql_addr();
        let mut a = connect(addr, Some("shop")).await;
        let mut b = connect(addr, Some("shop")).await;
        a.query_drop("BEGIN").await.unwrap();
        b.query_drop("BEGIN").await.unwrap();
        a.query_drop("UPDATE items SET k = 10 WHERE id = 1")
            .await
            .unwrap();
        b.query_drop("UPDATE items SET k = 20 WHERE id = 2")
            .await
            .unwrap();
        let a_task = tokio::spawn(async move {
            let r = a.query_drop("UPDATE items SET k = 11 WHERE id = 2").await;
            (a, r)
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        let b_result = b.query_drop("UPDATE items SET k = 21 WHERE id = 1").await;
        let (a, a_result) = a_task.await.unwrap();
        let (mut winner, loser_err) = match (a_result, b_result) {
            (Ok(()), Err(e)) => (a, e),
            (Err(e), Ok(())) => (b, e),
            other => panic!("exactly one side must be the deadlock victim: {other:?}"),
        };
        let (code, state, message) = server_error(loser_err);
        assert_eq!((code, state.as_str()), (1213, "40001"));
        assert_eq!(
            message,
            "Deadlock found when trying to get lock; try restarting transaction"
        );
        winner.query_drop("COMMIT").await.unwrap();
        let ks: Vec<i64> = setup
            .query("SELECT k FROM items ORDER BY id")
            .await
            .unwrap();
        assert!(ks == vec![10, 11] || ks == vec![21, 20], "{ks:?}");

        // Lock wait timeout: a holds row 1; b waits for it and gives up with 1205.
        let mut a = connect(addr, Some("shop")).await;
        let mut b = connect(addr, Some("shop")).await;
        a.query_drop("BEGIN").await.unwrap();
        a.query_drop("UPDATE items SET k = 100 WHERE id = 1")
            .await
            .unwrap();
        b.query_drop("BEGIN").await.unwrap();
        b.query_drop("UPDATE items SET k = 7 WHERE id = 2")
            .await
            .unwrap();
        let started = Instant::now();
        let e = b
            .query_drop("UPDATE items SET k = 200 WHERE id = 1")
            .await
            .unwrap_err();
        let waited = started.elapsed();
        let (code, _, message) = server_error(e);
        assert_eq!(code, 1205);
        assert_eq!(
            message,
            "Lock wait timeout exceeded; try restarting transaction"
        );
        assert!(waited >= Duration::from_millis(1500), "{waited:?}");
        // Only the statement is undone (innodb_rollback_on_timeout=OFF): b's transaction and
        // its earlier write remain.
        let k2: Option<i64> = b
            .query_first("SELECT k FROM items WHERE id = 2")
            .await
            .unwrap();
        assert_eq!(k2, Some(7));
        // The session's innodb_lock_wait_timeout bounds the next wait.
        b.query_drop("SET innodb_lock_wait_timeout = 1")
            .await
            .unwrap();
        let timeout: Option<i64> = b
            .query_first("SELECT @@innodb_lock_wait_timeout")
            .await
            .unwrap();
        assert_eq!(timeout, Some(1));
        let started = Instant::now();
        let e = b
            .query_drop("UPDATE items SET k = 300 WHERE id = 1")
            .await
            .unwrap_err();
        assert_eq!(server_error(e).0, 1205);
        assert!(started.elapsed() >= Duration::from_millis(900));
        a.query_drop("COMMIT").await.unwrap();
        b.query_drop("COMMIT").await.unwrap();
        let ks: Vec<(i64, i64)> = setup
            .query("SELECT id, k FROM items ORDER BY id")
            .await
            .unwrap();
        assert_eq!(ks, vec![(1, 100), (2, 7)]);
    });
}

#[test]
fn errors_carry_mysql_codes_and_messages() {
    let server = TestServer::start();
    block_on(async {
        let mut conn = shop(&server).await;
        conn.query_drop("INSERT INTO items (id, k, name) VALUES (1, 1, 'a')")
            .await
            .unwrap();
        let cases: &[(&str, u16, &str, &str)] = &[
            (
                "SELEC * FROM items",
                1064,
                "42000",
                "You have an error in your SQL syntax;",
            ),
            (
                "SELECT * FROM nope",
                1146,
                "42S02",
                "Table 'shop.nope' doesn't exist",
            ),
            ("USE nope", 1049, "42000", "Unknown database 'nope'"),
            (
                "INSERT INTO items (id, k, name) VALUES (1, 2, 'b')",
                1062,
                "23000",
                "Duplicate entry '1' for key 'items.PRIMARY'",
            ),
            (
                "SELECT nope FROM items",
                1054,
                "42S22",
                "Unknown column 'nope' in 'field list'",
            ),
            (
                "INSERT INTO items (k, name) VALUES (1)",
                1136,
                "21S01",
                "Column count doesn't match value count at row 1",
            ),
            (
                "INSERT INTO items (k, name) VALUES (NULL, 'c')",
                1048,
                "23000",
                "Column 'k' cannot be null",
            ),
        ];
        for (sql, code, state, message) in cases {
            let e = conn.query_drop(*sql).await.unwrap_err();
            let (got_code, got_state, got_message) = server_error(e);
            assert_eq!((got_code, got_state.as_str()), (*code, *state), "{sql}");
            assert!(
                got_message.starts_with(message),
                "{sql}: {got_message:?} should start with {message:?}"
            );
        }
        // A failed statement leaves the connection usable and nothing half-applied.
        let count: Option<i64> = conn
            .query_first("SELECT COUNT(*) FROM items")
            .await
            .unwrap();
        assert_eq!(count, Some(1));
        let e = Conn::new(crate::mysql_client::opts(server.mysql_addr(), Some("nope")))
            .await
            .unwrap_err();
        assert_eq!(server_error(e).0, 1049);
    });
}

#[test]
fn acknowledged_commit_survives_kill9() {
    let mut server = TestServer::start();
    block_on(async {
        let mut conn = shop(&server).await;
        conn.query_drop("BEGIN").await.unwrap();
        conn.query_drop("INSERT INTO items (k, name) VALUES (7, 'durable')")
            .await
            .unwrap();
        conn.query_drop("COMMIT").await.unwrap();
        // Acknowledged: kill -9 immediately, before anything else can happen.
        server.kill9();
        drop(conn);
        server.restart();
        let mut conn = connect(server.mysql_addr(), Some("shop")).await;
        let rows: Vec<Row> = conn.query("SELECT id, k, name FROM items").await.unwrap();
        assert_eq!(rows.len(), 1);
        let (id, k, name): (u32, i32, String) = mysql_async::from_row(rows[0].clone());
        assert_eq!((id, k, name.as_str()), (1, 7, "durable"));
        // The AUTO_INCREMENT counter continues after the recovered row.
        conn.query_drop("INSERT INTO items (k, name) VALUES (8, 'next')")
            .await
            .unwrap();
        assert_eq!(conn.last_insert_id(), Some(2));
    });
}
