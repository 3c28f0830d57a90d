//! The analytical column cache (`analytics/column_cache.rs`) is exactly coherent with MVCC:
//! every commit path, a rollback, a transaction's own writes, DDL, TRUNCATE and an older
//! snapshot each give the answer a storage read gives; repeat scans are served from memory.

use super::*;
use crate::analytics::catalog_provider::QuerySource;
use crate::analytics::column_cache::CacheStats;
use crate::analytics::{AnalyticsConfig, RowReader};
use crate::plan::ExecutionMode;
use orcinus_storage::{Engine, StorageConfig};

const SUM: &str = "SELECT COUNT(*), SUM(b), SUM(p) FROM t";

async fn loaded() -> (TestDb, SessionState) {
    let db = TestDb::new();
    let mut s = db.session().await;
    s.set_execution_mode(ExecutionMode::DataFusion);
    db.ok(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, p DECIMAL(10,2), s VARCHAR(10)); \
         INSERT INTO t VALUES (1, 10, 1.50, 'x'), (2, 20, 2.25, 'y'), (3, 10, 3.00, NULL)",
    )
    .await;
    (db, s)
}

fn stats(db: &TestDb) -> CacheStats {
    db.sql.analytics().cache_stats()
}

async fn sum(db: &TestDb, s: &mut SessionState) -> Vec<String> {
    db.rows(s, SUM).await.remove(0)
}

#[tokio::test]
async fn repeat_scans_hit_and_every_commit_is_seen() {
    let (db, mut s) = loaded().await;
    assert_eq!(sum(&db, &mut s).await, ["3", "40", "6.75"]);
    let first = stats(&db);
    assert_eq!((first.builds, first.hits, first.tables), (1, 1, 1));
    assert_eq!(sum(&db, &mut s).await, ["3", "40", "6.75"]);
    assert_eq!((stats(&db).builds, stats(&db).hits), (1, 2));
    // Each kind of committed write is seen (and rebuilds the entry once).
    let steps: [(&str, [&str; 3]); 4] = [
        (
            "INSERT INTO t VALUES (4, 5, 0.25, 'z')",
            ["4", "45", "7.00"],
        ),
        ("UPDATE t SET b = b + 1 WHERE a = 1", ["4", "46", "7.00"]),
        ("DELETE FROM t WHERE a = 2", ["3", "26", "4.75"]),
        (
            "BEGIN; INSERT INTO t VALUES (9, 1, 1.00, 'q'); COMMIT",
            ["4", "27", "5.75"],
        ),
    ];
    for (i, (write, want)) in steps.into_iter().enumerate() {
        db.ok(&mut s, write).await;
        assert_eq!(sum(&db, &mut s).await, want, "{write}");
        assert_eq!(stats(&db).builds, 2 + i as u64, "{write}");
        assert_eq!(sum(&db, &mut s).await, want, "{write}");
        assert_eq!(stats(&db).builds, 2 + i as u64, "{write}");
    }
    // SET autocommit = 1 commits the open transaction: seen too.
    let catalog = db.sql.catalog();
    s.set_autocommit(false, catalog).await.unwrap();
    db.ok(&mut s, "INSERT INTO t VALUES (10, 100, 0.00, NULL)")
        .await;
    s.set_autocommit(true, catalog).await.unwrap();
    assert_eq!(sum(&db, &mut s).await, ["5", "127", "5.75"]);
}

#[tokio::test]
async fn a_rollback_keeps_the_entry_and_own_writes_bypass_it() {
    let (db, mut s) = loaded().await;
    let mut other = db.session().await;
    other.set_execution_mode(ExecutionMode::DataFusion);
    assert_eq!(sum(&db, &mut s).await, ["3", "40", "6.75"]);
    db.ok(&mut s, "BEGIN").await;
    db.ok(&mut s, "INSERT INTO t VALUES (4, 5, 0.25, 'z')")
        .await;
    // The transaction sees its own write; others do not, and keep hitting the cache.
    assert_eq!(sum(&db, &mut s).await, ["4", "45", "7.00"]);
    let hits = stats(&db).hits;
    assert_eq!(sum(&db, &mut other).await, ["3", "40", "6.75"]);
    assert_eq!(stats(&db).hits, hits + 1);
    db.ok(&mut s, "ROLLBACK").await;
    assert_eq!(sum(&db, &mut s).await, ["3", "40", "6.75"]);
    assert_eq!((stats(&db).builds, stats(&db).hits), (1, hits + 2));
}

#[tokio::test]
async fn an_older_snapshot_does_not_see_a_later_commit_through_the_cache() {
    let (db, mut s) = loaded().await;
    let catalog = db.sql.catalog();
    let (old_storage, old_versions) = catalog.versioned_snapshot();
    let old_catalog = catalog.snapshot();
    db.ok(&mut s, "INSERT INTO t VALUES (4, 5, 0.25, 'z')")
        .await;
    // A fresh query builds the entry at the new version.
    assert_eq!(sum(&db, &mut s).await, ["4", "45", "7.00"]);
    assert_eq!(stats(&db).builds, 1);
    // A query over the snapshot taken before the insert must not use it.
    let analytics = db.sql.analytics();
    let source = QuerySource {
        catalog: old_catalog,
        reader: Arc::new(old_storage) as Arc<dyn RowReader>,
        data: catalog.data().clone(),
        batch_size: 8192,
        cache: Some((analytics.column_cache().clone(), old_versions)),
    };
    let stmt = crate::plan::parse(SUM).unwrap().remove(0);
    let res = analytics
        .execute_source(source, Some("sbtest"), &stmt, &[])
        .await
        .unwrap();
    assert_eq!(rows_of(res).remove(0), ["3", "40", "6.75"]);
    // It decoded its own version and did not replace the newer entry.
    assert_eq!((stats(&db).builds, stats(&db).tables), (2, 1));
    assert_eq!(sum(&db, &mut s).await, ["4", "45", "7.00"]);
    assert_eq!(stats(&db).builds, 2);
}

#[tokio::test]
async fn ddl_truncate_and_drop_are_seen() {
    let (db, mut s) = loaded().await;
    assert_eq!(sum(&db, &mut s).await, ["3", "40", "6.75"]);
    db.ok(&mut s, "CREATE INDEX ib ON t (b)").await;
    assert_eq!(sum(&db, &mut s).await, ["3", "40", "6.75"]);
    assert_eq!(stats(&db).builds, 2, "a new table definition rebuilds");
    db.ok(&mut s, "TRUNCATE TABLE t").await;
    assert_eq!(sum(&db, &mut s).await, ["0", "NULL", "NULL"]);
    db.ok(&mut s, "INSERT INTO t VALUES (7, 7, 7.00, 'w')")
        .await;
    assert_eq!(sum(&db, &mut s).await, ["1", "7", "7.00"]);
    db.ok(&mut s, "DROP TABLE t").await;
    db.ok(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, p DECIMAL(10,2)); \
         INSERT INTO t VALUES (1, 1, 1.00)",
    )
    .await;
    assert_eq!(sum(&db, &mut s).await, ["1", "1", "1.00"]);
    // String columns join the entry when a query asks for them; answers stay right.
    assert_eq!(
        db.rows(&mut s, "SELECT MAX(b), MIN(p) FROM t").await,
        vec![vec!["1", "1.00"]]
    );
}

#[tokio::test]
async fn key_ranges_prune_cached_chunks_and_the_budget_evicts() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let config = AnalyticsConfig {
        batch_size: 4,
        target_partitions: 2,
        column_cache_bytes: 64 << 10,
        ..AnalyticsConfig::default()
    };
    let sql = SqlExecutor::open_with(storage, config).unwrap();
    let db = TestDb { dir, sql };
    let mut s = db.session().await;
    s.set_execution_mode(ExecutionMode::DataFusion);
    let values: Vec<String> = (1..=100).map(|i| format!("({i}, {})", i % 7)).collect();
    db.ok(
        &mut s,
        &format!(
            "CREATE TABLE r (id INT PRIMARY KEY, v INT); INSERT INTO r VALUES {}",
            values.join(", ")
        ),
    )
    .await;
    assert_eq!(
        db.rows(&mut s, "SELECT COUNT(*), SUM(v) FROM r").await,
        vec![vec!["100", "297"]]
    );
    assert_eq!(stats(&db).builds, 1);
    let q = "SELECT COUNT(*), SUM(v) FROM r WHERE id BETWEEN 10 AND 17";
    assert_eq!(db.rows(&mut s, q).await, vec![vec!["8", "24"]]);
    assert_eq!((stats(&db).builds, stats(&db).hits), (1, 2));
    // 25 chunks of 4 rows; ids 10..=17 lie in chunks 3..=5 (12 rows served).
    let plan = db
        .rows(&mut s, &format!("EXPLAIN {q}"))
        .await
        .remove(0)
        .remove(0);
    assert!(
        plan.contains("StorageScanExec: column cache, estimated_rows=12,"),
        "{plan}"
    );
    // A second table that does not fit next to the first evicts it.
    let wide: Vec<String> = (1..=2000).map(|i| format!("({i}, {i})")).collect();
    db.ok(
        &mut s,
        &format!(
            "CREATE TABLE w (id INT PRIMARY KEY, v BIGINT); INSERT INTO w VALUES {}",
            wide.join(", ")
        ),
    )
    .await;
    assert_eq!(
        db.rows(&mut s, "SELECT SUM(v) FROM w").await,
        vec![vec!["2001000"]]
    );
    let after = stats(&db);
    assert!(after.bytes <= 64 << 10, "{after:?}");
    assert!(after.evictions >= 1 || after.tables == 1, "{after:?}");
    assert_eq!(
        db.rows(&mut s, "SELECT COUNT(*), SUM(v) FROM r").await,
        vec![vec!["100", "297"]]
    );
}
