//! SHOW statements and information_schema queries over a catalog built through the engine's DDL,
//! called the way the statement dispatcher calls them (`show::execute_show_text` on the text,
//! then `show::execute_show` on the parsed statement), with a catalog snapshot re-read from
//! storage so the answers come from the persistent catalog.

use super::*;
use crate::catalog::{Catalog, CatalogSnapshot};
use crate::plan;
use crate::result::OutputColumn;
use crate::show::{describe_show, execute_show, execute_show_text};

struct ShowDb {
    _dir: tempfile::TempDir,
    storage: Engine,
    sql: Arc<SqlExecutor>,
    session: SessionState,
}

impl ShowDb {
    /// Database `sbtest` with sysbench's table (3 rows, index k_1) and a table exercising every
    /// attribute SHOW prints.
    async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let storage = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
        let sql = SqlExecutor::open(storage.clone()).unwrap();
        let mut db = Self {
            _dir: dir,
            storage,
            sql,
            session: SessionState::new(None),
        };
        for stmt in [
            "CREATE DATABASE sbtest",
            "USE sbtest",
            SBTEST,
            "INSERT INTO sbtest1 (k, c, pad) VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z')",
            "CREATE INDEX k_1 ON sbtest1(k)",
            "CREATE TABLE t2 (a BIGINT UNSIGNED, b DECIMAL(10,2) DEFAULT 1.5, d DATE, \
             ts TIMESTAMP, v VARCHAR(10) NOT NULL, txt TEXT, u INT NOT NULL, \
             UNIQUE KEY ua (a), KEY kv (v, d), UNIQUE KEY uu (u)) \
             ENGINE=InnoDB DEFAULT CHARSET=latin1 COMMENT='it''s'",
        ] {
            db.exec(stmt).await;
        }
        db
    }

    async fn exec(&mut self, sql: &str) {
        for r in self.sql.execute(&mut self.session, sql).await {
            r.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }

    fn snapshot(&self) -> Arc<CatalogSnapshot> {
        Catalog::open(&self.storage).unwrap().snapshot()
    }

    /// Runs `sql` as the dispatcher does, with `db` as the current database.
    fn run_in(&self, db: Option<&str>, sql: &str) -> Result<StatementResult, SqlError> {
        let snap = self.snapshot();
        if let Some(r) = execute_show_text(&snap, db, sql) {
            return r;
        }
        let stmts = plan::parse(sql)?;
        let [stmt] = stmts.as_slice() else {
            panic!("{sql}: one statement expected")
        };
        execute_show(&snap, db, stmt, &[]).unwrap_or_else(|| panic!("{sql}: not claimed"))
    }

    fn result(&self, sql: &str) -> StatementResult {
        self.run_in(Some("sbtest"), sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        rows_of(self.result(sql))
    }

    fn names(&self, sql: &str) -> Vec<String> {
        match self.result(sql) {
            StatementResult::Rows { columns, .. } => columns.into_iter().map(|c| c.name).collect(),
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn error(&self, db: Option<&str>, sql: &str) -> SqlError {
        match self.run_in(db, sql) {
            Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
            Err(e) => e,
        }
    }
}

fn strings(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|s| (*s).to_string()).collect())
        .collect()
}

#[tokio::test]
async fn show_create_table_reads_like_mysql() {
    let db = ShowDb::new().await;
    assert_eq!(
        db.rows("SHOW CREATE TABLE sbtest1"),
        strings(&[&[
            "sbtest1",
            "CREATE TABLE `sbtest1` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  `k` int NOT NULL DEFAULT '0',\n  `c` char(120) NOT NULL DEFAULT '',\n  `pad` char(60) NOT NULL DEFAULT '',\n  PRIMARY KEY (`id`),\n  KEY `k_1` (`k`)\n) ENGINE=InnoDB AUTO_INCREMENT=4 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci",
        ]])
    );
    assert_eq!(
        db.names("SHOW CREATE TABLE sbtest1"),
        ["Table", "Create Table"]
    );
    assert_eq!(
        db.rows("SHOW CREATE TABLE sbtest.t2")[0][1],
        "CREATE TABLE `t2` (\n  `a` bigint unsigned DEFAULT NULL,\n  `b` decimal(10,2) DEFAULT '1.50',\n  `d` date DEFAULT NULL,\n  `ts` timestamp NULL DEFAULT NULL,\n  `v` varchar(10) NOT NULL,\n  `txt` text,\n  `u` int NOT NULL,\n  UNIQUE KEY `uu` (`u`),\n  UNIQUE KEY `ua` (`a`),\n  KEY `kv` (`v`,`d`)\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COMMENT='it\\'s'"
    );
}

#[tokio::test]
async fn show_create_table_text_recreates_the_table() {
    let mut db = ShowDb::new().await;
    let text = db.rows("SHOW CREATE TABLE t2")[0][1].clone();
    db.exec("CREATE DATABASE copy").await;
    db.exec("USE copy").await;
    db.exec(&text).await;
    let copied = db.run_in(Some("copy"), "SHOW CREATE TABLE t2").unwrap();
    assert_eq!(rows_of(copied)[0][1], text);
}

#[tokio::test]
async fn default_current_timestamp_shows_and_recreates() {
    let mut db = ShowDb::new().await;
    db.exec(
        "CREATE TABLE stamped (id INT PRIMARY KEY, c DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, \
         t TIMESTAMP DEFAULT NOW())",
    )
    .await;
    let text = db.rows("SHOW CREATE TABLE stamped")[0][1].clone();
    assert!(
        text.contains("`c` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP,\n")
            && text.contains("`t` timestamp NULL DEFAULT CURRENT_TIMESTAMP,\n"),
        "{text}"
    );
    db.exec("CREATE DATABASE copy").await;
    db.exec("USE copy").await;
    db.exec(&text).await;
    let copied = db
        .run_in(Some("copy"), "SHOW CREATE TABLE stamped")
        .unwrap();
    assert_eq!(rows_of(copied)[0][1], text);
}

#[test]
fn column_records_written_before_default_now_still_read() {
    let old =
        r#"{"name":"c","ty":"DateTime","nullable":true,"default":"Null","auto_increment":false}"#;
    let column: crate::catalog::ColumnDef = serde_json::from_str(old).unwrap();
    assert!(!column.default_now);
    assert_eq!(column.default, Some(crate::types::Datum::Null));
    // And a column without it is written as before.
    assert_eq!(serde_json::to_string(&column).unwrap(), old);
}

#[tokio::test]
async fn show_databases_and_tables() {
    let db = ShowDb::new().await;
    assert_eq!(
        db.rows("SHOW DATABASES"),
        strings(&[&["information_schema"], &["sbtest"]])
    );
    assert_eq!(db.names("SHOW DATABASES"), ["Database"]);
    assert_eq!(db.names("SHOW DATABASES LIKE 'sb%'"), ["Database (sb%)"]);
    assert_eq!(
        db.rows("SHOW DATABASES LIKE 'sb%'"),
        strings(&[&["sbtest"]])
    );
    assert_eq!(
        db.rows("SHOW SCHEMAS WHERE `Database` <> 'sbtest'"),
        strings(&[&["information_schema"]])
    );
    assert_eq!(db.names("SHOW TABLES"), ["Tables_in_sbtest"]);
    assert_eq!(db.rows("SHOW TABLES"), strings(&[&["sbtest1"], &["t2"]]));
    assert_eq!(
        db.rows("SHOW FULL TABLES FROM sbtest"),
        strings(&[&["sbtest1", "BASE TABLE"], &["t2", "BASE TABLE"]])
    );
    assert_eq!(
        db.names("SHOW FULL TABLES"),
        ["Tables_in_sbtest", "Table_type"]
    );
    assert_eq!(db.names("SHOW TABLES LIKE 't%'"), ["Tables_in_sbtest (t%)"]);
    assert_eq!(db.rows("SHOW TABLES LIKE 't%'"), strings(&[&["t2"]]));
    assert_eq!(
        db.rows("SHOW TABLES WHERE Tables_in_sbtest IN ('sbtest1', 'nope')"),
        strings(&[&["sbtest1"]])
    );
    assert_eq!(
        db.names("SHOW TABLES FROM INFORMATION_SCHEMA"),
        ["Tables_in_information_schema"]
    );
    assert_eq!(
        db.rows("SHOW FULL TABLES IN information_schema"),
        strings(&[
            &["CHARACTER_SETS", "SYSTEM VIEW"],
            &["COLLATIONS", "SYSTEM VIEW"],
            &["COLUMNS", "SYSTEM VIEW"],
            &["ENGINES", "SYSTEM VIEW"],
            &["KEY_COLUMN_USAGE", "SYSTEM VIEW"],
            &["PROCESSLIST", "SYSTEM VIEW"],
            &["SCHEMATA", "SYSTEM VIEW"],
            &["STATISTICS", "SYSTEM VIEW"],
            &["TABLES", "SYSTEM VIEW"],
            &["TABLE_CONSTRAINTS", "SYSTEM VIEW"],
        ])
    );
}

#[tokio::test]
async fn show_columns_and_describe() {
    let db = ShowDb::new().await;
    let sbtest = strings(&[
        &["id", "int", "NO", "PRI", "NULL", "auto_increment"],
        &["k", "int", "NO", "MUL", "0", ""],
        &["c", "char(120)", "NO", "", "", ""],
        &["pad", "char(60)", "NO", "", "", ""],
    ]);
    assert_eq!(db.rows("SHOW COLUMNS FROM sbtest1"), sbtest);
    assert_eq!(db.rows("DESCRIBE sbtest1"), sbtest);
    assert_eq!(db.rows("DESC sbtest.sbtest1"), sbtest);
    assert_eq!(db.rows("SHOW FIELDS FROM sbtest1 FROM sbtest"), sbtest);
    assert_eq!(
        db.names("DESCRIBE sbtest1"),
        ["Field", "Type", "Null", "Key", "Default", "Extra"]
    );
    assert_eq!(
        db.rows("SHOW COLUMNS FROM t2"),
        strings(&[
            &["a", "bigint unsigned", "YES", "UNI", "NULL", ""],
            &["b", "decimal(10,2)", "YES", "", "1.50", ""],
            &["d", "date", "YES", "", "NULL", ""],
            &["ts", "timestamp", "YES", "", "NULL", ""],
            &["v", "varchar(10)", "NO", "MUL", "NULL", ""],
            &["txt", "text", "YES", "", "NULL", ""],
            // The first UNIQUE NOT NULL key acts as primary key when none is declared.
            &["u", "int", "NO", "PRI", "NULL", ""],
        ])
    );
    assert_eq!(
        db.rows("SHOW FULL COLUMNS FROM t2 LIKE 'v'"),
        strings(&[&[
            "v",
            "varchar(10)",
            "latin1_swedish_ci",
            "NO",
            "MUL",
            "NULL",
            "",
            "select,insert,update,references",
            "",
        ]])
    );
    assert_eq!(
        db.names("SHOW FULL COLUMNS FROM t2"),
        [
            "Field",
            "Type",
            "Collation",
            "Null",
            "Key",
            "Default",
            "Extra",
            "Privileges",
            "Comment"
        ]
    );
    assert_eq!(
        db.rows("SHOW COLUMNS FROM t2 WHERE `Key` <> '' AND `Null` = 'NO'"),
        strings(&[
            &["v", "varchar(10)", "NO", "MUL", "NULL", ""],
            &["u", "int", "NO", "PRI", "NULL", ""],
        ])
    );
}

#[tokio::test]
async fn show_index_has_mysqls_fifteen_columns() {
    let db = ShowDb::new().await;
    assert_eq!(
        db.names("SHOW INDEX FROM sbtest1"),
        [
            "Table",
            "Non_unique",
            "Key_name",
            "Seq_in_index",
            "Column_name",
            "Collation",
            "Cardinality",
            "Sub_part",
            "Packed",
            "Null",
            "Index_type",
            "Comment",
            "Index_comment",
            "Visible",
            "Expression"
        ]
    );
    let row = |t: &str, nu: &str, key: &str, seq: &str, col: &str, null: &str| {
        vec![
            t, nu, key, seq, col, "A", "NULL", "NULL", "NULL", null, "BTREE", "", "", "YES", "NULL",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    assert_eq!(
        db.rows("SHOW INDEX FROM sbtest1"),
        vec![
            row("sbtest1", "0", "PRIMARY", "1", "id", ""),
            row("sbtest1", "1", "k_1", "1", "k", ""),
        ]
    );
    assert_eq!(
        db.rows("SHOW KEYS IN t2 FROM sbtest"),
        vec![
            row("t2", "0", "uu", "1", "u", ""),
            row("t2", "0", "ua", "1", "a", "YES"),
            row("t2", "1", "kv", "1", "v", ""),
            row("t2", "1", "kv", "2", "d", "YES"),
        ]
    );
    assert_eq!(
        db.rows("SHOW INDEXES FROM sbtest.t2 WHERE Key_name = 'kv' AND Seq_in_index > 1"),
        vec![row("t2", "1", "kv", "2", "d", "YES")]
    );
}

#[tokio::test]
async fn show_create_database_engines_charsets_collations() {
    let db = ShowDb::new().await;
    assert_eq!(
        db.rows("SHOW CREATE DATABASE sbtest"),
        strings(&[&[
            "sbtest",
            "CREATE DATABASE `sbtest` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */ /*!80016 DEFAULT ENCRYPTION='N' */",
        ]])
    );
    assert_eq!(
        db.rows("SHOW CREATE SCHEMA IF NOT EXISTS sbtest")[0][1],
        "CREATE DATABASE /*!32312 IF NOT EXISTS*/ `sbtest` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */ /*!80016 DEFAULT ENCRYPTION='N' */"
    );
    assert_eq!(
        db.names("SHOW ENGINES"),
        [
            "Engine",
            "Support",
            "Comment",
            "Transactions",
            "XA",
            "Savepoints"
        ]
    );
    assert_eq!(
        db.rows("SHOW STORAGE ENGINES")[0][..2],
        ["InnoDB", "DEFAULT"]
    );
    assert_eq!(
        db.rows("SHOW CHARACTER SET LIKE 'utf8%'"),
        strings(&[
            &["utf8mb3", "UTF-8 Unicode", "utf8mb3_general_ci", "3"],
            &["utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_ai_ci", "4"],
        ])
    );
    assert_eq!(
        db.names("SHOW CHARSET"),
        ["Charset", "Description", "Default collation", "Maxlen"]
    );
    assert_eq!(
        db.rows("SHOW COLLATION WHERE Charset = 'utf8mb4' AND `Default` = 'Yes'"),
        strings(&[&[
            "utf8mb4_0900_ai_ci",
            "utf8mb4",
            "255",
            "Yes",
            "Yes",
            "0",
            "NO PAD"
        ]])
    );
    assert_eq!(
        db.names("SHOW COLLATION LIKE 'latin1%'"),
        [
            "Collation",
            "Charset",
            "Id",
            "Default",
            "Compiled",
            "Sortlen",
            "Pad_attribute"
        ]
    );
    assert_eq!(db.rows("SHOW COLLATION LIKE 'latin1%'").len(), 2);
}

#[tokio::test]
async fn show_table_status() {
    let db = ShowDb::new().await;
    let rows = db.rows("SHOW TABLE STATUS LIKE 'sb%'");
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.len(), 18);
    assert_eq!(row[..5], ["sbtest1", "InnoDB", "10", "Dynamic", "NULL"]);
    assert_eq!(row[10], "4", "Auto_increment is the next value");
    assert_eq!(row[14], "utf8mb4_0900_ai_ci");
    let t2 = db.rows("SHOW TABLE STATUS FROM sbtest WHERE Name = 't2'");
    assert_eq!(t2[0][10], "NULL");
    assert_eq!(t2[0][14], "latin1_swedish_ci");
    assert_eq!(t2[0][17], "it's");
}

#[tokio::test]
async fn show_errors() {
    let db = ShowDb::new().await;
    assert_eq!(db.error(None, "SHOW TABLES").code(), 1046);
    assert_eq!(db.error(None, "SHOW TABLE STATUS").code(), 1046);
    assert_eq!(db.error(None, "DESCRIBE t").code(), 1046);
    let e = db.error(None, "SHOW TABLES FROM nope");
    assert_eq!(
        (e.code(), e.to_string().as_str()),
        (1049, "Unknown database 'nope'")
    );
    assert_eq!(db.error(None, "SHOW CREATE DATABASE nope").code(), 1049);
    let e = db.error(Some("sbtest"), "SHOW COLUMNS FROM nope");
    assert_eq!(
        (e.code(), e.to_string().as_str()),
        (1146, "Table 'sbtest.nope' doesn't exist")
    );
    assert_eq!(
        db.error(Some("sbtest"), "SHOW CREATE TABLE nope").code(),
        1146
    );
    assert_eq!(
        db.error(Some("sbtest"), "SHOW INDEX FROM nope.t").code(),
        1049
    );
    assert_eq!(
        db.error(Some("sbtest"), "SHOW COLUMNS FROM sbtest1 WHERE Nope = 1")
            .code(),
        1054
    );
    for unsupported in [
        "SHOW CREATE VIEW v",
        "SHOW EXTENDED COLUMNS FROM sbtest1",
        "SHOW EXTENDED INDEX FROM sbtest1",
        "SHOW TABLES LIMIT 1",
        "SHOW CREATE TABLE information_schema.tables",
    ] {
        assert_eq!(
            db.error(Some("sbtest"), unsupported).code(),
            1235,
            "{unsupported}"
        );
    }
    assert_eq!(db.error(Some("sbtest"), "SHOW INDEX sbtest1").code(), 1064);
}

#[tokio::test]
async fn other_statements_are_not_claimed() {
    let db = ShowDb::new().await;
    let snap = db.snapshot();
    for sql in [
        "SHOW VARIABLES LIKE 'a%'",
        "SHOW WARNINGS",
        "SHOW STATUS",
        "SELECT c FROM sbtest1 WHERE id = 1",
        "SELECT 1",
        "INSERT INTO sbtest1 (k) VALUES (1)",
    ] {
        assert!(
            execute_show_text(&snap, Some("sbtest"), sql).is_none(),
            "{sql}"
        );
        let stmt = plan::parse(sql).unwrap().remove(0);
        assert!(
            execute_show(&snap, Some("sbtest"), &stmt, &[]).is_none(),
            "{sql}"
        );
    }
}

#[tokio::test]
async fn information_schema_tables_with_filters() {
    let db = ShowDb::new().await;
    let sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'sbtest'";
    assert_eq!(db.names(sql), ["TABLE_NAME"]);
    assert_eq!(db.rows(sql), strings(&[&["sbtest1"], &["t2"]]));
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'sbtest'"),
        strings(&[&["2"]])
    );
    assert_eq!(
        db.rows(
            "SELECT t.table_name AS n, auto_increment FROM information_schema.Tables t \
             WHERE table_schema IN ('sbtest', 'x') AND (table_name = 't2' OR table_name LIKE 'SB%') \
             ORDER BY n DESC"
        ),
        strings(&[&["t2", "NULL"], &["sbtest1", "4"]])
    );
    assert_eq!(
        db.names("SELECT t.table_name AS n, auto_increment FROM information_schema.tables t"),
        ["n", "AUTO_INCREMENT"]
    );
    assert_eq!(
        db.rows(
            "SELECT table_name, table_type, engine FROM information_schema.tables \
             WHERE engine IS NULL ORDER BY table_name LIMIT 2"
        ),
        strings(&[
            &["CHARACTER_SETS", "SYSTEM VIEW", "NULL"],
            &["COLLATIONS", "SYSTEM VIEW", "NULL"]
        ])
    );
    assert_eq!(
        db.rows(
            "SELECT table_name FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_comment <> ''"
        ),
        strings(&[&["t2"]])
    );
    // Connector/J's getTables shape: HAVING on a select alias that shadows a column.
    assert_eq!(
        db.rows(
            "SELECT table_schema AS TABLE_CAT, table_name, CASE WHEN table_type = 'BASE TABLE' \
             THEN 'TABLE' ELSE table_type END AS TABLE_TYPE FROM information_schema.tables \
             WHERE table_schema = 'sbtest' HAVING TABLE_TYPE IN ('TABLE') \
             ORDER BY TABLE_TYPE, TABLE_CAT, TABLE_NAME"
        ),
        strings(&[&["sbtest", "sbtest1", "TABLE"], &["sbtest", "t2", "TABLE"]])
    );
}

#[tokio::test]
async fn information_schema_schemata_columns_statistics() {
    let db = ShowDb::new().await;
    assert_eq!(
        db.rows("SELECT * FROM information_schema.schemata"),
        strings(&[
            &[
                "def",
                "information_schema",
                "utf8mb3",
                "utf8mb3_general_ci",
                "NULL",
                "NO"
            ],
            &[
                "def",
                "sbtest",
                "utf8mb4",
                "utf8mb4_0900_ai_ci",
                "NULL",
                "NO"
            ],
        ])
    );
    assert_eq!(
        db.names("SELECT * FROM information_schema.schemata"),
        [
            "CATALOG_NAME",
            "SCHEMA_NAME",
            "DEFAULT_CHARACTER_SET_NAME",
            "DEFAULT_COLLATION_NAME",
            "SQL_PATH",
            "DEFAULT_ENCRYPTION"
        ]
    );
    assert_eq!(
        db.rows(
            "SELECT column_name, ordinal_position, column_default, is_nullable, data_type, \
             character_maximum_length, character_octet_length, numeric_precision, numeric_scale, \
             character_set_name, collation_name, column_type, column_key, extra \
             FROM information_schema.columns WHERE table_schema = 'sbtest' AND table_name = 'sbtest1' \
             ORDER BY ordinal_position"
        ),
        strings(&[
            &["id", "1", "NULL", "NO", "int", "NULL", "NULL", "10", "0", "NULL", "NULL", "int", "PRI", "auto_increment"],
            &["k", "2", "0", "NO", "int", "NULL", "NULL", "10", "0", "NULL", "NULL", "int", "MUL", ""],
            &["c", "3", "", "NO", "char", "120", "480", "NULL", "NULL", "utf8mb4", "utf8mb4_0900_ai_ci", "char(120)", "", ""],
            &["pad", "4", "", "NO", "char", "60", "240", "NULL", "NULL", "utf8mb4", "utf8mb4_0900_ai_ci", "char(60)", "", ""],
        ])
    );
    assert_eq!(
        db.rows(
            "SELECT column_name, numeric_precision, numeric_scale, datetime_precision, \
             character_octet_length FROM information_schema.columns \
             WHERE table_name = 't2' AND column_name IN ('a', 'b', 'ts', 'v') ORDER BY 1"
        ),
        strings(&[
            &["a", "20", "0", "NULL", "NULL"],
            &["b", "10", "2", "NULL", "NULL"],
            &["ts", "NULL", "NULL", "0", "NULL"],
            &["v", "NULL", "NULL", "NULL", "10"],
        ])
    );
    assert_eq!(
        db.rows(
            "SELECT index_name, seq_in_index, column_name, non_unique, nullable \
             FROM information_schema.statistics WHERE table_schema = 'sbtest' AND table_name = 't2'"
        ),
        strings(&[
            &["uu", "1", "u", "0", ""],
            &["ua", "1", "a", "0", "YES"],
            &["kv", "1", "v", "1", ""],
            &["kv", "2", "d", "1", "YES"],
        ])
    );
    assert_eq!(
        db.rows(
            "SELECT COUNT(*), MIN(ordinal_position), MAX(ordinal_position) FROM information_schema.columns \
             WHERE table_schema = 'information_schema' AND table_name = 'statistics'"
        ),
        strings(&[&["18", "1", "18"]])
    );
}

#[tokio::test]
async fn information_schema_names_parameters_and_errors() {
    let db = ShowDb::new().await;
    // Unqualified while information_schema is the current database.
    assert_eq!(
        rows_of(
            db.run_in(
                Some("information_schema"),
                "SELECT schema_name FROM schemata WHERE schema_name LIKE 'sb%'"
            )
            .unwrap()
        ),
        strings(&[&["sbtest"]])
    );
    // Prepared: `?` parameters, and the columns known at prepare time.
    let snap = db.snapshot();
    let stmt = plan::parse(
        "SELECT table_name, table_rows FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name",
    )
    .unwrap()
    .remove(0);
    let (columns, params) = describe_show(&snap, None, &stmt).unwrap().unwrap();
    assert_eq!(params, 1);
    let names: Vec<&str> = columns
        .iter()
        .map(|c: &OutputColumn| c.name.as_str())
        .collect();
    assert_eq!(names, ["TABLE_NAME", "TABLE_ROWS"]);
    assert_eq!(columns[0].db, "information_schema");
    assert_eq!(columns[0].table, "TABLES");
    let r = execute_show(&snap, None, &stmt, &[text("sbtest")])
        .unwrap()
        .unwrap();
    assert_eq!(
        rows_of(r),
        strings(&[&["sbtest1", "NULL"], &["t2", "NULL"]])
    );
    assert_eq!(
        execute_show(&snap, None, &stmt, &[])
            .unwrap()
            .unwrap_err()
            .code(),
        1210
    );
    let e = db.error(None, "SELECT * FROM information_schema.nope");
    assert_eq!(
        (e.code(), e.to_string().as_str()),
        (1146, "Table 'information_schema.nope' doesn't exist")
    );
    assert_eq!(
        db.error(
            None,
            "SELECT * FROM information_schema.tables t JOIN information_schema.columns c ON t.table_name = c.table_name"
        )
        .code(),
        1235
    );
    assert_eq!(
        db.error(None, "SELECT nope FROM information_schema.tables")
            .code(),
        1054
    );
}

#[tokio::test]
async fn tables_without_primary_key_and_with_auto_increment_on_a_secondary_key() {
    let mut db = ShowDb::new().await;
    db.exec("CREATE TABLE nopk (a INT, b VARCHAR(5))").await;
    db.exec("CREATE TABLE seq (n INT NOT NULL AUTO_INCREMENT, v INT PRIMARY KEY, KEY kn (n))")
        .await;
    db.exec("INSERT INTO seq (v) VALUES (7), (8)").await;
    assert_eq!(
        db.rows("SHOW CREATE TABLE nopk")[0][1],
        "CREATE TABLE `nopk` (\n  `a` int DEFAULT NULL,\n  `b` varchar(5) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    assert!(
        db.rows("SHOW INDEX FROM nopk").is_empty(),
        "the hidden row id is no key"
    );
    assert_eq!(
        db.rows("SHOW CREATE TABLE seq")[0][1],
        "CREATE TABLE `seq` (\n  `n` int NOT NULL AUTO_INCREMENT,\n  `v` int NOT NULL,\n  PRIMARY KEY (`v`),\n  KEY `kn` (`n`)\n) ENGINE=InnoDB AUTO_INCREMENT=3 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    assert_eq!(
        db.rows("SHOW COLUMNS FROM seq"),
        strings(&[
            &["n", "int", "NO", "MUL", "NULL", "auto_increment"],
            &["v", "int", "NO", "PRI", "NULL", ""],
        ])
    );
    assert_eq!(
        db.rows("SELECT table_name, auto_increment FROM information_schema.tables WHERE table_name IN ('seq', 'nopk') ORDER BY 1"),
        strings(&[&["nopk", "NULL"], &["seq", "3"]])
    );
}

#[tokio::test]
async fn information_schema_constraints_charsets_engines() {
    let db = ShowDb::new().await;
    assert_eq!(
        db.rows(
            "SELECT constraint_name, table_name, constraint_type, enforced \
             FROM information_schema.table_constraints WHERE table_schema = 'sbtest'"
        ),
        strings(&[
            &["PRIMARY", "sbtest1", "PRIMARY KEY", "YES"],
            &["uu", "t2", "UNIQUE", "YES"],
            &["ua", "t2", "UNIQUE", "YES"],
        ])
    );
    assert_eq!(
        db.rows(
            "SELECT constraint_name, column_name, ordinal_position, referenced_table_name \
             FROM information_schema.key_column_usage WHERE table_schema = 'sbtest'"
        ),
        strings(&[
            &["PRIMARY", "id", "1", "NULL"],
            &["uu", "u", "1", "NULL"],
            &["ua", "a", "1", "NULL"],
        ])
    );
    assert_eq!(
        db.rows(
            "SELECT character_set_name, maxlen FROM information_schema.character_sets \
             WHERE default_collate_name LIKE 'utf8mb4%'"
        ),
        strings(&[&["utf8mb4", "4"]])
    );
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM information_schema.collations WHERE character_set_name = 'utf8mb4'"),
        strings(&[&["4"]])
    );
    assert_eq!(
        db.rows("SELECT engine, support, transactions FROM information_schema.engines"),
        strings(&[&["InnoDB", "DEFAULT", "YES"]])
    );
    assert_eq!(
        db.rows("SHOW ENGINES"),
        strings(&[&[
            "InnoDB",
            "DEFAULT",
            "Orcinus LSM storage: transactions, row-level locking",
            "YES",
            "NO",
            "NO"
        ]])
    );
}
