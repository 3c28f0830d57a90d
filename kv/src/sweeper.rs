//! Background garbage collection, in three resumable passes run by [`spawn_sweeper`]:
//! - **expired keys**: meta records whose expiry has passed are deleted (in a transaction that
//!   re-checks the expiry under the key lock, so a concurrent SET/PERSIST is never undone);
//! - **stale members**: `kv_data` records (and `kv_score` index entries, in a third pass with
//!   the same rule: their keys share the `db | key_len | key | incarnation` prefix) whose owning
//!   meta is missing, expired, of another type or of another incarnation are deleted. Such
//!   records are unreachable (readers only look under the live incarnation, and incarnations
//!   are never reused), so deleting them with an unlocked batch is safe.
//! - **expired hash fields** (HEXPIRE): found by the expired-keys pass from the meta header;
//!   each such hash is purged under its key lock (`cmd::hash_ttl::sweep_expired_fields`).
//!
//! Each pass examines at most a budget of records per round and resumes where it stopped.
//! The expired-keys pass is skipped while no record can carry a TTL: once a full cycle over
//! `kv_meta` found none and no commit has written one since (`Store::expiry_sweep_needed`), so
//! a store without TTLs is not rescanned ten times a second.

use crate::error::KvResult;
use crate::format::{KeyType, Meta, decode_data_key, meta_key};
use crate::kv_server::{KvServer, Stats};
use orcinus_storage::Keyspace;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Where a pass resumes (a raw key of its keyspace), `None` = from the start.
pub type SweepCursor = Option<Vec<u8>>;

/// Deletes up to `budget` examined expired keys; returns how many were deleted.
pub async fn sweep_expired(
    server: &KvServer,
    cursor: &mut SweepCursor,
    budget: usize,
) -> KvResult<usize> {
    Ok(sweep_expired_round(server, cursor, budget).await?.0)
}

/// One round of the expired-keys pass: how many keys were deleted, and whether any examined
/// record carries a TTL (a key expiry or hash field expiries).
async fn sweep_expired_round(
    server: &KvServer,
    cursor: &mut SweepCursor,
    budget: usize,
) -> KvResult<(usize, bool)> {
    let store = server.store();
    let now = crate::clock::now_ms();
    let snapshot = store.engine().snapshot();
    let lower = cursor.take();
    let lower_bound = lower.as_deref().map_or(Bound::Unbounded, Bound::Included);
    let mut expired = Vec::new();
    // Hashes with fields past their expiry (HEXPIRE): purged below, each in a transaction.
    let mut field_expired = Vec::new();
    let mut saw_ttl = false;
    let iter = snapshot.range(store.meta_keyspace(), lower_bound, Bound::Unbounded);
    for (examined, item) in iter.enumerate() {
        let (k, v) = item?;
        if examined >= budget {
            *cursor = Some(k.to_vec());
            break;
        }
        if !Meta::stored_needs_expiry_sweep(&v) {
            continue;
        }
        saw_ttl = true;
        let meta = Meta::decode(&v)?;
        if meta.is_expired(now) {
            expired.push(k.to_vec());
        } else if crate::cmd::hash_ttl::needs_field_sweep(&meta, now) {
            field_expired.push(k.to_vec());
        }
    }
    drop(snapshot);
    for raw in field_expired {
        if let Some((&db, key)) = raw.split_first() {
            crate::cmd::hash_ttl::sweep_expired_fields(server, db, key).await?;
        }
    }
    let mut deleted = 0;
    for raw in expired {
        let Some((&db, key)) = raw.split_first() else {
            continue;
        };
        let mut tx = store.begin(now);
        // `meta_for_update` hides expired keys, so read the raw record under the lock.
        if tx.meta_for_update(db, key).await?.is_none() && tx.raw_meta_exists(db, key)? {
            tx.delete_meta(db, key).await?;
            server.watches.touch([(db, key)]);
            tx.commit().await?;
            Stats::bump(&server.stats.expired_keys);
            deleted += 1;
        }
    }
    Ok((deleted, saw_ttl))
}

/// Deletes up to `budget` examined stale member records; returns how many were deleted.
pub async fn sweep_stale_members(
    server: &KvServer,
    cursor: &mut SweepCursor,
    budget: usize,
) -> KvResult<usize> {
    sweep_stale_in(server, server.store().data_keyspace(), cursor, budget).await
}

/// Deletes up to `budget` examined stale sorted-set score index entries (`kv_score`); returns
/// how many were deleted.
pub async fn sweep_stale_scores(
    server: &KvServer,
    cursor: &mut SweepCursor,
    budget: usize,
) -> KvResult<usize> {
    sweep_stale_in(server, server.store().score_keyspace(), cursor, budget).await
}

async fn sweep_stale_in(
    server: &KvServer,
    keyspace: &Keyspace,
    cursor: &mut SweepCursor,
    budget: usize,
) -> KvResult<usize> {
    let store = server.store();
    let now = crate::clock::now_ms();
    let snapshot = store.engine().snapshot();
    let lower = cursor.take();
    let lower_bound = lower.as_deref().map_or(Bound::Unbounded, Bound::Included);
    let mut batch = store.engine().batch();
    // (db, key, incarnation) of the last owner looked up, and whether it is live.
    let mut last_owner: Option<(u8, Vec<u8>, u64, bool)> = None;
    for (examined, item) in snapshot
        .range(keyspace, lower_bound, Bound::Unbounded)
        .enumerate()
    {
        let (k, _) = item?;
        if examined >= budget {
            *cursor = Some(k.to_vec());
            break;
        }
        let dk = decode_data_key(&k)?;
        let cached = last_owner
            .as_ref()
            .filter(|(db, key, inc, _)| *db == dk.db && key == dk.key && *inc == dk.incarnation)
            .map(|(_, _, _, live)| *live);
        let live = match cached {
            Some(live) => live,
            None => {
                let live = match snapshot.get(store.meta_keyspace(), &meta_key(dk.db, dk.key))? {
                    Some(raw) => {
                        let meta = Meta::decode(&raw)?;
                        meta.key_type != KeyType::String
                            && meta.incarnation == dk.incarnation
                            && !meta.is_expired(now)
                    }
                    None => false,
                };
                last_owner = Some((dk.db, dk.key.to_vec(), dk.incarnation, live));
                live
            }
        };
        if !live {
            batch.delete(keyspace, k.to_vec())?;
        }
    }
    let deleted = batch.len();
    batch.commit().await?;
    server
        .stats
        .swept_members
        .fetch_add(deleted as u64, Ordering::Relaxed);
    Ok(deleted)
}

/// Records examined per pass per round.
pub const SWEEP_BUDGET: usize = 1_000;

/// Runs the three passes every `interval` until the returned task is aborted. Errors are logged
/// and the pass restarts from the beginning next round.
pub fn spawn_sweeper(server: Arc<KvServer>, interval: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let (mut expired_cursor, mut member_cursor): (SweepCursor, SweepCursor) = (None, None);
        let mut score_cursor: SweepCursor = None;
        // The current expiry cycle: `Store::ttl_commits` when it began, and whether it has
        // seen a TTL-bearing record so far.
        let mut expiry_cycle = (0, false);
        loop {
            tokio::time::sleep(interval).await;
            let store = server.store();
            if store.expiry_sweep_needed() {
                if expired_cursor.is_none() {
                    expiry_cycle = (store.ttl_commits(), false);
                }
                match sweep_expired_round(&server, &mut expired_cursor, SWEEP_BUDGET).await {
                    Ok((_, saw_ttl)) => {
                        expiry_cycle.1 |= saw_ttl;
                        if expired_cursor.is_none() && !expiry_cycle.1 {
                            store.mark_ttl_clean(expiry_cycle.0);
                        }
                    }
                    Err(e) => {
                        tracing::warn!("kv expiry sweep failed: {e}");
                        expired_cursor = None;
                    }
                }
            }
            if let Err(e) = sweep_stale_members(&server, &mut member_cursor, SWEEP_BUDGET).await {
                tracing::warn!("kv member sweep failed: {e}");
                member_cursor = None;
            }
            if let Err(e) = sweep_stale_scores(&server, &mut score_cursor, SWEEP_BUDGET).await {
                tracing::warn!("kv score index sweep failed: {e}");
                score_cursor = None;
            }
        }
    })
}
