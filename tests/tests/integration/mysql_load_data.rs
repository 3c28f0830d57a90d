//! LOAD DATA [LOCAL] INFILE over the wire: the LOCAL INFILE exchange with `mysql_async` and the
//! real `mariadb --local-infile=1` client, MySQL's info text and warnings for dbgen's trailing
//! `|`, duplicates under LOCAL / IGNORE / REPLACE, the strict-mode errors of a server-side load,
//! `secure_file_priv`, atomicity of a failed load, and a TPC-H data set from `tpchgen-cli`
//! loaded table by table with the counts compared to the generator's line counts.

use crate::harness::TestServer;
use crate::mysql_client::{block_on, opts, server_error};
use crate::tools::{require, run};
use mysql_async::prelude::*;
use mysql_async::{Conn, WhiteListFsHandler};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const NATION: &str = "CREATE TABLE nation (n_nationkey INTEGER NOT NULL, n_name CHAR(25) NOT NULL, \
     n_regionkey INTEGER NOT NULL, n_comment VARCHAR(152), PRIMARY KEY (n_nationkey))";

/// `rows` nation-shaped dbgen lines (trailing `|`).
fn tbl_lines(rows: u32) -> String {
    (0..rows)
        .map(|i| format!("{i}|NATION{i}|{}|comment {i} plain|\n", i % 5))
        .collect()
}

async fn local_conn(server: &TestServer, file: &Path) -> Conn {
    let opts = opts(server.mysql_addr(), Some("db"))
        .local_infile_handler(Some(WhiteListFsHandler::new(&[file][..])));
    Conn::new(opts).await.unwrap()
}

#[test]
fn load_data_local_with_mysql_async_reports_mysql_info_and_warnings() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nation.tbl");
    // Big enough for several protocol packets and several reader chunks.
    let rows = 20_000;
    std::fs::write(&file, tbl_lines(rows)).unwrap();
    block_on(async {
        let mut root = crate::mysql_client::connect(server.mysql_addr(), None).await;
        root.query_drop("CREATE DATABASE db").await.unwrap();
        let mut conn = local_conn(&server, &file).await;
        conn.query_drop(NATION).await.unwrap();
        let load = format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE nation FIELDS TERMINATED BY '|'",
            file.display()
        );
        conn.query_drop(&load).await.unwrap();
        assert_eq!(conn.affected_rows(), u64::from(rows));
        let info = conn.info().to_string();
        assert_eq!(
            info,
            format!("Records: {rows}  Deleted: 0  Skipped: 0  Warnings: {rows}")
        );
        let warnings: Vec<(String, u32, String)> = conn.query("SHOW WARNINGS").await.unwrap();
        assert_eq!(warnings.len(), 1024, "max_error_count warnings are kept");
        assert_eq!(
            warnings[0],
            (
                "Warning".to_string(),
                1262,
                "Row 1 was truncated; it contained more data than there were input columns"
                    .to_string()
            )
        );
        let count: Option<u64> = conn
            .query_first("SELECT COUNT(*) FROM nation")
            .await
            .unwrap();
        assert_eq!(count, Some(u64::from(rows)));
        let row: Option<(u32, String, u32, String)> = conn
            .query_first("SELECT * FROM nation WHERE n_nationkey = 7")
            .await
            .unwrap();
        assert_eq!(
            row,
            Some((7, "NATION7".into(), 2, "comment 7 plain".into()))
        );

        // LOCAL without REPLACE treats duplicates as IGNORE: skipped, with 1062 warnings.
        conn.query_drop(&load).await.unwrap();
        assert_eq!(conn.affected_rows(), 0);
        assert_eq!(
            conn.info().to_string(),
            format!(
                "Records: {rows}  Deleted: 0  Skipped: {rows}  Warnings: {}",
                2 * rows
            )
        );
        let dup: Vec<(String, u32, String)> = conn.query("SHOW WARNINGS").await.unwrap();
        assert!(
            dup.iter()
                .any(|w| w.1 == 1062 && w.2 == "Duplicate entry '0' for key 'nation.PRIMARY'"),
            "{dup:?}"
        );
        // REPLACE deletes the old rows first.
        conn.query_drop(load.replace(" INTO TABLE", " REPLACE INTO TABLE"))
            .await
            .unwrap();
        assert_eq!(conn.affected_rows(), 2 * u64::from(rows));
        assert!(
            conn.info()
                .starts_with(&format!("Records: {rows}  Deleted: {rows}  Skipped: 0"))
        );

        // Column list with a user variable and SET, IGNORE 1 LINES.
        conn.query_drop("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), twice INT)")
            .await
            .unwrap();
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "id,name,n\n1,\"a,b\",5\n2,\"say \"\"hi\"\"\",\\N\n").unwrap();
        let mut conn = local_conn(&server, &csv).await;
        conn.query_drop(format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE t FIELDS TERMINATED BY ',' \
             OPTIONALLY ENCLOSED BY '\"' IGNORE 1 LINES (id, name, @n) SET twice = @n * 2",
            csv.display()
        ))
        .await
        .unwrap();
        let rows: Vec<(u32, String, Option<i64>)> = conn
            .query("SELECT id, name, twice FROM t ORDER BY id")
            .await
            .unwrap();
        assert_eq!(
            rows,
            vec![(1, "a,b".into(), Some(10)), (2, "say \"hi\"".into(), None)]
        );
        // The connection is in step after the transfer.
        let one: Option<u32> = conn.query_first("SELECT 1").await.unwrap();
        assert_eq!(one, Some(1));

        // A LOCAL load that fails part-way (a date that cannot be stored even leniently) stops
        // reading, the rest of the client's file is discarded, nothing is loaded, and the
        // connection stays in step.
        conn.query_drop("CREATE TABLE d (id INT PRIMARY KEY, day DATE)")
            .await
            .unwrap();
        let dates = dir.path().join("dates.txt");
        let mut text = String::from("1\t2024-01-02\n2\tnot a date\n");
        for i in 3..50_000 {
            text.push_str(&format!("{i}\t2024-01-03\n"));
        }
        std::fs::write(&dates, text).unwrap();
        let mut conn = local_conn(&server, &dates).await;
        let err = conn
            .query_drop(format!(
                "LOAD DATA LOCAL INFILE '{}' INTO TABLE d",
                dates.display()
            ))
            .await
            .unwrap_err();
        assert_eq!(server_error(err).0, 1366);
        let count: Option<u64> = conn.query_first("SELECT COUNT(*) FROM d").await.unwrap();
        assert_eq!(count, Some(0));
    });
}

async fn expect_error(conn: &mut Conn, sql: &str) -> (u16, String, String) {
    server_error(conn.query_drop(sql).await.unwrap_err())
}

fn mariadb(addr: std::net::SocketAddr, extra: &[&str], sql: &str) -> crate::tools::ToolOutput {
    let mut command = Command::new("mariadb");
    command
        .arg("-h")
        .arg(addr.ip().to_string())
        .arg("-P")
        .arg(addr.port().to_string())
        .arg("-uroot")
        .arg("--batch")
        .args(extra)
        .arg("-e")
        .arg(sql);
    run(command, b"", Duration::from_secs(300))
}

#[test]
fn server_side_load_is_strict_and_confined_to_secure_file_priv() {
    let server = TestServer::start();
    let files = server.data_dir().join("mysql-files");
    assert!(
        files.is_dir(),
        "the default secure_file_priv directory exists"
    );
    std::fs::write(files.join("nation.tbl"), tbl_lines(3)).unwrap();
    std::fs::write(files.join("bad.tbl"), "1|A|1|x\n2|B|oops|y\n").unwrap();
    block_on(async {
        let mut conn = crate::mysql_client::connect(server.mysql_addr(), None).await;
        conn.query_drop("CREATE DATABASE db").await.unwrap();
        conn.query_drop("USE db").await.unwrap();
        conn.query_drop(NATION).await.unwrap();
        let priv_dir: Option<String> = conn.query_first("SELECT @@secure_file_priv").await.unwrap();
        assert_eq!(priv_dir.as_deref().map(Path::new), Some(files.as_path()));
        // Strict mode without IGNORE: the trailing field is error 1262, nothing is loaded.
        let (code, state, _) = expect_error(
            &mut conn,
            "LOAD DATA INFILE 'nation.tbl' INTO TABLE nation FIELDS TERMINATED BY '|'",
        )
        .await;
        assert_eq!((code, state.as_str()), (1262, "01000"));
        let (code, _, msg) = expect_error(
            &mut conn,
            "LOAD DATA INFILE 'bad.tbl' INTO TABLE nation FIELDS TERMINATED BY '|'",
        )
        .await;
        assert_eq!(code, 1366, "{msg}");
        let (code, _, _) = expect_error(
            &mut conn,
            "LOAD DATA INFILE '/etc/passwd' INTO TABLE nation",
        )
        .await;
        assert_eq!(code, 1290);
        let (code, _, msg) = expect_error(
            &mut conn,
            "LOAD DATA INFILE 'missing.tbl' INTO TABLE nation",
        )
        .await;
        assert_eq!(code, 29);
        assert!(
            msg.ends_with("missing.tbl' not found (OS errno 2 - No such file or directory)"),
            "{msg}"
        );
        let (code, _, _) =
            expect_error(&mut conn, "LOAD DATA INFILE 'nation.tbl' INTO TABLE nope").await;
        assert_eq!(code, 1146);
        let count: Option<u64> = conn
            .query_first("SELECT COUNT(*) FROM nation")
            .await
            .unwrap();
        assert_eq!(count, Some(0), "failed loads leave no rows");

        // IGNORE turns the problems into warnings and loads what converts.
        conn.query_drop(
            "LOAD DATA INFILE 'bad.tbl' IGNORE INTO TABLE nation FIELDS TERMINATED BY '|'",
        )
        .await
        .unwrap();
        assert_eq!(
            conn.info(),
            "Records: 2  Deleted: 0  Skipped: 0  Warnings: 1"
        );
        let w: Vec<(String, u32, String)> = conn.query("SHOW WARNINGS").await.unwrap();
        assert_eq!(w[0].1, 1366, "{w:?}");
        // A failed load inside a transaction keeps the transaction's earlier writes only.
        conn.query_drop("BEGIN").await.unwrap();
        conn.query_drop("INSERT INTO nation VALUES (100, 'X', 1, 'kept')")
            .await
            .unwrap();
        conn.query_drop("LOAD DATA INFILE 'nation.tbl' INTO TABLE nation FIELDS TERMINATED BY '|'")
            .await
            .unwrap_err();
        conn.query_drop("COMMIT").await.unwrap();
        let keys: Vec<u32> = conn
            .query("SELECT n_nationkey FROM nation ORDER BY n_nationkey")
            .await
            .unwrap();
        assert_eq!(keys, vec![1, 2, 100]);
    });
}

#[test]
fn mariadb_client_loads_a_tpch_data_set_with_local_infile() {
    require("mariadb", &["--version"], "mariadb-client");
    require(
        "tpchgen-cli",
        &["--version"],
        "tpchgen-cli (pip install tpchgen-cli)",
    );
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let generated = Command::new("tpchgen-cli")
        .args(["-s", "0.01", "--output-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let ddl = include_str!("../../../server/src/tpch/schema.rs");
    let mut setup = String::from("CREATE DATABASE tpch; USE tpch;");
    for create in ddl.split("ddl: \"").skip(1) {
        let text = create.split("\",").next().unwrap();
        let text: String = text
            .split("\\\n")
            .map(str::trim_start)
            .collect::<Vec<_>>()
            .join("");
        setup.push_str(&text);
        setup.push(';');
    }
    mariadb(server.mysql_addr(), &[], &setup).assert_success("TPC-H schema");
    let tables = [
        "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem",
    ];
    for table in tables {
        let file = dir.path().join(format!("{table}.tbl"));
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        let out = mariadb(
            server.mysql_addr(),
            &["--local-infile=1", "-vv", "-D", "tpch"],
            &format!(
                "LOAD DATA LOCAL INFILE '{}' INTO TABLE {table} FIELDS TERMINATED BY '|'; \
                 SELECT COUNT(*) FROM {table}",
                file.display()
            ),
        );
        out.assert_success(table);
        assert!(
            out.stdout.contains(&format!(
                "Records: {lines}  Deleted: 0  Skipped: 0  Warnings: {lines}"
            )),
            "{table}: {}",
            out.stdout
        );
        assert!(
            out.stdout.contains(&format!("\n{lines}\n")),
            "{table}: {}",
            out.stdout
        );
    }
    // Without --local-infile the client does not enable LOCAL: 3948.
    let refused = mariadb(
        server.mysql_addr(),
        &["--local-infile=0", "-D", "tpch"],
        &format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE region FIELDS TERMINATED BY '|'",
            dir.path().join("region.tbl").display()
        ),
    );
    assert!(
        refused.stderr.contains("ERROR 3948 (42000)"),
        "{}",
        refused.stderr
    );
}
