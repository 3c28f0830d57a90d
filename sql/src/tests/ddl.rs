//! DDL round trips, catalog persistence and the errors of missing / duplicate objects.

use super::*;

#[tokio::test]
async fn catalog_survives_reopen_with_auto_increment() {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(&mut s, SBTEST).await;
    db.ok(&mut s, "CREATE INDEX k_1 ON sbtest1(k)").await;
    db.ok(&mut s, "CREATE TABLE t2 (a BIGINT UNSIGNED, b DECIMAL(10,2) DEFAULT 1.5, d DATE, ts DATETIME, v VARCHAR(10), UNIQUE KEY ua (a)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4").await;
    db.ok(
        &mut s,
        "INSERT INTO sbtest1 (k, c) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    )
    .await;
    db.ok(
        &mut s,
        "INSERT INTO t2 (a, d, ts, v) VALUES (7, '2024-02-29', '2024-02-29 12:34:56', 'hi')",
    )
    .await;
    let db = db.reopen();
    let mut s = SessionState::new(None);
    db.ok(&mut s, "USE sbtest").await;
    assert_eq!(
        db.rows(&mut s, "SELECT id, k, c, pad FROM sbtest1 WHERE k = 2")
            .await,
        vec![vec!["2", "2", "b", ""]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT a, b, d, ts, v FROM t2").await,
        vec![vec!["7", "1.50", "2024-02-29", "2024-02-29 12:34:56", "hi"]]
    );
    let r = db.ok(&mut s, "INSERT INTO sbtest1 (k) VALUES (4)").await;
    let StatementResult::Affected { last_insert_id, .. } = r else {
        panic!()
    };
    assert_eq!(
        last_insert_id, 4,
        "the counter resumes after the largest stored id"
    );
    let e = db.err(&mut s, "INSERT INTO t2 (a) VALUES (7)").await;
    assert_eq!(e.code(), 1062);
    assert_eq!(e.to_string(), "Duplicate entry '7' for key 't2.ua'");
}

#[tokio::test]
async fn create_and_drop_errors() {
    let db = TestDb::new();
    let mut s = SessionState::new(None);
    assert_eq!(db.err(&mut s, "CREATE TABLE t (a INT)").await.code(), 1046);
    assert_eq!(db.err(&mut s, "USE nope").await.code(), 1049);
    db.ok(&mut s, "CREATE DATABASE d1").await;
    assert_eq!(db.err(&mut s, "CREATE DATABASE d1").await.code(), 1007);
    db.ok(&mut s, "CREATE DATABASE IF NOT EXISTS d1").await;
    db.ok(&mut s, "USE d1").await;
    db.ok(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)").await;
    assert_eq!(db.err(&mut s, "CREATE TABLE t (a INT)").await.code(), 1050);
    db.ok(&mut s, "CREATE TABLE IF NOT EXISTS t (a INT)").await;
    assert_eq!(
        db.err(&mut s, "CREATE TABLE x (a INT) ENGINE=MyISAM")
            .await
            .code(),
        1286
    );
    assert_eq!(
        db.err(&mut s, "CREATE TABLE x (a INT AUTO_INCREMENT)")
            .await
            .code(),
        1075
    );
    assert_eq!(
        db.err(&mut s, "CREATE TABLE x (a INT, PRIMARY KEY (b))")
            .await
            .code(),
        1072
    );
    assert_eq!(db.err(&mut s, "SELECT * FROM nope").await.code(), 1146);
    assert_eq!(db.err(&mut s, "SELECT * FROM nodb.t").await.code(), 1049);
    assert_eq!(db.err(&mut s, "SELECT b FROM t").await.code(), 1054);
    assert_eq!(db.err(&mut s, "DROP TABLE t, nope").await.code(), 1051);
    db.ok(&mut s, "SELECT * FROM t").await;
    db.ok(&mut s, "DROP TABLE IF EXISTS t, nope").await;
    assert_eq!(db.err(&mut s, "SELECT * FROM t").await.code(), 1146);
    assert_eq!(db.err(&mut s, "DROP DATABASE nope").await.code(), 1008);
    db.ok(&mut s, "DROP DATABASE d1").await;
    assert_eq!(db.err(&mut s, "CREATE TABLE t (a INT)").await.code(), 1046);
    assert_eq!(db.err(&mut s, "SELEKT 1").await.code(), 1064);
}

#[tokio::test]
async fn truncate_and_drop_index() {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(&mut s, SBTEST).await;
    db.ok(&mut s, "INSERT INTO sbtest1 (k) VALUES (1), (2)")
        .await;
    db.ok(&mut s, "CREATE INDEX k_1 ON sbtest1(k)").await;
    assert_eq!(
        db.err(&mut s, "CREATE INDEX k_1 ON sbtest1(k)")
            .await
            .code(),
        1061
    );
    db.ok(&mut s, "TRUNCATE TABLE sbtest1").await;
    assert_eq!(
        db.rows(&mut s, "SELECT COUNT(*) FROM sbtest1").await,
        vec![vec!["0"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT COUNT(*) FROM sbtest1 WHERE k = 1")
            .await,
        vec![vec!["0"]]
    );
    let r = db.ok(&mut s, "INSERT INTO sbtest1 (k) VALUES (1)").await;
    let StatementResult::Affected { last_insert_id, .. } = r else {
        panic!()
    };
    assert_eq!(last_insert_id, 1);
    db.ok(&mut s, "DROP INDEX k_1 ON sbtest1").await;
    assert_eq!(
        db.err(&mut s, "DROP INDEX k_1 ON sbtest1").await.code(),
        1091
    );
    let rows = db
        .rows(&mut s, "EXPLAIN SELECT c FROM sbtest1 WHERE k=1")
        .await;
    assert_eq!(rows[0][1], "FULL SCAN");
}

#[tokio::test]
async fn unsupported_statements_say_so() {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(&mut s, "CREATE TABLE t (a INT PRIMARY KEY, b INT)")
        .await;
    for sql in [
        "INSERT IGNORE INTO t VALUES (1, 1)",
        "INSERT INTO t VALUES (1, 1) ON DUPLICATE KEY UPDATE b = 2",
        "SELECT a FROM t FOR UPDATE SKIP LOCKED FOR SHARE",
    ] {
        let e = db.err(&mut s, sql).await;
        assert_eq!(e.code(), 1235, "{sql}: {e}");
        assert!(
            e.to_string()
                .starts_with("This version of Orcinus doesn't yet support"),
            "{e}"
        );
    }
}
