//! SHOW ENGINES, SHOW CHARACTER SET and SHOW COLLATION: what this server offers, in MySQL 8.0's
//! columns.
//!
//! Invariants: SHOW ENGINES lists only the engine tables can be created with (CREATE TABLE
//! accepts ENGINE=InnoDB alone) and states honestly which transaction features it has; the
//! character sets and collations are those of `information_schema/charsets.rs`.

use super::output::{ShowFilter, ShowOutput, column, name_column};
use crate::error::SqlResult;
use crate::information_schema::charsets::{CHARSETS, COLLATIONS};
use crate::information_schema::rows::text;
use crate::types::{Datum, SqlType};

/// SHOW [STORAGE] ENGINES.
#[must_use]
pub fn show_engines() -> ShowOutput {
    let mut out = ShowOutput::new(vec![
        name_column("Engine", false),
        column("Support", SqlType::Varchar { len: 8 }, false),
        column("Comment", SqlType::Varchar { len: 80 }, false),
        column("Transactions", SqlType::Varchar { len: 3 }, true),
        column("XA", SqlType::Varchar { len: 3 }, true),
        column("Savepoints", SqlType::Varchar { len: 3 }, true),
    ]);
    out.rows.push(vec![
        text("InnoDB"),
        text("DEFAULT"),
        text("Orcinus LSM storage: transactions, row-level locking"),
        text("YES"),
        text("NO"),
        text("NO"),
    ]);
    out
}

/// SHOW {CHARACTER SET | CHARSET} [LIKE | WHERE].
pub fn show_charsets(filter: Option<ShowFilter<'_>>) -> SqlResult<ShowOutput> {
    let mut out = ShowOutput::new(vec![
        name_column("Charset", false),
        column("Description", SqlType::Varchar { len: 2048 }, false),
        name_column("Default collation", false),
        column("Maxlen", SqlType::Int { unsigned: true }, false),
    ]);
    out.rows = CHARSETS
        .iter()
        .map(|c| {
            vec![
                text(c.name),
                text(c.description),
                text(c.default_collation),
                Datum::Int(i64::from(c.max_len)),
            ]
        })
        .collect();
    out.filter(filter, false)
}

/// SHOW COLLATION [LIKE | WHERE].
pub fn show_collations(filter: Option<ShowFilter<'_>>) -> SqlResult<ShowOutput> {
    let mut out = ShowOutput::new(vec![
        name_column("Collation", false),
        name_column("Charset", false),
        column("Id", SqlType::BigInt { unsigned: true }, false),
        column("Default", SqlType::Varchar { len: 3 }, false),
        column("Compiled", SqlType::Varchar { len: 3 }, false),
        column("Sortlen", SqlType::Int { unsigned: true }, false),
        column("Pad_attribute", SqlType::Varchar { len: 9 }, false),
    ]);
    out.rows = COLLATIONS
        .iter()
        .map(|c| {
            vec![
                text(c.name),
                text(c.charset),
                Datum::Int(i64::from(c.id)),
                text(if c.is_default { "Yes" } else { "" }),
                text("Yes"),
                Datum::Int(i64::from(c.sort_len)),
                text(c.pad_attribute),
            ]
        })
        .collect();
    out.filter(filter, false)
}
