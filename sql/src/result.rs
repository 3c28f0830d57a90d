//! What a statement returns to the protocol layer: a result set with column metadata, or an
//! affected-rows summary (the OK packet).

use crate::types::{Datum, SqlType};

/// Metadata of one result column (what a MySQL column-definition packet needs).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputColumn {
    /// Column name as shown to the client (alias or expression text).
    pub name: String,
    /// Underlying column name ("" for expressions).
    pub org_name: String,
    /// Table name or alias ("" for expressions).
    pub table: String,
    /// Database name ("" for expressions).
    pub db: String,
    /// SQL type of the values.
    pub sql_type: SqlType,
    /// True if the column may hold NULL.
    pub nullable: bool,
}

/// The outcome of one successful statement.
#[derive(Debug, Clone, PartialEq)]
pub enum StatementResult {
    /// A result set.
    Rows {
        columns: Vec<OutputColumn>,
        rows: Vec<Vec<Datum>>,
    },
    /// A statement without a result set.
    Affected {
        affected_rows: u64,
        last_insert_id: u64,
        /// Info string of the OK packet (e.g. "Rows matched: 1  Changed: 1  Warnings: 0").
        info: Option<String>,
    },
}

impl StatementResult {
    /// An OK with `n` affected rows.
    #[must_use]
    pub fn affected(n: u64) -> Self {
        Self::Affected {
            affected_rows: n,
            last_insert_id: 0,
            info: None,
        }
    }
}
