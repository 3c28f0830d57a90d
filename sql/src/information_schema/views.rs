//! The columns of the information_schema views this server computes (SCHEMATA, TABLES, COLUMNS,
//! STATISTICS, TABLE_CONSTRAINTS, KEY_COLUMN_USAGE, CHARACTER_SETS, COLLATIONS, ENGINES,
//! PROCESSLIST): names, order, types and nullability as MySQL 8.0 defines them, and the
//! [`TableDef`] each view is bound as, so queries over a view reuse the SELECT binder.
//!
//! Invariant: a view's rows (built in `rows.rs`) have exactly the columns listed here, in order.
//! Column names are upper case, as MySQL 8.0 reports them.

use crate::catalog::{ColumnDef, TableDef, TableOptions};
use crate::types::SqlType;

/// Name of the virtual database.
pub const INFORMATION_SCHEMA: &str = "information_schema";

/// The character set information_schema reports for its own text columns.
pub const VIEW_CHARSET: &str = "utf8mb3";

/// One column of a view.
#[derive(Debug, Clone, Copy)]
pub struct ViewColumn {
    pub name: &'static str,
    pub ty: SqlType,
    pub nullable: bool,
}

const NAME: SqlType = SqlType::Varchar { len: 64 };
const BIGU: SqlType = SqlType::BigInt { unsigned: true };
const BIG: SqlType = SqlType::BigInt { unsigned: false };
const INTU: SqlType = SqlType::Int { unsigned: true };

const fn c(name: &'static str, ty: SqlType, nullable: bool) -> ViewColumn {
    ViewColumn { name, ty, nullable }
}

const fn varchar(len: u32) -> SqlType {
    SqlType::Varchar { len }
}

/// Rows come from the server's sessions, not the catalog (see `query::execute_query_with`).
const PROCESSLIST: &[ViewColumn] = &[
    c("ID", BIGU, false),
    c("USER", varchar(32), false),
    c("HOST", varchar(261), false),
    c("DB", NAME, true),
    c("COMMAND", varchar(16), false),
    c("TIME", SqlType::Int { unsigned: false }, false),
    c("STATE", NAME, true),
    c("INFO", SqlType::Text, true),
];

const SCHEMATA: &[ViewColumn] = &[
    c("CATALOG_NAME", NAME, false),
    c("SCHEMA_NAME", NAME, false),
    c("DEFAULT_CHARACTER_SET_NAME", NAME, false),
    c("DEFAULT_COLLATION_NAME", NAME, false),
    c("SQL_PATH", varchar(0), true),
    c("DEFAULT_ENCRYPTION", varchar(3), false),
];

const TABLES: &[ViewColumn] = &[
    c("TABLE_CATALOG", NAME, false),
    c("TABLE_SCHEMA", NAME, false),
    c("TABLE_NAME", NAME, false),
    c("TABLE_TYPE", varchar(11), false),
    c("ENGINE", NAME, true),
    c("VERSION", SqlType::Int { unsigned: false }, true),
    c("ROW_FORMAT", varchar(10), true),
    c("TABLE_ROWS", BIGU, true),
    c("AVG_ROW_LENGTH", BIGU, true),
    c("DATA_LENGTH", BIGU, true),
    c("MAX_DATA_LENGTH", BIGU, true),
    c("INDEX_LENGTH", BIGU, true),
    c("DATA_FREE", BIGU, true),
    c("AUTO_INCREMENT", BIGU, true),
    c("CREATE_TIME", SqlType::Timestamp, true),
    c("UPDATE_TIME", SqlType::DateTime, true),
    c("CHECK_TIME", SqlType::DateTime, true),
    c("TABLE_COLLATION", NAME, true),
    c("CHECKSUM", BIG, true),
    c("CREATE_OPTIONS", varchar(256), true),
    c("TABLE_COMMENT", SqlType::Text, true),
];

const COLUMNS: &[ViewColumn] = &[
    c("TABLE_CATALOG", NAME, false),
    c("TABLE_SCHEMA", NAME, false),
    c("TABLE_NAME", NAME, false),
    c("COLUMN_NAME", NAME, true),
    c("ORDINAL_POSITION", INTU, false),
    c("COLUMN_DEFAULT", SqlType::Text, true),
    c("IS_NULLABLE", varchar(3), false),
    c("DATA_TYPE", SqlType::Text, true),
    c("CHARACTER_MAXIMUM_LENGTH", BIG, true),
    c("CHARACTER_OCTET_LENGTH", BIG, true),
    c("NUMERIC_PRECISION", BIGU, true),
    c("NUMERIC_SCALE", BIGU, true),
    c("DATETIME_PRECISION", INTU, true),
    c("CHARACTER_SET_NAME", NAME, true),
    c("COLLATION_NAME", NAME, true),
    c("COLUMN_TYPE", SqlType::Text, false),
    c("COLUMN_KEY", varchar(3), false),
    c("EXTRA", varchar(256), true),
    c("PRIVILEGES", varchar(154), true),
    c("COLUMN_COMMENT", SqlType::Text, false),
    c("GENERATION_EXPRESSION", SqlType::Text, false),
    c("SRS_ID", INTU, true),
];

const STATISTICS: &[ViewColumn] = &[
    c("TABLE_CATALOG", NAME, false),
    c("TABLE_SCHEMA", NAME, false),
    c("TABLE_NAME", NAME, false),
    c("NON_UNIQUE", SqlType::Int { unsigned: false }, false),
    c("INDEX_SCHEMA", NAME, false),
    c("INDEX_NAME", NAME, true),
    c("SEQ_IN_INDEX", INTU, false),
    c("COLUMN_NAME", NAME, true),
    c("COLLATION", varchar(1), true),
    c("CARDINALITY", BIG, true),
    c("SUB_PART", BIG, true),
    c("PACKED", varchar(0), true),
    c("NULLABLE", varchar(3), false),
    c("INDEX_TYPE", varchar(11), false),
    c("COMMENT", varchar(8), false),
    c("INDEX_COMMENT", varchar(2048), false),
    c("IS_VISIBLE", varchar(3), false),
    c("EXPRESSION", SqlType::Text, true),
];

const CHARACTER_SETS: &[ViewColumn] = &[
    c("CHARACTER_SET_NAME", NAME, false),
    c("DEFAULT_COLLATE_NAME", NAME, false),
    c("DESCRIPTION", varchar(2048), false),
    c("MAXLEN", INTU, false),
];

const COLLATIONS: &[ViewColumn] = &[
    c("COLLATION_NAME", NAME, false),
    c("CHARACTER_SET_NAME", NAME, false),
    c("ID", BIGU, false),
    c("IS_DEFAULT", varchar(3), false),
    c("IS_COMPILED", varchar(3), false),
    c("SORTLEN", INTU, false),
    c("PAD_ATTRIBUTE", varchar(9), false),
];

const ENGINES: &[ViewColumn] = &[
    c("ENGINE", NAME, false),
    c("SUPPORT", varchar(8), false),
    c("COMMENT", varchar(80), false),
    c("TRANSACTIONS", varchar(3), true),
    c("XA", varchar(3), true),
    c("SAVEPOINTS", varchar(3), true),
];

const TABLE_CONSTRAINTS: &[ViewColumn] = &[
    c("CONSTRAINT_CATALOG", NAME, false),
    c("CONSTRAINT_SCHEMA", NAME, false),
    c("CONSTRAINT_NAME", NAME, true),
    c("TABLE_SCHEMA", NAME, false),
    c("TABLE_NAME", NAME, false),
    c("CONSTRAINT_TYPE", varchar(11), false),
    c("ENFORCED", varchar(3), false),
];

const KEY_COLUMN_USAGE: &[ViewColumn] = &[
    c("CONSTRAINT_CATALOG", NAME, false),
    c("CONSTRAINT_SCHEMA", NAME, false),
    c("CONSTRAINT_NAME", NAME, true),
    c("TABLE_CATALOG", NAME, false),
    c("TABLE_SCHEMA", NAME, false),
    c("TABLE_NAME", NAME, false),
    c("COLUMN_NAME", NAME, true),
    c("ORDINAL_POSITION", INTU, false),
    c("POSITION_IN_UNIQUE_CONSTRAINT", INTU, true),
    c("REFERENCED_TABLE_SCHEMA", NAME, true),
    c("REFERENCED_TABLE_NAME", NAME, true),
    c("REFERENCED_COLUMN_NAME", NAME, true),
];

/// A view of information_schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemView {
    Schemata,
    Tables,
    Columns,
    Statistics,
    CharacterSets,
    Collations,
    Engines,
    TableConstraints,
    KeyColumnUsage,
    Processlist,
}

impl SystemView {
    /// Every view, in name order.
    pub const ALL: [Self; 10] = [
        Self::CharacterSets,
        Self::Collations,
        Self::Columns,
        Self::Engines,
        Self::KeyColumnUsage,
        Self::Processlist,
        Self::Schemata,
        Self::Statistics,
        Self::TableConstraints,
        Self::Tables,
    ];

    /// The view's name as MySQL spells it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Schemata => "SCHEMATA",
            Self::Tables => "TABLES",
            Self::Columns => "COLUMNS",
            Self::Statistics => "STATISTICS",
            Self::CharacterSets => "CHARACTER_SETS",
            Self::Collations => "COLLATIONS",
            Self::Engines => "ENGINES",
            Self::TableConstraints => "TABLE_CONSTRAINTS",
            Self::KeyColumnUsage => "KEY_COLUMN_USAGE",
            Self::Processlist => "PROCESSLIST",
        }
    }

    /// Finds a view by name, case-insensitively as MySQL does for information_schema.
    #[must_use]
    pub fn lookup(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(name))
    }

    /// The view's columns in order.
    #[must_use]
    pub fn columns(self) -> &'static [ViewColumn] {
        match self {
            Self::Schemata => SCHEMATA,
            Self::Tables => TABLES,
            Self::Columns => COLUMNS,
            Self::Statistics => STATISTICS,
            Self::CharacterSets => CHARACTER_SETS,
            Self::Collations => COLLATIONS,
            Self::Engines => ENGINES,
            Self::TableConstraints => TABLE_CONSTRAINTS,
            Self::KeyColumnUsage => KEY_COLUMN_USAGE,
            Self::Processlist => PROCESSLIST,
        }
    }

    /// The view as a table definition in database `db` under name `name` (the spellings a query
    /// used, so the binder's qualifiers match the query text).
    #[must_use]
    pub fn table_def_as(self, db: &str, name: &str) -> TableDef {
        TableDef {
            id: 0,
            db: db.to_string(),
            name: name.to_string(),
            columns: self
                .columns()
                .iter()
                .map(|col| ColumnDef {
                    name: col.name.to_string(),
                    ty: col.ty,
                    nullable: col.nullable,
                    default: None,
                    auto_increment: false,
                    default_now: false,
                })
                .collect(),
            primary_key: Vec::new(),
            indexes: Vec::new(),
            options: TableOptions {
                engine: String::new(),
                charset: Some(VIEW_CHARSET.to_string()),
                collate: None,
                comment: None,
            },
        }
    }

    /// The view as information_schema itself describes it.
    #[must_use]
    pub fn table_def(self) -> TableDef {
        self.table_def_as(INFORMATION_SCHEMA, self.name())
    }
}

/// True if `db` names information_schema (case-insensitive, as MySQL treats it).
#[must_use]
pub fn is_information_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case(INFORMATION_SCHEMA)
}
