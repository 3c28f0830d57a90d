//! The front door driven by a real client library, `mysql_async`.

use std::net::SocketAddr;

use mysql_async::consts::{ColumnFlags, ColumnType};
use mysql_async::prelude::*;
use mysql_async::{ChangeUserOpts, Conn, Error, OptsBuilder, Row, Value};

use super::start;
use crate::mysql::MysqlSettings;

pub fn opts(addr: SocketAddr, user: &str, pass: Option<&str>, db: Option<&str>) -> OptsBuilder {
    OptsBuilder::default()
        .ip_or_hostname(addr.ip().to_string())
        .tcp_port(addr.port())
        .user(Some(user))
        .pass(pass)
        .db_name(db)
        .prefer_socket(false)
        .max_allowed_packet(Some(16 << 20))
        .wait_timeout(Some(28800))
}

async fn connect(addr: SocketAddr) -> Conn {
    Conn::new(opts(addr, "root", None, None)).await.unwrap()
}

pub fn server_code(e: Error) -> (u16, String) {
    match e {
        Error::Server(s) => (s.code, s.state),
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[tokio::test]
async fn text_queries_and_banner() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = connect(addr).await;
    assert_eq!(conn.server_version(), (8, 0, 36));
    let one: Option<i64> = conn.query_first("SELECT 1").await.unwrap();
    assert_eq!(one, Some(1));
    let banner: Option<String> = conn
        .query_first("select @@version_comment limit 1")
        .await
        .unwrap();
    assert_eq!(banner.as_deref(), Some("Orcinus fake"));
    conn.ping().await.unwrap();
    conn.disconnect().await.unwrap();
}

#[tokio::test]
async fn fixed_table_metadata_and_values() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = Conn::new(opts(addr, "root", None, Some("test")))
        .await
        .unwrap();
    let rows: Vec<Row> = conn.query("SELECT * FROM t").await.unwrap();
    assert_eq!(rows.len(), 2);
    let cols = rows[0].columns_ref();
    assert_eq!(cols[0].column_type(), ColumnType::MYSQL_TYPE_LONG);
    assert!(
        cols[0]
            .flags()
            .contains(ColumnFlags::NOT_NULL_FLAG | ColumnFlags::PRI_KEY_FLAG)
    );
    assert_eq!(cols[0].table_str(), "t");
    assert_eq!(cols[0].schema_str(), "test");
    assert_eq!(cols[1].character_set(), 255);
    assert_eq!(cols[1].column_length(), 80);
    assert_eq!(cols[2].column_type(), ColumnType::MYSQL_TYPE_NEWDECIMAL);
    assert_eq!(cols[2].decimals(), 2);
    assert_eq!(cols[4].character_set(), 63);
    assert_eq!(cols[4].column_type(), ColumnType::MYSQL_TYPE_BLOB);

    let (id, name, price, created, data): (i32, String, String, String, Vec<u8>) =
        mysql_async::from_row(rows[0].clone());
    assert_eq!((id, name.as_str(), price.as_str()), (1, "alpha", "12.50"));
    assert_eq!(created, "2024-02-29 13:14:15");
    assert_eq!(data, vec![0, 1, 0xff]);
    let (_, name, _, created, data): (
        i32,
        Option<String>,
        String,
        Option<String>,
        Option<Vec<u8>>,
    ) = mysql_async::from_row(rows[1].clone());
    assert_eq!((name, created, data), (None, None, None));
}

#[tokio::test]
async fn insert_reports_affected_rows_and_last_insert_id() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = connect(addr).await;
    let result = conn
        .query_iter("INSERT INTO t VALUES (3), (4)")
        .await
        .unwrap();
    assert_eq!(result.affected_rows(), 2);
    assert_eq!(result.last_insert_id(), Some(42));
    assert_eq!(result.info(), "Records: 2  Duplicates: 0  Warnings: 0");
}

#[tokio::test]
async fn errors_keep_the_connection_usable() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = connect(addr).await;
    let e = conn.query_drop("BAD").await.unwrap_err();
    assert_eq!(server_code(e), (1064, "42000".into()));
    let e = conn.query_drop("DEADLOCK").await.unwrap_err();
    assert_eq!(server_code(e), (1213, "40001".into()));
    let e = conn.query_drop("SELECT bad_row").await.unwrap_err();
    assert_eq!(server_code(e).0, 1105);
    let e = conn.query_drop("SELECT nothing").await.unwrap_err();
    assert_eq!(server_code(e).0, 1235);
    let one: Option<i64> = conn.query_first("SELECT 1").await.unwrap();
    assert_eq!(one, Some(1));
}

#[tokio::test]
async fn connect_with_database() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = Conn::new(opts(addr, "root", None, Some("test")))
        .await
        .unwrap();
    conn.ping().await.unwrap();
    let e = Conn::new(opts(addr, "root", None, Some("nope")))
        .await
        .unwrap_err();
    assert_eq!(server_code(e), (1049, "42000".into()));
}

#[tokio::test]
async fn password_authentication() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = Conn::new(opts(addr, "alice", Some("secret"), None))
        .await
        .unwrap();
    conn.ping().await.unwrap();
    for (user, pass) in [
        ("alice", Some("wrong")),
        ("alice", None),
        ("nobody", Some("x")),
    ] {
        let e = Conn::new(opts(addr, user, pass, None)).await.unwrap_err();
        assert_eq!(server_code(e), (1045, "28000".into()), "{user}");
    }
}

#[tokio::test]
async fn prepared_statements_round_trip_binary_values() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = connect(addr).await;
    let stmt = conn.prep("SELECT * FROM t WHERE id = ?").await.unwrap();
    assert_eq!(stmt.num_params(), 1);
    assert_eq!(stmt.columns().len(), 5);
    let rows: Vec<Row> = conn.exec(&stmt, (1,)).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].as_ref(0), Some(&Value::Int(1)));
    assert_eq!(rows[0].as_ref(2), Some(&Value::Bytes(b"12.50".to_vec())));
    assert_eq!(
        rows[0].as_ref(3),
        Some(&Value::Date(2024, 2, 29, 13, 14, 15, 0))
    );
    let rows: Vec<Row> = conn.exec(&stmt, (2,)).await.unwrap();
    assert_eq!(rows[0].as_ref(1), Some(&Value::NULL));

    let echo = conn.prep("ECHO ?, ?, ?, ?, ?, ?, ?, ?").await.unwrap();
    let params = vec![
        Value::Int(-5),
        Value::UInt(u64::MAX),
        Value::Double(1.5),
        Value::Float(2.25),
        Value::Bytes(b"text".to_vec()),
        Value::NULL,
        Value::Date(2023, 12, 31, 23, 59, 58, 123_456),
        Value::Time(true, 1, 2, 3, 4, 5),
    ];
    let row: Row = conn
        .exec_first(&echo, params.clone())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.unwrap(), params);
    let e = conn.prep("BEGIN").await.unwrap_err();
    assert_eq!(server_code(e).0, 1295);
    conn.close(echo).await.unwrap();
    conn.ping().await.unwrap();
}

#[tokio::test]
async fn multi_statements_give_multiple_results() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = connect(addr).await;
    let mut result = conn.query_iter("SELECT 1; SELECT * FROM t").await.unwrap();
    let first: Vec<i64> = result.collect().await.unwrap();
    let second: Vec<Row> = result.collect().await.unwrap();
    drop(result);
    assert_eq!(first, vec![1]);
    assert_eq!(second.len(), 2);
    let mut result = conn.query_iter("SELECT 1; BAD").await.unwrap();
    let first: Vec<i64> = result.collect().await.unwrap();
    assert_eq!(first, vec![1]);
    let e = result.collect::<Row>().await.unwrap_err();
    drop(result);
    assert_eq!(server_code(e).0, 1064);
    conn.ping().await.unwrap();
}

#[tokio::test]
async fn reset_and_change_user() {
    let addr = start(MysqlSettings::default()).await;
    let mut conn = connect(addr).await;
    assert!(conn.reset().await.unwrap());
    conn.change_user(
        ChangeUserOpts::default()
            .with_user(Some("alice".into()))
            .with_pass(Some("secret".into()))
            .with_db_name(Some("test".into())),
    )
    .await
    .unwrap();
    let one: Option<i64> = conn.query_first("SELECT 1").await.unwrap();
    assert_eq!(one, Some(1));
}
