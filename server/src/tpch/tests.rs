//! Tests of `orcinus tpch`: argument parsing, a full SF 0.01 load checked table by table with
//! `SELECT COUNT(*)` through the SQL engine, refusal of an existing database, and the data-dir
//! lock shared with the server.

use super::*;
use orcinus_sql::{Datum, SessionState, StatementResult};
use orcinus_storage::{Engine, StorageConfig};

fn parse(args: &[&str]) -> Result<TpchCommand, ServerError> {
    parse_args(args.iter().map(OsString::from))
}

fn usage_message(args: &[&str]) -> String {
    match parse(args) {
        Err(ServerError::Usage(m)) => m,
        other => panic!("expected a usage error, got {other:?}"),
    }
}

#[test]
fn arguments_parse_with_defaults() {
    let Ok(TpchCommand::Load(a)) = parse(&["--sf", "0.01", "--data-dir=/tmp/x"]) else {
        panic!("expected Load");
    };
    assert_eq!(a.sf, 0.01);
    assert_eq!(a.database, "tpch");
    assert_eq!(a.overrides.data_dir, Some(PathBuf::from("/tmp/x")));
    let Ok(TpchCommand::Load(a)) = parse(&["--sf=1", "--database", "tpch_1"]) else {
        panic!("expected Load");
    };
    assert_eq!((a.sf, a.database.as_str()), (1.0, "tpch_1"));
    assert_eq!(parse(&["--help"]).unwrap(), TpchCommand::Help);
}

#[test]
fn bad_arguments_are_usage_errors() {
    assert!(usage_message(&[]).contains("--sf N is required"));
    assert!(usage_message(&["--sf", "0"]).contains("scale factor"));
    assert!(usage_message(&["--sf", "0.001"]).contains("repeats primary keys"));
    assert!(usage_message(&["--sf", "abc"]).contains("abc"));
    assert!(usage_message(&["--sf"]).contains("needs"));
    assert!(usage_message(&["--sf", "1", "--database", "a-b"]).contains("a-b"));
    assert!(usage_message(&["--sf", "1", "--threads", "4"]).contains("--threads"));
}

#[test]
fn the_top_level_command_line_routes_tpch() {
    let cmd = crate::cli::parse_args(["tpch", "--sf", "0.1"].map(OsString::from));
    assert!(
        matches!(cmd, Ok(crate::cli::CliCommand::Tpch(TpchCommand::Load(ref a))) if a.sf == 0.1),
        "{cmd:?}"
    );
}

async fn count(executor: &SqlExecutor, session: &mut SessionState, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM tpch.{table}");
    let mut results = executor.execute(session, &sql).await;
    match results.pop() {
        Some(Ok(StatementResult::Rows { rows, .. })) => {
            match rows.first().and_then(|r| r.first()) {
                Some(Datum::Int(n)) => *n,
                other => panic!("{sql}: unexpected cell {other:?}"),
            }
        }
        other => panic!("{sql}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sf_0_01_loads_every_table_completely() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let executor = SqlExecutor::open(engine.clone()).unwrap();
    let options = LoadOptions {
        sf: 0.01,
        database: "tpch".into(),
        rows_per_insert: 1000,
        rows_per_commit: 20_000,
        parts: 3,
    };
    let mut progress = Vec::new();
    let reports = load(&executor, &options, &mut progress).await.unwrap();
    let names: Vec<_> = reports.iter().map(|r| r.table).collect();
    assert_eq!(
        names,
        [
            "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"
        ]
    );
    let mut session = SessionState::new(None);
    for (report, spec) in reports.iter().zip(&schema::TABLES) {
        assert_eq!(report.rows, spec.row_count(0.01), "{}", report.table);
        let counted = count(&executor, &mut session, report.table).await;
        assert_eq!(
            u64::try_from(counted).unwrap(),
            report.rows,
            "{}",
            report.table
        );
    }
    let by_name = |n: &str| reports.iter().find(|r| r.table == n).unwrap().rows;
    assert_eq!((by_name("region"), by_name("nation")), (5, 25));
    assert_eq!((by_name("supplier"), by_name("orders")), (100, 15_000));
    let progress = String::from_utf8(progress).unwrap();
    assert!(progress.contains("lineitem:"), "{progress}");
    assert!(progress.contains(" rows/s"), "{progress}");

    // A second load never mixes into an existing database.
    let again = load(&executor, &options, &mut Vec::new())
        .await
        .unwrap_err();
    assert!(!again.database_created, "{again:?}");
    assert!(again.message.contains("database exists"), "{again:?}");
    engine.shutdown().unwrap();
}

#[test]
fn a_locked_data_dir_fails_like_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let args = TpchArgs {
        sf: 0.01,
        overrides: CliOverrides {
            data_dir: Some(dir.path().to_path_buf()),
            ..CliOverrides::default()
        },
        database: "tpch".into(),
    };
    let err = run(&args).unwrap_err();
    assert!(matches!(err, ServerError::DataDirLocked { .. }), "{err}");
    assert!(
        err.to_string().contains("is another orcinus running?"),
        "{err}"
    );
    engine.shutdown().unwrap();
}
