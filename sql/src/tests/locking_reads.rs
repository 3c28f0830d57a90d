//! Locking reads (`FOR UPDATE`, `FOR SHARE`, `LOCK IN SHARE MODE`, NOWAIT, SKIP LOCKED, OF):
//! current reads of the latest committed rows, whose locks other writers wait for.

use super::*;
use crate::error::SqlResult;
use std::time::Duration;

async fn two_sessions() -> (Arc<TestDb>, SessionState, SessionState) {
    let db = TestDb::new();
    let mut a = db.session().await;
    let b = db.session().await;
    db.ok(&mut a, SBTEST).await;
    db.ok(
        &mut a,
        "INSERT INTO sbtest1 (id, k) VALUES (1, 1), (2, 2), (3, 3)",
    )
    .await;
    (Arc::new(db), a, b)
}

/// Runs `sql` in `s` on another task; the handle yields the session back with the result.
fn spawn_statement(
    db: &Arc<TestDb>,
    mut s: SessionState,
    sql: &'static str,
) -> tokio::task::JoinHandle<(SessionState, SqlResult<StatementResult>)> {
    let db = db.clone();
    tokio::spawn(async move {
        let r = db.sql.execute(&mut s, sql).await.pop();
        let r = r.unwrap_or_else(|| Err(SqlError::Internal("no result".into())));
        (s, r)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn for_update_reads_the_latest_row_and_holds_its_lock() {
    let (db, mut a, mut b) = two_sessions().await;
    db.ok(&mut a, "BEGIN").await;
    assert_eq!(
        db.rows(&mut a, "SELECT k FROM sbtest1 WHERE id = 1").await,
        vec![vec!["1"]]
    );
    db.ok(&mut b, "UPDATE sbtest1 SET k = 10 WHERE id = 1")
        .await;
    // The snapshot still reads the old row; the locking read reads the committed one.
    assert_eq!(
        db.rows(&mut a, "SELECT k FROM sbtest1 WHERE id = 1").await,
        vec![vec!["1"]]
    );
    assert_eq!(
        db.rows(&mut a, "SELECT k FROM sbtest1 WHERE id = 1 FOR UPDATE")
            .await,
        vec![vec!["10"]]
    );
    let writer = spawn_statement(&db, b, "UPDATE sbtest1 SET k = 20 WHERE id = 1");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !writer.is_finished(),
        "the update must wait for the locking read's lock"
    );
    db.ok(&mut a, "COMMIT").await;
    let (mut b, r) = writer.await.unwrap();
    assert_eq!(affected(&r.unwrap()), 1);
    assert_eq!(
        db.rows(&mut b, "SELECT k FROM sbtest1 WHERE id = 1").await,
        vec![vec!["20"]]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn range_locking_read_checks_the_filter_on_the_latest_rows() {
    let (db, mut a, mut b) = two_sessions().await;
    db.ok(&mut a, "BEGIN").await;
    db.ok(&mut a, "SELECT COUNT(*) FROM sbtest1").await;
    db.ok(&mut b, "UPDATE sbtest1 SET k = 5 WHERE id = 2").await;
    // id 2 passed the filter in a's snapshot but not at its latest version; id 3 never did.
    assert_eq!(
        db.rows(
            &mut a,
            "SELECT id, k FROM sbtest1 WHERE id BETWEEN 1 AND 3 AND k < 3 ORDER BY id DESC FOR SHARE"
        )
        .await,
        vec![vec!["1", "1"]]
    );
    assert_eq!(
        db.rows(
            &mut a,
            "SELECT COUNT(*), SUM(k) FROM sbtest1 WHERE id >= 2 FOR UPDATE"
        )
        .await,
        vec![vec!["2", "8"]]
    );
    // The first read locked ids 1 and 2 (a row is locked before its latest version is
    // checked, and stays locked, as in InnoDB); the aggregate locked 2 and 3.
    let writer = spawn_statement(&db, b, "UPDATE sbtest1 SET k = 30 WHERE id = 3");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!writer.is_finished(), "id 3 was locked by the aggregate");
    db.ok(&mut a, "ROLLBACK").await;
    let (_, r) = writer.await.unwrap();
    assert_eq!(affected(&r.unwrap()), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_outside_the_locked_set_stay_writable() {
    let (db, mut a, b) = two_sessions().await;
    db.ok(&mut a, "BEGIN").await;
    assert_eq!(
        db.rows(
            &mut a,
            "SELECT id FROM sbtest1 WHERE id < 3 AND k < 2 FOR UPDATE"
        )
        .await,
        vec![vec!["1"]]
    );
    // id 2 did not pass the filter, so it is not locked; id 3 was outside the range.
    let writer = spawn_statement(&db, b, "UPDATE sbtest1 SET k = k + 1 WHERE id IN (2, 3)");
    let (mut b, r) = tokio::time::timeout(Duration::from_secs(5), writer)
        .await
        .expect("rows the locking read did not lock must not wait")
        .unwrap();
    assert_eq!(affected(&r.unwrap()), 2);
    let writer = spawn_statement(&db, b, "UPDATE sbtest1 SET k = 7 WHERE id = 1");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!writer.is_finished(), "id 1 is locked");
    db.ok(&mut a, "COMMIT").await;
    let (_, r) = writer.await.unwrap();
    assert_eq!(affected(&r.unwrap()), 1);
    b = db.session().await;
    assert_eq!(
        db.rows(&mut b, "SELECT k FROM sbtest1 ORDER BY id").await,
        vec![vec!["7"], vec!["3"], vec!["4"]]
    );
}

#[tokio::test]
async fn nowait_fails_and_skip_locked_skips_rows_held_by_others() {
    let (db, mut a, mut b) = two_sessions().await;
    db.ok(&mut a, "BEGIN").await;
    db.ok(&mut a, "UPDATE sbtest1 SET k = 22 WHERE id = 2")
        .await;
    assert_eq!(
        db.rows(
            &mut b,
            "SELECT id FROM sbtest1 WHERE id <= 3 FOR UPDATE SKIP LOCKED"
        )
        .await,
        vec![vec!["1"], vec!["3"]]
    );
    assert_eq!(
        db.rows(
            &mut b,
            "SELECT id FROM sbtest1 WHERE id = 2 FOR SHARE SKIP LOCKED"
        )
        .await,
        Vec::<Vec<String>>::new()
    );
    db.ok(&mut b, "BEGIN").await;
    db.ok(&mut b, "UPDATE sbtest1 SET k = 33 WHERE id = 3")
        .await;
    let e = db
        .err(
            &mut b,
            "SELECT id FROM sbtest1 WHERE id <= 3 FOR UPDATE NOWAIT",
        )
        .await;
    assert_eq!(e.code(), 3572, "{e}");
    assert_eq!(e.sqlstate(), "HY000");
    assert_eq!(
        e.to_string(),
        "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."
    );
    // Only the statement failed: b's transaction and its own locked rows go on.
    assert!(b.in_transaction());
    assert_eq!(
        db.rows(
            &mut b,
            "SELECT k FROM sbtest1 WHERE id = 3 FOR UPDATE NOWAIT"
        )
        .await,
        vec![vec!["33"]]
    );
    db.ok(&mut b, "COMMIT").await;
    db.ok(&mut a, "COMMIT").await;
    assert_eq!(
        db.rows(&mut a, "SELECT k FROM sbtest1 ORDER BY id").await,
        vec![vec!["1"], vec!["22"], vec!["33"]]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autocommitted_locking_read_releases_its_locks() {
    let (db, mut a, b) = two_sessions().await;
    assert_eq!(
        db.rows(&mut a, "SELECT k FROM sbtest1 WHERE id = 1 FOR UPDATE")
            .await,
        vec![vec!["1"]]
    );
    let writer = spawn_statement(&db, b, "UPDATE sbtest1 SET k = 5 WHERE id = 1");
    let (_, r) = tokio::time::timeout(Duration::from_secs(5), writer)
        .await
        .expect("an autocommitted locking read holds no lock afterwards")
        .unwrap();
    assert_eq!(affected(&r.unwrap()), 1);
}

#[tokio::test]
async fn lock_in_share_mode_and_the_of_clause() {
    let (db, mut a, _) = two_sessions().await;
    assert_eq!(
        db.rows(
            &mut a,
            "SELECT k FROM sbtest1 WHERE id = 2 LOCK   IN /* old spelling */ SHARE\nMODE"
        )
        .await,
        vec![vec!["2"]]
    );
    assert_eq!(
        db.rows(
            &mut a,
            "select k from sbtest1 where id between 1 and 2 order by k desc limit 1 lock in share mode"
        )
        .await,
        vec![vec!["2"]]
    );
    // Only the keywords are rewritten: in a string it stays text, and bad SQL stays 1064.
    assert_eq!(
        db.rows(&mut a, "SELECT 'lock in share mode'").await,
        vec![vec!["lock in share mode"]]
    );
    let e = db
        .err(&mut a, "SELECT k FROM sbtest1 WHERE LOCK IN SHARE MODE")
        .await;
    assert_eq!(e.code(), 1064, "{e}");
    assert_eq!(
        db.rows(
            &mut a,
            "SELECT s.k FROM sbtest1 AS s WHERE s.id = 3 FOR UPDATE OF s"
        )
        .await,
        vec![vec!["3"]]
    );
    for (sql, name) in [
        (
            "SELECT k FROM sbtest1 AS s WHERE id = 3 FOR UPDATE OF sbtest1",
            "sbtest1",
        ),
        (
            "SELECT k FROM sbtest1 WHERE id = 3 FOR SHARE OF nope",
            "nope",
        ),
    ] {
        let e = db.err(&mut a, sql).await;
        assert_eq!(e.code(), 3568, "{sql}: {e}");
        assert_eq!(
            e.to_string(),
            format!("Unresolved table name `{name}` in locking clause.")
        );
    }
    // A SELECT without a table has no rows to lock.
    assert_eq!(
        db.rows(&mut a, "SELECT 1 + 1 FROM DUAL FOR UPDATE").await,
        vec![vec!["2"]]
    );
    assert_eq!(
        db.rows(&mut a, "select 'x' from dual").await,
        vec![vec!["x"]]
    );
    assert_eq!(db.err(&mut a, "SELECT * FROM DUAL").await.code(), 1096);
}

#[tokio::test]
async fn locking_reads_the_fast_path_cannot_run_say_so() {
    let (db, mut a, _) = two_sessions().await;
    for sql in [
        "SELECT x.k FROM sbtest1 x JOIN sbtest1 y ON x.id = y.id FOR UPDATE",
        "SELECT k FROM sbtest1 WHERE id = 1 FOR UPDATE FOR SHARE",
    ] {
        let e = db.err(&mut a, sql).await;
        assert_eq!(e.code(), 1235, "{sql}: {e}");
    }
}
