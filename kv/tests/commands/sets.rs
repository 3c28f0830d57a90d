//! Set commands: single-key commands, random draws (small and big sets), set algebra and
//! its STORE forms, SINTERCARD, SMOVE, SSCAN, WRONGTYPE, RESP3 set replies, and DEL of a big
//! set being O(1) with the sweeper collecting its members later.

use crate::harness::*;
use orcinus_kv::Reply;
use orcinus_kv::sweeper::sweep_stale_members;
use std::collections::BTreeSet;

fn set_of(items: &[&str]) -> Reply {
    Reply::Set(items.iter().map(|s| bulk(s)).collect())
}

fn strings(reply: Reply) -> Vec<String> {
    let items = match reply {
        Reply::Array(items) | Reply::Set(items) => items,
        other => panic!("not a collection: {other:?}"),
    };
    items
        .into_iter()
        .map(|r| match r {
            Reply::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
            other => panic!("not bulk: {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn sadd_srem_smembers_scard() {
    let mut h = Harness::new();
    assert_eq!(h.run("SADD s b a c a").await, int(3));
    assert_eq!(h.run("SADD s a d").await, int(1));
    assert_eq!(h.run("SCARD s").await, int(4));
    assert_eq!(h.run("SCARD none").await, int(0));
    assert_eq!(h.run("SMEMBERS s").await, set_of(&["a", "b", "c", "d"]));
    assert_eq!(h.run("SMEMBERS none").await, set_of(&[]));
    assert_eq!(h.run("SISMEMBER s a").await, int(1));
    assert_eq!(h.run("SISMEMBER s z").await, int(0));
    assert_eq!(h.run("SISMEMBER none z").await, int(0));
    assert_eq!(
        h.run("SMISMEMBER s a z d").await,
        Reply::Array(vec![int(1), int(0), int(1)])
    );
    assert_eq!(h.run("SMISMEMBER none a").await, Reply::Array(vec![int(0)]));
    assert_eq!(h.run("SREM s a z").await, int(1));
    assert_eq!(h.run("SREM none a").await, int(0));
    assert_eq!(h.run("TYPE s").await, Reply::Simple("set".into()));
    assert_eq!(h.run("SREM s b c d").await, int(3));
    assert_eq!(h.run("EXISTS s").await, int(0), "an emptied set is deleted");
    assert_eq!(
        h.run("SADD s").await,
        err("ERR wrong number of arguments for 'sadd' command")
    );
    assert_eq!(
        h.run("SMISMEMBER s").await,
        err("ERR wrong number of arguments for 'smismember' command")
    );
}

#[tokio::test]
async fn set_wrongtype() {
    let mut h = Harness::new();
    h.run("SET str v").await;
    h.run("SADD s a").await;
    for cmd in [
        "SADD str a",
        "SREM str a",
        "SMEMBERS str",
        "SISMEMBER str a",
        "SMISMEMBER str a",
        "SCARD str",
        "SPOP str",
        "SRANDMEMBER str",
        "SSCAN str 0",
        "SINTER s str",
        "SUNION s str",
        "SDIFF s str",
        "SDIFF none str",
        "SINTERSTORE d s str",
        "SINTERCARD 2 s str",
        "SMOVE str s a",
        "SMOVE s str a",
    ] {
        assert_eq!(h.run(cmd).await, err(WRONGTYPE), "{cmd}");
    }
    assert_eq!(h.run("SMOVE none str a").await, int(0));
    assert_eq!(h.run("EXISTS d").await, int(0));
    assert_eq!(h.run("SMEMBERS s").await, set_of(&["a"]));
}

#[tokio::test]
async fn spop_and_srandmember() {
    let mut h = Harness::new();
    assert_eq!(h.run("SPOP none").await, null());
    assert_eq!(h.run("SPOP none 3").await, set_of(&[]));
    assert_eq!(h.run("SRANDMEMBER none").await, null());
    assert_eq!(h.run("SRANDMEMBER none 3").await, Reply::Array(vec![]));
    h.run("SADD s a b c d e").await;
    assert_eq!(
        h.run("SPOP s -1").await,
        err("ERR value is out of range, must be positive")
    );
    // Redis 7.0 gives the range text for a non-integer count too.
    assert_eq!(
        h.run("SPOP s x").await,
        err("ERR value is out of range, must be positive")
    );
    assert_eq!(h.run("SPOP s 1 2").await, err(SYNTAX));
    assert_eq!(h.run("SRANDMEMBER s 1 2").await, err(SYNTAX));
    assert_eq!(h.run("SPOP s 0").await, set_of(&[]));
    assert_eq!(h.run("SRANDMEMBER s 0").await, Reply::Array(vec![]));
    let one = strings(Reply::Array(vec![h.run("SRANDMEMBER s").await]));
    assert!(["a", "b", "c", "d", "e"].contains(&one[0].as_str()));
    let three: BTreeSet<String> = strings(h.run("SRANDMEMBER s 3").await)
        .into_iter()
        .collect();
    assert_eq!(three.len(), 3, "positive count gives distinct members");
    let all = strings(h.run("SRANDMEMBER s 10").await);
    assert_eq!(all.len(), 5);
    assert_eq!(
        h.run("SRANDMEMBER s -9223372036854775808").await,
        err(
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
        )
    );
    assert_eq!(
        h.run("SRANDMEMBER s -1048577").await,
        err("ERR value is out of range, value must between -1048576 and 9223372036854775807"),
        "negative counts are bounded (each draw is a reply entry)"
    );
    let repeated = strings(h.run("SRANDMEMBER s -12").await);
    assert_eq!(repeated.len(), 12, "negative count may repeat");
    assert_eq!(
        h.run("SCARD s").await,
        int(5),
        "SRANDMEMBER does not remove"
    );
    let popped = strings(h.run("SPOP s 2").await);
    assert_eq!(popped.len(), 2);
    assert_eq!(h.run("SCARD s").await, int(3));
    for m in &popped {
        assert_eq!(h.run(&format!("SISMEMBER s {m}")).await, int(0));
    }
    let Reply::Bulk(_) = h.run("SPOP s").await else {
        panic!("SPOP without count answers a bulk string")
    };
    assert_eq!(strings(h.run("SPOP s 10").await).len(), 2);
    assert_eq!(h.run("EXISTS s").await, int(0));
}

#[tokio::test]
async fn random_draws_on_a_big_set_seek_and_stay_consistent() {
    let mut h = Harness::new();
    let members: Vec<String> = (0..1500).map(|i| format!("element:{i:06}")).collect();
    for chunk in members.chunks(300) {
        h.run(&format!("SADD big {}", chunk.join(" "))).await;
    }
    assert_eq!(h.run("SCARD big").await, int(1500));
    let mut seen = BTreeSet::new();
    for _ in 0..40 {
        let drawn = strings(Reply::Array(vec![h.run("SRANDMEMBER big").await]));
        seen.insert(drawn[0].clone());
    }
    assert!(seen.len() > 5, "draws spread over the set: {seen:?}");
    let distinct: BTreeSet<String> = strings(h.run("SRANDMEMBER big 700").await)
        .into_iter()
        .collect();
    assert_eq!(distinct.len(), 700);
    assert_eq!(strings(h.run("SRANDMEMBER big -50").await).len(), 50);
    let mut popped = BTreeSet::new();
    for _ in 0..10 {
        for m in strings(h.run("SPOP big 100").await) {
            assert!(popped.insert(m), "SPOP never returns a member twice");
        }
    }
    assert_eq!(h.run("SCARD big").await, int(500));
    for m in popped.iter().take(20) {
        assert_eq!(h.run(&format!("SISMEMBER big {m}")).await, int(0));
    }
    let rest = strings(h.run("SMEMBERS big").await);
    assert_eq!(rest.len(), 500);
    assert!(rest.iter().all(|m| !popped.contains(m)));
}

#[tokio::test]
async fn algebra_and_store() {
    let mut h = Harness::new();
    h.run("SADD a 1 2 3 4").await;
    h.run("SADD b 3 4 5").await;
    h.run("SADD c 4 6").await;
    assert_eq!(h.run("SINTER a b c").await, set_of(&["4"]));
    assert_eq!(h.run("SINTER a b").await, set_of(&["3", "4"]));
    assert_eq!(h.run("SINTER a none").await, set_of(&[]));
    assert_eq!(
        h.run("SUNION a b none").await,
        set_of(&["1", "2", "3", "4", "5"])
    );
    assert_eq!(h.run("SDIFF a b c").await, set_of(&["1", "2"]));
    assert_eq!(h.run("SDIFF none a").await, set_of(&[]));
    assert_eq!(h.run("SDIFF a none").await, set_of(&["1", "2", "3", "4"]));
    assert_eq!(h.run("SINTERSTORE d a b").await, int(2));
    assert_eq!(h.run("SMEMBERS d").await, set_of(&["3", "4"]));
    h.run("SET str v").await;
    h.run("EXPIRE str 100").await;
    assert_eq!(h.run("SUNIONSTORE str a c").await, int(5));
    assert_eq!(h.run("TYPE str").await, Reply::Simple("set".into()));
    assert_eq!(
        h.run("TTL str").await,
        int(-1),
        "STORE replaces the TTL too"
    );
    assert_eq!(
        h.run("SDIFFSTORE a a b").await,
        int(2),
        "dest may be a source"
    );
    assert_eq!(h.run("SMEMBERS a").await, set_of(&["1", "2"]));
    assert_eq!(h.run("SINTERSTORE d a c").await, int(0));
    assert_eq!(h.run("EXISTS d").await, int(0), "empty result deletes dest");
    assert_eq!(
        h.run("SINTERSTORE d").await,
        err("ERR wrong number of arguments for 'sinterstore' command")
    );
}

#[tokio::test]
async fn sintercard_and_smove() {
    let mut h = Harness::new();
    h.run("SADD a 1 2 3 4").await;
    h.run("SADD b 2 3 4 5").await;
    assert_eq!(h.run("SINTERCARD 2 a b").await, int(3));
    assert_eq!(h.run("SINTERCARD 2 a b LIMIT 2").await, int(2));
    assert_eq!(h.run("SINTERCARD 2 a b LIMIT 0").await, int(3));
    assert_eq!(h.run("SINTERCARD 1 a").await, int(4));
    assert_eq!(h.run("SINTERCARD 2 a none").await, int(0));
    assert_eq!(
        h.run("SINTERCARD 0 a").await,
        err("ERR numkeys should be greater than 0")
    );
    assert_eq!(
        h.run("SINTERCARD x a").await,
        err("ERR numkeys should be greater than 0")
    );
    assert_eq!(
        h.run("SINTERCARD 3 a b").await,
        err("ERR Number of keys can't be greater than number of args")
    );
    assert_eq!(
        h.run("SINTERCARD 2 a b LIMIT -1").await,
        err("ERR LIMIT can't be negative")
    );
    assert_eq!(h.run("SINTERCARD 2 a b LIMIT").await, err(SYNTAX));
    assert_eq!(h.run("SINTERCARD 1 a b").await, err(SYNTAX));

    assert_eq!(h.run("SMOVE a b 1").await, int(1));
    assert_eq!(h.run("SMOVE a b 1").await, int(0));
    assert_eq!(h.run("SMOVE a b 2").await, int(1), "already in dest");
    assert_eq!(h.run("SMEMBERS a").await, set_of(&["3", "4"]));
    assert_eq!(
        h.run("SMEMBERS b").await,
        set_of(&["1", "2", "3", "4", "5"])
    );
    assert_eq!(h.run("SMOVE a a 3").await, int(1));
    assert_eq!(h.run("SMOVE a a 9").await, int(0));
    assert_eq!(h.run("SMOVE a new 3").await, int(1));
    assert_eq!(h.run("SMOVE a new 4").await, int(1));
    assert_eq!(h.run("EXISTS a").await, int(0), "emptied source is deleted");
    assert_eq!(h.run("SMEMBERS new").await, set_of(&["3", "4"]));
}

#[tokio::test]
async fn sscan_pages_and_match() {
    let mut h = Harness::new();
    for i in 0..23 {
        h.run(&format!("SADD s m{i:02}")).await;
    }
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    loop {
        let Reply::Array(parts) = h.run(&format!("SSCAN s {cursor} COUNT 5")).await else {
            panic!()
        };
        let [Reply::Bulk(next), items] = parts.as_slice() else {
            panic!()
        };
        let page = strings(items.clone());
        assert!(page.len() <= 5);
        seen.extend(page);
        cursor = String::from_utf8(next.to_vec()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 23);
    let Reply::Array(parts) = h.run("SSCAN s 0 MATCH m1* COUNT 100").await else {
        panic!()
    };
    assert_eq!(strings(parts[1].clone()).len(), 10);
    assert_eq!(
        h.run("SSCAN none 0").await,
        Reply::Array(vec![bulk("0"), Reply::Array(vec![])])
    );
    assert_eq!(h.run("SSCAN s 0 COUNT 0").await, err(SYNTAX));
}

#[tokio::test]
async fn resp3_replies_and_rename_copy() {
    let mut h = Harness::new();
    assert!(matches!(h.run("HELLO 3").await, Reply::Map(_)));
    h.run("SADD s x y").await;
    assert_eq!(h.run("SMEMBERS s").await, set_of(&["x", "y"]));
    assert!(matches!(h.run("SPOP s 1").await, Reply::Set(_)));
    assert!(matches!(h.run("SRANDMEMBER s 1").await, Reply::Array(_)));
    h.run("SADD s a b").await;
    assert_eq!(h.run("RENAME s t").await, ok());
    assert_eq!(h.run("SCARD t").await, int(3));
    assert_eq!(h.run("COPY t u").await, int(1));
    assert_eq!(h.run("SREM u a").await, int(1));
    assert_eq!(h.run("SCARD t").await, int(3));
    assert_eq!(h.run("SCARD u").await, int(2));
}

#[tokio::test]
async fn del_of_a_big_set_is_o1_and_swept_later() {
    let mut h = Harness::new();
    let members: Vec<String> = (0..2000).map(|i| format!("m{i}")).collect();
    for chunk in members.chunks(500) {
        h.run(&format!("SADD big {}", chunk.join(" "))).await;
    }
    assert_eq!(h.run("DEL big").await, int(1));
    assert_eq!(h.run("SADD big fresh").await, int(1));
    assert_eq!(h.run("SMEMBERS big").await, set_of(&["fresh"]));
    let mut cursor = None;
    let mut swept = 0;
    loop {
        swept += sweep_stale_members(&h.server, &mut cursor, 500)
            .await
            .unwrap();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(swept, 2000);
    assert_eq!(h.run("SMEMBERS big").await, set_of(&["fresh"]));
}

/// Runs `MULTI; SCARD a; EXEC` and tells whether EXEC ran (true) or was aborted by WATCH.
async fn exec_runs(h: &mut Harness) -> bool {
    h.run("MULTI").await;
    h.run("SCARD a").await;
    match h.run("EXEC").await {
        Reply::Array(_) => true,
        Reply::NullArray => false,
        other => panic!("EXEC answered {other:?}"),
    }
}

#[tokio::test]
async fn watch_sees_written_keys_only() {
    let mut h = Harness::new();
    h.run("SADD a 1 2").await;
    h.run("SADD b 2 3").await;
    h.run("ZADD z 1 x").await;
    let mut other = h.new_session();
    let cases = [
        ("a", "SINTERSTORE d a b", true),
        ("d", "SINTERSTORE d a b", false),
        ("b", "SMOVE a b 2", true),
        ("b", "SMOVE a b 1", false),
        ("a", "SMOVE a b 9", true),
        ("z", "ZUNIONSTORE d2 1 z", true),
        ("d2", "ZUNIONSTORE d2 1 z", false),
        ("z", "ZPOPMIN z", false),
        ("a", "BITOP OR d3 none", true),
    ];
    for (watched, cmd, survives) in cases {
        assert_eq!(h.run(&format!("WATCH {watched}")).await, ok());
        assert!(
            !run_in(&h.server, &mut other, cmd).await.is_error(),
            "{cmd}"
        );
        assert_eq!(
            exec_runs(&mut h).await,
            survives,
            "WATCH {watched} then {cmd}"
        );
    }
}

#[tokio::test]
async fn set_and_zset_commands_inside_multi() {
    let mut h = Harness::new();
    h.run("MULTI").await;
    h.run("SADD s a b").await;
    h.run("ZADD z 1 a").await;
    h.run("SPOP nothere").await;
    h.run("ZINCRBY z x a").await;
    assert_eq!(
        h.run("EXEC").await,
        Reply::Array(vec![
            int(2),
            int(1),
            null(),
            err("ERR value is not a valid float")
        ])
    );
    assert_eq!(h.run("SCARD s").await, int(2));
    assert_eq!(h.wire("ZSCORE z a").await, bulk("1"));
}
