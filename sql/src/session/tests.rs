//! Tests of the frontend over a real executor on a temp storage engine: session-state answers,
//! routing, autocommit driven through `SET`, prepared statements, reset and close.

use super::*;
use orcinus_storage::{Engine, StorageConfig};

fn defaults() -> VariableDefaults {
    VariableDefaults::for_test()
}

fn context(database: Option<&str>) -> SessionContext {
    SessionContext {
        user: "root".into(),
        host: "127.0.0.1".into(),
        connection_id: 7,
        database: database.map(str::to_owned),
        multi_statements: false,
        interactive: false,
        found_rows: false,
    }
}

async fn frontend() -> (tempfile::TempDir, SqlFrontend) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let accounts =
        std::sync::Arc::new(crate::accounts::AccountStore::open(&storage).await.unwrap());
    (
        dir,
        SqlFrontend::open(storage, defaults(), accounts).unwrap(),
    )
}

async fn ok(s: &mut FrontendSession, sql: &str) -> QueryOutcome {
    let mut r = s.query(sql).await;
    if let Some(e) = r.error {
        panic!("{sql}: {e}");
    }
    r.completed.pop().unwrap().outcome
}

fn rows(o: QueryOutcome) -> Vec<Vec<Value>> {
    match o {
        QueryOutcome::Rows(rs) => rs.rows,
        other => panic!("expected rows, got {other:?}"),
    }
}

#[tokio::test]
async fn answers_come_from_session_and_executor_state() {
    let (_dir, f) = frontend().await;
    assert!(matches!(
        f.open_session(context(Some("nope"))).await,
        Err(SqlError::UnknownDatabase(_))
    ));
    let mut s = f.open_session(context(None)).await.unwrap();
    ok(&mut s, "CREATE DATABASE d").await;
    ok(&mut s, "USE d").await;
    ok(
        &mut s,
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
    )
    .await;
    let QueryOutcome::Done(summary) = ok(&mut s, "INSERT INTO t (v) VALUES (1), (2)").await else {
        panic!("ok expected")
    };
    assert_eq!((summary.affected_rows, summary.last_insert_id), (2, 1));
    ok(&mut s, "SET autocommit = 0").await;
    assert!(!s.status().autocommit);
    let r = rows(ok(&mut s, "/* probe */ select @@autocommit, connection_id(), database(), last_insert_id(), @@lower_case_table_names").await);
    assert_eq!(
        r,
        vec![vec![
            Value::Int(0),
            Value::UInt(7),
            Value::text("d"),
            Value::UInt(1),
            Value::Int(0)
        ]]
    );
    ok(&mut s, "INSERT INTO t (v) VALUES (3)").await;
    assert!(s.status().in_transaction);
    // Switching autocommit on commits the open transaction, as MySQL does.
    ok(&mut s, "SET @@session.autocommit = ON").await;
    assert!(!s.status().in_transaction);
    let r = rows(ok(&mut s, "SELECT COUNT(*) FROM t").await);
    assert_eq!(r, vec![vec![Value::Int(3)]]);
    let r = rows(ok(&mut s, "SHOW VARIABLES LIKE 'auto%'").await);
    assert_eq!(
        r,
        vec![
            vec![Value::text("auto_increment_increment"), Value::text("1")],
            vec![Value::text("autocommit"), Value::text("1")]
        ]
    );
}

#[tokio::test]
async fn failed_set_changes_nothing_and_unsupported_is_named() {
    let (_dir, f) = frontend().await;
    let mut s = f.open_session(context(None)).await.unwrap();
    let r = s
        .query("SET autocommit = 0, character_set_client = latin1")
        .await;
    assert!(matches!(
        r.error,
        Some(SqlError::WrongValueForVariable { .. })
    ));
    assert!(s.status().autocommit);
    let r = s.query("SHOW PROFILES").await;
    assert!(matches!(r.error, Some(SqlError::NotSupported(ref n)) if n == "SHOW PROFILES"));
    let r = s
        .query("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        .await;
    assert!(
        matches!(r.error, Some(SqlError::NotSupported(ref n)) if n.contains("SERIALIZABLE")),
        "{:?}",
        r.error
    );
    ok(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    )
    .await;
    let r = s
        .query("SELECT table_name FROM information_schema.tables FOR UPDATE")
        .await;
    assert!(
        matches!(r.error, Some(SqlError::NotSupported(ref n)) if n.contains("information_schema")),
        "{:?}",
        r.error
    );
    let r = s.query("select 1; select 2").await;
    assert!(matches!(r.error, Some(SqlError::Syntax { .. })));
    s.set_multi_statements(true);
    let r = s
        .query("select 1; select 2; select * from nowhere; select 3")
        .await;
    assert_eq!(r.completed.len(), 2);
    assert!(matches!(r.error, Some(SqlError::NoDatabaseSelected)));
}

#[tokio::test]
async fn prepared_statements_reset_and_close() {
    let (dir, f) = frontend().await;
    let mut s = f.open_session(context(None)).await.unwrap();
    ok(&mut s, "CREATE DATABASE d").await;
    let mut s = f.open_session(context(Some("d"))).await.unwrap();
    ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, c CHAR(10))").await;
    assert!(matches!(
        s.prepare("USE d").await,
        Err(SqlError::UnsupportedInPreparedStatement)
    ));
    let probe = s.prepare("SELECT @@version, DATABASE()").await.unwrap();
    assert_eq!((probe.param_count, probe.columns.len()), (0, 2));
    let QueryOutcome::Rows(rs) = s.execute_prepared(probe.id, vec![]).await.unwrap() else {
        panic!("rows")
    };
    assert_eq!(
        rs.rows,
        vec![vec![Value::text("8.0.36-orcinus"), Value::text("d")]]
    );
    let ins = s.prepare("INSERT INTO t VALUES (?, ?)").await.unwrap();
    assert_eq!((ins.param_count, ins.columns.len()), (2, 0));
    let sel = s.prepare("SELECT c FROM t WHERE id = ?").await.unwrap();
    assert_eq!(sel.columns.len(), 1);
    let begin = s.prepare("BEGIN").await.unwrap();
    s.execute_prepared(begin.id, vec![]).await.unwrap();
    s.execute_prepared(ins.id, vec![Value::UInt(1), Value::text("a")])
        .await
        .unwrap();
    assert!(s.status().in_transaction);
    let QueryOutcome::Rows(rs) = s
        .execute_prepared(sel.id, vec![Value::Int(1)])
        .await
        .unwrap()
    else {
        panic!("rows")
    };
    assert_eq!(rs.rows, vec![vec![Value::text("a")]]);
    // Reset rolls back and forgets statements.
    s.reset().await.unwrap();
    assert!(!s.status().in_transaction);
    assert!(matches!(
        s.execute_prepared(sel.id, vec![Value::Int(1)]).await,
        Err(SqlError::UnknownStatement { .. })
    ));
    ok(&mut s, "BEGIN").await;
    ok(&mut s, "INSERT INTO t VALUES (2, 'b')").await;
    s.close().await;
    let mut s = f.open_session(context(Some("d"))).await.unwrap();
    let r = rows(ok(&mut s, "SELECT COUNT(*) FROM t").await);
    assert_eq!(r, vec![vec![Value::Int(0)]]);
    let cols = s.field_list("t", "").await.unwrap();
    assert_eq!(cols.len(), 2);
    assert!(cols[0].flags.contains(ColumnFlags::PRIMARY_KEY));
    drop(dir);
}

#[tokio::test]
async fn text_inserts_of_one_shape_follow_ddl_database_and_auto_increment() {
    let (_dir, f) = frontend().await;
    let mut s = f.open_session(context(None)).await.unwrap();
    ok(&mut s, "CREATE DATABASE d").await;
    ok(&mut s, "CREATE DATABASE e").await;
    ok(&mut s, "USE d").await;
    ok(
        &mut s,
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, c CHAR(10))",
    )
    .await;
    ok(&mut s, "CREATE TABLE e.t (id INT PRIMARY KEY, c CHAR(10))").await;
    // Same shape, different values: 0 generates the next AUTO_INCREMENT value each time.
    for c in ["a", "it''s"] {
        let QueryOutcome::Done(done) =
            ok(&mut s, &format!("INSERT INTO t (id, c) VALUES (0, '{c}')")).await
        else {
            panic!("insert")
        };
        assert_eq!(done.affected_rows, 1);
        assert_eq!(done.last_insert_id, s.state.last_insert_id());
    }
    // Errors are the text path's: duplicate key, then a value count that does not match.
    let dup = s.query("INSERT INTO t (id, c) VALUES (1, 'x')").await;
    assert!(
        matches!(dup.error, Some(SqlError::DuplicateEntry { .. })),
        "{:?}",
        dup.error
    );
    let count = s.query("INSERT INTO t (id, c) VALUES (5)").await;
    assert!(
        matches!(count.error, Some(SqlError::ColumnCount(1))),
        "{:?}",
        count.error
    );
    // DDL after the shape was kept: the plan is re-bound against the new definition.
    ok(&mut s, "CREATE INDEX ic ON t (c)").await;
    ok(&mut s, "INSERT INTO t (id, c) VALUES (10, 'z')").await;
    // Another database with a table of the same name: the statement means that table there.
    ok(&mut s, "USE e").await;
    ok(&mut s, "INSERT INTO t (id, c) VALUES (10, 'in e')").await;
    ok(&mut s, "USE d").await;
    let r = rows(ok(&mut s, "SELECT id, c FROM t ORDER BY id").await);
    assert_eq!(
        r,
        vec![
            vec![Value::Int(1), Value::text("a")],
            vec![Value::Int(2), Value::text("it's")],
            vec![Value::Int(10), Value::text("z")],
        ]
    );
    let r = rows(ok(&mut s, "SELECT id, c FROM e.t").await);
    let ix = rows(ok(&mut s, "SELECT id FROM t WHERE c = 'z'").await);
    assert_eq!(ix, vec![vec![Value::Int(10)]]);
    assert_eq!(r, vec![vec![Value::Int(10), Value::text("in e")]]);
}
