//! sysbench 1.0 against the real server: `oltp_read_write` prepare, a short run with several
//! threads, then consistency checks (every table still has `--table-size` rows, and its
//! secondary index `k_N` lists exactly the table's rows), then cleanup.
//!
//! sysbench is a required tool of this suite (CI installs the Debian package): if it is
//! missing the test fails and says so rather than passing vacuously.

use crate::harness::TestServer;
use crate::mysql_client::{block_on, connect};
use mysql_async::prelude::*;
use std::net::SocketAddr;
use std::process::Command;

const TABLES: usize = 2;
const TABLE_SIZE: usize = 1000;

fn sysbench(addr: SocketAddr, command: &str, extra: &[&str]) -> String {
    let port = addr.port().to_string();
    let output = Command::new("sysbench")
        .arg("oltp_read_write")
        .args([
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            "--mysql-user=root",
            "--mysql-db=sbtest",
            &format!("--tables={TABLES}"),
            &format!("--table-size={TABLE_SIZE}"),
        ])
        .args(extra)
        .arg(command)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run sysbench ({e}): install it (Debian/Ubuntu: apt-get install sysbench); \
                 CI installs it from .ci/run"
            )
        });
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && !stdout.contains("FATAL") && !stderr.contains("FATAL"),
        "sysbench {command} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

#[test]
fn sysbench_read_write_keeps_tables_and_indexes_consistent() {
    let server = TestServer::start();
    let addr = server.mysql_addr();
    block_on(async {
        let mut conn = connect(addr, None).await;
        conn.query_drop("CREATE DATABASE sbtest").await.unwrap();
    });
    sysbench(addr, "prepare", &[]);
    let report = sysbench(addr, "run", &["--threads=4", "--time=5"]);
    let transactions = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("transactions:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no transaction count in:\n{report}"));
    assert!(transactions > 0, "{report}");

    block_on(async {
        let mut conn = connect(addr, Some("sbtest")).await;
        for table in 1..=TABLES {
            let by_pk: Vec<u32> = conn
                .query(format!("SELECT id FROM sbtest{table} ORDER BY id"))
                .await
                .unwrap();
            assert_eq!(by_pk.len(), TABLE_SIZE, "rows of sbtest{table}");
            let index_range = format!(
                "SELECT id FROM sbtest{table} WHERE k BETWEEN -2147483648 AND 2147483647 ORDER BY id"
            );
            let plan: Option<(String, String)> = conn
                .query_first(format!("EXPLAIN {index_range}"))
                .await
                .unwrap();
            let (_, access) = plan.unwrap();
            assert!(access.starts_with(&format!("INDEX k_{table}")), "{access}");
            let by_index: Vec<u32> = conn.query(index_range).await.unwrap();
            assert_eq!(
                by_index, by_pk,
                "index k_{table} disagrees with sbtest{table}"
            );
        }
    });
    sysbench(addr, "cleanup", &[]);
    block_on(async {
        let mut conn = connect(addr, Some("sbtest")).await;
        let e = conn.query_drop("SELECT 1 FROM sbtest1").await.unwrap_err();
        assert_eq!(crate::mysql_client::server_error(e).0, 1146);
    });
}
