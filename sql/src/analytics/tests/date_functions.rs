//! MySQL date functions through the analytical executor alone: result types, TIMESTAMPDIFF
//! (whose unit argument the fast-path binder does not accept yet), and the explicit errors.

use super::Fixture;
use crate::SqlError;
use crate::analytics::AnalyticsConfig;
use crate::result::StatementResult;
use crate::types::SqlType;

async fn fixture() -> Fixture {
    let mut f = Fixture::new(AnalyticsConfig::default()).await;
    f.exec("CREATE TABLE ev (id INT NOT NULL, at DATETIME, PRIMARY KEY (id))")
        .await;
    f.exec("INSERT INTO ev VALUES (1, '2026-01-31 10:00:00'), (2, NULL)")
        .await;
    f
}

#[tokio::test]
async fn results_have_mysql_types() {
    let f = fixture().await;
    let res = f
        .query(
            "SELECT DATE(at), DATEDIFF(at, '2026-01-01'), CAST(at AS DATETIME), \
             CAST('7' AS UNSIGNED), DATE_FORMAT(at, '%Y'), STR_TO_DATE('2026', '%Y') \
             FROM ev ORDER BY id",
        )
        .await
        .unwrap();
    let StatementResult::Rows { columns, .. } = &res else {
        panic!("{res:?}")
    };
    let types: Vec<&SqlType> = columns.iter().map(|c| &c.sql_type).collect();
    assert_eq!(types[0], &SqlType::Date);
    assert_eq!(types[1], &SqlType::BigInt { unsigned: false });
    assert_eq!(types[2], &SqlType::DateTime);
    assert_eq!(types[3], &SqlType::BigInt { unsigned: true });
    assert!(matches!(types[4], SqlType::Varchar { .. }));
    assert_eq!(types[5], &SqlType::Date);
    assert_eq!(
        super::display_rows(&res),
        [
            [
                "2026-01-31",
                "30",
                "2026-01-31 10:00:00",
                "7",
                "2026",
                "NULL"
            ],
            ["NULL", "NULL", "NULL", "7", "NULL", "NULL"],
        ]
    );
}

#[tokio::test]
async fn timestampdiff_counts_whole_units() {
    let f = fixture().await;
    let res = f
        .query(
            "SELECT TIMESTAMPDIFF(DAY, '2026-01-01', at), TIMESTAMPDIFF(MONTH, at, '2026-02-28'), \
             TIMESTAMPDIFF(sql_tsi_hour, '2026-01-31', at) FROM ev ORDER BY id",
        )
        .await
        .unwrap();
    assert_eq!(
        super::display_rows(&res),
        [["30", "0", "10"], ["NULL", "NULL", "NULL"]]
    );
}

#[tokio::test]
async fn unsupported_forms_are_errors() {
    let f = fixture().await;
    for sql in [
        "SELECT TIMESTAMPDIFF(FORTNIGHT, at, at) FROM ev",
        "SELECT TIMESTAMPDIFF('DAY', at, at) FROM ev",
        "SELECT STR_TO_DATE('2026', CONCAT('%', 'Y')) FROM ev",
        "SELECT DATE_FORMAT(at, '%U') FROM ev",
        "SELECT CAST(-1.5 AS UNSIGNED) FROM ev",
    ] {
        let err = f.query(sql).await.unwrap_err();
        assert!(
            matches!(
                err,
                SqlError::NotSupported(_) | SqlError::ValueOutOfRange(_)
            ),
            "{sql}: {err:?}"
        );
    }
}
