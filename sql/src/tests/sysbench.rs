//! Every statement sysbench 1.0.20 sends (oltp_common.lua), plain and prepared.

use super::*;

async fn loaded(n: i64) -> (TestDb, SessionState) {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(&mut s, SBTEST).await;
    let values: Vec<String> = (1..=n)
        .map(|i| format!("({}, '{:011}-{:011}', '{:011}')", i * 7 % 100, i, i * 3, i))
        .collect();
    let r = db
        .ok(
            &mut s,
            &format!("INSERT INTO sbtest1(k, c, pad) VALUES{}", values.join(",")),
        )
        .await;
    assert_eq!(affected(&r), n as u64);
    db.ok(&mut s, "CREATE INDEX k_1 ON sbtest1(k)").await;
    (db, s)
}

#[tokio::test]
async fn prepare_phase_statements_work() {
    let (db, mut s) = loaded(200).await;
    assert_eq!(
        db.rows(&mut s, "SELECT COUNT(*) FROM sbtest1").await,
        vec![vec!["200"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT id, k FROM sbtest1 WHERE id = 3")
            .await,
        vec![vec!["3", "21"]]
    );
    db.ok(&mut s, "DROP TABLE IF EXISTS sbtest1").await;
    let e = db.err(&mut s, "SELECT c FROM sbtest1 WHERE id = 1").await;
    assert_eq!(e.code(), 1146);
}

#[tokio::test]
async fn plain_run_statements() {
    let (db, mut s) = loaded(200).await;
    assert_eq!(
        db.rows(&mut s, "SELECT c FROM sbtest1 WHERE id=5").await,
        vec![vec!["00000000005-00000000015"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 7")
            .await
            .len(),
        3
    );
    let sum: i64 = (5..=104).map(|i| i * 7 % 100).sum();
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 5 AND 5+99"
        )
        .await,
        vec![vec![sum.to_string()]]
    );
    let ordered = db
        .rows(
            &mut s,
            "SELECT c FROM sbtest1 WHERE id BETWEEN 10 AND 19 ORDER BY c",
        )
        .await;
    let mut sorted = ordered.clone();
    sorted.sort();
    assert_eq!(ordered, sorted);
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 10 AND 19 ORDER BY c"
        )
        .await
        .len(),
        10
    );
    db.ok(&mut s, "BEGIN").await;
    assert_eq!(
        affected(&db.ok(&mut s, "UPDATE sbtest1 SET k=k+1 WHERE id=5").await),
        1
    );
    assert_eq!(
        affected(&db.ok(&mut s, "UPDATE sbtest1 SET c='x' WHERE id=6").await),
        1
    );
    assert_eq!(
        affected(&db.ok(&mut s, "DELETE FROM sbtest1 WHERE id=7").await),
        1
    );
    assert_eq!(
        affected(
            &db.ok(
                &mut s,
                "INSERT INTO sbtest1 (id, k, c, pad) VALUES (7, 1, 'c', 'pad')"
            )
            .await
        ),
        1
    );
    db.ok(&mut s, "COMMIT").await;
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT k, c FROM sbtest1 WHERE id IN (5, 6, 7) ORDER BY id"
        )
        .await,
        vec![
            vec!["36", "00000000005-00000000015"],
            vec!["42", "x"],
            vec!["1", "c"],
        ]
    );
    // oltp_insert: id 0 generates the next value.
    let r = db
        .ok(
            &mut s,
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 5, 'c', 'pad')",
        )
        .await;
    let StatementResult::Affected { last_insert_id, .. } = r else {
        panic!()
    };
    assert_eq!(last_insert_id, 201);
}

#[tokio::test]
async fn prepared_run_statements() {
    let (db, mut s) = loaded(200).await;
    let e = &db.sql;
    let point = e
        .prepare(&s, "SELECT c FROM sbtest1 WHERE id=?")
        .await
        .unwrap();
    assert_eq!(point.param_count(), 1);
    assert_eq!(point.columns().len(), 1);
    let range = e
        .prepare(&s, "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .await
        .unwrap();
    let sum = e
        .prepare(&s, "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .await
        .unwrap();
    assert_eq!(sum.columns().len(), 1);
    let order = e
        .prepare(
            &s,
            "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
        )
        .await
        .unwrap();
    let distinct = e
        .prepare(
            &s,
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
        )
        .await
        .unwrap();
    let upd_k = e
        .prepare(&s, "UPDATE sbtest1 SET k=k+1 WHERE id=?")
        .await
        .unwrap();
    let upd_c = e
        .prepare(&s, "UPDATE sbtest1 SET c=? WHERE id=?")
        .await
        .unwrap();
    let del = e
        .prepare(&s, "DELETE FROM sbtest1 WHERE id=?")
        .await
        .unwrap();
    let ins = e
        .prepare(
            &s,
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
        )
        .await
        .unwrap();
    let begin = e.prepare(&s, "BEGIN").await.unwrap();
    let commit = e.prepare(&s, "COMMIT").await.unwrap();
    assert_eq!(upd_c.param_count(), 2);
    assert_eq!(ins.param_count(), 4);
    assert!(upd_k.columns().is_empty());
    for round in 0..3i64 {
        let id = 10 + round;
        e.execute_prepared(&mut s, &begin, &[]).await.unwrap();
        assert!(s.in_transaction());
        let r = rows_of(
            e.execute_prepared(&mut s, &point, &[int(id)])
                .await
                .unwrap(),
        );
        assert_eq!(r.len(), 1);
        let r = rows_of(
            e.execute_prepared(&mut s, &range, &[int(id), int(id + 99)])
                .await
                .unwrap(),
        );
        assert_eq!(r.len(), 100);
        let r = rows_of(
            e.execute_prepared(&mut s, &sum, &[int(id), int(id + 99)])
                .await
                .unwrap(),
        );
        assert_eq!(r.len(), 1);
        let r = rows_of(
            e.execute_prepared(&mut s, &order, &[int(id), int(id + 99)])
                .await
                .unwrap(),
        );
        assert_eq!(r.len(), 100);
        let r = rows_of(
            e.execute_prepared(&mut s, &distinct, &[int(id), int(id + 99)])
                .await
                .unwrap(),
        );
        assert_eq!(r.len(), 100);
        assert_eq!(
            affected(
                &e.execute_prepared(&mut s, &upd_k, &[int(id)])
                    .await
                    .unwrap()
            ),
            1
        );
        assert_eq!(
            affected(
                &e.execute_prepared(&mut s, &upd_c, &[text("new"), int(id + 1)])
                    .await
                    .unwrap()
            ),
            1
        );
        assert_eq!(
            affected(
                &e.execute_prepared(&mut s, &del, &[int(id + 2)])
                    .await
                    .unwrap()
            ),
            1
        );
        let r = e
            .execute_prepared(&mut s, &ins, &[int(id + 2), int(1), text("c"), text("pad")])
            .await
            .unwrap();
        assert_eq!(affected(&r), 1);
        e.execute_prepared(&mut s, &commit, &[]).await.unwrap();
        assert!(!s.in_transaction());
    }
    assert_eq!(
        db.rows(&mut s, "SELECT COUNT(*) FROM sbtest1").await,
        vec![vec!["200"]]
    );
}

#[tokio::test]
async fn between_with_params_and_arithmetic_are_pk_ranges() {
    let (db, mut s) = loaded(50).await;
    let rows = db
        .rows(
            &mut s,
            "EXPLAIN SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 5+99",
        )
        .await;
    assert_eq!(rows[0][1], "PRIMARY range [5, 104]");
    let p = db
        .sql
        .prepare(&s, "EXPLAIN SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .await
        .unwrap();
    let r = rows_of(
        db.sql
            .execute_prepared(&mut s, &p, &[int(5), int(104)])
            .await
            .unwrap(),
    );
    assert_eq!(r[0][1], "PRIMARY range [5, 104]");
    // The same cached plan with other bounds gets other bounds.
    let r = rows_of(
        db.sql
            .execute_prepared(&mut s, &p, &[int(7), int(8)])
            .await
            .unwrap(),
    );
    assert_eq!(r[0][1], "PRIMARY range [7, 8]");
    let p = db
        .sql
        .prepare(
            &s,
            "EXPLAIN SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?+99",
        )
        .await
        .unwrap();
    let r = rows_of(
        db.sql
            .execute_prepared(&mut s, &p, &[int(5), int(5)])
            .await
            .unwrap(),
    );
    assert_eq!(r[0][1], "PRIMARY range [5, 104]");
    let rows = db
        .rows(&mut s, "EXPLAIN SELECT c FROM sbtest1 WHERE id=3")
        .await;
    assert_eq!(rows[0][1], "PRIMARY point [3]");
    let rows = db
        .rows(&mut s, "EXPLAIN SELECT c FROM sbtest1 WHERE k=3")
        .await;
    assert_eq!(rows[0][1], "INDEX k_1 range [3, 3]");
    let rows = db
        .rows(&mut s, "EXPLAIN SELECT c FROM sbtest1 WHERE c='x'")
        .await;
    assert_eq!(rows[0][1], "FULL SCAN");
    let rows = db
        .rows(
            &mut s,
            "EXPLAIN SELECT c FROM sbtest1 WHERE id > 10 AND id <= 20.5",
        )
        .await;
    assert_eq!(rows[0][1], "PRIMARY range [11, 20]");
}
