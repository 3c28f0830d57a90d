//! Engine-level tests: reopen after every mutating operation, transactions (isolation, deadlock,
//! lock-wait timeout, delete-then-insert), a model-based property test against a BTreeMap, and
//! the point cache against the same model (old snapshots, eviction, batches, reopen).

mod large_values;
mod model;
mod point_cache;
mod reopen;
mod transactions;

use crate::{Engine, StorageConfig};
use tempfile::TempDir;

pub(crate) fn open_temp() -> (TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().join("db"))).unwrap();
    (dir, engine)
}

/// Shuts down and reopens; the caller must have dropped its `Keyspace` handles (they pin the LSM).
pub(crate) fn reopen(dir: &TempDir, engine: Engine) -> Engine {
    engine.shutdown().unwrap();
    drop(engine);
    Engine::open(StorageConfig::for_test(dir.path().join("db"))).unwrap()
}

pub(crate) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
