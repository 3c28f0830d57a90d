//! Sorted sets against models and over time: a property test of ZADD / ZREM / ZRANGEBYSCORE /
//! ZPOPMIN (plus ZPOPMAX, ZRANK, ZRANGE by rank, ZCARD) against a BTreeMap model; sets, sorted sets and bitmaps survive
//! a shutdown and reopen of the engine; DEL of a big sorted set is O(1) and the sweeper later
//! removes both its members and its score index entries.

use crate::harness::*;
use orcinus_kv::sweeper::{sweep_stale_members, sweep_stale_scores};
use orcinus_kv::{KvConfig, KvServer, Reply};
use orcinus_storage::{Engine, StorageConfig};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Op {
    Add(Vec<(i8, usize)>),
    Rem(usize),
    RangeByScore(i8, i8, bool),
    PopMin(u8),
    PopMax(u8),
    Rank(usize),
    RangeByRank(i8, i8),
}

const MEMBERS: [&str; 6] = ["a", "b", "c", "dd", "e", "f"];

fn op() -> impl Strategy<Value = Op> {
    let member = 0..MEMBERS.len();
    prop_oneof![
        proptest::collection::vec((-4i8..5, member.clone()), 1..4).prop_map(Op::Add),
        member.clone().prop_map(Op::Rem),
        (-5i8..6, -5i8..6, any::<bool>()).prop_map(|(a, b, x)| Op::RangeByScore(a, b, x)),
        (0u8..4).prop_map(Op::PopMin),
        (0u8..3).prop_map(Op::PopMax),
        member.prop_map(Op::Rank),
        (-7i8..7, -7i8..7).prop_map(|(a, b)| Op::RangeByRank(a, b)),
    ]
}

/// The model's entries in Redis order: by score, then member.
fn ordered(model: &BTreeMap<&'static str, f64>) -> Vec<(&'static str, f64)> {
    let mut entries: Vec<_> = model.iter().map(|(m, s)| (*m, *s)).collect();
    entries.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(y.0)));
    entries
}

fn score_text(s: f64) -> String {
    orcinus_kv::score::format_score(s)
}

fn model_apply(model: &mut BTreeMap<&'static str, f64>, op: &Op) -> (String, Reply) {
    match op {
        Op::Add(pairs) => {
            let mut added = 0;
            let mut cmd = "ZADD z".to_string();
            for (score, i) in pairs {
                let score = f64::from(*score) / 2.0;
                cmd.push_str(&format!(" {score} {}", MEMBERS[*i]));
                added += i64::from(model.insert(MEMBERS[*i], score).is_none());
            }
            (cmd, int(added))
        }
        Op::Rem(i) => (
            format!("ZREM z {}", MEMBERS[*i]),
            int(i64::from(model.remove(MEMBERS[*i]).is_some())),
        ),
        Op::RangeByScore(a, b, exclusive) => {
            let (lo, hi) = (f64::from(*a) / 2.0, f64::from(*b) / 2.0);
            let open = if *exclusive { "(" } else { "" };
            let hits: Vec<Reply> = ordered(model)
                .into_iter()
                .filter(|(_, s)| {
                    if *exclusive {
                        *s > lo && *s < hi
                    } else {
                        *s >= lo && *s <= hi
                    }
                })
                .flat_map(|(m, s)| [bulk(m), bulk(&score_text(s))])
                .collect();
            (
                format!("ZRANGEBYSCORE z {open}{lo} {open}{hi} WITHSCORES"),
                Reply::Array(hits),
            )
        }
        Op::PopMin(n) => {
            let mut out = Vec::new();
            for (m, s) in ordered(model).into_iter().take(usize::from(*n)) {
                model.remove(m);
                out.push(bulk(m));
                out.push(bulk(&score_text(s)));
            }
            (format!("ZPOPMIN z {n}"), Reply::Array(out))
        }
        Op::PopMax(n) => {
            let mut out = Vec::new();
            for (m, s) in ordered(model).into_iter().rev().take(usize::from(*n)) {
                model.remove(m);
                out.push(bulk(m));
                out.push(bulk(&score_text(s)));
            }
            (format!("ZPOPMAX z {n}"), Reply::Array(out))
        }
        Op::RangeByRank(a, b) => {
            let entries = ordered(model);
            let len = entries.len() as i64;
            let norm = |i: i8| {
                let i = i64::from(i);
                if i < 0 { i + len } else { i }
            };
            let (start, end) = (norm(*a).max(0), norm(*b).min(len - 1));
            let hits: Vec<Reply> = if start > end || start >= len {
                Vec::new()
            } else {
                entries[start as usize..=end as usize]
                    .iter()
                    .map(|(m, _)| bulk(m))
                    .collect()
            };
            (format!("ZRANGE z {a} {b}"), Reply::Array(hits))
        }
        Op::Rank(i) => {
            let rank = ordered(model).iter().position(|(m, _)| *m == MEMBERS[*i]);
            (
                format!("ZRANK z {}", MEMBERS[*i]),
                rank.map_or(null(), |r| int(r as i64)),
            )
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    #[test]
    fn zsets_match_a_btreemap_model(ops in proptest::collection::vec(op(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut h = Harness::new();
            let mut model = BTreeMap::new();
            for op in &ops {
                let (cmd, expected) = model_apply(&mut model, op);
                let got = h.wire(&cmd).await;
                assert_eq!(got, expected, "{cmd} after {ops:?}");
                assert_eq!(h.wire("ZCARD z").await, int(model.len() as i64), "{cmd}");
            }
            let all: Vec<Reply> = ordered(&model).into_iter().map(|(m, _)| bulk(m)).collect();
            assert_eq!(h.wire("ZRANGE z 0 -1").await, Reply::Array(all));
        });
    }
}

#[tokio::test]
async fn data_survives_a_reopen_of_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    {
        let engine = Engine::open(StorageConfig::for_test(path.clone())).unwrap();
        let server = Arc::new(KvServer::open(engine.clone(), KvConfig::default()).unwrap());
        let mut s = server.new_session("127.0.0.1:1".into(), "127.0.0.1:6379".into());
        for cmd in [
            "SADD s a b c",
            "SREM s b",
            "ZADD z 1.5 a 2 b -inf c",
            "ZINCRBY z 1 a",
            "ZADD gone 1 x",
            "DEL gone",
            "SETBIT bits 10 1",
        ] {
            assert!(!wire_in(&server, &mut s, cmd).await.is_error(), "{cmd}");
        }
        drop(s);
        drop(server);
        engine.shutdown().unwrap();
    }
    let engine = Engine::open(StorageConfig::for_test(path)).unwrap();
    let server = Arc::new(KvServer::open(engine, KvConfig::default()).unwrap());
    let mut s = server.new_session("127.0.0.1:1".into(), "127.0.0.1:6379".into());
    assert_eq!(
        run_in(&server, &mut s, "SMEMBERS s").await,
        Reply::Set(vec![bulk("a"), bulk("c")])
    );
    assert_eq!(
        wire_in(&server, &mut s, "ZRANGE z 0 -1 WITHSCORES").await,
        Reply::Array(vec![
            bulk("c"),
            bulk("-inf"),
            bulk("b"),
            bulk("2"),
            bulk("a"),
            bulk("2.5")
        ])
    );
    assert_eq!(
        wire_in(&server, &mut s, "ZRANGEBYSCORE z (2 +inf").await,
        array(&["a"])
    );
    assert_eq!(wire_in(&server, &mut s, "ZCARD gone").await, int(0));
    assert_eq!(wire_in(&server, &mut s, "GETBIT bits 10").await, int(1));
    assert_eq!(wire_in(&server, &mut s, "BITCOUNT bits").await, int(1));
}

#[tokio::test]
async fn del_of_a_big_zset_is_o1_and_its_index_is_swept() {
    let mut h = Harness::new();
    for chunk in 0..4 {
        let pairs: Vec<String> = (0..500)
            .map(|i| format!("{} m{chunk}-{i}", chunk * 500 + i))
            .collect();
        h.wire(&format!("ZADD big {}", pairs.join(" "))).await;
    }
    assert_eq!(h.wire("ZCARD big").await, int(2000));
    h.wire("ZADD keep 1 a 2 b").await;
    assert_eq!(h.wire("DEL big").await, int(1));
    assert_eq!(h.wire("ZADD big 7 fresh").await, int(1));
    assert_eq!(
        h.wire("ZRANGEBYSCORE big -inf +inf").await,
        array(&["fresh"])
    );
    assert_eq!(
        h.wire("ZPOPMIN big").await,
        Reply::Array(vec![bulk("fresh"), bulk("7")])
    );

    let (mut members, mut scores) = (0, 0);
    let mut cursor = None;
    loop {
        members += sweep_stale_members(&h.server, &mut cursor, 300)
            .await
            .unwrap();
        if cursor.is_none() {
            break;
        }
    }
    loop {
        scores += sweep_stale_scores(&h.server, &mut cursor, 300)
            .await
            .unwrap();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!((members, scores), (2000, 2000));
    let engine = h.server.store().engine().clone();
    let left = engine
        .snapshot()
        .prefix(h.server.store().score_keyspace(), &[0])
        .count();
    assert_eq!(left, 2, "only the live zset's index entries remain");
    assert_eq!(h.wire("ZRANGE keep 0 -1").await, array(&["a", "b"]));
}

#[tokio::test]
async fn expired_collections_vanish_and_are_swept() {
    let mut h = Harness::new();
    h.wire("ZADD z 1 a 2 b 3 c").await;
    h.wire("SADD s x y").await;
    h.wire("PEXPIRE z 1000").await;
    h.wire("PEXPIRE s 1000").await;
    assert_eq!(
        h.wire("SCAN 0 TYPE zset").await,
        Reply::Array(vec![bulk("0"), array(&["z"])])
    );
    assert_eq!(h.wire("TYPE s").await, Reply::Simple("set".into()));
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(h.wire("ZCARD z").await, int(0));
    assert_eq!(h.wire("ZRANGEBYSCORE z -inf +inf").await, array(&[]));
    assert_eq!(h.wire("SISMEMBER s x").await, int(0));
    assert_eq!(h.wire("ZADD z 5 d").await, int(1), "a fresh incarnation");
    assert_eq!(
        h.wire("ZRANGE z 0 -1 WITHSCORES").await,
        Reply::Array(vec![bulk("d"), bulk("5")])
    );
    assert_eq!(h.wire("TTL z").await, int(-1));
    let mut cursor = None;
    let mut expired = 0;
    loop {
        expired += orcinus_kv::sweeper::sweep_expired(&h.server, &mut cursor, 100)
            .await
            .unwrap();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(expired, 1, "the set (the zset was re-created)");
    let members = sweep_stale_members(&h.server, &mut None, 100)
        .await
        .unwrap();
    let scores = sweep_stale_scores(&h.server, &mut None, 100).await.unwrap();
    assert_eq!((members, scores), (5, 3));
    assert_eq!(h.wire("ZRANGEBYSCORE z -inf +inf").await, array(&["d"]));
}
