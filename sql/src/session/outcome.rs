//! What executing a statement produces, and the session state the protocol reports with it.
//!
//! Invariants: a [`ResultSet`]'s rows each have exactly one value per column (the protocol
//! checks and reports a mismatch as an internal error instead of sending a corrupt packet);
//! [`SessionStatus`] is read after every statement, so status flags sent to the client always
//! describe the state the statement left behind.

use super::column::ColumnDef;
use super::value::Value;

/// Rows returned by a statement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResultSet {
    /// Column metadata, one per value in each row.
    pub columns: Vec<ColumnDef>,
    /// The rows.
    pub rows: Vec<Vec<Value>>,
    /// Number of warnings the statement raised.
    pub warnings: u16,
}

/// Summary of a statement that returns no rows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OkSummary {
    /// Rows inserted, updated or deleted.
    pub affected_rows: u64,
    /// The AUTO_INCREMENT value the statement generated, 0 if none.
    pub last_insert_id: u64,
    /// Number of warnings the statement raised.
    pub warnings: u16,
    /// Human-readable info (`Rows matched: 1  Changed: 1  Warnings: 0`), may be empty.
    pub info: String,
}

/// The result of one statement.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryOutcome {
    /// A statement that returns rows.
    Rows(ResultSet),
    /// A statement that returns no rows.
    Done(OkSummary),
}

/// Session state that the protocol reports in status flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionStatus {
    /// `@@autocommit` is on.
    pub autocommit: bool,
    /// An explicit or implicit transaction is open.
    pub in_transaction: bool,
}

/// One statement of a (possibly multi-statement) query, executed, with the state after it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutedStatement {
    /// What the statement returned.
    pub outcome: QueryOutcome,
    /// Session state right after the statement.
    pub status: SessionStatus,
}

/// Identifier of a prepared statement, unique within its session.
pub type StatementId = u32;

/// A statement prepared by [`super::SqlSession::prepare`].
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedStatement {
    /// Session-unique id the client uses in later commands.
    pub id: StatementId,
    /// Number of `?` placeholders.
    pub param_count: u16,
    /// Columns the statement returns (empty for statements without rows: sysbench classifies
    /// reads by this count).
    pub columns: Vec<ColumnDef>,
}
