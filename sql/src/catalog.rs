//! The persistent catalog: databases, tables (columns, primary key, indexes, options) and the
//! never-reused id counter, stored in keyspace `sql_catalog` (layout in `sql/FORMAT.md`).
//!
//! Invariants:
//! - Readers take an immutable [`CatalogSnapshot`] (an `Arc`); DDL builds a new snapshot under the
//!   DDL lock, writes the changed records and the data deletions in ONE storage batch, and swaps
//!   the snapshot in only after the batch is durable. Every swap bumps `version`, which prepared
//!   statements compare to know when to re-bind.
//! - Table and index ids come from one counter and are never reused, so data left behind by a
//!   dropped table can never be read as a new table's rows.
//! - AUTO_INCREMENT counters live in memory (one `Arc<AtomicU64>` per table id, shared by every
//!   snapshot), initialised at open from the largest stored key.

use crate::codec::key;
use crate::error::{SqlError, SqlResult};
use crate::table_versions::TableVersions;
use crate::types::{Datum, SqlType};
use orcinus_storage::{Direction, Engine, Keyspace, KeyspaceOptions, WriteBatch};
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// Format version byte in front of every catalog record.
pub const CATALOG_FORMAT_V1: u8 = 1;
const NEXT_ID_KEY: &[u8] = b"n";
const DB_TAG: u8 = b'd';
const TABLE_TAG: u8 = b't';
const VIEW_TAG: u8 = b'v';
/// Name of the keyspace holding table rows and index entries.
pub const DATA_KEYSPACE: &str = "sql_data";
/// Name of the keyspace holding the catalog.
pub const CATALOG_KEYSPACE: &str = "sql_catalog";

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    /// The value used when an INSERT omits the column; `None` = no default (NOT NULL without
    /// DEFAULT: omitting it is error 1364). Nullable columns without DEFAULT get `Some(Null)`.
    pub default: Option<Datum>,
    pub auto_increment: bool,
    /// `DEFAULT CURRENT_TIMESTAMP` (DATETIME and TIMESTAMP columns only): an INSERT that omits
    /// the column stores the statement's time, and `default` is `None`. Absent in records
    /// written before it existed (false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default_now: bool,
}

impl ColumnDef {
    /// The value an INSERT that omits the column stores, for a statement that started at
    /// `now_micros` (microseconds since the epoch); `None`: no default (error 1364).
    #[must_use]
    pub fn default_at(&self, now_micros: i64) -> Option<Datum> {
        if self.default_now {
            Some(Datum::DateTime(now_micros))
        } else {
            self.default.clone()
        }
    }
}

/// A secondary index (KEY / INDEX / UNIQUE).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    pub id: u32,
    pub name: String,
    /// Positions of the indexed columns in the table's column list.
    pub columns: Vec<usize>,
    pub unique: bool,
}

/// Table options recorded from CREATE TABLE.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableOptions {
    pub engine: String,
    pub charset: Option<String>,
    pub collate: Option<String>,
    pub comment: Option<String>,
}

/// The persistent definition of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    pub id: u32,
    pub db: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Positions of the primary-key columns; empty = hidden `BIGINT UNSIGNED` row id.
    pub primary_key: Vec<usize>,
    pub indexes: Vec<IndexDef>,
    pub options: TableOptions,
}

impl TableDef {
    /// Position of column `name` (case-insensitive, as MySQL column names are).
    #[must_use]
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The column types in table order.
    #[must_use]
    pub fn types(&self) -> Vec<SqlType> {
        self.columns.iter().map(|c| c.ty).collect()
    }

    /// The AUTO_INCREMENT column, if any.
    #[must_use]
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }
}

/// The persistent definition of a view (run by the analytical executor).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    pub db: String,
    pub name: String,
    /// Column names given in `CREATE VIEW v (a, b)`; empty = the query's own names.
    pub columns: Vec<String>,
    /// The SELECT in MySQL dialect, table names qualified with their database.
    pub query: String,
}

/// A table as seen by the executor: its definition plus runtime state.
#[derive(Debug)]
pub struct Table {
    pub def: TableDef,
    pub types: Vec<SqlType>,
    /// Next AUTO_INCREMENT value (or next hidden row id for tables without a primary key).
    pub next_auto: Arc<AtomicU64>,
}

/// An immutable view of the whole catalog.
#[derive(Debug, Default, Clone)]
pub struct CatalogSnapshot {
    pub version: u64,
    pub dbs: BTreeMap<String, BTreeMap<String, Arc<Table>>>,
    /// Views per database.
    pub views: BTreeMap<String, BTreeMap<String, Arc<ViewDef>>>,
}

impl CatalogSnapshot {
    /// The view `db.name`, if there is one.
    #[must_use]
    pub fn view(&self, db: &str, name: &str) -> Option<Arc<ViewDef>> {
        self.views.get(db)?.get(name).cloned()
    }

    /// Looks a table up, with MySQL's errors for a missing database or table.
    pub fn table(&self, db: &str, name: &str) -> SqlResult<Arc<Table>> {
        let tables = self
            .dbs
            .get(db)
            .ok_or_else(|| SqlError::UnknownDatabase(db.to_string()))?;
        tables
            .get(name)
            .cloned()
            .ok_or_else(|| SqlError::NoSuchTable {
                db: db.to_string(),
                table: name.to_string(),
            })
    }
}

/// The catalog: current snapshot, DDL lock, persistence.
pub struct Catalog {
    engine: Engine,
    ks: Keyspace,
    data: Keyspace,
    current: RwLock<Arc<CatalogSnapshot>>,
    /// Serializes DDL (held across the durable commit of a change).
    pub ddl_lock: tokio::sync::Mutex<()>,
    counters: parking_lot::Mutex<HashMap<u32, Arc<AtomicU64>>>,
    /// Commit counters per table (column-cache coherence, `table_versions.rs`).
    versions: Arc<TableVersions>,
}

fn encode_record<T: Serialize>(value: &T) -> SqlResult<Vec<u8>> {
    let mut out = vec![CATALOG_FORMAT_V1];
    serde_json::to_writer(&mut out, value)
        .map_err(|e| SqlError::Internal(format!("catalog encode: {e}")))?;
    Ok(out)
}

fn decode_record<T: for<'a> Deserialize<'a>>(bytes: &[u8]) -> SqlResult<T> {
    match bytes.split_first() {
        Some((&CATALOG_FORMAT_V1, body)) => serde_json::from_slice(body)
            .map_err(|e| SqlError::Internal(format!("catalog record: {e}"))),
        Some((v, _)) => Err(SqlError::Internal(format!(
            "catalog record format version {v} is not supported by this build"
        ))),
        None => Err(SqlError::Internal("empty catalog record".into())),
    }
}

fn view_key(db: &str, view: &str) -> Vec<u8> {
    let mut k = vec![VIEW_TAG];
    k.extend_from_slice(db.as_bytes());
    k.push(0);
    k.extend_from_slice(view.as_bytes());
    k
}

fn db_key(db: &str) -> Vec<u8> {
    let mut k = vec![DB_TAG];
    k.extend_from_slice(db.as_bytes());
    k
}

fn table_key(db: &str, table: &str) -> Vec<u8> {
    let mut k = vec![TABLE_TAG];
    k.extend_from_slice(db.as_bytes());
    k.push(0);
    k.extend_from_slice(table.as_bytes());
    k
}

#[derive(Serialize, Deserialize)]
struct DatabaseRecord {
    name: String,
}

impl Catalog {
    /// Loads the catalog and initialises AUTO_INCREMENT counters from stored keys.
    pub fn open(engine: &Engine) -> SqlResult<Self> {
        let ks = engine.keyspace(CATALOG_KEYSPACE)?;
        // Rows are read mostly by primary key (OLTP point selects, the row fetch behind an
        // index hit): a point cache answers those without searching the LSM, and serves a
        // transaction only the version its snapshot sees (storage `point_cache.rs`). Short
        // primary-key ranges are probed key by key through it (`access.rs`), so consecutive
        // keys are cached together, in runs.
        let options = KeyspaceOptions {
            point_cache: true,
            point_cache_runs: true,
            ..KeyspaceOptions::default()
        };
        let data = engine.keyspace_with(DATA_KEYSPACE, options)?;
        let catalog = Self {
            engine: engine.clone(),
            ks,
            data,
            current: RwLock::new(Arc::new(CatalogSnapshot::default())),
            ddl_lock: tokio::sync::Mutex::new(()),
            counters: parking_lot::Mutex::new(HashMap::new()),
            versions: Arc::new(TableVersions::default()),
        };
        let snap = engine.snapshot();
        let mut state = CatalogSnapshot::default();
        for item in snap.prefix(&catalog.ks, &[DB_TAG]) {
            let (_, v) = item?;
            let rec: DatabaseRecord = decode_record(&v)?;
            state.dbs.insert(rec.name, BTreeMap::new());
        }
        for item in snap.prefix(&catalog.ks, &[TABLE_TAG]) {
            let (_, v) = item?;
            let def: TableDef = decode_record(&v)?;
            let table = catalog.table_from_def(def)?;
            state
                .dbs
                .entry(table.def.db.clone())
                .or_default()
                .insert(table.def.name.clone(), table);
        }
        for item in snap.prefix(&catalog.ks, &[VIEW_TAG]) {
            let (_, v) = item?;
            let def: ViewDef = decode_record(&v)?;
            state
                .views
                .entry(def.db.clone())
                .or_default()
                .insert(def.name.clone(), Arc::new(def));
        }
        *catalog.current.write() = Arc::new(state);
        Ok(catalog)
    }

    /// The data keyspace.
    #[must_use]
    pub fn data(&self) -> &Keyspace {
        &self.data
    }

    /// The current snapshot.
    #[must_use]
    pub fn snapshot(&self) -> Arc<CatalogSnapshot> {
        self.current.read().clone()
    }

    /// Builds the runtime table, reusing (or initialising from storage) its counter.
    pub fn table_from_def(&self, def: TableDef) -> SqlResult<Arc<Table>> {
        let existing = self.counters.lock().get(&def.id).cloned();
        let next_auto = match existing {
            Some(c) => c,
            None => {
                let c = Arc::new(AtomicU64::new(self.initial_counter(&def)?));
                self.counters.lock().insert(def.id, c.clone());
                c
            }
        };
        Ok(Arc::new(Table {
            types: def.types(),
            def,
            next_auto,
        }))
    }

    /// Largest stored value of the AUTO_INCREMENT column (or hidden row id) plus one.
    fn initial_counter(&self, def: &TableDef) -> SqlResult<u64> {
        let (prefix, ty) = if def.primary_key.is_empty() {
            (key::row_prefix(def.id), SqlType::BigInt { unsigned: true })
        } else {
            let Some(col) = def.auto_increment_column() else {
                return Ok(1);
            };
            let ty = def
                .columns
                .get(col)
                .map_or(SqlType::BigInt { unsigned: true }, |c| c.ty);
            if def.primary_key.first() == Some(&col) {
                (key::row_prefix(def.id), ty)
            } else if let Some(ix) = def.indexes.iter().find(|i| i.columns.first() == Some(&col)) {
                (key::index_prefix(ix.id), ty)
            } else {
                return Ok(1);
            }
        };
        let txn = self.engine.begin();
        let mut iter = txn.scan_prefix(&self.data, &prefix, Direction::Reverse);
        let Some(first) = iter.next() else {
            return Ok(1);
        };
        let (k, _) = first?;
        let mut rest = k.get(prefix.len()..).unwrap_or_default();
        let max = match key::decode(&mut rest, ty)? {
            Datum::Int(v) => u64::try_from(v).unwrap_or(0),
            Datum::UInt(v) => v,
            _ => 0,
        };
        Ok(max.saturating_add(1).max(1))
    }

    /// Allocates `n` fresh ids from the persistent counter, adding the counter update to `batch`.
    pub fn allocate_ids(&self, batch: &mut WriteBatch, n: u32) -> SqlResult<u32> {
        let current = match self.engine.get(&self.ks, NEXT_ID_KEY)? {
            Some(v) => match v.as_ref() {
                [CATALOG_FORMAT_V1, a, b, c, d] => u32::from_be_bytes([*a, *b, *c, *d]),
                _ => return Err(SqlError::Internal("bad id counter record".into())),
            },
            None => 1,
        };
        let next = current
            .checked_add(n)
            .ok_or_else(|| SqlError::Internal("table id space exhausted".into()))?;
        let mut value = vec![CATALOG_FORMAT_V1];
        value.extend_from_slice(&next.to_be_bytes());
        batch.put(&self.ks, NEXT_ID_KEY, value)?;
        Ok(current)
    }

    /// Adds the database record to `batch`.
    pub fn put_database(&self, batch: &mut WriteBatch, db: &str) -> SqlResult<()> {
        let rec = encode_record(&DatabaseRecord { name: db.into() })?;
        batch.put(&self.ks, db_key(db), rec)?;
        Ok(())
    }

    /// Adds the database record's deletion to `batch`.
    pub fn delete_database(&self, batch: &mut WriteBatch, db: &str) -> SqlResult<()> {
        batch.delete(&self.ks, db_key(db))?;
        Ok(())
    }

    /// Adds the table record to `batch`.
    pub fn put_table(&self, batch: &mut WriteBatch, def: &TableDef) -> SqlResult<()> {
        batch.put(&self.ks, table_key(&def.db, &def.name), encode_record(def)?)?;
        Ok(())
    }

    /// Adds the table record's deletion to `batch`.
    pub fn delete_table(&self, batch: &mut WriteBatch, def: &TableDef) -> SqlResult<()> {
        batch.delete(&self.ks, table_key(&def.db, &def.name))?;
        Ok(())
    }

    /// Adds the view record to `batch`.
    pub fn put_view(&self, batch: &mut WriteBatch, def: &ViewDef) -> SqlResult<()> {
        batch.put(&self.ks, view_key(&def.db, &def.name), encode_record(def)?)?;
        Ok(())
    }

    /// Adds the view record's deletion to `batch`.
    pub fn delete_view(&self, batch: &mut WriteBatch, db: &str, name: &str) -> SqlResult<()> {
        batch.delete(&self.ks, view_key(db, name))?;
        Ok(())
    }

    /// Adds deletions of every stored key under `prefix` (as of now) to `batch`.
    pub fn delete_prefix(&self, batch: &mut WriteBatch, prefix: &[u8]) -> SqlResult<()> {
        for item in self.engine.snapshot().prefix(&self.data, prefix) {
            let (k, _) = item?;
            batch.delete(&self.data, k.to_vec())?;
        }
        Ok(())
    }

    /// Adds deletions of all rows and index entries of `def` to `batch`.
    pub fn delete_table_data(&self, batch: &mut WriteBatch, def: &TableDef) -> SqlResult<()> {
        self.delete_prefix(batch, &key::row_prefix(def.id))?;
        for ix in &def.indexes {
            self.delete_prefix(batch, &key::index_prefix(ix.id))?;
        }
        Ok(())
    }

    /// Installs `next` as the current snapshot (call after its batch is durable).
    pub fn install(&self, mut next: CatalogSnapshot) {
        let mut cur = self.current.write();
        next.version = cur.version + 1;
        *cur = Arc::new(next);
    }

    /// Writes `def` with the rest of `batch`, commits durably, then installs a snapshot derived
    /// from `base` in which table `db.name` is `def`. The caller holds the DDL lock.
    pub async fn commit_table(
        &self,
        base: &CatalogSnapshot,
        mut batch: WriteBatch,
        db: String,
        name: String,
        def: TableDef,
    ) -> SqlResult<()> {
        self.put_table(&mut batch, &def)?;
        self.commit(batch).await?;
        let table = self.table_from_def(def)?;
        let mut next = base.clone();
        next.dbs.entry(db).or_default().insert(name, table);
        self.install(next);
        Ok(())
    }

    /// Forgets the counter of a dropped table id.
    pub fn forget_counter(&self, table_id: u32) {
        self.counters.lock().remove(&table_id);
    }

    /// Commits a DDL batch durably.
    pub async fn commit(&self, batch: WriteBatch) -> SqlResult<()> {
        batch.commit().await?;
        Ok(())
    }

    /// Commits a DDL batch that deletes the rows of `tables` durably (DROP, TRUNCATE), counting
    /// a new version of each.
    pub async fn commit_dropping(&self, batch: WriteBatch, tables: &[u32]) -> SqlResult<()> {
        self.versions.commit_batch(batch, tables).await
    }

    /// Commits a SQL transaction durably, counting a new version of every table whose rows it
    /// writes. Every commit of row writes goes through here (see `table_versions.rs`).
    pub async fn commit_txn(&self, txn: orcinus_storage::Transaction) -> SqlResult<()> {
        self.versions.commit(&self.data, txn).await
    }

    /// The per-table commit counters.
    #[must_use]
    pub fn versions(&self) -> &Arc<TableVersions> {
        &self.versions
    }

    /// A consistent storage snapshot and the table versions it sees exactly (see
    /// `table_versions.rs`).
    #[must_use]
    pub fn versioned_snapshot(
        &self,
    ) -> (
        orcinus_storage::Snapshot,
        crate::table_versions::SnapshotVersions,
    ) {
        self.versions.snapshot(&self.engine)
    }

    /// A consistent storage snapshot (for DDL that reads data).
    #[must_use]
    pub fn engine_snapshot(&self) -> orcinus_storage::Snapshot {
        self.engine.snapshot()
    }

    /// A new batch.
    #[must_use]
    pub fn batch(&self) -> WriteBatch {
        self.engine.batch()
    }
}
