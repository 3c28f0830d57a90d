//! TPC-H correctness at SF 0.01: the 8 tables created with their DDL through the engine's
//! CREATE TABLE and loaded with multi-row INSERTs through its normal write path; the 22 queries
//! of `sql/tests/tpch/mysql/` run through [`crate::analytics::AnalyticsEngine`] and compared row by
//! row (numbers with a tolerance) against plain DataFusion running `sql/tests/tpch/oracle/` over
//! the same rows held as in-memory Arrow tables.

use super::{Fixture, tpch_data};
use crate::analytics::AnalyticsConfig;
use crate::analytics::results::to_statement_result;
use crate::result::StatementResult;
use crate::types::Datum;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use std::time::Instant;

const SCALE: f64 = 0.01;

fn query_text(dir: &str, n: usize) -> String {
    let path = format!(
        "{}/tests/tpch/{dir}/q{n:02}.sql",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn as_f64(d: &Datum) -> Option<f64> {
    match d {
        Datum::Int(v) => Some(*v as f64),
        Datum::UInt(v) => Some(*v as f64),
        Datum::Double(v) => Some(*v),
        Datum::Decimal { unscaled, scale } => {
            Some(*unscaled as f64 / 10f64.powi(i32::from(*scale)))
        }
        _ => None,
    }
}

fn cell_matches(a: &Datum, b: &Datum) -> bool {
    match (as_f64(a), as_f64(b)) {
        (Some(x), Some(y)) => {
            let mag = x.abs().max(y.abs());
            (x - y).abs() <= 1e-4_f64.max(1e-9 * mag)
        }
        _ => a == b,
    }
}

fn rows_of(r: StatementResult) -> Vec<Vec<Datum>> {
    match r {
        StatementResult::Rows { rows, .. } => rows,
        other => panic!("expected rows, got {other:?}"),
    }
}

/// Compares two ordered results; returns a description of the first difference.
fn compare(ours: &[Vec<Datum>], oracle: &[Vec<Datum>]) -> Result<(), String> {
    if ours.len() != oracle.len() {
        return Err(format!("{} rows, oracle has {}", ours.len(), oracle.len()));
    }
    for (i, (a, b)) in ours.iter().zip(oracle).enumerate() {
        if a.len() != b.len() || !a.iter().zip(b).all(|(x, y)| cell_matches(x, y)) {
            return Err(format!("row {i}: {a:?} vs oracle {b:?}"));
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpch_sf001_all_22_queries_match_the_datafusion_oracle() {
    let started = Instant::now();
    let tables = tpch_data::generate(SCALE);
    let generated = started.elapsed();

    let mut f = Fixture::new(AnalyticsConfig::default()).await;
    let load = Instant::now();
    let mut total_rows = 0;
    for t in &tables {
        f.exec(t.ddl).await;
        for stmt in t.inserts(1000) {
            f.exec(&stmt).await;
        }
        total_rows += t.rows.len();
    }
    let loaded = load.elapsed();

    let oracle = SessionContext::new();
    for t in &tables {
        let batch = t.batch();
        let mem = MemTable::try_new(batch.schema(), vec![vec![batch]]).unwrap();
        oracle.register_table(t.name, Arc::new(mem)).unwrap();
    }

    f.session
        .set_execution_mode(crate::plan::ExecutionMode::DataFusion);
    let mut failures = Vec::new();
    let mut timings = Vec::new();
    let mut nonempty = 0;
    for n in 1..=22 {
        let t0 = Instant::now();
        let ours = f.query(&query_text("mysql", n)).await;
        timings.push((n, t0.elapsed()));
        let df = oracle.sql(&query_text("oracle", n)).await.unwrap();
        let fields: Vec<_> = df
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let batches = df.collect().await.unwrap();
        let expected = rows_of(to_statement_result(&fields, &batches).unwrap());
        // The same query through the SQL engine (a fresh snapshot per statement, so the column
        // cache serves it), twice: a first scan may fill the cache, the second reads it.
        for pass in 1..=2 {
            let sql = f.sql.clone();
            match sql
                .execute(&mut f.session, &query_text("mysql", n))
                .await
                .pop()
            {
                Some(Ok(r)) => {
                    if let Err(d) = compare(&rows_of(r), &expected) {
                        failures.push(format!("Q{n} through the column cache, pass {pass}: {d}"));
                    }
                }
                other => failures.push(format!("Q{n} through the column cache: {other:?}")),
            }
        }
        match ours {
            Err(e) => failures.push(format!("Q{n}: error {} {e}", e.code())),
            Ok(r) => {
                let got = rows_of(r);
                if let Err(d) = compare(&got, &expected) {
                    failures.push(format!("Q{n}: {d}"));
                } else if !got.is_empty() {
                    nonempty += 1;
                }
            }
        }
    }
    // Q15 as go-tpc sends it: CREATE VIEW; SELECT; DROP VIEW.
    let path = format!(
        "{}/tests/tpch/mysql/q15_view.sql",
        env!("CARGO_MANIFEST_DIR")
    );
    let script = std::fs::read_to_string(&path).unwrap();
    let stmts: Vec<String> = crate::plan::parse(&script)
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    let [create, select, drop] = stmts.as_slice() else {
        panic!("{path}: expected 3 statements")
    };
    f.view_ddl(create).await.unwrap();
    let got = rows_of(f.query(select).await.unwrap());
    f.view_ddl(drop).await.unwrap();
    let df = oracle.sql(&query_text("oracle", 15)).await.unwrap();
    let fields: Vec<_> = df
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let expected = rows_of(to_statement_result(&fields, &df.collect().await.unwrap()).unwrap());
    if let Err(d) = compare(&got, &expected) {
        failures.push(format!("Q15 with a view: {d}"));
    }

    let cache = f.sql.analytics().cache_stats();
    assert!(
        cache.builds >= 8 && cache.hits > 2 * cache.builds,
        "the column cache served too little: {cache:?}"
    );
    let passed = 22
        - failures
            .iter()
            .filter(|f| !f.starts_with("Q15 with") && !f.contains("column cache"))
            .count();
    eprintln!(
        "TPC-H SF{SCALE}: {passed}/22 match the oracle ({nonempty} with non-empty results); \
         generate {generated:?}, load {total_rows} rows {loaded:?}"
    );
    for (n, t) in &timings {
        eprintln!("  Q{n:02} {t:?}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
