//! SELECT semantics: expressions, NULL logic, LIKE, CASE, functions, aggregates, grouping,
//! ordering, DISTINCT, LIMIT/OFFSET, SELECT without FROM.

use super::*;

async fn people() -> (TestDb, SessionState) {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(20), dept VARCHAR(10), salary DECIMAL(8,2), age INT NULL)").await;
    db.ok(&mut s, "INSERT INTO p VALUES (1, 'Ann', 'eng', 100.50, 30), (2, 'bob', 'eng', 200, NULL), (3, 'Cid', 'ops', 50.25, 40), (4, 'dan', 'ops', NULL, 25), (5, 'Eve', 'hr', 75, 35)").await;
    (db, s)
}

#[tokio::test]
async fn select_without_from() {
    let db = TestDb::new();
    let mut s = SessionState::new(None);
    assert_eq!(db.rows(&mut s, "SELECT 1").await, vec![vec!["1"]]);
    assert_eq!(
        db.rows(&mut s, "SELECT 1+2, 7/2, 7 DIV 2, 7 % 3, -3.5 * 2, 1.0/3")
            .await,
        vec![vec!["3", "3.5000", "3", "1", "-7.0", "0.33333"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT NULL + 1, 1/0, NULL IS NULL, 1 = NULL, NULL <=> NULL"
        )
        .await,
        vec![vec!["NULL", "NULL", "1", "NULL", "1"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT 'abc' = 'ABC', '10' = 10, 'a' < 'b', 2 BETWEEN 1 AND 3, 5 IN (1, 2)"
        )
        .await,
        vec![vec!["1", "1", "1", "1", "0"]]
    );
    assert_eq!(db.rows(&mut s, "SELECT COALESCE(NULL, NULL, 3), IFNULL(NULL, 'x'), IF(1 > 2, 'a', 'b'), CONCAT('a', 1, 'b'), UPPER('aB'), LOWER('aB'), ABS(-4), ROUND(2.567, 2)").await,
        vec![vec!["3", "x", "b", "a1b", "AB", "ab", "4", "2.57"]]);
    assert_eq!(db.rows(&mut s, "SELECT CASE WHEN 1 > 2 THEN 'no' WHEN 2 > 1 THEN 'yes' END, CASE 3 WHEN 3 THEN 'three' ELSE 'other' END").await, vec![vec!["yes", "three"]]);
    assert_eq!(
        db.rows(&mut s, "SELECT NULL AND 0, NULL OR 1, NOT NULL, 1 XOR 1")
            .await,
        vec![vec!["0", "1", "NULL", "0"]]
    );
    assert_eq!(db.err(&mut s, "SELECT nope").await.code(), 1054);
    assert_eq!(
        db.err(&mut s, "SELECT 9223372036854775807 + 1")
            .await
            .code(),
        1690
    );
}

#[tokio::test]
async fn filters_order_limit_distinct() {
    let (db, mut s) = people().await;
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT name FROM p WHERE name LIKE 'a%' OR name LIKE '_OB'"
        )
        .await,
        vec![vec!["Ann"], vec!["bob"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT name FROM p WHERE age IS NULL")
            .await,
        vec![vec!["bob"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT name FROM p ORDER BY name DESC LIMIT 2")
            .await,
        vec![vec!["Eve"], vec!["dan"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT name FROM p ORDER BY dept, salary DESC LIMIT 1, 2"
        )
        .await,
        vec![vec!["Ann"], vec!["Eve"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT name FROM p ORDER BY id LIMIT 2 OFFSET 3")
            .await,
        vec![vec!["dan"], vec!["Eve"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT DISTINCT dept FROM p ORDER BY dept")
            .await,
        vec![vec!["eng"], vec!["hr"], vec!["ops"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT id AS x, salary * 2 AS dbl FROM p WHERE id = 1"
        )
        .await,
        vec![vec!["1", "201.00"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT p.name FROM p WHERE p.id IN (2, 4) ORDER BY 1"
        )
        .await,
        vec![vec!["bob"], vec!["dan"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT * FROM p WHERE id = 5").await,
        vec![vec!["5", "Eve", "hr", "75.00", "35"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT name FROM p WHERE id > 2 AND id < 5 AND age > 30"
        )
        .await,
        vec![vec!["Cid"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT name FROM p WHERE id = 1.5").await,
        Vec::<Vec<String>>::new()
    );
    let StatementResult::Rows { columns, .. } =
        db.ok(&mut s, "SELECT name, id + 1 FROM p LIMIT 1").await
    else {
        panic!()
    };
    assert_eq!(
        (
            columns[0].name.as_str(),
            columns[0].table.as_str(),
            columns[0].db.as_str()
        ),
        ("name", "p", "sbtest")
    );
    assert_eq!(columns[1].name, "id + 1");
}

#[tokio::test]
async fn aggregates_and_grouping() {
    let (db, mut s) = people().await;
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT COUNT(*), COUNT(age), SUM(salary), AVG(age), MIN(name), MAX(salary) FROM p"
        )
        .await,
        vec![vec!["5", "4", "425.75", "32.5000", "Ann", "200.00"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT dept, COUNT(*), SUM(age) FROM p GROUP BY dept ORDER BY dept"
        )
        .await,
        vec![
            vec!["eng", "2", "30"],
            vec!["hr", "1", "35"],
            vec!["ops", "2", "65"]
        ]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT dept FROM p GROUP BY dept HAVING COUNT(*) > 1 ORDER BY COUNT(*) DESC, dept"
        )
        .await,
        vec![vec!["eng"], vec!["ops"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT COUNT(DISTINCT dept) FROM p").await,
        vec![vec!["3"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT COUNT(*), SUM(age) FROM p WHERE id > 100")
            .await,
        vec![vec!["0", "NULL"]]
    );
    assert_eq!(
        db.err(&mut s, "SELECT name FROM p WHERE COUNT(*) > 1")
            .await
            .code(),
        1111
    );
}

#[tokio::test]
async fn having_without_group_by_filters_and_prefers_select_aliases() {
    let db = TestDb::new();
    let mut s = db.session().await;
    db.ok(
        &mut s,
        "CREATE TABLE h (id INT PRIMARY KEY, k INT, name VARCHAR(10))",
    )
    .await;
    db.ok(
        &mut s,
        "INSERT INTO h VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')",
    )
    .await;
    assert_eq!(
        db.rows(&mut s, "SELECT id FROM h HAVING id > 1").await,
        vec![vec!["2"], vec!["3"]],
        "HAVING without aggregation filters rows"
    );
    // `k` names both a column and an alias: HAVING and ORDER BY mean the alias (MySQL).
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT name, 40 - k AS k FROM h HAVING k IN (10, 20) ORDER BY k"
        )
        .await,
        vec![vec!["c", "10"], vec!["b", "20"]]
    );
    let prepared = db
        .sql
        .prepare(&s, "SELECT id, k - ? AS x FROM h HAVING x")
        .await
        .unwrap();
    assert_eq!(prepared.param_count(), 1, "the aliased `?` is counted once");
    let r = db
        .sql
        .execute_prepared(&mut s, &prepared, &[Datum::Int(20)])
        .await
        .unwrap();
    assert_eq!(rows_of(r), vec![vec!["1", "-10"], vec!["3", "10"]]);
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT id, k FROM h GROUP BY id HAVING k + 0 >= 20 ORDER BY id DESC"
        )
        .await,
        vec![vec!["3", "30"], vec!["2", "20"]]
    );
}

/// The scan decodes only the columns a query reads and moves bare column items out of the
/// decoded row; repeated columns, expressions over a projected column and ORDER BY keys that
/// are (or are not) select items must still see every value they read.
#[tokio::test]
async fn projected_reads_keep_every_column_a_query_uses() {
    let (db, mut s) = people().await;
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT name, name, UPPER(name) FROM p WHERE id BETWEEN 1 AND 2 ORDER BY name"
        )
        .await,
        vec![vec!["Ann", "Ann", "ANN"], vec!["bob", "bob", "BOB"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT name FROM p WHERE id BETWEEN 1 AND 5 ORDER BY age DESC, name"
        )
        .await,
        vec![
            vec!["Cid"],
            vec!["Eve"],
            vec!["Ann"],
            vec!["dan"],
            vec!["bob"]
        ]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT DISTINCT dept FROM p WHERE id BETWEEN 1 AND 5 ORDER BY dept"
        )
        .await,
        vec![vec!["eng"], vec!["hr"], vec!["ops"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT SUM(salary), COUNT(*) FROM p WHERE id BETWEEN 2 AND 4"
        )
        .await,
        vec![vec!["250.25", "3"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT name, 2 FROM p WHERE id = 3 ORDER BY 1")
            .await,
        vec![vec!["Cid", "2"]]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT dept, COUNT(*) FROM p GROUP BY dept ORDER BY dept"
        )
        .await,
        vec![vec!["eng", "2"], vec!["hr", "1"], vec!["ops", "2"]]
    );
}

/// Key-range filters the access path answers exactly are not evaluated again per row; any other
/// conjunct still is, and the rows agree with the same filters over a full scan.
#[tokio::test]
async fn key_range_filters_answer_like_full_scans() {
    let (db, mut s) = people().await;
    let ids = |rows: Vec<Vec<String>>| rows.into_iter().map(|r| r.join(",")).collect::<Vec<_>>();
    for (ranged, scanned) in [
        ("id BETWEEN 2 AND 4", "id + 0 BETWEEN 2 AND 4"),
        ("id >= 2 AND id < 4", "id + 0 >= 2 AND id + 0 < 4"),
        ("3 = id", "3 = id + 0"),
        (
            "id > 1 AND id <= 9 AND dept = 'OPS'",
            "id + 0 > 1 AND dept = 'OPS'",
        ),
        ("id BETWEEN 1 AND 5 AND age > 30", "age > 30"),
        ("id BETWEEN 4 AND 2", "id + 0 BETWEEN 4 AND 2"),
        ("id BETWEEN 2.5 AND 4", "id + 0 BETWEEN 2.5 AND 4"),
        ("id = 5000000000", "id + 0 = 5000000000"),
        (
            "id < 5000000000 AND id > -5000000000",
            "id + 0 < 5000000000",
        ),
    ] {
        let q = |w: &str| format!("SELECT id, name FROM p WHERE {w} ORDER BY name");
        assert_eq!(
            ids(db.rows(&mut s, &q(ranged)).await),
            ids(db.rows(&mut s, &q(scanned)).await),
            "{ranged}"
        );
    }
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT name FROM p WHERE id BETWEEN 2 AND 4 AND age IS NULL"
        )
        .await,
        vec![vec!["bob"]]
    );
}

/// DISTINCT keeps the first of rows equal under the collation, in input order.
#[tokio::test]
async fn distinct_keeps_the_first_of_collation_equal_rows() {
    let (db, mut s) = people().await;
    db.ok(
        &mut s,
        "INSERT INTO p VALUES (6, 'ANN', 'ENG', 1, 1), (7, 'ann', 'x', 2, 2)",
    )
    .await;
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT DISTINCT name FROM p WHERE name LIKE 'ann' ORDER BY id"
        )
        .await,
        vec![vec!["Ann"]]
    );
    assert_eq!(
        db.rows(&mut s, "SELECT DISTINCT dept, age > 29 FROM p ORDER BY id")
            .await,
        vec![
            vec!["eng", "1"],
            vec!["eng", "NULL"],
            vec!["ops", "1"],
            vec!["ops", "0"],
            vec!["hr", "1"],
            vec!["ENG", "0"],
            vec!["x", "0"],
        ]
    );
    assert_eq!(
        db.rows(
            &mut s,
            "SELECT SUM(age), COUNT(*), MIN(name) FROM p WHERE id BETWEEN 2 AND 5"
        )
        .await,
        vec![vec!["100", "4", "bob"]]
    );
}
