//! Sorted-set pops, range removals, ZUNION / ZINTER / ZDIFF and their STORE forms, ZSCAN, RESP3 reply shapes,
//! RENAME / COPY keeping the score index, pop hints staying correct under later writes, and
//! rank ranges walked from the nearer end.

use crate::harness::*;
use crate::zsets::{pairs, sample};
use orcinus_kv::Reply;

const RANGE_NOT_FLOAT: &str = "ERR min or max is not a float";

#[tokio::test]
async fn zpopmin_zpopmax() {
    let mut h = Harness::new();
    sample(&mut h).await;
    assert_eq!(h.wire("ZPOPMIN z").await, pairs(&[("a", "1")]));
    assert_eq!(h.wire("ZPOPMAX z").await, pairs(&[("e", "5")]));
    assert_eq!(
        h.wire("ZPOPMIN z 2").await,
        pairs(&[("b", "2"), ("c", "3")])
    );
    assert_eq!(h.wire("ZPOPMIN z 0").await, Reply::Array(vec![]));
    assert_eq!(
        h.wire("ZPOPMIN z -1").await,
        err("ERR value is out of range, must be positive")
    );
    assert_eq!(
        h.wire("ZPOPMIN z x").await,
        err("ERR value is out of range, must be positive")
    );
    assert_eq!(h.wire("ZPOPMIN z 1 2").await, err(SYNTAX));
    assert_eq!(h.wire("ZPOPMAX z 10").await, pairs(&[("d", "4")]));
    assert_eq!(h.wire("EXISTS z").await, int(0));
    assert_eq!(h.wire("ZPOPMIN z").await, Reply::Array(vec![]));
    assert_eq!(h.wire("ZPOPMAX z 3").await, Reply::Array(vec![]));
}

#[tokio::test]
async fn zremrangebyrank_and_score() {
    let mut h = Harness::new();
    sample(&mut h).await;
    assert_eq!(h.wire("ZREMRANGEBYRANK z 0 1").await, int(2));
    assert_eq!(h.wire("ZRANGE z 0 -1").await, array(&["c", "d", "e"]));
    assert_eq!(h.wire("ZREMRANGEBYRANK z -1 -1").await, int(1));
    assert_eq!(h.wire("ZREMRANGEBYRANK z 5 9").await, int(0));
    assert_eq!(h.wire("ZREMRANGEBYRANK z x 1").await, err(NOT_INT));
    assert_eq!(h.wire("ZREMRANGEBYSCORE z (3 4").await, int(1));
    assert_eq!(h.wire("ZREMRANGEBYSCORE z x 4").await, err(RANGE_NOT_FLOAT));
    assert_eq!(h.wire("ZREMRANGEBYSCORE none 0 1").await, int(0));
    assert_eq!(
        h.wire("ZRANGE z 0 -1 WITHSCORES").await,
        pairs(&[("c", "3")])
    );
    assert_eq!(h.wire("ZREMRANGEBYSCORE z -inf inf").await, int(1));
    assert_eq!(h.wire("EXISTS z").await, int(0));
}

#[tokio::test]
async fn zunionstore_zinterstore() {
    let mut h = Harness::new();
    h.wire("ZADD a 1 x 2 y 3 z").await;
    h.wire("ZADD b 10 y 20 z 30 w").await;
    h.wire("SADD s x w").await;
    assert_eq!(h.wire("ZUNIONSTORE d 2 a b").await, int(4));
    assert_eq!(
        h.wire("ZRANGE d 0 -1 WITHSCORES").await,
        pairs(&[("x", "1"), ("y", "12"), ("z", "23"), ("w", "30")])
    );
    assert_eq!(h.wire("ZINTERSTORE d 2 a b").await, int(2));
    assert_eq!(
        h.wire("ZRANGE d 0 -1 WITHSCORES").await,
        pairs(&[("y", "12"), ("z", "23")])
    );
    assert_eq!(
        h.wire("ZINTERSTORE d 2 a b WEIGHTS 2 0.5 AGGREGATE MAX")
            .await,
        int(2)
    );
    assert_eq!(
        h.wire("ZRANGE d 0 -1 WITHSCORES").await,
        pairs(&[("y", "5"), ("z", "10")])
    );
    assert_eq!(h.wire("ZUNIONSTORE d 2 a b aggregate min").await, int(4));
    assert_eq!(
        h.wire("ZRANGE d 0 -1 WITHSCORES").await,
        pairs(&[("x", "1"), ("y", "2"), ("z", "3"), ("w", "30")])
    );
    assert_eq!(h.wire("ZUNIONSTORE d 2 a s").await, int(4), "sets score 1");
    assert_eq!(h.wire("ZSCORE d x").await, bulk("2"));
    assert_eq!(h.wire("ZSCORE d w").await, bulk("1"));
    assert_eq!(h.wire("ZINTERSTORE d 2 a none").await, int(0));
    assert_eq!(
        h.wire("EXISTS d").await,
        int(0),
        "empty result deletes dest"
    );
    h.wire("ZADD i 1 p").await;
    h.wire("ZADD j -1 p").await;
    assert_eq!(h.wire("ZUNIONSTORE d 2 i j WEIGHTS inf inf").await, int(1));
    assert_eq!(
        h.wire("ZSCORE d p").await,
        bulk("0"),
        "inf + -inf sums to 0"
    );
    assert_eq!(
        h.wire("ZUNIONSTORE a 2 a b").await,
        int(4),
        "dest may be a source"
    );
    assert_eq!(h.wire("ZCARD a").await, int(4));
    assert_eq!(
        h.wire("ZUNIONSTORE d 0 a").await,
        err("ERR at least 1 input key is needed for 'zunionstore' command")
    );
    assert_eq!(
        h.wire("ZINTERSTORE d -1 a").await,
        err("ERR at least 1 input key is needed for 'zinterstore' command")
    );
    assert_eq!(h.wire("ZUNIONSTORE d 3 a b").await, err(SYNTAX));
    assert_eq!(h.wire("ZUNIONSTORE d x a").await, err(NOT_INT));
    assert_eq!(h.wire("ZUNIONSTORE d 2147483648 a").await, err(SYNTAX));
    assert_eq!(h.wire("ZUNIONSTORE d 2 a b WEIGHTS 1").await, err(SYNTAX));
    assert_eq!(
        h.wire("ZUNIONSTORE d 2 a b WEIGHTS 1 x").await,
        err("ERR weight value is not a float")
    );
    assert_eq!(
        h.wire("ZUNIONSTORE d 2 a b AGGREGATE AVG").await,
        err(SYNTAX)
    );
    assert_eq!(h.wire("ZUNIONSTORE d 2 a b WITHSCORES").await, err(SYNTAX));
    h.wire("SET str v").await;
    assert_eq!(h.wire("ZUNIONSTORE d 2 a str").await, err(WRONGTYPE));
    assert_eq!(
        h.wire("ZUNIONSTORE str 1 a").await,
        int(4),
        "dest type is irrelevant"
    );
    assert_eq!(h.wire("TYPE str").await, Reply::Simple("zset".into()));
}

#[tokio::test]
async fn zscan_pages() {
    let mut h = Harness::new();
    for i in 0..17 {
        h.wire(&format!("ZADD z {i}.5 m{i:02}")).await;
    }
    let mut cursor = "0".to_string();
    let mut seen = 0;
    loop {
        let Reply::Array(parts) = h.wire(&format!("ZSCAN z {cursor} COUNT 4")).await else {
            panic!()
        };
        let [Reply::Bulk(next), Reply::Array(items)] = parts.as_slice() else {
            panic!()
        };
        seen += items.len() / 2;
        cursor = String::from_utf8(next.to_vec()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen, 17);
    assert_eq!(
        h.wire("ZSCAN z 0 MATCH m03 COUNT 100").await,
        Reply::Array(vec![bulk("0"), pairs(&[("m03", "3.5")])])
    );
    assert_eq!(
        h.wire("ZSCAN none 0").await,
        Reply::Array(vec![bulk("0"), Reply::Array(vec![])])
    );
}

#[tokio::test]
async fn resp3_reply_shapes() {
    let mut h = Harness::new();
    assert!(matches!(h.wire("HELLO 3").await, Reply::Map(_)));
    sample(&mut h).await;
    assert_eq!(h.wire("ZSCORE z b").await, Reply::Double(2.0));
    assert_eq!(h.wire("ZINCRBY z 0.5 b").await, Reply::Double(2.5));
    assert_eq!(h.wire("ZADD z INCR 1 b").await, Reply::Double(3.5));
    assert_eq!(
        h.wire("ZMSCORE z a x").await,
        Reply::Array(vec![Reply::Double(1.0), null()])
    );
    let pair = |m: &str, s: f64| Reply::Array(vec![bulk(m), Reply::Double(s)]);
    assert_eq!(
        h.wire("ZRANGE z 0 1 WITHSCORES").await,
        Reply::Array(vec![pair("a", 1.0), pair("c", 3.0)])
    );
    assert_eq!(
        h.wire("ZRANK z a WITHSCORE").await,
        Reply::Array(vec![int(0), Reply::Double(1.0)])
    );
    assert_eq!(
        h.wire("ZPOPMIN z").await,
        Reply::Array(vec![bulk("a"), Reply::Double(1.0)]),
        "no count: flat"
    );
    assert_eq!(
        h.wire("ZPOPMAX z 1").await,
        Reply::Array(vec![pair("e", 5.0)]),
        "count: nested"
    );
    let Reply::Array(parts) = h.wire("ZSCAN z 0").await else {
        panic!()
    };
    assert!(
        matches!(&parts[1], Reply::Array(items) if items.iter().all(|r| matches!(r, Reply::Bulk(_)))),
        "ZSCAN scores stay bulk strings"
    );
}

#[tokio::test]
async fn rename_and_copy_keep_the_score_index() {
    let mut h = Harness::new();
    sample(&mut h).await;
    assert_eq!(h.wire("RENAME z r").await, ok());
    assert_eq!(h.wire("ZRANGEBYSCORE r 2 3").await, array(&["b", "c"]));
    assert_eq!(h.wire("COPY r c").await, int(1));
    assert_eq!(h.wire("ZPOPMIN c").await, pairs(&[("a", "1")]));
    assert_eq!(h.wire("ZRANGE r 0 0").await, array(&["a"]));
    assert_eq!(h.wire("ZRANK c e").await, int(3));
}

#[tokio::test]
async fn pops_move_hints_that_later_writes_widen() {
    let mut h = Harness::new();
    let adds: Vec<String> = (0..50).map(|i| format!("{i} m{i:02}")).collect();
    h.wire(&format!("ZADD z {}", adds.join(" "))).await;
    assert_eq!(h.wire("ZPOPMIN z 10").await, {
        let v: Vec<(String, String)> = (0..10)
            .map(|i| (format!("m{i:02}"), i.to_string()))
            .collect();
        let refs: Vec<(&str, &str)> = v.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        pairs(&refs)
    });
    assert!(!h.wire("ZPOPMAX z 10").await.is_error());
    assert_eq!(h.wire("ZCARD z").await, int(30));
    assert_eq!(h.wire("ZRANGE z 0 0").await, array(&["m10"]));
    assert_eq!(h.wire("ZRANGE z -1 -1").await, array(&["m39"]));
    assert_eq!(h.wire("ZRANK z m10").await, int(0));
    assert_eq!(h.wire("ZREVRANK z m39").await, int(0));
    assert_eq!(h.wire("ZRANGEBYSCORE z -inf 10").await, array(&["m10"]));
    // Writes below the floor and above the ceiling must stay visible.
    assert_eq!(h.wire("ZADD z 3 low 100 high").await, int(2));
    assert_eq!(h.wire("ZADD z XX -5 m20").await, int(0));
    assert_eq!(h.wire("ZRANGE z 0 1").await, array(&["m20", "low"]));
    assert_eq!(h.wire("ZRANGE z -1 -1").await, array(&["high"]));
    assert_eq!(h.wire("ZRANK z low").await, int(1));
    assert_eq!(h.wire("ZREVRANK z high").await, int(0));
    assert_eq!(
        h.wire("ZRANGEBYSCORE z -inf 3").await,
        array(&["m20", "low"])
    );
    assert_eq!(
        h.wire("ZREVRANGEBYSCORE z +inf 39").await,
        array(&["high", "m39"])
    );
    assert_eq!(
        h.wire("ZPOPMIN z 2").await,
        pairs(&[("m20", "-5"), ("low", "3")])
    );
    assert_eq!(h.wire("ZPOPMAX z").await, pairs(&[("high", "100")]));
    assert_eq!(h.wire("ZINCRBY z -100 m30").await, bulk("-70"));
    assert_eq!(h.wire("ZPOPMIN z").await, pairs(&[("m30", "-70")]));
    assert_eq!(h.wire("RENAME z r").await, ok());
    assert_eq!(h.wire("ZADD r 0 zero").await, int(1));
    assert_eq!(h.wire("ZPOPMIN r").await, pairs(&[("zero", "0")]));
    assert_eq!(h.wire("ZCARD r").await, int(28));
}

#[tokio::test]
async fn rank_ranges_walk_from_the_nearer_end() {
    let mut h = Harness::new();
    let pairs_text: Vec<String> = (0..30).map(|i| format!("{i} m{i:02}")).collect();
    h.wire(&format!("ZADD z {}", pairs_text.join(" "))).await;
    assert_eq!(
        h.wire("ZRANGE z -3 -1").await,
        array(&["m27", "m28", "m29"])
    );
    assert_eq!(
        h.wire("ZRANGE z 26 28").await,
        array(&["m26", "m27", "m28"])
    );
    assert_eq!(
        h.wire("ZREVRANGE z 27 100").await,
        array(&["m02", "m01", "m00"])
    );
    assert_eq!(
        h.wire("ZRANGE z 28 29 WITHSCORES").await,
        pairs(&[("m28", "28"), ("m29", "29")])
    );
    assert_eq!(h.wire("ZREMRANGEBYRANK z 25 -1").await, int(5));
    assert_eq!(h.wire("ZRANGE z -1 -1").await, array(&["m24"]));
}

#[tokio::test]
async fn zunion_zinter_zdiff_and_zdiffstore() {
    let mut h = Harness::new();
    h.wire("ZADD a 1 x 2 y 3 z").await;
    h.wire("ZADD b 10 y 20 z 30 w").await;
    assert_eq!(h.wire("ZUNION 2 a b").await, array(&["x", "y", "z", "w"]));
    assert_eq!(
        h.wire("ZUNION 2 a b WITHSCORES").await,
        pairs(&[("x", "1"), ("y", "12"), ("z", "23"), ("w", "30")])
    );
    assert_eq!(
        h.wire("ZINTER 2 a b WEIGHTS 1 -1 AGGREGATE SUM WITHSCORES")
            .await,
        pairs(&[("z", "-17"), ("y", "-8")])
    );
    assert_eq!(h.wire("ZDIFF 2 a b WITHSCORES").await, pairs(&[("x", "1")]));
    assert_eq!(h.wire("ZDIFF 1 b").await, array(&["y", "z", "w"]));
    assert_eq!(h.wire("ZDIFF 2 none a").await, array(&[]));
    assert_eq!(h.wire("ZDIFFSTORE d 2 b a").await, int(1));
    assert_eq!(
        h.wire("ZRANGE d 0 -1 WITHSCORES").await,
        pairs(&[("w", "30")])
    );
    assert_eq!(h.wire("ZDIFFSTORE d 2 a a").await, int(0));
    assert_eq!(h.wire("EXISTS d").await, int(0));
    assert_eq!(h.wire("ZDIFF 2 a b WEIGHTS 1 1").await, err(SYNTAX));
    assert_eq!(h.wire("ZDIFF 2 a b AGGREGATE MIN").await, err(SYNTAX));
    assert_eq!(h.wire("ZDIFFSTORE d 2 a b WITHSCORES").await, err(SYNTAX));
    assert_eq!(
        h.wire("ZUNION 0 a").await,
        err("ERR at least 1 input key is needed for 'zunion' command")
    );
    assert_eq!(
        h.wire("ZDIFFSTORE d 0 a").await,
        err("ERR at least 1 input key is needed for 'zdiffstore' command")
    );
    assert_eq!(h.wire("ZINTER 3 a b").await, err(SYNTAX));
    h.wire("SET str v").await;
    assert_eq!(
        h.wire("ZUNION 2 a str BOGUS").await,
        err(WRONGTYPE),
        "sources are checked before options, as in Redis"
    );
    assert!(matches!(h.wire("HELLO 3").await, Reply::Map(_)));
    assert_eq!(
        h.wire("ZINTER 2 a b WITHSCORES").await,
        Reply::Array(vec![
            Reply::Array(vec![bulk("y"), Reply::Double(12.0)]),
            Reply::Array(vec![bulk("z"), Reply::Double(23.0)]),
        ])
    );
}

#[tokio::test]
async fn zrandmember_counts_and_shapes() {
    let mut h = Harness::new();
    assert_eq!(h.wire("ZRANDMEMBER none").await, null());
    assert_eq!(h.wire("ZRANDMEMBER none 2").await, Reply::Array(vec![]));
    sample(&mut h).await;
    let Reply::Bulk(one) = h.wire("ZRANDMEMBER z").await else {
        panic!("a bulk string without count")
    };
    assert!([&b"a"[..], b"b", b"c", b"d", b"e"].contains(&one.as_ref()));
    let Reply::Array(three) = h.wire("ZRANDMEMBER z 3").await else {
        panic!()
    };
    let distinct: std::collections::BTreeSet<_> = three.iter().map(|r| format!("{r:?}")).collect();
    assert_eq!(distinct.len(), 3);
    let Reply::Array(all) = h.wire("ZRANDMEMBER z 10 WITHSCORES").await else {
        panic!()
    };
    assert_eq!(all.len(), 10, "5 members with their scores");
    let Reply::Array(repeats) = h.wire("ZRANDMEMBER z -7").await else {
        panic!()
    };
    assert_eq!(repeats.len(), 7);
    assert!(!h.wire("ZRANDMEMBER z -1 WITHSCORES").await.is_error());
    assert_eq!(h.wire("ZRANDMEMBER z 0").await, Reply::Array(vec![]));
    assert_eq!(h.wire("ZRANDMEMBER z 1 SCORES").await, err(SYNTAX));
    assert_eq!(h.wire("ZRANDMEMBER z 1 WITHSCORES x").await, err(SYNTAX));
    assert_eq!(h.wire("ZRANDMEMBER z x").await, err(NOT_INT));
    h.wire("ZADD one 2.5 m").await;
    assert_eq!(
        h.wire("ZRANDMEMBER one 1 WITHSCORES").await,
        pairs(&[("m", "2.5")])
    );
    assert!(matches!(h.wire("HELLO 3").await, Reply::Map(_)));
    assert_eq!(
        h.wire("ZRANDMEMBER one -2 WITHSCORES").await,
        Reply::Array(vec![
            Reply::Array(vec![bulk("m"), Reply::Double(2.5)]),
            Reply::Array(vec![bulk("m"), Reply::Double(2.5)]),
        ])
    );
    h.wire("SET str v").await;
    assert_eq!(h.wire("ZRANDMEMBER str").await, err(WRONGTYPE));
}

#[tokio::test]
async fn zrangestore_keeps_scores() {
    let mut h = Harness::new();
    sample(&mut h).await;
    assert_eq!(h.wire("ZRANGESTORE d z 1 2").await, int(2));
    assert_eq!(
        h.wire("ZRANGE d 0 -1 WITHSCORES").await,
        pairs(&[("b", "2"), ("c", "3")])
    );
    assert_eq!(
        h.wire("ZRANGESTORE d z (1 +inf BYSCORE LIMIT 1 2").await,
        int(2)
    );
    assert_eq!(
        h.wire("ZRANGE d 0 -1 WITHSCORES").await,
        pairs(&[("c", "3"), ("d", "4")])
    );
    assert_eq!(h.wire("ZRANGESTORE d z 0 0 REV").await, int(1));
    assert_eq!(h.wire("ZRANGE d 0 -1").await, array(&["e"]));
    assert_eq!(h.wire("ZRANGESTORE d z [a [b BYLEX").await, int(2));
    assert_eq!(h.wire("ZSCORE d b").await, bulk("2"), "BYLEX keeps scores");
    assert_eq!(h.wire("ZRANGESTORE d z 0 -1 WITHSCORES").await, err(SYNTAX));
    assert_eq!(
        h.wire("ZRANGESTORE d z 0 1 LIMIT 0 1").await,
        err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
        )
    );
    assert_eq!(
        h.wire("ZRANGESTORE d z x 1 BYSCORE").await,
        err(RANGE_NOT_FLOAT)
    );
    assert_eq!(h.wire("ZRANGESTORE d none 0 -1").await, int(0));
    assert_eq!(
        h.wire("EXISTS d").await,
        int(0),
        "missing source deletes dest"
    );
    assert_eq!(
        h.wire("ZRANGESTORE z z 0 1").await,
        int(2),
        "dest may be the source"
    );
    assert_eq!(h.wire("ZRANGE z 0 -1").await, array(&["a", "b"]));
    h.wire("SET str v").await;
    assert_eq!(h.wire("ZRANGESTORE d str 0 1").await, err(WRONGTYPE));
    assert_eq!(
        h.wire("ZRANGESTORE d z 0").await,
        err("ERR wrong number of arguments for 'zrangestore' command")
    );
}
