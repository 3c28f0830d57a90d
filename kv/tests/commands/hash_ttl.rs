//! Hash field expiry (HEXPIRE family, HTTL family, HPERSIST) and HRANDFIELD: reply codes,
//! error strings, invisibility of expired fields to every hash read, exact HLEN, purge by
//! writers and by the sweeper, persistence across a reopen.

use crate::harness::*;
use orcinus_kv::Reply;
use orcinus_kv::sweeper::sweep_expired;
use std::time::Duration;

fn ints(values: &[i64]) -> Reply {
    Reply::Array(values.iter().map(|n| int(*n)).collect())
}

fn now_ms() -> i64 {
    orcinus_kv::clock::now_ms() as i64
}

#[tokio::test]
async fn hexpire_codes_and_ttl_readers() {
    let mut h = Harness::new();
    h.run("HSET h a 1 b 2 c 3 d 4").await;
    assert_eq!(h.run("HEXPIRE h 100 FIELDS 2 a zz").await, ints(&[1, -2]));
    assert_eq!(h.run("HTTL h FIELDS 3 a b zz").await, ints(&[100, -1, -2]));
    let Reply::Array(pttl) = h.run("HPTTL h FIELDS 1 a").await else {
        panic!()
    };
    let Reply::Integer(ms) = pttl[0] else {
        panic!()
    };
    assert!((99_000..=100_000).contains(&ms), "{ms}");
    let Reply::Array(at) = h.run("HPEXPIRETIME h FIELDS 1 a").await else {
        panic!()
    };
    let Reply::Integer(at) = at[0] else { panic!() };
    assert!((at - now_ms() - 100_000).abs() < 2_000);
    assert_eq!(
        h.run("HEXPIRETIME h FIELDS 2 a b").await,
        ints(&[at / 1000, -1])
    );
    // Conditions: NX only without TTL, XX only with, GT / LT against the current TTL
    // (no TTL counts as infinite).
    assert_eq!(h.run("HEXPIRE h 200 NX FIELDS 2 a b").await, ints(&[0, 1]));
    assert_eq!(h.run("HEXPIRE h 300 XX FIELDS 2 a c").await, ints(&[1, 0]));
    assert_eq!(h.run("HEXPIRE h 100 GT FIELDS 2 a c").await, ints(&[0, 0]));
    assert_eq!(h.run("HEXPIRE h 400 gt FIELDS 1 a").await, ints(&[1]));
    assert_eq!(h.run("HEXPIRE h 500 LT FIELDS 2 a c").await, ints(&[0, 1]));
    assert_eq!(h.run("HEXPIRE h 50 LT FIELDS 1 a").await, ints(&[1]));
    assert_eq!(
        h.run("HTTL h FIELDS 4 a b c d").await,
        ints(&[50, 200, 500, -1])
    );
    // A time not in the future deletes the field.
    assert_eq!(h.run("HEXPIRE h 0 FIELDS 2 d zz").await, ints(&[2, -2]));
    let past = format!("HPEXPIREAT h {} FIELDS 1 c", now_ms() - 10);
    assert_eq!(h.run(&past).await, ints(&[2]));
    assert_eq!(h.run("HLEN h").await, int(2));
    assert_eq!(
        h.run("HPERSIST h FIELDS 3 a d zz").await,
        ints(&[1, -2, -2])
    );
    assert_eq!(h.run("HPERSIST h FIELDS 1 a").await, ints(&[-1]));
    assert_eq!(h.run("HTTL h FIELDS 1 a").await, ints(&[-1]));
    let at = format!("HEXPIREAT h {} FIELDS 1 a", now_ms() / 1000 + 1000);
    assert_eq!(h.run(&at).await, ints(&[1]));
    assert_eq!(h.run("HTTL h FIELDS 1 a").await, ints(&[1000]));
    // Missing key.
    assert_eq!(h.run("HEXPIRE none 10 FIELDS 2 a b").await, ints(&[-2, -2]));
    assert_eq!(h.run("HTTL none FIELDS 1 a").await, ints(&[-2]));
    assert_eq!(h.run("HPERSIST none FIELDS 1 a").await, ints(&[-2]));
    // Deleting the last fields deletes the key.
    assert_eq!(h.run("HEXPIRE h 0 FIELDS 2 a b").await, ints(&[2, 2]));
    assert_eq!(h.run("EXISTS h").await, int(0));
}

#[tokio::test]
async fn hexpire_errors() {
    let mut h = Harness::new();
    h.run("HSET h a 1").await;
    h.run("SET s v").await;
    assert_eq!(h.run("HEXPIRE s 10 FIELDS 1 a").await, err(WRONGTYPE));
    assert_eq!(h.run("HEXPIRE s x FIELDS 1 a").await, err(WRONGTYPE));
    assert_eq!(h.run("HTTL s FIELDS 1 a").await, err(WRONGTYPE));
    assert_eq!(h.run("HPERSIST s FIELDS 1 a").await, err(WRONGTYPE));
    assert_eq!(h.run("HRANDFIELD s").await, err(WRONGTYPE));
    assert_eq!(h.run("HEXPIRE h x FIELDS 1 a").await, err(NOT_INT));
    assert_eq!(
        h.run("HEXPIRE h -1 FIELDS 1 a").await,
        err("ERR invalid expire time, must be >= 0")
    );
    assert_eq!(
        h.run("HEXPIRE h 99999999999999 FIELDS 1 a").await,
        err("ERR invalid expire time in 'hexpire' command")
    );
    assert_eq!(
        h.run("HPEXPIREAT h 281474976710656 FIELDS 1 a").await,
        err("ERR invalid expire time in 'hpexpireat' command")
    );
    let missing = "ERR Mandatory argument FIELDS is missing or not at the right position";
    assert_eq!(h.run("HEXPIRE h 10 FOO 1 a").await, err(missing));
    assert_eq!(h.run("HEXPIRE h 10 NX XX FIELDS 1 a").await, err(missing));
    assert_eq!(h.run("HTTL h FOO 1 a").await, err(missing));
    assert_eq!(
        h.run("HEXPIRE h 10 FIELDS 0 a").await,
        err("ERR Parameter `numFields` should be greater than 0")
    );
    assert_eq!(
        h.run("HTTL h FIELDS x a").await,
        err("ERR Number of fields must be a positive integer")
    );
    let mismatch = "ERR The `numfields` parameter must match the number of arguments";
    assert_eq!(h.run("HEXPIRE h 10 FIELDS 2 a").await, err(mismatch));
    assert_eq!(h.run("HPERSIST h FIELDS 1 a b").await, err(mismatch));
    assert_eq!(
        h.run("HEXPIRE h 10 FIELDS").await,
        err("ERR wrong number of arguments for 'hexpire' command")
    );
    assert_eq!(
        h.run("HTTL h FIELDS 1 a").await,
        ints(&[-1]),
        "nothing applied"
    );
    // A hash whose fields never had a TTL (the v1 value format).
    assert_eq!(h.run("HPERSIST h FIELDS 2 a zz").await, ints(&[-1, -2]));
    assert_eq!(h.run("HTTL h FIELDS 2 a zz").await, ints(&[-1, -2]));
    assert_eq!(h.run("HEXPIRE h 0 FIELDS 1 zz").await, ints(&[-2]));
    assert_eq!(h.run("HGET h a").await, bulk("1"));
}

#[tokio::test]
async fn expired_fields_are_invisible_and_hlen_is_exact() {
    let mut h = Harness::new();
    h.run("HSET h a 1 b 2 c 3").await;
    assert_eq!(h.run("HPEXPIRE h 40 FIELDS 2 a b").await, ints(&[1, 1]));
    assert_eq!(h.run("HLEN h").await, int(3));
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(h.run("HGET h a").await, null());
    assert_eq!(
        h.run("HMGET h a c").await,
        Reply::Array(vec![null(), bulk("3")])
    );
    assert_eq!(h.run("HEXISTS h b").await, int(0));
    assert_eq!(h.run("HSTRLEN h b").await, int(0));
    assert_eq!(h.run("HLEN h").await, int(1));
    assert_eq!(
        h.run("HGETALL h").await,
        Reply::Map(vec![(bulk("c"), bulk("3"))])
    );
    assert_eq!(h.run("HKEYS h").await, array(&["c"]));
    assert_eq!(h.run("HVALS h").await, array(&["3"]));
    assert_eq!(
        h.run("HSCAN h 0").await,
        Reply::Array(vec![bulk("0"), array(&["c", "3"])])
    );
    assert_eq!(h.run("HTTL h FIELDS 2 a c").await, ints(&[-2, -1]));
    assert_eq!(h.run("HRANDFIELD h").await, bulk("c"));
    assert_eq!(h.run("HRANDFIELD h -3").await, array(&["c", "c", "c"]));
    // A writer purges: the expired field counts as new again.
    assert_eq!(h.run("HSET h a 9").await, int(1));
    assert_eq!(h.run("HINCRBY h b 5").await, int(5));
    assert_eq!(h.run("HLEN h").await, int(3));
    assert_eq!(h.run("HDEL h zz").await, int(0));
    assert_eq!(
        h.run("HGETALL h").await,
        Reply::Map(vec![
            (bulk("a"), bulk("9")),
            (bulk("b"), bulk("5")),
            (bulk("c"), bulk("3")),
        ])
    );
}

#[tokio::test]
async fn hset_clears_and_hincrby_keeps_a_field_ttl() {
    let mut h = Harness::new();
    h.run("HSET h a 1 b 2 n 10 f 1.5").await;
    h.run("HEXPIRE h 100 FIELDS 4 a b n f").await;
    assert_eq!(h.run("HSET h a 5").await, int(0));
    assert_eq!(h.run("HSETNX h b 7").await, int(0));
    assert_eq!(h.run("HINCRBY h n 1").await, int(11));
    assert_eq!(h.run("HINCRBYFLOAT h f 1").await, bulk("2.5"));
    assert_eq!(
        h.run("HTTL h FIELDS 4 a b n f").await,
        ints(&[-1, 100, 100, 100])
    );
    assert_eq!(h.run("HDEL h b n").await, int(2));
    assert_eq!(h.run("HSET h x 1").await, int(1));
    assert_eq!(h.run("HTTL h FIELDS 3 a f x").await, ints(&[-1, 100, -1]));
    assert_eq!(h.run("HGET h a").await, bulk("5"));
}

#[tokio::test]
async fn sweeper_purges_expired_fields_and_empty_hashes() {
    let mut h = Harness::new();
    h.run("HSET all a 1 b 2").await;
    h.run("HPEXPIRE all 20 FIELDS 2 a b").await;
    h.run("HSET some a 1 b 2").await;
    h.run("HPEXPIRE some 20 FIELDS 1 a").await;
    tokio::time::sleep(Duration::from_millis(40)).await;
    assert_eq!(h.run("HLEN all").await, int(0));
    let mut cursor = None;
    loop {
        sweep_expired(&h.server, &mut cursor, 10).await.unwrap();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(h.run("EXISTS all").await, int(0));
    assert_eq!(
        h.run("HGETALL some").await,
        Reply::Map(vec![(bulk("b"), bulk("2"))])
    );
    assert_eq!(h.run("HLEN some").await, int(1));
}

#[tokio::test]
async fn hrandfield_counts_and_values() {
    let mut h = Harness::new();
    assert_eq!(h.run("HRANDFIELD none").await, null());
    assert_eq!(h.run("HRANDFIELD none 3").await, array(&[]));
    h.run("HSET h a 1 b 2 c 3").await;
    let one = h.run("HRANDFIELD h").await;
    assert!([bulk("a"), bulk("b"), bulk("c")].contains(&one));
    assert_eq!(sorted(h.run("HRANDFIELD h 10").await), vec!["a", "b", "c"]);
    assert_eq!(sorted(h.run("HRANDFIELD h 2").await).len(), 2);
    assert_eq!(h.run("HRANDFIELD h 0").await, array(&[]));
    let Reply::Array(repeated) = h.run("HRANDFIELD h -7").await else {
        panic!()
    };
    assert_eq!(repeated.len(), 7);
    let Reply::Pairs(pairs) = h.run("HRANDFIELD h 5 WITHVALUES").await else {
        panic!()
    };
    let mut pairs: Vec<(Reply, Reply)> = pairs;
    pairs.sort_by_key(|(f, _)| format!("{f:?}"));
    assert_eq!(
        pairs,
        vec![
            (bulk("a"), bulk("1")),
            (bulk("b"), bulk("2")),
            (bulk("c"), bulk("3"))
        ]
    );
    let Reply::Pairs(pairs) = h.run("HRANDFIELD h -4 withvalues").await else {
        panic!()
    };
    assert_eq!(pairs.len(), 4);
    assert_eq!(h.run("HRANDFIELD h 1 FOO").await, err(SYNTAX));
    assert_eq!(h.run("HRANDFIELD h 1 WITHVALUES x").await, err(SYNTAX));
    assert_eq!(h.run("HRANDFIELD h x").await, err(NOT_INT));
    assert_eq!(
        h.run("HRANDFIELD h -9223372036854775807 WITHVALUES").await,
        err("ERR value is out of range")
    );
}

#[tokio::test]
async fn field_ttls_survive_a_reopen_and_copy() {
    let mut h = Harness::new();
    h.run("HSET h a 1 b 2").await;
    h.run("HEXPIRE h 100 FIELDS 1 a").await;
    h.run("COPY h h2").await;
    let mut h = h.reopen();
    assert_eq!(h.run("HTTL h FIELDS 2 a b").await, ints(&[100, -1]));
    assert_eq!(h.run("HTTL h2 FIELDS 2 a b").await, ints(&[100, -1]));
    assert_eq!(h.run("HGET h a").await, bulk("1"));
    assert_eq!(h.run("HLEN h2").await, int(2));
}
