//! `orcinus tpch` end to end: load SF 0.01 into a fresh data dir with the real binary, start the
//! server on that dir and read the tables back over the MySQL wire (row counts equal to what the
//! loader reported from tpchgen, TPC-H Q1 from the repository's query file); a second load while
//! the server runs fails on the data-dir lock with the server's message.

use crate::harness::{TestServer, orcinus_binary};
use crate::mysql_client::{block_on, connect};
use mysql_async::prelude::*;
use std::path::Path;
use std::process::Command;

/// Rows per table as the loader's final progress lines report them (`lineitem: 60175/60175 rows`).
fn reported_rows(stderr: &str, table: &str) -> u64 {
    let line = stderr
        .split(['\r', '\n'])
        .rfind(|l| l.trim_start().starts_with(&format!("{table}:")))
        .unwrap_or_else(|| panic!("no progress line for {table} in {stderr}"));
    let counts = line.split_whitespace().nth(1).unwrap();
    let (done, total) = counts.split_once('/').unwrap();
    assert_eq!(done, total, "{line}");
    done.parse().unwrap()
}

fn tpch_load(data_dir: &Path) -> std::process::Output {
    Command::new(orcinus_binary())
        .args(["tpch", "--sf", "0.01", "--data-dir"])
        .arg(data_dir)
        .output()
        .unwrap()
}

#[test]
fn tpch_load_then_serve_over_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let out = tpch_load(&data_dir);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("loaded TPC-H SF 0.01 into database tpch"),
        "{stderr}"
    );
    let tables = [
        "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem",
    ];
    let expected: Vec<(&str, u64)> = tables
        .iter()
        .map(|t| (*t, reported_rows(&stderr, t)))
        .collect();
    assert_eq!(expected[0], ("region", 5));
    assert_eq!(expected[1], ("nation", 25));
    assert_eq!(expected[7].1, 60_175, "lineitem at SF 0.01 (dbgen's count)");

    let server = TestServer::builder().data_dir(&data_dir).start();

    // The running server holds the data dir: a second load fails without touching it.
    let again = tpch_load(&data_dir);
    let again_err = String::from_utf8_lossy(&again.stderr).to_string();
    assert_eq!(again.status.code(), Some(1), "{again_err}");
    assert!(
        again_err.contains("is locked by another process (is another orcinus running?)"),
        "{again_err}"
    );

    let q1_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sql/tests/tpch/mysql/q01.sql");
    let q1 = std::fs::read_to_string(q1_path).unwrap();
    block_on(async {
        let mut conn = connect(server.mysql_addr(), Some("tpch")).await;
        for (table, rows) in &expected {
            let counted: Option<u64> = conn
                .query_first(format!("SELECT COUNT(*) FROM tpch.{table}"))
                .await
                .unwrap();
            assert_eq!(counted, Some(*rows), "{table}");
        }
        let q1_rows: Vec<(String, String, String)> = conn
            .query_map(q1, |row: mysql_async::Row| {
                let (flag, status): (String, String) = (row.get(0).unwrap(), row.get(1).unwrap());
                let count: String = row.get(9).unwrap();
                (flag, status, count)
            })
            .await
            .unwrap();
        let groups: Vec<(&str, &str)> = q1_rows
            .iter()
            .map(|(f, s, _)| (f.as_str(), s.as_str()))
            .collect();
        assert_eq!(groups, [("A", "F"), ("N", "F"), ("N", "O"), ("R", "F")]);
        let counted: u64 = q1_rows
            .iter()
            .map(|(_, _, c)| c.parse::<u64>().unwrap())
            .sum();
        assert!(counted > 0 && counted <= expected[7].1, "{q1_rows:?}");
        conn.disconnect().await.unwrap();
    });
}
