//! [`ColumnCache`]: decoded Arrow arrays per (table, column), shared by all analytical queries,
//! so a table is read from storage and decoded once and later scans slice arrays in memory.
//!
//! A cached table is a list of chunks of up to `batch_size` rows in primary-key order, each with
//! its first and last row key, and for each cached column one array per chunk. A scan restricted
//! to a key range takes the chunks that overlap it (DataFusion still applies the filter), so
//! key-range pruning works on cached data at chunk granularity.
//!
//! Coherence (exact, under MVCC): an entry records the table version it was built from
//! ([`crate::table_versions`]) and the catalog's `Table` it was decoded with. A query uses it
//! only when its storage snapshot sees exactly that version of the table and its catalog holds
//! that same `Table` (any DDL on the table makes a new one). Queries inside a transaction
//! never use it (their snapshot is older than the query, and may carry their own writes); nor
//! does a query whose snapshot was taken while a commit to the table was being applied.
//!
//! Filling: a full-table scan (no primary-key restriction, no LIMIT) that misses decodes the
//! columns it needs plus every compact column (numbers, dates, strings of at most 32
//! characters) not cached yet, in one pass, in parallel over primary-key ranges, and inserts
//! them (one build at a time). Other scans that miss read storage as before.
//!
//! Memory: entries are bounded by `budget` bytes (Arrow buffer sizes); inserting evicts whole
//! tables, least recently used first; a table larger than the budget is used by the query
//! that decoded it and not kept.

use super::provider::RowReader;
use super::scan::{DecodedChunk, KeyRange, decode_chunk};
use crate::catalog::Table;
use crate::types::SqlType;
use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::error::{DataFusionError, Result as DfResult};
use orcinus_storage::Keyspace;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One chunk's primary-key bounds (inclusive).
#[derive(Debug, Clone)]
pub struct ChunkBounds {
    pub first_key: Vec<u8>,
    pub last_key: Vec<u8>,
    pub rows: usize,
}

impl ChunkBounds {
    /// True if some key of the chunk may lie in `range`.
    #[must_use]
    pub fn overlaps(&self, range: &KeyRange) -> bool {
        let (lower, upper) = range.bounds();
        let above_lower = match lower {
            Bound::Included(l) => self.last_key.as_slice() >= l,
            Bound::Excluded(l) => self.last_key.as_slice() > l,
            Bound::Unbounded => true,
        };
        let below_upper = match upper {
            Bound::Included(u) => self.first_key.as_slice() <= u,
            Bound::Excluded(u) => self.first_key.as_slice() < u,
            Bound::Unbounded => true,
        };
        above_lower && below_upper
    }
}

/// The cached columns of one table at one version. Immutable; adding columns makes a new one.
#[derive(Debug)]
pub struct CachedTable {
    table: Arc<Table>,
    version: u64,
    chunks: Arc<[ChunkBounds]>,
    /// Column position → one array per chunk.
    columns: HashMap<usize, Arc<[ArrayRef]>>,
    bytes: usize,
    last_used: AtomicU64,
}

impl CachedTable {
    /// The chunks, in key order.
    #[must_use]
    pub fn chunks(&self) -> &[ChunkBounds] {
        &self.chunks
    }

    /// The arrays of column `col`, one per chunk, if cached.
    #[must_use]
    pub fn column(&self, col: usize) -> Option<&Arc<[ArrayRef]>> {
        self.columns.get(&col)
    }

    fn has_all(&self, cols: &[usize]) -> bool {
        cols.iter().all(|c| self.columns.contains_key(c))
    }
}

/// Cache counters (for tests and diagnostics).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Scans served from the cache.
    pub hits: u64,
    /// Builds (storage passes that decoded columns into the cache).
    pub builds: u64,
    /// Tables evicted to stay within the budget.
    pub evictions: u64,
    /// Bytes held now.
    pub bytes: usize,
    /// Tables held now.
    pub tables: usize,
}

#[derive(Default)]
struct State {
    tables: HashMap<u32, Arc<CachedTable>>,
    bytes: usize,
}

/// The shared column cache of an [`super::AnalyticsEngine`].
pub struct ColumnCache {
    budget: usize,
    state: Mutex<State>,
    /// One build at a time: a second query missing the same table waits and then hits.
    build: tokio::sync::Mutex<()>,
    clock: AtomicU64,
    hits: AtomicU64,
    builds: AtomicU64,
    evictions: AtomicU64,
}

impl std::fmt::Debug for ColumnCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ColumnCache(budget={}, {:?})", self.budget, self.stats())
    }
}

/// What a scan needs to use the cache: the cache and the exact version of the table its
/// snapshot sees.
#[derive(Clone)]
pub struct CacheUse {
    pub cache: Arc<ColumnCache>,
    pub version: u64,
}

/// Longest declared string length decoded on a miss without being asked for.
const SHORT_STRING: u32 = 32;

/// True for the columns a build decodes even when the query does not need them: numbers,
/// dates and short strings (codes, names, flags), which later queries are likely to need and
/// which cost little memory; long text waits until a query asks for it.
fn is_compact(ty: SqlType) -> bool {
    match ty {
        SqlType::Char { len } | SqlType::Varchar { len } => len <= SHORT_STRING,
        SqlType::Text | SqlType::Blob => false,
        _ => true,
    }
}

impl ColumnCache {
    /// An empty cache holding at most `budget` bytes (0 disables it).
    #[must_use]
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            state: Mutex::new(State::default()),
            build: tokio::sync::Mutex::new(()),
            clock: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            builds: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        let state = self.state.lock();
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            builds: self.builds.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            bytes: state.bytes,
            tables: state.tables.len(),
        }
    }

    /// The entry of `table` valid for a reader that sees `version` of it, if it holds `cols`.
    fn lookup(&self, table: &Arc<Table>, version: u64, cols: &[usize]) -> Option<Arc<CachedTable>> {
        let state = self.state.lock();
        let entry = state.tables.get(&table.def.id)?;
        (entry.version == version && Arc::ptr_eq(&entry.table, table) && entry.has_all(cols)).then(
            || {
                entry.last_used.store(
                    self.clock.fetch_add(1, Ordering::Relaxed),
                    Ordering::Relaxed,
                );
                entry.clone()
            },
        )
    }

    /// The entry to extend (same version and `Table`), if any.
    fn base(&self, table: &Arc<Table>, version: u64) -> Option<Arc<CachedTable>> {
        let state = self.state.lock();
        let entry = state.tables.get(&table.def.id)?;
        (entry.version == version && Arc::ptr_eq(&entry.table, table)).then(|| entry.clone())
    }

    /// Counts a scan served from the cache.
    pub fn note_hit(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
    }

    /// The cached columns `cols` of `table` at `version`: from the cache, or decoded now when
    /// `may_build` (a full-table scan) — `None` when neither (the caller reads storage).
    pub async fn get_or_build(
        &self,
        table: &Arc<Table>,
        version: u64,
        cols: &[usize],
        may_build: bool,
        source: impl FnOnce() -> DfResult<BuildSource> + Send,
    ) -> DfResult<Option<Arc<CachedTable>>> {
        if self.budget == 0 {
            return Ok(None);
        }
        if let Some(hit) = self.lookup(table, version, cols) {
            return Ok(Some(hit));
        }
        if !may_build {
            return Ok(None);
        }
        let _one_build = self.build.lock().await;
        if let Some(hit) = self.lookup(table, version, cols) {
            return Ok(Some(hit));
        }
        let base = self.base(table, version);
        let mut wanted: Vec<usize> = table
            .types
            .iter()
            .enumerate()
            .filter(|(c, ty)| cols.contains(c) || is_compact(**ty))
            .map(|(c, _)| c)
            .filter(|c| base.as_ref().is_none_or(|b| !b.columns.contains_key(c)))
            .collect();
        wanted.sort_unstable();
        let chunks = base.as_ref().map(|b| b.chunks.clone());
        let built = build(table, &wanted, chunks, source()?).await?;
        self.builds.fetch_add(1, Ordering::Relaxed);
        let mut columns = base.map(|b| b.columns.clone()).unwrap_or_default();
        for (c, arrays) in wanted.iter().zip(built.columns) {
            columns.insert(*c, arrays);
        }
        let bytes = columns
            .values()
            .flat_map(|arrays| arrays.iter())
            .map(|a| a.get_array_memory_size())
            .sum::<usize>()
            + built
                .chunks
                .iter()
                .map(|c| c.first_key.len() + c.last_key.len())
                .sum::<usize>();
        let entry = Arc::new(CachedTable {
            table: table.clone(),
            version,
            chunks: built.chunks,
            columns,
            bytes,
            last_used: AtomicU64::new(self.clock.fetch_add(1, Ordering::Relaxed)),
        });
        self.insert(entry.clone());
        Ok(Some(entry))
    }

    /// Replaces the table's entry unless that one is of a newer version (an older snapshot's
    /// build serves only its own query), then evicts least recently used tables over the
    /// budget (a new entry larger than the whole budget is not kept).
    fn insert(&self, entry: Arc<CachedTable>) {
        let mut state = self.state.lock();
        let id = entry.table.def.id;
        if state
            .tables
            .get(&id)
            .is_some_and(|t| t.version > entry.version)
        {
            return;
        }
        if let Some(old) = state.tables.remove(&id) {
            state.bytes -= old.bytes;
        }
        if entry.bytes > self.budget {
            return;
        }
        while state.bytes + entry.bytes > self.budget {
            let Some(victim) = state
                .tables
                .iter()
                .min_by_key(|(_, t)| t.last_used.load(Ordering::Relaxed))
                .map(|(id, _)| *id)
            else {
                break;
            };
            if let Some(old) = state.tables.remove(&victim) {
                state.bytes -= old.bytes;
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
        state.bytes += entry.bytes;
        state.tables.insert(id, entry);
    }
}

/// Where a build reads rows: the query's reader, and the key ranges to read in parallel.
pub struct BuildSource {
    pub reader: Arc<dyn RowReader>,
    pub data: Keyspace,
    /// Full-table partitions (key order) for a first build.
    pub partitions: Vec<KeyRange>,
    pub batch_size: usize,
}

struct Built {
    chunks: Arc<[ChunkBounds]>,
    /// One entry per wanted column: its arrays, one per chunk.
    columns: Vec<Arc<[ArrayRef]>>,
}

fn ext(e: crate::SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Decodes `wanted` over the whole table: along `chunks` when extending an entry (each chunk
/// re-read by its key bounds, so the new arrays line up with the cached ones), else along the
/// source's partitions, each cut into chunks of `batch_size` rows.
async fn build(
    table: &Arc<Table>,
    wanted: &[usize],
    chunks: Option<Arc<[ChunkBounds]>>,
    source: BuildSource,
) -> DfResult<Built> {
    let tasks: Vec<Vec<KeyRange>> = match &chunks {
        Some(chunks) => {
            let groups = source.partitions.len().max(1);
            let per = chunks.len().div_ceil(groups).max(1);
            chunks
                .chunks(per)
                .map(|group| {
                    group
                        .iter()
                        .map(|c| {
                            let mut upper = c.last_key.clone();
                            upper.push(0);
                            KeyRange::table(table.def.id)
                                .with_bounds(c.first_key.clone(), Some(upper))
                        })
                        .collect()
                })
                .collect()
        }
        None => source.partitions.iter().map(|p| vec![p.clone()]).collect(),
    };
    let handles: Vec<_> = tasks
        .into_iter()
        .map(|ranges| {
            let table = table.clone();
            let wanted = wanted.to_vec();
            let reader = source.reader.clone();
            let data = source.data.clone();
            let batch_size = source.batch_size.max(1);
            let whole_ranges = chunks.is_some();
            tokio::task::spawn_blocking(move || {
                let mut out = Vec::new();
                for range in ranges {
                    let (lower, upper) = range.bounds();
                    let mut iter = reader.scan(&data, lower, upper);
                    // A chunk's range is decoded in one piece (it holds at most a batch).
                    let size = if whole_ranges { usize::MAX } else { batch_size };
                    while let Some(chunk) = decode_chunk(&mut iter, &table, &wanted, size, true)? {
                        out.push(chunk);
                    }
                }
                Ok::<Vec<DecodedChunk>, DataFusionError>(out)
            })
        })
        .collect();
    let mut decoded = Vec::new();
    for h in handles {
        let part = h.await.map_err(|e| {
            ext(crate::SqlError::Internal(format!(
                "column cache build: {e}"
            )))
        })??;
        decoded.extend(part);
    }
    let bounds: Arc<[ChunkBounds]> = match chunks {
        Some(chunks) => {
            let same = chunks.len() == decoded.len()
                && chunks.iter().zip(&decoded).all(|(c, d)| {
                    c.rows == d.rows && c.first_key == d.first_key && c.last_key == d.last_key
                });
            if !same {
                return Err(ext(crate::SqlError::Internal(
                    "column cache chunks changed under one table version".into(),
                )));
            }
            chunks
        }
        None => decoded
            .iter()
            .map(|d| ChunkBounds {
                first_key: d.first_key.clone(),
                last_key: d.last_key.clone(),
                rows: d.rows,
            })
            .collect(),
    };
    let mut columns: Vec<Vec<ArrayRef>> = vec![Vec::with_capacity(decoded.len()); wanted.len()];
    for d in decoded {
        for (col, array) in columns.iter_mut().zip(d.columns) {
            col.push(array);
        }
    }
    Ok(Built {
        chunks: bounds,
        columns: columns.into_iter().map(Arc::from).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(first: u8, last: u8) -> ChunkBounds {
        ChunkBounds {
            first_key: vec![b'r', 0, 0, 0, 1, first],
            last_key: vec![b'r', 0, 0, 0, 1, last],
            rows: 1,
        }
    }

    #[test]
    fn chunk_overlap_follows_the_key_range() {
        let mut r = KeyRange::table(1);
        r.lower = vec![b'r', 0, 0, 0, 1, 10];
        r.upper = Some(vec![b'r', 0, 0, 0, 1, 20]);
        assert!(!bounds(1, 9).overlaps(&r));
        assert!(bounds(1, 10).overlaps(&r));
        assert!(bounds(15, 16).overlaps(&r));
        assert!(bounds(19, 30).overlaps(&r));
        assert!(!bounds(20, 30).overlaps(&r));
        assert!(bounds(0, 255).overlaps(&KeyRange::table(1)));
    }
}
