//! INSERT / REPLACE / UPDATE / DELETE semantics: coercion, NOT NULL, duplicates, auto-increment
//! and secondary-index maintenance.

use super::*;

#[tokio::test]
async fn auto_increment_rules() {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(&mut s, SBTEST).await;
    let r = db
        .ok(
            &mut s,
            "INSERT INTO sbtest1 (id, k) VALUES (0, 1), (NULL, 2)",
        )
        .await;
    let StatementResult::Affected {
        last_insert_id,
        affected_rows,
        ..
    } = r
    else {
        panic!()
    };
    assert_eq!((last_insert_id, affected_rows), (1, 2));
    db.ok(&mut s, "INSERT INTO sbtest1 (id, k) VALUES (10, 3)")
        .await;
    let r = db.ok(&mut s, "INSERT INTO sbtest1 (k) VALUES (4)").await;
    let StatementResult::Affected { last_insert_id, .. } = r else {
        panic!()
    };
    assert_eq!(last_insert_id, 11, "an explicit value advances the counter");
    assert_eq!(
        db.rows(&mut s, "SELECT LAST_INSERT_ID()").await,
        vec![vec!["11"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT id FROM sbtest1 ORDER BY id").await,
        vec![vec!["1"], vec!["2"], vec!["10"], vec!["11"]]
    );
}

#[tokio::test]
async fn type_checks_and_errors() {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(&mut s, SBTEST).await;
    db.ok(
        &mut s,
        "INSERT INTO sbtest1 (id, k, c) VALUES (5, '42', 'abc   ')",
    )
    .await;
    assert_eq!(
        db.rows(&mut s, "SELECT k, c, LENGTH(c) FROM sbtest1").await,
        vec![vec!["42", "abc", "3"]]
    );
    let e = db
        .err(&mut s, "INSERT INTO sbtest1 (id, k) VALUES (5, 1)")
        .await;
    assert_eq!(
        (e.code(), e.to_string()),
        (
            1062,
            "Duplicate entry '5' for key 'sbtest1.PRIMARY'".to_string()
        )
    );
    let e = db
        .err(&mut s, "INSERT INTO sbtest1 (k, c) VALUES (1, NULL)")
        .await;
    assert_eq!(
        (e.code(), e.to_string()),
        (1048, "Column 'c' cannot be null".to_string())
    );
    let e = db
        .err(&mut s, "INSERT INTO sbtest1 (k) VALUES ('abc')")
        .await;
    assert_eq!(e.code(), 1366);
    let e = db
        .err(&mut s, "INSERT INTO sbtest1 (k) VALUES (99999999999)")
        .await;
    assert_eq!(e.code(), 1264);
    let e = db
        .err(&mut s, "INSERT INTO sbtest1 (c) VALUES (REPEAT('x', 2))")
        .await;
    assert_eq!(e.code(), 1235);
    let long = "x".repeat(121);
    let e = db
        .err(
            &mut s,
            &format!("INSERT INTO sbtest1 (c) VALUES ('{long}')"),
        )
        .await;
    assert_eq!(e.code(), 1406);
    let e = db
        .err(&mut s, "INSERT INTO sbtest1 (k, c) VALUES (1)")
        .await;
    assert_eq!(e.code(), 1136);
    let e = db
        .err(&mut s, "INSERT INTO sbtest1 (nope) VALUES (1)")
        .await;
    assert_eq!(e.code(), 1054);
    let e = db
        .err(&mut s, "UPDATE sbtest1 SET k = NULL WHERE id = 5")
        .await;
    assert_eq!(e.code(), 1048);
    db.ok(
        &mut s,
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (6, DEFAULT, DEFAULT, 'p')",
    )
    .await;
    assert_eq!(
        db.rows(&mut s, "SELECT k, c, pad FROM sbtest1 WHERE id = 6")
            .await,
        vec![vec!["0", "", "p"]]
    );
}

#[tokio::test]
async fn replace_and_update_delete_with_order_limit() {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, u INT, v INT, UNIQUE KEY uu (u), KEY vv (v))",
    )
    .await;
    db.ok(
        &mut s,
        "INSERT INTO t VALUES (1, 10, 100), (2, 20, 200), (3, 30, 300)",
    )
    .await;
    let r = db.ok(&mut s, "REPLACE INTO t VALUES (4, 20, 400)").await;
    assert_eq!(affected(&r), 2);
    assert_eq!(
        db.rows(&mut s, "SELECT id FROM t ORDER BY id").await,
        vec![vec!["1"], vec!["3"], vec!["4"]]
    );
    let e = db.err(&mut s, "UPDATE t SET u = 10 WHERE id = 3").await;
    assert_eq!(e.to_string(), "Duplicate entry '10' for key 't.uu'");
    let r = db
        .ok(&mut s, "UPDATE t SET v = v + 1 ORDER BY id DESC LIMIT 2")
        .await;
    let StatementResult::Affected { info, .. } = &r else {
        panic!()
    };
    assert_eq!(
        info.as_deref(),
        Some("Rows matched: 2  Changed: 2  Warnings: 0")
    );
    assert_eq!(
        db.rows(&mut s, "SELECT v FROM t ORDER BY id").await,
        vec![vec!["100"], vec!["301"], vec!["401"]]
    );
    assert_eq!(
        affected(&db.ok(&mut s, "DELETE FROM t ORDER BY id LIMIT 1").await),
        1
    );
    assert_eq!(
        affected(&db.ok(&mut s, "DELETE FROM t WHERE v > 1000").await),
        0
    );
    assert_eq!(
        db.rows(&mut s, "SELECT id FROM t WHERE v = 401").await,
        vec![vec!["4"]]
    );
    db.ok(&mut s, "UPDATE t SET id = 9 WHERE id = 4").await;
    assert_eq!(
        db.rows(&mut s, "SELECT id, u FROM t WHERE v = 401").await,
        vec![vec!["9", "20"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT id FROM t WHERE u = 20").await,
        vec![vec!["9"]]
    );
}

/// After random UPDATE k=k+1 / DELETE / INSERT, a scan through the k index returns exactly the
/// rows a full table scan finds.
#[tokio::test]
async fn secondary_index_matches_table_after_random_writes() {
    use rand::{Rng, SeedableRng};
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(&mut s, SBTEST).await;
    db.ok(&mut s, "CREATE INDEX k_1 ON sbtest1(k)").await;
    let vals: Vec<String> = (0..100).map(|i| format!("({})", i % 10)).collect();
    db.ok(
        &mut s,
        &format!("INSERT INTO sbtest1 (k) VALUES {}", vals.join(",")),
    )
    .await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..300 {
        let id = rng.random_range(1..=120);
        let sql = match rng.random_range(0..3) {
            0 => format!("UPDATE sbtest1 SET k=k+1 WHERE id={id}"),
            1 => format!("DELETE FROM sbtest1 WHERE id={id}"),
            _ => format!(
                "REPLACE INTO sbtest1 (id, k) VALUES ({id}, {})",
                rng.random_range(0..15)
            ),
        };
        db.ok(&mut s, &sql).await;
    }
    for k in 0..20 {
        let via_index = db
            .rows(
                &mut s,
                &format!("SELECT id FROM sbtest1 WHERE k = {k} ORDER BY id"),
            )
            .await;
        let via_scan = db
            .rows(
                &mut s,
                &format!("SELECT id FROM sbtest1 WHERE k + 0 = {k} ORDER BY id"),
            )
            .await;
        assert_eq!(via_index, via_scan, "k = {k}");
    }
    let plan = db
        .rows(&mut s, "EXPLAIN SELECT id FROM sbtest1 WHERE k = 3")
        .await;
    assert_eq!(plan[0][1], "INDEX k_1 range [3, 3]");
    let plan = db
        .rows(&mut s, "EXPLAIN SELECT id FROM sbtest1 WHERE k + 0 = 3")
        .await;
    assert_eq!(plan[0][1], "FULL SCAN");
}
