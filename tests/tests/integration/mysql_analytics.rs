//! Analytical SQL over the real MySQL wire: TPC-H queries 1, 3 and 6 (the files in
//! `sql/tests/tpch/mysql/`, unchanged) against a tiny hand-made dataset whose answers are worked
//! out below, with the result metadata clients rely on (DECIMAL columns and their scale), through
//! the text protocol, a prepared statement, and `orcinus_execution_mode = 'datafusion'`.

use crate::harness::TestServer;
use crate::mysql_client::{block_on, connect};
use mysql_async::consts::ColumnType;
use mysql_async::prelude::*;
use mysql_async::{Column, Conn, Row};

const Q1: &str = include_str!("../../../sql/tests/tpch/mysql/q01.sql");
const Q3: &str = include_str!("../../../sql/tests/tpch/mysql/q03.sql");
const Q6: &str = include_str!("../../../sql/tests/tpch/mysql/q06.sql");

const SCHEMA: &[&str] = &[
    "CREATE TABLE customer (c_custkey INTEGER NOT NULL, c_name VARCHAR(25) NOT NULL, c_address VARCHAR(40) NOT NULL, c_nationkey INTEGER NOT NULL, c_phone CHAR(15) NOT NULL, c_acctbal DECIMAL(15,2) NOT NULL, c_mktsegment CHAR(10) NOT NULL, c_comment VARCHAR(117) NOT NULL, PRIMARY KEY (c_custkey))",
    "CREATE TABLE orders (o_orderkey INTEGER NOT NULL, o_custkey INTEGER NOT NULL, o_orderstatus CHAR(1) NOT NULL, o_totalprice DECIMAL(15,2) NOT NULL, o_orderdate DATE NOT NULL, o_orderpriority CHAR(15) NOT NULL, o_clerk CHAR(15) NOT NULL, o_shippriority INTEGER NOT NULL, o_comment VARCHAR(79) NOT NULL, PRIMARY KEY (o_orderkey))",
    "CREATE TABLE lineitem (l_orderkey INTEGER NOT NULL, l_partkey INTEGER NOT NULL, l_suppkey INTEGER NOT NULL, l_linenumber INTEGER NOT NULL, l_quantity DECIMAL(15,2) NOT NULL, l_extendedprice DECIMAL(15,2) NOT NULL, l_discount DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL, l_returnflag CHAR(1) NOT NULL, l_linestatus CHAR(1) NOT NULL, l_shipdate DATE NOT NULL, l_commitdate DATE NOT NULL, l_receiptdate DATE NOT NULL, l_shipinstruct CHAR(25) NOT NULL, l_shipmode CHAR(10) NOT NULL, l_comment VARCHAR(44) NOT NULL, PRIMARY KEY (l_orderkey, l_linenumber))",
    "INSERT INTO customer VALUES (1, 'Customer#1', 'a', 1, '10-1', 100.00, 'BUILDING', 'c'), (2, 'Customer#2', 'b', 2, '10-2', 200.00, 'MACHINERY', 'c')",
    "INSERT INTO orders VALUES (1, 1, 'O', 1100.00, '1995-03-10', '1-URGENT', 'Clerk#1', 0, 'c'), (2, 1, 'F', 450.00, '1994-05-01', '2-HIGH', 'Clerk#1', 0, 'c'), (3, 2, 'F', 600.00, '1995-03-05', '3-MEDIUM', 'Clerk#2', 0, 'c')",
    // Q3 takes lines 1.1 and 1.2 (BUILDING, ordered before and shipped after 1995-03-15);
    // Q6 takes 2.1 and 2.2 (shipped in 1994, discount 0.05..0.07, quantity < 24), not 3.1.
    "INSERT INTO lineitem VALUES \
     (1, 1, 1, 1, 10.00, 1000.00, 0.10, 0.02, 'N', 'O', '1995-03-20', '1995-03-20', '1995-03-21', 'NONE', 'AIR', 'c'), \
     (1, 1, 1, 2, 5.00, 200.00, 0.00, 0.00, 'N', 'O', '1995-03-16', '1995-03-16', '1995-03-17', 'NONE', 'AIR', 'c'), \
     (2, 1, 1, 1, 20.00, 400.00, 0.06, 0.01, 'R', 'F', '1994-06-01', '1994-06-01', '1994-06-02', 'NONE', 'RAIL', 'c'), \
     (2, 1, 1, 2, 1.00, 50.00, 0.07, 0.00, 'A', 'F', '1994-12-31', '1994-12-31', '1995-01-01', 'NONE', 'RAIL', 'c'), \
     (3, 1, 1, 1, 30.00, 600.00, 0.05, 0.00, 'R', 'F', '1994-07-01', '1994-07-01', '1994-07-02', 'NONE', 'SHIP', 'c')",
];

async fn loaded(server: &TestServer) -> Conn {
    let mut conn = connect(server.mysql_addr(), None).await;
    conn.query_drop("CREATE DATABASE tpch").await.unwrap();
    conn.query_drop("USE tpch").await.unwrap();
    for sql in SCHEMA {
        conn.query_drop(*sql).await.unwrap();
    }
    conn
}

/// Runs a query through the text protocol: column metadata and rows as text.
async fn text_query(conn: &mut Conn, sql: &str) -> (Vec<Column>, Vec<Vec<String>>) {
    let mut result = conn.query_iter(sql).await.unwrap();
    let columns = result.columns().map(|c| c.to_vec()).unwrap_or_default();
    let rows: Vec<Row> = result.collect().await.unwrap();
    let rows = rows
        .into_iter()
        .map(|r| {
            r.unwrap()
                .into_iter()
                .map(|v| match v {
                    mysql_async::Value::Bytes(b) => String::from_utf8(b).unwrap(),
                    other => other.as_sql(true),
                })
                .collect()
        })
        .collect();
    (columns, rows)
}

fn assert_decimal(column: &Column, decimals: u8) {
    assert_eq!(
        (column.column_type(), column.decimals()),
        (ColumnType::MYSQL_TYPE_NEWDECIMAL, decimals),
        "column {}",
        column.name_str()
    );
}

async fn check_q3_and_q6(conn: &mut Conn) {
    // Q3: 1000 * (1 - 0.10) + 200 * (1 - 0.00); DECIMAL(15,2) * DECIMAL(15,2) has scale 4.
    let (columns, rows) = text_query(conn, Q3).await;
    let names: Vec<String> = columns.iter().map(|c| c.name_str().into_owned()).collect();
    assert_eq!(
        names,
        ["l_orderkey", "revenue", "o_orderdate", "o_shippriority"]
    );
    assert_decimal(&columns[1], 4);
    assert_eq!(columns[2].column_type(), ColumnType::MYSQL_TYPE_DATE);
    assert_eq!(rows, [["1", "1100.0000", "1995-03-10", "0"]]);
    // Q6: 400 * 0.06 + 50 * 0.07.
    let (columns, rows) = text_query(conn, Q6).await;
    assert_decimal(&columns[0], 4);
    assert_eq!(rows, [["27.5000"]]);
}

#[test]
fn tpch_queries_over_the_wire() {
    let server = TestServer::start();
    block_on(async {
        let mut conn = loaded(&server).await;
        check_q3_and_q6(&mut conn).await;

        // Q1: one row per (returnflag, linestatus); AVG of DECIMAL(15,2) has scale 6.
        let (columns, rows) = text_query(&mut conn, Q1).await;
        assert_eq!(columns.len(), 10);
        assert_decimal(&columns[2], 2);
        assert_decimal(&columns[4], 4);
        assert_decimal(&columns[6], 6);
        let summary: Vec<[&str; 4]> = rows
            .iter()
            .map(|r| [r[0].as_str(), r[1].as_str(), r[2].as_str(), r[9].as_str()])
            .collect();
        assert_eq!(
            summary,
            [
                ["A", "F", "1.00", "1"],
                ["N", "O", "15.00", "2"],
                ["R", "F", "50.00", "2"]
            ]
        );
        assert_eq!(
            rows[0][3..9],
            [
                "50.00",
                "46.5000",
                "46.500000",
                "1.000000",
                "50.000000",
                "0.070000"
            ]
        );

        // Prepared: the result columns come from DataFusion's plan at COM_STMT_PREPARE.
        let q6 = conn.prep(Q6).await.unwrap();
        assert_decimal(&q6.columns()[0], 4);
        let revenue: Option<String> = conn.exec_first(&q6, ()).await.unwrap();
        assert_eq!(revenue.as_deref(), Some("27.5000"));
        let q = conn
            .prep(
                "SELECT o_orderkey, SUM(l_quantity) FROM orders JOIN lineitem \
                 ON l_orderkey = o_orderkey WHERE o_custkey = ? GROUP BY o_orderkey \
                 ORDER BY o_orderkey",
            )
            .await
            .unwrap();
        assert_decimal(&q.columns()[1], 2);
        let rows: Vec<(i64, String)> = conn.exec(&q, (1,)).await.unwrap();
        assert_eq!(rows, [(1, "15.00".to_owned()), (2, "21.00".to_owned())]);

        // The same answers with every SELECT forced through DataFusion.
        conn.query_drop("SET orcinus_execution_mode = 'datafusion'")
            .await
            .unwrap();
        let mode: Option<String> = conn
            .query_first("SELECT @@orcinus_execution_mode")
            .await
            .unwrap();
        assert_eq!(mode.as_deref(), Some("datafusion"));
        check_q3_and_q6(&mut conn).await;
        let (_, rows) = text_query(
            &mut conn,
            "SELECT c_acctbal FROM customer WHERE c_custkey = 2",
        )
        .await;
        assert_eq!(rows, [["200.00"]]);
    });
}
