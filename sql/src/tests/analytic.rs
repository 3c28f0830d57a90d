//! The executor's hand-off to the analytical executor: shapes the fast path does not run, views,
//! `orcinus_execution_mode = datafusion`, transactions and prepared analytical queries.

use super::*;
use crate::plan::ExecutionMode;
use crate::types::SqlType;

async fn loaded() -> (TestDb, SessionState) {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, p DECIMAL(10,2)); \
         INSERT INTO t VALUES (1, 10, 1.50), (2, 20, 2.25), (3, 10, 3.00)",
    )
    .await;
    (db, s)
}

#[tokio::test]
async fn shapes_the_fast_path_lacks_run_in_datafusion() {
    let (db, mut s) = loaded().await;
    let cases: [(&str, Vec<Vec<&str>>); 5] = [
        (
            "SELECT t.a, u.b FROM t JOIN t AS u ON t.a = u.a ORDER BY t.a",
            vec![vec!["1", "10"], vec!["2", "20"], vec!["3", "10"]],
        ),
        (
            "SELECT a FROM t WHERE a IN (SELECT a FROM t WHERE b = 10) ORDER BY a",
            vec![vec!["1"], vec!["3"]],
        ),
        (
            "SELECT b FROM t UNION SELECT b FROM t ORDER BY b",
            vec![vec!["10"], vec!["20"]],
        ),
        (
            "WITH x AS (SELECT 1 AS one) SELECT * FROM x",
            vec![vec!["1"]],
        ),
        (
            "SELECT a, ROW_NUMBER() OVER (ORDER BY a DESC) FROM t ORDER BY a",
            vec![vec!["1", "3"], vec!["2", "2"], vec!["3", "1"]],
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(db.rows(&mut s, sql).await, want, "{sql}");
    }
    // EXPLAIN of such a query is DataFusion's plan in one column.
    let r = db
        .rows(&mut s, "EXPLAIN SELECT * FROM t JOIN t AS u ON t.a = u.a")
        .await;
    assert_eq!(r.len(), 1);
    assert!(r[0][0].contains("physical plan"), "{r:?}");
    // A function neither executor knows is named in the error.
    let e = db
        .err(&mut s, "SELECT NO_SUCH_FN(a) FROM t JOIN t AS u USING (a)")
        .await;
    assert!(e.to_string().to_lowercase().contains("no_such_fn"), "{e}");
}

#[tokio::test]
async fn views_are_created_queried_and_dropped() {
    let (db, mut s) = loaded().await;
    db.ok(&mut s, "CREATE VIEW v AS SELECT a, b FROM t WHERE b = 10")
        .await;
    assert_eq!(
        db.rows(&mut s, "SELECT a FROM v ORDER BY a").await,
        vec![vec!["1"], vec!["3"]]
    );
    assert_eq!(db.err(&mut s, "CREATE TABLE v (x INT)").await.code(), 1050);
    db.ok(
        &mut s,
        "CREATE OR REPLACE VIEW v AS SELECT a FROM t WHERE b = 20",
    )
    .await;
    assert_eq!(db.rows(&mut s, "SELECT * FROM v").await, vec![vec!["2"]]);
    db.ok(&mut s, "DROP VIEW v").await;
    assert_eq!(db.err(&mut s, "SELECT * FROM v").await.code(), 1146);
    assert_eq!(db.err(&mut s, "DROP VIEW v").await.code(), 1051);
    // DROP DATABASE takes its views with it.
    db.ok(&mut s, "CREATE VIEW w AS SELECT a FROM t").await;
    db.ok(&mut s, "DROP DATABASE sbtest").await;
    assert!(db.sql.catalog().snapshot().views.is_empty());
    let mut s = db.session().await;
    db.ok(&mut s, "CREATE TABLE w (x INT)").await;
}

#[tokio::test]
async fn datafusion_mode_runs_table_reads_with_the_same_answers() {
    let (db, mut s) = loaded().await;
    let sql = "SELECT a, p * 2 FROM t WHERE a BETWEEN 2 AND 3 ORDER BY a";
    let fast = db.ok(&mut s, sql).await;
    s.set_execution_mode(ExecutionMode::DataFusion);
    let df = db.ok(&mut s, sql).await;
    let (StatementResult::Rows { columns: fc, .. }, StatementResult::Rows { columns: dc, .. }) =
        (&fast, &df)
    else {
        panic!("rows expected");
    };
    // Same type and scale; the precisions differ (fast path 65, DataFusion 31 for
    // DECIMAL(10,2) * 2; MySQL reports 13), which clients do not act on.
    assert!(
        matches!(
            (&fc[1].sql_type, &dc[1].sql_type),
            (
                SqlType::Decimal { scale: 2, .. },
                SqlType::Decimal { scale: 2, .. }
            )
        ),
        "{fc:?} {dc:?}"
    );
    assert_eq!(rows_of(fast), rows_of(df));
    // Column metadata agrees too (names, origin table under its alias, database). Known gap: a
    // column with an output alias (`x.b AS bee`) reports its base table `t` from DataFusion.
    for sql in ["SELECT a, b FROM t AS x WHERE a = 1", "SELECT a FROM t"] {
        s.set_execution_mode(ExecutionMode::Auto);
        let fast = db.ok(&mut s, sql).await;
        s.set_execution_mode(ExecutionMode::DataFusion);
        let df = db.ok(&mut s, sql).await;
        let meta = |r: &StatementResult| match r {
            StatementResult::Rows { columns, .. } => columns
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        c.org_name.clone(),
                        c.table.clone(),
                        c.db.clone(),
                        c.nullable,
                    )
                })
                .collect::<Vec<_>>(),
            other => panic!("rows expected, got {other:?}"),
        };
        assert_eq!(meta(&fast), meta(&df), "{sql}");
    }
    // EXPLAIN shows which executor ran: DataFusion's plan text in this mode.
    let r = db.rows(&mut s, "EXPLAIN SELECT a FROM t WHERE a = 1").await;
    assert!(r[0][0].contains("physical plan"), "{r:?}");
    // Statements without a table stay on the fast path.
    assert_eq!(db.rows(&mut s, "SELECT 1 + 1").await, vec![vec!["2"]]);
}

#[tokio::test]
async fn analytical_queries_see_the_open_transaction() {
    let (db, mut s) = loaded().await;
    s.set_autocommit(false, db.sql.catalog()).await.unwrap();
    db.ok(&mut s, "INSERT INTO t VALUES (4, 40, 4.00)").await;
    let q = "SELECT COUNT(*) FROM t JOIN t AS u ON t.a = u.a";
    assert_eq!(db.rows(&mut s, q).await, vec![vec!["4"]]);
    assert!(s.in_transaction());
    let mut other = SessionState::new(Some("sbtest".into()));
    assert_eq!(db.rows(&mut other, q).await, vec![vec!["3"]]);
    db.ok(&mut s, "ROLLBACK").await;
    assert_eq!(db.rows(&mut s, q).await, vec![vec!["3"]]);
    // With autocommit off, an analytical query opens the transaction (its snapshot holds).
    assert!(s.in_transaction());
    db.ok(&mut other, "INSERT INTO t VALUES (5, 50, 5.00)")
        .await;
    assert_eq!(db.rows(&mut s, q).await, vec![vec!["3"]]);
    db.ok(&mut s, "COMMIT").await;
    assert_eq!(db.rows(&mut s, q).await, vec![vec!["4"]]);
}

#[tokio::test]
async fn prepared_analytical_queries_describe_their_columns() {
    let (db, mut s) = loaded().await;
    let p = db
        .sql
        .prepare(
            &s,
            "SELECT t.b, SUM(t.p) AS total FROM t JOIN t AS u ON t.a = u.a \
             WHERE t.a >= ? GROUP BY t.b ORDER BY t.b",
        )
        .await
        .unwrap();
    assert_eq!(p.param_count(), 1);
    let names: Vec<&str> = p.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["b", "total"]);
    assert!(
        matches!(p.columns()[1].sql_type, SqlType::Decimal { scale: 2, .. }),
        "{:?}",
        p.columns()[1].sql_type
    );
    let r = db
        .sql
        .execute_prepared(&mut s, &p, &[int(2)])
        .await
        .unwrap();
    assert_eq!(rows_of(r), vec![vec!["10", "3.00"], vec!["20", "2.25"]]);
}
