//! The catalog as DataFusion sees it for one query: one catalog (`def`, as MySQL's
//! information_schema names it) whose schemas are our databases, whose tables are
//! [`StorageTable`]s over the query's [`RowReader`].
//!
//! Invariants: table names resolve exactly as stored (case-sensitive, as MySQL on Linux with
//! `lower_case_table_names=0`); the dialect quotes every table name so the planner does not
//! lower-case it. A missing database or table is reported with MySQL's error (1049 / 1146), and
//! an unqualified name with no current database with 1046.

use super::column_cache::{CacheUse, ColumnCache};
use super::provider::{RowReader, StorageTable};
use crate::catalog::CatalogSnapshot;
use crate::error::SqlError;
use crate::table_versions::SnapshotVersions;
use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result as DfResult};
use orcinus_storage::Keyspace;
use std::fmt;
use std::sync::Arc;

/// Name of the one catalog.
pub const CATALOG_NAME: &str = "def";
/// Default schema used when the session has no current database; resolving a table in it fails
/// with 1046.
pub const NO_DATABASE: &str = "\u{0}no database";

/// Everything a query's tables are built from.
#[derive(Clone)]
pub struct QuerySource {
    pub catalog: Arc<CatalogSnapshot>,
    pub reader: Arc<dyn RowReader>,
    pub data: Keyspace,
    pub batch_size: usize,
    /// The column cache and the table versions the reader sees exactly (`None`: the query
    /// reads storage only, e.g. inside a transaction).
    pub cache: Option<(Arc<ColumnCache>, SnapshotVersions)>,
}

/// The `def` catalog.
#[derive(Clone)]
pub struct DatabaseCatalog(pub QuerySource);

impl fmt::Debug for DatabaseCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseCatalog(v{})", self.0.catalog.version)
    }
}

impl CatalogProvider for DatabaseCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.0.catalog.dbs.keys().cloned().collect()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        Some(Arc::new(DatabaseSchema {
            source: self.0.clone(),
            db: name.to_string(),
        }))
    }
}

/// One database.
pub struct DatabaseSchema {
    source: QuerySource,
    db: String,
}

impl fmt::Debug for DatabaseSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseSchema({})", self.db)
    }
}

fn ext(e: SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

#[async_trait]
impl SchemaProvider for DatabaseSchema {
    fn table_names(&self) -> Vec<String> {
        self.source
            .catalog
            .dbs
            .get(&self.db)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }

    async fn table(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        if self.db == NO_DATABASE {
            return Err(ext(SqlError::NoDatabaseSelected));
        }
        let table = self.source.catalog.table(&self.db, name).map_err(ext)?;
        let cache = self.source.cache.as_ref().and_then(|(cache, versions)| {
            versions.exact(table.def.id).map(|version| CacheUse {
                cache: cache.clone(),
                version,
            })
        });
        Ok(Some(Arc::new(StorageTable::new(
            table,
            self.source.reader.clone(),
            self.source.data.clone(),
            self.source.batch_size,
            cache,
        ))))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.source
            .catalog
            .dbs
            .get(&self.db)
            .is_some_and(|t| t.contains_key(name))
    }
}
