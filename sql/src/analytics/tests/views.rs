//! Views: persisted definitions, expansion in queries, OR REPLACE, DROP, MySQL errors.

use super::{Fixture, display_rows};
use crate::analytics::AnalyticsConfig;

async fn shop() -> Fixture {
    let mut f = Fixture::new(AnalyticsConfig::default()).await;
    f.exec(
        "CREATE TABLE items (id INT NOT NULL PRIMARY KEY, kind VARCHAR(10), price DECIMAL(10,2))",
    )
    .await;
    f.exec("INSERT INTO items VALUES (1, 'a', 1.50), (2, 'a', 2.50), (3, 'b', 10.00)")
        .await;
    f
}

#[tokio::test]
async fn views_are_persisted_expanded_replaced_and_dropped() {
    let f = shop().await;
    f.view_ddl("CREATE VIEW totals (k, total) AS SELECT kind, sum(price) FROM items GROUP BY kind")
        .await
        .unwrap();
    let q = "SELECT k, total FROM totals ORDER BY k";
    assert_eq!(
        display_rows(&f.query(q).await.unwrap()),
        vec![vec!["a", "4.00"], vec!["b", "10.00"]]
    );
    // Stored with qualified table names: usable without a current database.
    let res = f
        .query_db(None, "SELECT count(*) FROM t.totals")
        .await
        .unwrap();
    assert_eq!(display_rows(&res), vec![vec!["2"]]);
    // Views over views, joined with tables, with aliases.
    f.view_ddl("CREATE VIEW big AS SELECT k FROM totals WHERE total > 5")
        .await
        .unwrap();
    let res = f
        .query("SELECT b.k, i.id FROM big b JOIN items i ON i.kind = b.k")
        .await
        .unwrap();
    assert_eq!(display_rows(&res), vec![vec!["b", "3"]]);

    assert_eq!(
        f.view_ddl("CREATE VIEW totals AS SELECT 1")
            .await
            .unwrap_err()
            .code(),
        1050
    );
    assert_eq!(
        f.view_ddl("CREATE VIEW items AS SELECT 1")
            .await
            .unwrap_err()
            .code(),
        1050
    );
    f.view_ddl("CREATE OR REPLACE VIEW totals (k, total) AS SELECT kind, max(price) FROM items GROUP BY kind")
        .await
        .unwrap();
    assert_eq!(
        display_rows(&f.query(q).await.unwrap()),
        vec![vec!["a", "2.50"], vec!["b", "10.00"]]
    );

    f.view_ddl("DROP VIEW big, totals").await.unwrap();
    assert_eq!(f.query(q).await.unwrap_err().code(), 1146);
    assert_eq!(
        f.view_ddl("DROP VIEW totals").await.unwrap_err().code(),
        1051
    );
    f.view_ddl("DROP VIEW IF EXISTS totals").await.unwrap();
}

#[tokio::test]
async fn bad_view_definitions_are_refused() {
    let f = shop().await;
    for (sql, code) in [
        ("CREATE VIEW v (a, b) AS SELECT id FROM items", 1353),
        ("CREATE VIEW v AS SELECT nope FROM items", 1054),
        ("CREATE VIEW v AS SELECT * FROM missing", 1146),
        ("CREATE VIEW v (a, A) AS SELECT id, price FROM items", 1060),
        ("CREATE VIEW nodb.v AS SELECT 1", 1049),
    ] {
        assert_eq!(f.view_ddl(sql).await.unwrap_err().code(), code, "{sql}");
    }
    // A CTE of the same name shadows a view.
    f.view_ddl("CREATE VIEW v AS SELECT id FROM items")
        .await
        .unwrap();
    let res = f
        .query("WITH v AS (SELECT 42 AS id) SELECT id FROM v")
        .await
        .unwrap();
    assert_eq!(display_rows(&res), vec![vec!["42"]]);
}
