//! Small-table tests: provider types and metadata, PK-range pushdown (counted at the reader),
//! reads inside a transaction, the MySQL dialect, and error mapping.

use super::Fixture;
use crate::SqlError;
use crate::analytics::AnalyticsConfig;
use crate::result::StatementResult;
use crate::types::SqlType;

const PEOPLE: &str = "CREATE TABLE people (id INT NOT NULL, Name VARCHAR(20), born DATE, \
    seen DATETIME, balance DECIMAL(15,2), score DOUBLE, note TEXT, pic BLOB, tag CHAR(4), \
    big BIGINT UNSIGNED, PRIMARY KEY (id))";

async fn people() -> Fixture {
    let mut f = Fixture::new(AnalyticsConfig::default()).await;
    f.exec(PEOPLE).await;
    f.exec(
        "INSERT INTO people VALUES \
         (1, 'Ann', '1990-01-31', '2024-05-01 10:20:30', 10.50, 1.5, 'x', 'b1', 'ab', 18446744073709551615), \
         (2, 'bob', '1985-12-01', NULL, -3.25, NULL, NULL, NULL, NULL, 1), \
         (3, 'Cid', NULL, '2000-01-01 00:00:00', 0.00, 2.0, 'y', NULL, 'cd', NULL), \
         (4, 'dan', '2001-07-04', NULL, 100.00, 3.0, NULL, NULL, NULL, NULL), \
         (5, NULL, '1970-01-01', NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    )
    .await;
    f
}

#[tokio::test]
async fn table_types_and_column_metadata_come_back_as_declared() {
    let f = people().await;
    let res = f.query("SELECT * FROM people WHERE id = 1").await.unwrap();
    let StatementResult::Rows { columns, rows } = &res else {
        panic!("{res:?}")
    };
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "id", "Name", "born", "seen", "balance", "score", "note", "pic", "tag", "big"
        ]
    );
    assert_eq!(
        columns[4].sql_type,
        SqlType::Decimal {
            precision: 15,
            scale: 2
        }
    );
    assert_eq!(columns[2].sql_type, SqlType::Date);
    assert_eq!(columns[3].sql_type, SqlType::DateTime);
    assert_eq!(columns[7].sql_type, SqlType::Blob);
    assert_eq!(columns[8].sql_type, SqlType::Char { len: 4 });
    assert_eq!(
        (columns[1].table.as_str(), columns[1].db.as_str()),
        ("people", "t")
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(
        super::display_rows(&res),
        vec![vec![
            "1",
            "Ann",
            "1990-01-31",
            "2024-05-01 10:20:30",
            "10.50",
            "1.5",
            "x",
            "b1",
            "ab",
            "18446744073709551615"
        ]]
    );
}

#[tokio::test]
async fn leading_pk_filters_narrow_the_scan_and_keep_answers() {
    let f = people().await;
    for (sql, want_rows, max_read) in [
        (
            "SELECT id FROM people WHERE id BETWEEN 2 AND 4 ORDER BY id",
            vec!["2", "3", "4"],
            3,
        ),
        (
            "SELECT id FROM people WHERE id > 3 ORDER BY id",
            vec!["4", "5"],
            2,
        ),
        (
            "SELECT id FROM people WHERE id <= 2 ORDER BY id",
            vec!["1", "2"],
            2,
        ),
        ("SELECT id FROM people WHERE 3 = id", vec!["3"], 1),
        (
            "SELECT id FROM people WHERE id < 3 AND id >= 2",
            vec!["2"],
            1,
        ),
        (
            "SELECT id FROM people WHERE id = 2 OR id = 4 ORDER BY id",
            vec!["2", "4"],
            5,
        ),
        ("SELECT id FROM people WHERE id + 0 = 3", vec!["3"], 5),
    ] {
        let (res, read) = f.query_counting(sql).await;
        let got: Vec<String> = super::display_rows(&res.unwrap())
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert_eq!(got, want_rows, "{sql}");
        assert_eq!(read, max_read, "rows read for {sql}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_in_a_transaction_sees_its_own_writes() {
    let f = people().await;
    let mut txn = f.storage.begin();
    f.put_row(&mut txn, "people", 9, "Zed").await;
    let (txn, res) = f
        .query_in(txn, "SELECT count(*), max(id) FROM people")
        .await;
    assert_eq!(super::display_rows(&res.unwrap()), vec![vec!["6", "9"]]);
    let outside = f.query("SELECT count(*) FROM people").await.unwrap();
    assert_eq!(super::display_rows(&outside), vec![vec!["5"]]);
    // The engine-facing call: with an open transaction, and without one.
    let cat = crate::catalog::Catalog::open(&f.storage).unwrap();
    let stmt = crate::plan::parse("SELECT count(*) FROM people")
        .unwrap()
        .remove(0);
    let mut slot = txn;
    let res = f
        .analytics
        .execute_for_session(&cat, &mut slot, Some("t"), &stmt, &[])
        .await
        .unwrap();
    assert_eq!(super::display_rows(&res), vec![vec!["6"]]);
    assert!(slot.is_some());
    let mut none = None;
    let res = f
        .analytics
        .execute_for_session(&cat, &mut none, Some("t"), &stmt, &[])
        .await
        .unwrap();
    assert_eq!(super::display_rows(&res), vec![vec!["5"]]);
    let txn = slot;

    // Early-terminated and repartitioned plans hand the transaction back too.
    let mut txn = txn.unwrap();
    for sql in [
        "SELECT id FROM people LIMIT 1",
        "SELECT Name, count(*) FROM people GROUP BY Name ORDER BY 2 LIMIT 2",
        "SELECT a.id FROM people a JOIN people b ON a.id = b.id + 1 WHERE a.id > 1 LIMIT 3",
    ] {
        let (back, res) = f.query_in(txn, sql).await;
        res.unwrap();
        txn = back.expect("transaction handed back");
    }
    txn.rollback();
}

async fn one(f: &Fixture, sql: &str) -> Vec<String> {
    let res = f.query(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    super::display_rows(&res).swap_remove(0)
}

#[tokio::test]
async fn mysql_dialect_functions_and_operators() {
    let f = people().await;
    for (sql, want) in [
        (
            "SELECT DATE_SUB('1998-12-01', INTERVAL 90 DAY)",
            "1998-09-02",
        ),
        (
            "SELECT DATE_ADD('1995-01-01', INTERVAL '3' MONTH)",
            "1995-04-01",
        ),
        ("SELECT ADDDATE(DATE '1995-01-31', 1)", "1995-02-01"),
        (
            "SELECT SUBDATE('1995-01-01', INTERVAL 1 YEAR)",
            "1994-01-01",
        ),
        ("SELECT DATE '1995-01-01' + INTERVAL 1 DAY", "1995-01-02"),
        ("SELECT DATE '1995-01-31' + INTERVAL 1 MONTH", "1995-02-28"),
        (
            "SELECT DATE_ADD(DATE '1995-01-31', INTERVAL 5 HOUR)",
            "1995-01-31 05:00:00",
        ),
        (
            "SELECT DATE_ADD(born, INTERVAL 90 MINUTE) FROM people WHERE id = 1",
            "1990-01-31 01:30:00",
        ),
        ("SELECT 2147483647 * 3", "6442450941"),
        (
            "SELECT id * 1000000000 FROM people WHERE id = 5",
            "5000000000",
        ),
        ("SELECT EXTRACT(YEAR FROM DATE '1996-03-04')", "1996"),
        ("SELECT YEAR(born) FROM people WHERE id = 1", "1990"),
        ("SELECT IF(1 > 2, 'a', 'b')", "b"),
        ("SELECT IFNULL(NULL, 7)", "7"),
        ("SELECT COALESCE(NULL, NULL, 'z')", "z"),
        ("SELECT CONCAT('a', 1, 'b')", "a1b"),
        ("SELECT CONCAT('a', NULL)", "NULL"),
        ("SELECT SUBSTRING('13-456' FROM 1 FOR 2)", "13"),
        ("SELECT SUBSTRING('Sakila', -3)", "ila"),
        ("SELECT SUBSTRING('Sakila', 0, 2)", ""),
        ("SELECT LEFT('abc', 2)", "ab"),
        ("SELECT LEFT('abc', -1)", ""),
        ("SELECT RIGHT('abc', 2)", "bc"),
        ("SELECT 7 DIV 2", "3"),
        ("SELECT 7.9 DIV 0.5", "15"),
        ("SELECT 7 DIV 0", "NULL"),
        ("SELECT 7 % 3", "1"),
        ("SELECT MOD(7, 0)", "NULL"),
        ("SELECT 7 % 0", "NULL"),
        ("SELECT 1 / 3", "0.3333"),
        ("SELECT 10 / 4", "2.5000"),
        ("SELECT 1 / 0", "NULL"),
        ("SELECT 1.50 / 3", "0.500000"),
        ("SELECT 1.5 * 2", "3.0"),
        ("SELECT (1 > 2) || (2 > 1)", "1"),
        ("SELECT 'abc' = 'ABC'", "1"),
        ("SELECT 'abc' < 'ABD'", "1"),
        ("SELECT 'ABC' LIKE 'a%'", "1"),
        ("SELECT \"dq\"", "dq"),
        ("SELECT 'ABC' REGEXP '^a.c$'", "1"),
        ("SELECT 'ABC' NOT REGEXP 'b'", "0"),
        ("SELECT INSTR('ABC', 'b')", "2"),
        ("SELECT POSITION('c' IN 'ABC')", "3"),
        ("SELECT UCASE('a')", "A"),
        ("SELECT LENGTH('añ')", "3"),
        ("SELECT count(*) FROM people WHERE Name = 'ANN'", "1"),
        (
            "SELECT count(*) FROM people WHERE name IN ('BOB', 'cid')",
            "2",
        ),
        ("SELECT count(*) FROM people WHERE NAME LIKE 'D%'", "1"),
        ("SELECT AVG(id) FROM people", "3.0000"),
        ("SELECT SUM(id) FROM people", "15"),
        ("SELECT SUM(balance), AVG(balance) FROM people", "107.25"),
        ("SELECT people.Name FROM people WHERE `ID` = 2", "bob"),
    ] {
        assert_eq!(one(&f, sql).await[0], want, "{sql}");
    }
    assert_eq!(
        one(&f, "SELECT SUM(balance), AVG(balance) FROM people").await,
        ["107.25", "26.812500"]
    );
}

#[tokio::test]
async fn result_types_follow_mysql_rules() {
    let f = people().await;
    let res = f
        .query("SELECT 1/3, AVG(id), SUM(balance), AVG(balance), EXTRACT(YEAR FROM born), id = 1, count(*) FROM people GROUP BY born, id ORDER BY id LIMIT 1")
        .await
        .unwrap();
    let StatementResult::Rows { columns, .. } = &res else {
        panic!()
    };
    let types: Vec<SqlType> = columns.iter().map(|c| c.sql_type).collect();
    assert!(
        matches!(types[0], SqlType::Decimal { scale: 4, .. }),
        "{types:?}"
    );
    assert!(
        matches!(types[1], SqlType::Decimal { scale: 4, .. }),
        "{types:?}"
    );
    assert!(
        matches!(types[2], SqlType::Decimal { scale: 2, .. }),
        "{types:?}"
    );
    assert!(
        matches!(types[3], SqlType::Decimal { scale: 6, .. }),
        "{types:?}"
    );
    assert!(types[4].is_integer(), "{types:?}");
    assert_eq!(types[6], SqlType::BigInt { unsigned: false });
    assert_eq!(columns[0].name, "1 / 3");
    assert_eq!(columns[1].name, "AVG(id)");
}

#[tokio::test]
async fn joins_subqueries_and_null_ordering() {
    let mut f = people().await;
    f.exec("CREATE TABLE pets (pid INT NOT NULL PRIMARY KEY, owner INT, kind VARCHAR(10))")
        .await;
    f.exec("INSERT INTO pets VALUES (1, 1, 'cat'), (2, 1, 'Dog'), (3, 3, 'cat'), (4, 9, 'eel')")
        .await;
    let res = f
        .query(
            "SELECT p.Name, count(x.pid) AS n FROM people p LEFT JOIN pets x ON x.owner = p.id \
             WHERE p.id IN (SELECT owner FROM pets) OR p.id = 2 GROUP BY p.Name ORDER BY n DESC, p.Name",
        )
        .await
        .unwrap();
    assert_eq!(
        super::display_rows(&res),
        vec![vec!["Ann", "2"], vec!["Cid", "1"], vec!["bob", "0"]]
    );
    let res = f
        .query("SELECT born FROM people ORDER BY born LIMIT 2")
        .await
        .unwrap();
    assert_eq!(
        super::display_rows(&res),
        vec![vec!["NULL"], vec!["1970-01-01"]]
    );
    let res = f
        .query("WITH k AS (SELECT kind, count(*) AS c FROM pets GROUP BY kind) SELECT kind FROM k WHERE c > 1")
        .await
        .unwrap();
    assert_eq!(super::display_rows(&res), vec![vec!["cat"]]);

    // GROUP BY / DISTINCT group strings case-insensitively and show one member.
    f.exec("INSERT INTO pets VALUES (5, 4, 'CAT'), (6, NULL, NULL)")
        .await;
    let res = f
        .query("SELECT kind, count(*) AS n, sum(pid) FROM pets GROUP BY kind HAVING n > 0 ORDER BY kind")
        .await
        .unwrap();
    assert_eq!(
        super::display_rows(&res),
        vec![
            vec!["NULL", "1", "6"],
            vec!["CAT", "3", "9"],
            vec!["Dog", "1", "2"],
            vec!["eel", "1", "4"]
        ]
    );
    let res = f
        .query("SELECT DISTINCT kind FROM pets WHERE kind LIKE 'c%'")
        .await
        .unwrap();
    assert_eq!(super::display_rows(&res), vec![vec!["CAT"]]);
    let res = f
        .query("SELECT k.kind, count(*) FROM (SELECT DISTINCT kind, owner FROM pets) k GROUP BY k.kind ORDER BY 2 DESC, 1 LIMIT 1")
        .await
        .unwrap();
    assert_eq!(super::display_rows(&res), vec![vec!["CAT", "3"]]);
}

#[tokio::test]
async fn errors_are_mysql_errors() {
    let f = people().await;
    let code = |r: Result<StatementResult, SqlError>| r.err().map(|e| e.code());
    assert_eq!(code(f.query("SELECT * FROM nope").await), Some(1146));
    assert_eq!(code(f.query("SELECT * FROM People").await), Some(1146));
    assert_eq!(code(f.query("SELECT nope FROM people").await), Some(1054));
    assert_eq!(code(f.query("SELECT no_such_fn(1)").await), Some(1305));
    assert_eq!(
        code(
            f.query("SELECT DATE_ADD(born, INTERVAL id DAY) FROM people")
                .await
        ),
        Some(1235)
    );
    assert_eq!(
        code(f.query_db(None, "SELECT * FROM people").await),
        Some(1046)
    );
    assert!(
        f.query_db(None, "SELECT count(*) FROM t.people")
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn exceeding_the_memory_budget_is_error_3170() {
    let mut f = Fixture::new(AnalyticsConfig {
        memory_limit: 64 << 10,
        ..AnalyticsConfig::default()
    })
    .await;
    f.exec("CREATE TABLE w (id INT NOT NULL PRIMARY KEY, s VARCHAR(100))")
        .await;
    let values: Vec<String> = (0..3000)
        .map(|i| format!("({i}, '{}')", "x".repeat(60) + &i.to_string()))
        .collect();
    f.exec(&format!("INSERT INTO w VALUES {}", values.join(",")))
        .await;
    let err = f
        .query("SELECT s, count(*) FROM w GROUP BY s ORDER BY s")
        .await
        .unwrap_err();
    assert_eq!(err.code(), 3170, "{err}");
    assert!(
        err.to_string().contains("orcinus_query_memory_limit"),
        "{err}"
    );
}

#[tokio::test]
async fn explain_shows_the_pushed_key_range_filter() {
    let f = people().await;
    let res = f
        .query("EXPLAIN SELECT Name FROM people WHERE id BETWEEN 2 AND 3")
        .await
        .unwrap();
    let text = &super::display_rows(&res)[0][0];
    assert!(text.contains("partial_filters"), "{text}");
    assert!(text.contains("StreamingTableExec"), "{text}");
    assert_eq!(
        f.query("EXPLAIN ANALYZE SELECT 1")
            .await
            .unwrap_err()
            .code(),
        1235
    );
}

#[tokio::test]
async fn repeated_result_names_and_bound_parameters() {
    let f = people().await;
    let res = f
        .query("SELECT id, ID, id + 1 AS id FROM people WHERE id = 2")
        .await
        .unwrap();
    let StatementResult::Rows { columns, .. } = &res else {
        panic!()
    };
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "ID", "id"]);
    assert_eq!(super::display_rows(&res), vec![vec!["2", "2", "3"]]);

    let res = f
        .query_params(
            "SELECT Name FROM people WHERE id BETWEEN ? AND ? AND Name LIKE ? ORDER BY id",
            &[
                crate::Datum::Int(1),
                crate::Datum::Int(4),
                crate::Datum::Bytes(b"%N%".to_vec()),
            ],
        )
        .await
        .unwrap();
    assert_eq!(super::display_rows(&res), vec![vec!["Ann"], vec!["dan"]]);
}
