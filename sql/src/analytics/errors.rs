//! The one place DataFusion errors become [`SqlError`]s.
//!
//! Invariants: errors we raised ourselves inside DataFusion callbacks (wrapped as
//! `DataFusionError::External(SqlError)`) come back unchanged; memory-budget exhaustion becomes
//! 3170 naming the budget; unknown columns and functions get MySQL's 1054 / 1305; planner
//! limitations become 1235; anything else is 1105 with DataFusion's message, never `Internal`
//! unless DataFusion itself reports an internal error.

use crate::error::SqlError;
use datafusion::common::SchemaError;
use datafusion::error::DataFusionError;

/// Name of the setting that bounds an analytical query's memory (shown in error 3170).
pub const MEMORY_SETTING: &str = "orcinus_query_memory_limit";

/// Maps a DataFusion error; `memory_limit` is the query's budget in bytes.
pub fn from_datafusion(e: DataFusionError, memory_limit: usize) -> SqlError {
    match e {
        DataFusionError::External(inner) => match inner.downcast::<SqlError>() {
            Ok(sql) => *sql,
            Err(other) => match other.downcast::<DataFusionError>() {
                Ok(df) => from_datafusion(*df, memory_limit),
                Err(other) => SqlError::QueryFailed(other.to_string()),
            },
        },
        DataFusionError::Context(_, inner) | DataFusionError::Diagnostic(_, inner) => {
            from_datafusion(*inner, memory_limit)
        }
        DataFusionError::Shared(inner) => match std::sync::Arc::try_unwrap(inner) {
            Ok(df) => from_datafusion(df, memory_limit),
            Err(shared) => SqlError::QueryFailed(shared.to_string()),
        },
        DataFusionError::Collection(errs) => match errs.into_iter().next() {
            Some(first) => from_datafusion(first, memory_limit),
            None => SqlError::QueryFailed("unknown error".into()),
        },
        DataFusionError::ResourcesExhausted(detail) => SqlError::MemoryCapacityExceeded {
            bytes: memory_limit,
            setting: MEMORY_SETTING,
            detail,
        },
        DataFusionError::SQL(p, _) => SqlError::Parse(p.to_string()),
        DataFusionError::SchemaError(s, _) => match *s {
            SchemaError::FieldNotFound { field, .. } => SqlError::UnknownColumn {
                column: field.flat_name(),
                context: "field list".into(),
            },
            SchemaError::AmbiguousReference { field } => SqlError::AmbiguousColumn {
                column: field.flat_name(),
                context: "field list".into(),
            },
            other => SqlError::QueryFailed(other.to_string()),
        },
        DataFusionError::NotImplemented(m) => SqlError::NotSupported(m),
        DataFusionError::Plan(m) => plan_error(m),
        DataFusionError::Internal(m) => SqlError::Internal(format!("DataFusion: {m}")),
        DataFusionError::ArrowError(a, _) => match *a {
            datafusion::arrow::error::ArrowError::ArithmeticOverflow(m) => {
                SqlError::ValueOutOfRange(format!("BIGINT value is out of range ({m})"))
            }
            other => SqlError::QueryFailed(other.to_string()),
        },
        other => SqlError::QueryFailed(other.to_string()),
    }
}

/// Planner errors that have a MySQL counterpart.
fn plan_error(m: String) -> SqlError {
    // DataFusion: "Invalid function 'foo'.\nDid you mean 'bar'?"
    if let Some(rest) = m.strip_prefix("Invalid function '")
        && let Some(name) = rest.split('\'').next()
    {
        return SqlError::UnknownFunction(name.to_string());
    }
    SqlError::QueryFailed(m)
}
