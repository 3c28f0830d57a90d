//! Sorted-set commands: ZADD flags and errors, ZINCRBY, scores and their formatting, ranges by
//! rank / score / lex with every option, ranks, WRONGTYPE. (Pops, removals, stores, scans and
//! RESP3 shapes are in `zset_writes.rs`.)

use crate::harness::*;
use orcinus_kv::Reply;

const NOT_FLOAT: &str = "ERR value is not a valid float";
const RANGE_NOT_FLOAT: &str = "ERR min or max is not a float";
const LEX_INVALID: &str = "ERR min or max not valid string range item";

/// A flat RESP2 `member score …` array.
pub fn pairs(items: &[(&str, &str)]) -> Reply {
    Reply::Array(items.iter().flat_map(|(m, s)| [bulk(m), bulk(s)]).collect())
}

pub async fn sample(h: &mut Harness) {
    assert_eq!(h.wire("ZADD z 1 a 2 b 3 c 4 d 5 e").await, int(5));
}

#[tokio::test]
async fn zadd_flags_and_errors() {
    let mut h = Harness::new();
    assert_eq!(h.wire("ZADD z 1 a 2 b").await, int(2));
    assert_eq!(h.wire("ZADD z 5 a 3 c").await, int(1));
    assert_eq!(h.wire("ZSCORE z a").await, bulk("5"));
    assert_eq!(
        h.wire("ZADD z CH 6 a 3 c 1 d").await,
        int(2),
        "a changed, d added"
    );
    assert_eq!(h.wire("ZADD z NX 100 a 7 e").await, int(1));
    assert_eq!(h.wire("ZSCORE z a").await, bulk("6"));
    assert_eq!(h.wire("ZADD z XX 7 a 9 new").await, int(0));
    assert_eq!(h.wire("ZSCORE z a").await, bulk("7"));
    assert_eq!(h.wire("ZSCORE z new").await, null());
    assert_eq!(h.wire("ZADD z XX CH 8 a").await, int(1));
    assert_eq!(
        h.wire("ZADD z GT CH 1 a").await,
        int(0),
        "GT refuses to lower"
    );
    assert_eq!(h.wire("ZADD z GT CH 10 a").await, int(1));
    assert_eq!(
        h.wire("ZADD z LT CH 20 a").await,
        int(0),
        "LT refuses to raise"
    );
    assert_eq!(h.wire("ZADD z LT CH 0.5 a").await, int(1));
    assert_eq!(h.wire("ZADD z GT 4 fresh").await, int(1), "GT still adds");
    assert_eq!(h.wire("ZADD z INCR 2 a").await, bulk("2.5"));
    assert_eq!(h.wire("ZADD z INCR NX 2 a").await, null());
    assert_eq!(h.wire("ZADD z INCR XX 2 nothere").await, null());
    assert_eq!(h.wire("ZADD z INCR GT -1 a").await, null());
    assert_eq!(h.wire("ZADD none XX 1 a").await, int(0));
    assert_eq!(h.wire("EXISTS none").await, int(0));
    assert_eq!(
        h.wire("ZADD z 1").await,
        err("ERR wrong number of arguments for 'zadd' command")
    );
    assert_eq!(h.wire("ZADD z 1 a 2").await, err(SYNTAX));
    assert_eq!(
        h.wire("ZADD z NX").await,
        err("ERR wrong number of arguments for 'zadd' command")
    );
    assert_eq!(h.wire("ZADD z NX 1").await, err(SYNTAX));
    assert_eq!(h.wire("ZADD z x a").await, err(NOT_FLOAT));
    assert_eq!(h.wire("ZADD z nan a").await, err(NOT_FLOAT));
    assert_eq!(h.wire("ZADD z 1 a x b").await, err(NOT_FLOAT));
    assert_eq!(
        h.wire("ZADD z NX XX 1 a").await,
        err("ERR XX and NX options at the same time are not compatible")
    );
    for bad in ["ZADD z NX GT 1 a", "ZADD z NX LT 1 a", "ZADD z GT LT 1 a"] {
        assert_eq!(
            h.wire(bad).await,
            err("ERR GT, LT, and/or NX options at the same time are not compatible"),
            "{bad}"
        );
    }
    assert_eq!(
        h.wire("ZADD z INCR 1 a 2 b").await,
        err("ERR INCR option supports a single increment-element pair")
    );
    assert_eq!(h.wire("ZADD z inf big -inf small").await, int(2));
    assert_eq!(h.wire("ZSCORE z big").await, bulk("inf"));
    assert_eq!(h.wire("ZSCORE z small").await, bulk("-inf"));
    assert_eq!(
        h.wire("ZADD z INCR -inf big").await,
        err("ERR resulting score is not a number (NaN)")
    );
    assert_eq!(
        h.wire("ZINCRBY z -inf big").await,
        err("ERR resulting score is not a number (NaN)")
    );
    assert_eq!(
        h.wire("ZSCORE z big").await,
        bulk("inf"),
        "failed INCR left it"
    );
}

#[tokio::test]
async fn zincrby_zscore_zmscore_zcard_zrem_formatting() {
    let mut h = Harness::new();
    assert_eq!(h.wire("ZINCRBY z 1.5 a").await, bulk("1.5"));
    assert_eq!(h.wire("ZINCRBY z 1.5 a").await, bulk("3"));
    assert_eq!(h.wire("ZINCRBY z 0.1 b").await, bulk("0.1"));
    assert_eq!(h.wire("ZINCRBY z 1e20 c").await, bulk("1e+20"));
    assert_eq!(h.wire("ZINCRBY z x a").await, err(NOT_FLOAT));
    assert_eq!(h.wire("ZADD z -0.000001 d 1.5e-7 e").await, int(2));
    assert_eq!(h.wire("ZSCORE z d").await, bulk("-0.000001"));
    assert_eq!(h.wire("ZSCORE z e").await, bulk("1.5e-7"));
    assert_eq!(h.wire("ZSCORE z none").await, null());
    assert_eq!(h.wire("ZSCORE nokey a").await, null());
    assert_eq!(
        h.wire("ZMSCORE z a none c").await,
        Reply::Array(vec![bulk("3"), null(), bulk("1e+20")])
    );
    assert_eq!(h.wire("ZMSCORE nokey a").await, Reply::Array(vec![null()]));
    assert_eq!(h.wire("ZCARD z").await, int(5));
    assert_eq!(h.wire("ZCARD nokey").await, int(0));
    assert_eq!(h.wire("ZREM z a none").await, int(1));
    assert_eq!(h.wire("ZREM nokey a").await, int(0));
    assert_eq!(h.wire("ZREM z b c d e").await, int(4));
    assert_eq!(
        h.wire("EXISTS z").await,
        int(0),
        "an emptied zset is deleted"
    );
    assert_eq!(h.wire("TYPE z").await, Reply::Simple("none".into()));
    h.wire("ZADD z 1 a").await;
    assert_eq!(h.wire("TYPE z").await, Reply::Simple("zset".into()));
}

#[tokio::test]
async fn zrange_by_rank() {
    let mut h = Harness::new();
    sample(&mut h).await;
    assert_eq!(
        h.wire("ZRANGE z 0 -1").await,
        array(&["a", "b", "c", "d", "e"])
    );
    assert_eq!(h.wire("ZRANGE z 1 2").await, array(&["b", "c"]));
    assert_eq!(h.wire("ZRANGE z -2 100").await, array(&["d", "e"]));
    assert_eq!(h.wire("ZRANGE z -100 0").await, array(&["a"]));
    assert_eq!(h.wire("ZRANGE z 3 1").await, array(&[]));
    assert_eq!(h.wire("ZRANGE z 5 10").await, array(&[]));
    assert_eq!(h.wire("ZRANGE z 0 1 REV").await, array(&["e", "d"]));
    assert_eq!(h.wire("ZREVRANGE z 0 1").await, array(&["e", "d"]));
    assert_eq!(
        h.wire("ZRANGE z 0 1 WITHSCORES").await,
        pairs(&[("a", "1"), ("b", "2")])
    );
    assert_eq!(
        h.wire("ZREVRANGE z 0 0 WITHSCORES").await,
        pairs(&[("e", "5")])
    );
    assert_eq!(h.wire("ZRANGE none 0 -1").await, array(&[]));
    assert_eq!(h.wire("ZRANGE z x 1").await, err(NOT_INT));
    assert_eq!(
        h.wire("ZRANGE z 0 1 LIMIT 0 1").await,
        err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
        )
    );
    assert_eq!(h.wire("ZRANGE z 0 1 BOGUS").await, err(SYNTAX));
    assert_eq!(h.wire("ZREVRANGE z 0 1 REV").await, err(SYNTAX));
    assert_eq!(h.wire("ZRANGE z 0 1 BYSCORE BYLEX").await, err(SYNTAX));
}

#[tokio::test]
async fn zrange_by_score() {
    let mut h = Harness::new();
    sample(&mut h).await;
    assert_eq!(h.wire("ZRANGEBYSCORE z 2 4").await, array(&["b", "c", "d"]));
    assert_eq!(h.wire("ZRANGEBYSCORE z (2 (4").await, array(&["c"]));
    assert_eq!(
        h.wire("ZRANGEBYSCORE z -inf +inf").await,
        array(&["a", "b", "c", "d", "e"])
    );
    assert_eq!(
        h.wire("ZRANGEBYSCORE z (1 inf LIMIT 1 2").await,
        array(&["c", "d"])
    );
    assert_eq!(
        h.wire("ZRANGEBYSCORE z -inf inf LIMIT 3 -1").await,
        array(&["d", "e"])
    );
    assert_eq!(
        h.wire("ZRANGEBYSCORE z -inf inf LIMIT -1 2").await,
        array(&[])
    );
    assert_eq!(
        h.wire("ZRANGEBYSCORE z -inf inf LIMIT 0 0").await,
        array(&[])
    );
    assert_eq!(h.wire("ZRANGEBYSCORE z 4 2").await, array(&[]));
    assert_eq!(h.wire("ZRANGEBYSCORE z (3 3").await, array(&[]));
    assert_eq!(h.wire("ZRANGEBYSCORE z (3 (3").await, array(&[]));
    assert_eq!(h.wire("ZRANGEBYSCORE z 3 3").await, array(&["c"]));
    assert_eq!(
        h.wire("ZRANGEBYSCORE z 4 5 WITHSCORES").await,
        pairs(&[("d", "4"), ("e", "5")])
    );
    assert_eq!(
        h.wire("ZREVRANGEBYSCORE z 4 2").await,
        array(&["d", "c", "b"])
    );
    assert_eq!(h.wire("ZREVRANGEBYSCORE z +inf (4").await, array(&["e"]));
    assert_eq!(
        h.wire("ZREVRANGEBYSCORE z inf -inf WITHSCORES LIMIT 1 1")
            .await,
        pairs(&[("d", "4")])
    );
    assert_eq!(
        h.wire("ZRANGE z 2 4 BYSCORE").await,
        array(&["b", "c", "d"])
    );
    assert_eq!(
        h.wire("ZRANGE z 4 2 BYSCORE REV").await,
        array(&["d", "c", "b"])
    );
    assert_eq!(
        h.wire("ZRANGE z (1 5 BYSCORE LIMIT 1 2").await,
        array(&["c", "d"])
    );
    assert_eq!(h.wire("ZRANGEBYSCORE z x 2").await, err(RANGE_NOT_FLOAT));
    assert_eq!(h.wire("ZRANGEBYSCORE z 1 (x").await, err(RANGE_NOT_FLOAT));
    assert_eq!(h.wire("ZRANGEBYSCORE z 1 nan").await, err(RANGE_NOT_FLOAT));
    assert_eq!(h.wire("ZRANGEBYSCORE z 1 2 LIMIT 0").await, err(SYNTAX));
    assert_eq!(h.wire("ZRANGEBYSCORE z 1 2 LIMIT x 1").await, err(NOT_INT));
    assert_eq!(h.wire("ZRANGEBYSCORE z 1 2 BYSCORE").await, err(SYNTAX));
    assert_eq!(h.wire("ZCOUNT z 2 4").await, int(3));
    assert_eq!(h.wire("ZCOUNT z (2 +inf").await, int(3));
    assert_eq!(h.wire("ZCOUNT z 9 10").await, int(0));
    assert_eq!(h.wire("ZCOUNT none 0 1").await, int(0));
    assert_eq!(h.wire("ZCOUNT z a 1").await, err(RANGE_NOT_FLOAT));
    h.wire("ZADD z -1 m 2 b2").await;
    assert_eq!(h.wire("ZRANGEBYSCORE z -inf 0").await, array(&["m"]));
    assert_eq!(
        h.wire("ZRANGEBYSCORE z 2 2").await,
        array(&["b", "b2"]),
        "ties by member"
    );
}

#[tokio::test]
async fn zrange_by_lex() {
    let mut h = Harness::new();
    h.wire("ZADD z 0 a 0 b 0 c 0 d 0 e").await;
    assert_eq!(
        h.wire("ZRANGEBYLEX z - +").await,
        array(&["a", "b", "c", "d", "e"])
    );
    assert_eq!(h.wire("ZRANGEBYLEX z [b (d").await, array(&["b", "c"]));
    assert_eq!(h.wire("ZRANGEBYLEX z (b [d").await, array(&["c", "d"]));
    assert_eq!(
        h.wire("ZRANGEBYLEX z - + LIMIT 1 2").await,
        array(&["b", "c"])
    );
    assert_eq!(h.wire("ZRANGEBYLEX z + -").await, array(&[]));
    assert_eq!(h.wire("ZRANGEBYLEX z [d [b").await, array(&[]));
    assert_eq!(h.wire("ZRANGEBYLEX z (c (c").await, array(&[]));
    assert_eq!(
        h.wire("ZREVRANGEBYLEX z + [c").await,
        array(&["e", "d", "c"])
    );
    assert_eq!(h.wire("ZRANGE z [c + BYLEX").await, array(&["c", "d", "e"]));
    assert_eq!(h.wire("ZRANGE z (c - BYLEX REV").await, array(&["b", "a"]));
    assert_eq!(h.wire("ZRANGEBYLEX z b d").await, err(LEX_INVALID));
    assert_eq!(
        h.wire("ZRANGE z - + BYLEX WITHSCORES").await,
        err("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
    );
    assert_eq!(
        h.wire("ZRANGEBYLEX z - + WITHSCORES").await,
        err("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
    );
    assert_eq!(h.wire("ZLEXCOUNT z [b [d").await, int(3));
    assert_eq!(h.wire("ZLEXCOUNT z - +").await, int(5));
    assert_eq!(h.wire("ZLEXCOUNT none - +").await, int(0));
    assert_eq!(h.wire("ZLEXCOUNT z x +").await, err(LEX_INVALID));
    assert_eq!(h.wire("ZREMRANGEBYLEX z [b (d").await, int(2));
    assert_eq!(h.wire("ZRANGE z 0 -1").await, array(&["a", "d", "e"]));
    assert_eq!(h.wire("ZREMRANGEBYLEX z - +").await, int(3));
    assert_eq!(h.wire("EXISTS z").await, int(0));
}

#[tokio::test]
async fn zrank_and_zrevrank() {
    let mut h = Harness::new();
    sample(&mut h).await;
    assert_eq!(h.wire("ZRANK z a").await, int(0));
    assert_eq!(h.wire("ZRANK z d").await, int(3));
    assert_eq!(h.wire("ZREVRANK z d").await, int(1));
    assert_eq!(h.wire("ZREVRANK z e").await, int(0));
    assert_eq!(h.wire("ZRANK z none").await, null());
    assert_eq!(h.wire("ZRANK nokey a").await, null());
    assert_eq!(
        h.wire("ZRANK z c WITHSCORE").await,
        Reply::Array(vec![int(2), bulk("3")])
    );
    assert_eq!(
        h.wire("ZREVRANK z c withscore").await,
        Reply::Array(vec![int(2), bulk("3")])
    );
    assert_eq!(h.wire("ZRANK z none WITHSCORE").await, Reply::NullArray);
    assert_eq!(h.wire("ZRANK nokey a WITHSCORE").await, Reply::NullArray);
    assert_eq!(h.wire("ZRANK z a BOGUS").await, err(SYNTAX));
    assert_eq!(
        h.wire("ZRANK z a WITHSCORE x").await,
        err("ERR wrong number of arguments for 'zrank' command")
    );
}

#[tokio::test]
async fn zset_wrongtype() {
    let mut h = Harness::new();
    h.wire("SET str v").await;
    for cmd in [
        "ZADD str 1 a",
        "ZINCRBY str 1 a",
        "ZREM str a",
        "ZCARD str",
        "ZSCORE str a",
        "ZMSCORE str a",
        "ZRANK str a",
        "ZREVRANK str a",
        "ZRANGE str 0 -1",
        "ZRANGEBYSCORE str 0 1",
        "ZRANGEBYLEX str - +",
        "ZCOUNT str 0 1",
        "ZLEXCOUNT str - +",
        "ZPOPMIN str",
        "ZPOPMAX str 2",
        "ZREMRANGEBYRANK str 0 1",
        "ZREMRANGEBYSCORE str 0 1",
        "ZREMRANGEBYLEX str - +",
        "ZSCAN str 0",
    ] {
        assert_eq!(h.wire(cmd).await, err(WRONGTYPE), "{cmd}");
    }
    h.wire("ZADD z 1 a").await;
    assert_eq!(h.wire("SADD z a").await, err(WRONGTYPE));
    assert_eq!(h.wire("GET z").await, err(WRONGTYPE));
}
