use crate::{Database, KeyspaceCreateOptions, UserKey, UserValue};

#[test_log::test]
#[ignore = "flimsy because of the compaction check, probably race condition... run the compaction synchronously"]
fn keyspace_ingest() -> crate::Result<()> {
    let folder = tempfile::tempdir()?;

    let db = Database::builder(&folder).worker_threads(0).open()?;
    let items = db.keyspace("items", KeyspaceCreateOptions::default)?;

    {
        let mut ingest = items.start_ingestion()?;

        for (k, v) in [0u8, 1, 2, 3, 4, 5]
            .into_iter()
            .map(|i| (UserKey::new(&i.to_be_bytes()), UserValue::empty()))
        {
            ingest.write(k, v)?;
        }

        ingest.finish()?;
    };
    assert_eq!(6, items.len()?);
    assert_eq!(1, items.table_count());

    {
        let mut ingest = items.start_ingestion()?;

        for (k, v) in [1u8, 6, 7, 8, 9]
            .into_iter()
            .map(|i| (UserKey::new(&i.to_be_bytes()), UserValue::empty()))
        {
            ingest.write(k, v)?;
        }

        ingest.finish()?;
    }
    assert_eq!(10, items.len()?);
    assert_eq!(2, items.table_count());

    {
        let mut ingest = items.start_ingestion()?;

        for (k, v) in [10u8, 11, 12]
            .into_iter()
            .map(|i| (UserKey::new(&i.to_be_bytes()), UserValue::empty()))
        {
            ingest.write(k, v)?;
        }

        ingest.finish()?;
    }
    assert_eq!(13, items.len()?);
    assert_eq!(3, items.table_count());

    {
        let mut ingest = items.start_ingestion()?;

        for (k, v) in [13u8, 14]
            .into_iter()
            .map(|i| (UserKey::new(&i.to_be_bytes()), UserValue::empty()))
        {
            ingest.write(k, v)?;
        }

        ingest.finish()?;
    }
    assert_eq!(15, items.len()?);
    assert_eq!(4, items.table_count());

    while !db.worker_pool.sender.is_empty() {}
    assert_eq!(1, items.table_count());

    Ok(())
}

/// Orcinus patch: the memtable is rotated (and flushed) once it holds more entries than
/// `set_max_memtable_items`, long before its byte limit, through batches and single inserts;
/// without an entry limit the same writes stay in the active memtable.
#[test]
fn memtable_item_limit_rotates() -> crate::Result<()> {
    fn flushed_within(items: &crate::Keyspace, limit: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        while start.elapsed() < limit {
            if items.table_count() > 0 {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }
    let folder = tempfile::tempdir()?;
    let db = Database::builder(&folder).open()?;
    let opts = || KeyspaceCreateOptions::default().max_memtable_size(64 * 1_024 * 1_024);

    let unlimited = db.keyspace("unlimited", opts)?;
    for i in 0u32..1_000 {
        unlimited.insert(i.to_be_bytes(), "v")?;
    }
    assert!(!flushed_within(
        &unlimited,
        std::time::Duration::from_millis(300)
    ));

    let batched = db.keyspace("batched", opts)?;
    batched.set_max_memtable_items(100);
    for i in 0u32..99 {
        let mut batch = db.batch();
        batch.insert(&batched, i.to_be_bytes(), "v");
        batch.commit()?;
    }
    assert!(!flushed_within(
        &batched,
        std::time::Duration::from_millis(300)
    ));
    for i in 99u32..102 {
        let mut batch = db.batch();
        batch.insert(&batched, i.to_be_bytes(), "v");
        batch.commit()?;
    }
    assert!(flushed_within(&batched, std::time::Duration::from_secs(10)));
    assert_eq!(102, batched.len()?);

    let single = db.keyspace("single", opts)?;
    single.set_max_memtable_items(100);
    for i in 0u32..102 {
        single.insert(i.to_be_bytes(), "v")?;
    }
    assert!(flushed_within(&single, std::time::Duration::from_secs(10)));
    assert_eq!(102, single.len()?);
    Ok(())
}
