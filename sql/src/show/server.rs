//! SHOW ENGINES, SHOW CHARACTER SET and SHOW COLLATION: what this server offers, in MySQL 8.0's
//! columns — projections of information_schema.ENGINES, CHARACTER_SETS and COLLATIONS.
//!
//! Invariants: SHOW ENGINES lists only the engine tables can be created with (CREATE TABLE
//! accepts ENGINE=InnoDB alone) and states honestly which transaction features it has; the
//! character sets and collations are those of `information_schema/charsets.rs`.

use super::listing::project;
use super::output::{ShowFilter, ShowOutput};
use crate::catalog::CatalogSnapshot;
use crate::error::SqlResult;
use crate::information_schema::SystemView;
use crate::information_schema::rows::view_rows;

/// SHOW [STORAGE] ENGINES.
pub fn show_engines(snap: &CatalogSnapshot) -> SqlResult<ShowOutput> {
    let view = SystemView::Engines;
    project(
        view,
        view_rows(view, snap)?,
        &[
            ("Engine", "ENGINE"),
            ("Support", "SUPPORT"),
            ("Comment", "COMMENT"),
            ("Transactions", "TRANSACTIONS"),
            ("XA", "XA"),
            ("Savepoints", "SAVEPOINTS"),
        ],
    )
}

/// SHOW {CHARACTER SET | CHARSET} [LIKE | WHERE].
pub fn show_charsets(
    snap: &CatalogSnapshot,
    filter: Option<ShowFilter<'_>>,
) -> SqlResult<ShowOutput> {
    let view = SystemView::CharacterSets;
    project(
        view,
        view_rows(view, snap)?,
        &[
            ("Charset", "CHARACTER_SET_NAME"),
            ("Description", "DESCRIPTION"),
            ("Default collation", "DEFAULT_COLLATE_NAME"),
            ("Maxlen", "MAXLEN"),
        ],
    )?
    .filter(filter, false)
}

/// SHOW COLLATION [LIKE | WHERE].
pub fn show_collations(
    snap: &CatalogSnapshot,
    filter: Option<ShowFilter<'_>>,
) -> SqlResult<ShowOutput> {
    let view = SystemView::Collations;
    project(
        view,
        view_rows(view, snap)?,
        &[
            ("Collation", "COLLATION_NAME"),
            ("Charset", "CHARACTER_SET_NAME"),
            ("Id", "ID"),
            ("Default", "IS_DEFAULT"),
            ("Compiled", "IS_COMPILED"),
            ("Sortlen", "SORTLEN"),
            ("Pad_attribute", "PAD_ATTRIBUTE"),
        ],
    )?
    .filter(filter, false)
}
