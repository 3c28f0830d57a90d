//! DUMP / RESTORE: round trips of every type (large and binary-safe ones too), TTL rules
//! (0, relative, ABSTTL, past expiry), REPLACE / BUSYKEY, the IDLETIME / FREQ checks, bad
//! checksums, versions and truncations, hash field TTLs, blocked clients / WATCH / MULTI.
//! The helpers here are shared with `dump_vectors` and `dump_fuzz`.

use crate::harness::*;
use orcinus_kv::dump::{RDB_VERSION, rdb_codec::crc64};
use orcinus_kv::{Bytes, Reply};

pub const BUSYKEY: &str = "BUSYKEY Target key name already exists.";
pub const BAD_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
pub const BAD_FORMAT: &str = "ERR Bad data format";

fn bytes_of(reply: Reply) -> Vec<Vec<u8>> {
    let items = match reply {
        Reply::Array(items) | Reply::Set(items) => items,
        Reply::Bulk(b) => return vec![b.to_vec()],
        other => panic!("unexpected {other:?}"),
    };
    items
        .into_iter()
        .map(|r| match r {
            Reply::Bulk(b) => b.to_vec(),
            other => panic!("not bulk: {other:?}"),
        })
        .collect()
}

/// The type of `key` and its contents in a canonical order (sets sorted, hash pairs sorted
/// by field, zsets as ZRANGE … WITHSCORES).
pub async fn snapshot(h: &mut Harness, key: &str) -> (String, Vec<Vec<u8>>) {
    let Reply::Simple(kind) = h.run(&format!("TYPE {key}")).await else {
        panic!("TYPE failed")
    };
    let kind = kind.into_owned();
    let contents = match kind.as_str() {
        "string" => bytes_of(h.run(&format!("GET {key}")).await),
        "list" => bytes_of(h.run(&format!("LRANGE {key} 0 -1")).await),
        "set" => {
            let mut members = bytes_of(h.run(&format!("SMEMBERS {key}")).await);
            members.sort();
            members
        }
        "hash" => {
            let flat = bytes_of(h.wire(&format!("HGETALL {key}")).await);
            let mut pairs: Vec<Vec<Vec<u8>>> = flat.chunks(2).map(<[_]>::to_vec).collect();
            pairs.sort();
            pairs.concat()
        }
        "zset" => bytes_of(h.wire(&format!("ZRANGE {key} 0 -1 WITHSCORES")).await),
        _ => Vec::new(),
    };
    (kind, contents)
}

pub async fn dump(h: &mut Harness, key: &str) -> Vec<u8> {
    match h.run(&format!("DUMP {key}")).await {
        Reply::Bulk(b) => b.to_vec(),
        other => panic!("DUMP {key}: {other:?}"),
    }
}

pub async fn restore(
    h: &mut Harness,
    key: &str,
    ttl: &str,
    payload: &[u8],
    opts: &[&str],
) -> Reply {
    let mut args: Vec<&[u8]> = vec![b"RESTORE", key.as_bytes(), ttl.as_bytes(), payload];
    args.extend(opts.iter().map(|o| o.as_bytes()));
    h.raw(&args).await
}

/// Replaces the trailer of `payload` with `version` and a correct CRC.
pub fn with_trailer(body: &[u8], version: u16) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

pub fn body(payload: &[u8]) -> &[u8] {
    &payload[..payload.len() - 10]
}

#[tokio::test]
async fn every_type_round_trips_binary_safe() {
    let mut h = Harness::new();
    h.raw(&[b"SET", b"s", b"bin\x00\xff\r\nvalue"]).await;
    h.raw(&[b"RPUSH", b"l", b"a", b"", b"\x00", b"a", b"12"])
        .await;
    h.raw(&[b"SADD", b"st", b"x", b"\x00y", b"", b"-5"]).await;
    h.raw(&[b"HSET", b"hs", b"f\x00", b"\xff", b"", b"empty", b"n", b"1"])
        .await;
    h.raw(&[
        b"ZADD", b"z", b"1.5", b"m\x00", b"-inf", b"lo", b"inf", b"hi", b"0", b"",
    ])
    .await;
    for key in ["s", "l", "st", "hs", "z"] {
        let payload = dump(&mut h, key).await;
        let copy = format!("{key}-copy");
        assert_eq!(restore(&mut h, &copy, "0", &payload, &[]).await, ok());
        assert_eq!(snapshot(&mut h, &copy).await, snapshot(&mut h, key).await);
        assert_eq!(dump(&mut h, &copy).await, payload, "{key}: DUMP is stable");
        assert_eq!(h.run(&format!("TTL {copy}")).await, int(-1));
    }
    assert_eq!(h.run("DUMP nope").await, null());
    // The restored collections behave like any other (list indexes, score index).
    assert_eq!(h.run("RPOP l-copy").await, bulk("12"));
    assert_eq!(h.run("LPUSH l-copy first").await, int(5));
    assert_eq!(h.run("LINDEX l-copy 0").await, bulk("first"));
    let by_score = h.run("ZRANGEBYSCORE z-copy 1 +inf").await;
    assert_eq!(bytes_of(by_score), [b"m\x00".to_vec(), b"hi".to_vec()]);
    assert_eq!(h.run("ZPOPMAX z-copy").await, h.run("ZPOPMAX z").await);
    assert_eq!(h.run("ZCARD z-copy").await, int(3));
}

#[tokio::test]
async fn large_collections_round_trip() {
    let mut h = Harness::new();
    let n = 3000;
    let words: Vec<String> = (0..n).map(|i| format!("member-{i}")).collect();
    let join = |prefix: &str, f: &dyn Fn(usize, &String) -> String| {
        let parts: Vec<String> = words.iter().enumerate().map(|(i, w)| f(i, w)).collect();
        format!("{prefix} {}", parts.join(" "))
    };
    h.run(&join("RPUSH l", &|_, w| w.clone())).await;
    h.run(&join("SADD s", &|_, w| w.clone())).await;
    h.run(&join("HSET h", &|i, w| format!("{w} {i}"))).await;
    h.run(&join("ZADD z", &|i, w| format!("{} {w}", i as f64 / 3.0)))
        .await;
    h.run(&format!("SET big {}", "x".repeat(100_000))).await;
    for key in ["l", "s", "h", "z", "big"] {
        let payload = dump(&mut h, key).await;
        assert_eq!(
            restore(&mut h, "copy", "0", &payload, &["REPLACE"]).await,
            ok()
        );
        assert_eq!(snapshot(&mut h, "copy").await, snapshot(&mut h, key).await);
    }
}

#[tokio::test]
async fn ttl_rules() {
    let mut h = Harness::new();
    h.run("SET src v").await;
    let payload = dump(&mut h, "src").await;
    assert_eq!(restore(&mut h, "k0", "0", &payload, &[]).await, ok());
    assert_eq!(h.run("PTTL k0").await, int(-1));
    assert_eq!(restore(&mut h, "k1", "5000", &payload, &[]).await, ok());
    let Reply::Integer(pttl) = h.run("PTTL k1").await else {
        panic!()
    };
    assert!((4000..=5000).contains(&pttl), "{pttl}");
    let at = "4102444800123";
    assert_eq!(restore(&mut h, "k2", at, &payload, &["ABSTTL"]).await, ok());
    assert_eq!(h.run("PEXPIRETIME k2").await, int(4_102_444_800_123));
    // An absolute expiry in the past: OK, and no key (with REPLACE the old key is deleted).
    assert_eq!(
        restore(&mut h, "k3", "1000", &payload, &["ABSTTL"]).await,
        ok()
    );
    assert_eq!(h.run("EXISTS k3").await, int(0));
    assert_eq!(
        restore(&mut h, "k2", "1", &payload, &["ABSTTL", "REPLACE"]).await,
        ok()
    );
    assert_eq!(h.run("EXISTS k2").await, int(0));
    assert_eq!(
        restore(&mut h, "k4", "-1", &payload, &[]).await,
        err("ERR Invalid TTL value, must be >= 0")
    );
    assert_eq!(
        restore(&mut h, "k4", "1.5", &payload, &[]).await,
        err(NOT_INT)
    );
    assert_eq!(
        restore(&mut h, "k4", "9223372036854775807", &payload, &[]).await,
        err("ERR invalid expire time in 'restore' command")
    );
    assert_eq!(h.run("EXISTS k4").await, int(0));
    // The TTL is the command's, never the dumped key's.
    h.run("SET withttl v EX 100").await;
    let payload = dump(&mut h, "withttl").await;
    assert_eq!(restore(&mut h, "k5", "0", &payload, &[]).await, ok());
    assert_eq!(h.run("TTL k5").await, int(-1));
}

#[tokio::test]
async fn replace_and_busykey() {
    let mut h = Harness::new();
    h.run("SADD old a b c").await;
    h.run("SADD new x").await;
    let payload = dump(&mut h, "new").await;
    assert_eq!(
        restore(&mut h, "old", "0", &payload, &[]).await,
        err(BUSYKEY)
    );
    // BUSYKEY comes before the TTL and the payload are looked at, as in Redis.
    assert_eq!(
        restore(&mut h, "old", "x", b"junk", &[]).await,
        err(BUSYKEY)
    );
    assert_eq!(h.run("SCARD old").await, int(3));
    assert_eq!(
        restore(&mut h, "old", "0", &payload, &["replace"]).await,
        ok()
    );
    assert_eq!(bytes_of(h.run("SMEMBERS old").await), [b"x".to_vec()]);
    h.run("HSET h f v").await;
    let string = {
        h.run("SET s str").await;
        dump(&mut h, "s").await
    };
    assert_eq!(restore(&mut h, "h", "0", &string, &["REPLACE"]).await, ok());
    assert_eq!(h.run("GET h").await, bulk("str"));
    // An expired key does not count as existing.
    h.run("SET gone v PX 1").await;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(restore(&mut h, "gone", "0", &string, &[]).await, ok());
}

#[tokio::test]
async fn options_and_arity() {
    let mut h = Harness::new();
    h.run("SET s v").await;
    let p = dump(&mut h, "s").await;
    assert_eq!(
        restore(&mut h, "a", "0", &p, &["IDLETIME", "10"]).await,
        ok()
    );
    assert_eq!(
        restore(&mut h, "b", "0", &p, &["FREQ", "255", "ABSTTL"]).await,
        ok()
    );
    let cases: [(&[&str], &str); 8] = [
        (
            &["IDLETIME", "-1"],
            "ERR Invalid IDLETIME value, must be >= 0",
        ),
        (
            &["FREQ", "256"],
            "ERR Invalid FREQ value, must be >= 0 and <= 255",
        ),
        (
            &["FREQ", "-1"],
            "ERR Invalid FREQ value, must be >= 0 and <= 255",
        ),
        (&["IDLETIME", "x"], NOT_INT),
        (&["IDLETIME", "1", "FREQ", "1"], SYNTAX),
        (&["FREQ", "1", "IDLETIME", "1"], SYNTAX),
        (&["IDLETIME"], SYNTAX),
        (&["BOGUS"], SYNTAX),
    ];
    for (opts, want) in cases {
        assert_eq!(
            restore(&mut h, "c", "0", &p, opts).await,
            err(want),
            "{opts:?}"
        );
    }
    assert_eq!(h.run("EXISTS c").await, int(0));
    assert_eq!(
        h.run("DUMP").await,
        err("ERR wrong number of arguments for 'dump' command")
    );
    assert_eq!(
        h.run("DUMP a b").await,
        err("ERR wrong number of arguments for 'dump' command")
    );
    assert_eq!(
        h.run("RESTORE a 0").await,
        err("ERR wrong number of arguments for 'restore' command")
    );
}

#[tokio::test]
async fn bad_payloads_are_rejected() {
    let mut h = Harness::new();
    h.run("RPUSH l a b c").await;
    let good = dump(&mut h, "l").await;
    let n = good.len();
    let mut bad_crc = good.clone();
    bad_crc[n - 3] ^= 0x10;
    let mut flipped_body = good.clone();
    flipped_body[2] ^= 1;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (bad_crc, BAD_PAYLOAD),
        (flipped_body, BAD_PAYLOAD),
        (good[..n - 1].to_vec(), BAD_PAYLOAD),
        (good[..9].to_vec(), BAD_PAYLOAD),
        (Vec::new(), BAD_PAYLOAD),
        (with_trailer(body(&good), 13), BAD_PAYLOAD),
        (
            with_trailer(&body(&good)[..body(&good).len() - 1], RDB_VERSION),
            BAD_FORMAT,
        ),
        (
            with_trailer(&[body(&good), b"x"].concat(), RDB_VERSION),
            BAD_FORMAT,
        ),
        (with_trailer(b"", RDB_VERSION), BAD_FORMAT),
        (with_trailer(&[1, 0], RDB_VERSION), BAD_FORMAT),
        (with_trailer(&[15, 0], RDB_VERSION), BAD_FORMAT),
        (
            with_trailer(
                &[0, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                9,
            ),
            BAD_FORMAT,
        ),
    ];
    for (payload, want) in cases {
        assert_eq!(
            restore(&mut h, "k", "0", &payload, &[]).await,
            err(want),
            "{payload:?}"
        );
    }
    assert_eq!(h.run("EXISTS k").await, int(0));
    // A bad payload with REPLACE leaves the old key alone.
    let mut bad = good.clone();
    bad[n - 1] ^= 1;
    assert_eq!(
        restore(&mut h, "l", "0", &bad, &["REPLACE"]).await,
        err(BAD_PAYLOAD)
    );
    assert_eq!(h.run("LRANGE l 0 -1").await, array(&["a", "b", "c"]));
    // Versions up to 12 (Redis 7.4) are accepted.
    for version in [1, 10, 12] {
        let p = with_trailer(body(&good), version);
        assert_eq!(restore(&mut h, "k", "0", &p, &["REPLACE"]).await, ok());
    }
    assert_eq!(h.run("LRANGE k 0 -1").await, array(&["a", "b", "c"]));
}

#[tokio::test]
async fn lzf_strings_are_bounded_by_proto_max_bulk_len() {
    let config = orcinus_kv::KvConfig {
        proto_max_bulk_len: 2000,
        ..orcinus_kv::KvConfig::default()
    };
    let mut h = Harness::with_config(config);
    // LZF: the literal "a", then n back references of 264 bytes each to the byte before.
    let lzf = |n: usize| {
        let mut data = vec![0, b'a'];
        for _ in 0..n {
            data.extend_from_slice(&[0xe0, 255, 0]);
        }
        let len = 1 + 264 * n;
        let mut body = vec![
            0,
            0xc3,
            data.len() as u8,
            0x40 | (len >> 8) as u8,
            len as u8,
        ];
        body.extend_from_slice(&data);
        (with_trailer(&body, RDB_VERSION), len)
    };
    let (fits, len) = lzf(7);
    assert_eq!(restore(&mut h, "k", "0", &fits, &[]).await, ok());
    assert_eq!(h.run("STRLEN k").await, int(len as i64));
    assert_eq!(h.run("GET k").await, bulk(&"a".repeat(len)));
    let (too_long, _) = lzf(8);
    assert_eq!(
        restore(&mut h, "k2", "0", &too_long, &[]).await,
        err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    );
    assert_eq!(h.run("EXISTS k2").await, int(0));
}

#[tokio::test]
async fn hash_field_ttls_are_carried() {
    let mut h = Harness::new();
    h.run("HSET h a 1 b 2 c 3").await;
    h.run("HPEXPIREAT h 4102444800123 FIELDS 1 a").await;
    h.run("HPEXPIREAT h 4102444800999 FIELDS 1 c").await;
    let payload = dump(&mut h, "h").await;
    assert_eq!(payload[0], 24, "RDB_TYPE_HASH_METADATA");
    assert_eq!(payload[payload.len() - 10..payload.len() - 8], [12, 0]);
    assert_eq!(restore(&mut h, "h2", "0", &payload, &[]).await, ok());
    assert_eq!(snapshot(&mut h, "h2").await, snapshot(&mut h, "h").await);
    assert_eq!(
        h.run("HPEXPIRETIME h2 FIELDS 3 a b c").await,
        Reply::Array(vec![
            int(4_102_444_800_123),
            int(-1),
            int(4_102_444_800_999)
        ])
    );
    // Fields whose expiry passed before RESTORE are left out; a hash left with none is not
    // created (like a key whose own TTL has passed).
    h.run("HSET short x 1 y 2").await;
    h.run("HPEXPIRE short 50 FIELDS 1 x").await;
    let payload = dump(&mut h, "short").await;
    h.run("HPEXPIRE short 50 FIELDS 1 y").await;
    let all_expiring = dump(&mut h, "short").await;
    tokio::time::sleep(std::time::Duration::from_millis(80)).await;
    assert_eq!(restore(&mut h, "s2", "0", &payload, &[]).await, ok());
    assert_eq!(
        h.run("HGETALL s2").await,
        Reply::Map(vec![(bulk("y"), bulk("2"))])
    );
    assert_eq!(h.run("HLEN s2").await, int(1));
    assert_eq!(restore(&mut h, "s3", "0", &all_expiring, &[]).await, ok());
    assert_eq!(h.run("EXISTS s3").await, int(0));
    assert_eq!(h.run("DUMP short").await, null(), "all fields expired");
}

#[tokio::test]
async fn restore_wakes_blocked_clients_and_touches_watched_keys() {
    let mut h = Harness::new();
    h.run("RPUSH src a b").await;
    let payload = dump(&mut h, "src").await;
    let server = h.server.clone();
    let mut other = h.new_session();
    let waiter = tokio::spawn(async move { run_in(&server, &mut other, "BLPOP q 0").await });
    while h.server.blocked_clients() == 0 {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    assert_eq!(restore(&mut h, "q", "0", &payload, &[]).await, ok());
    assert_eq!(waiter.await.unwrap(), array(&["q", "a"]));
    assert_eq!(h.run("LRANGE q 0 -1").await, array(&["b"]));
    // A RESTORE by another client aborts a transaction watching the key.
    assert_eq!(h.run("WATCH w").await, ok());
    let mut other = h.new_session();
    let mut args = vec![Bytes::from("RESTORE"), Bytes::from("w"), Bytes::from("0")];
    args.push(Bytes::from(payload.clone()));
    assert_eq!(h.server.execute(&mut other, args).await, ok());
    h.run("MULTI").await;
    h.run("GET w").await;
    assert_eq!(h.run("EXEC").await, Reply::NullArray);
    // Inside MULTI it queues and runs in EXEC's transaction.
    h.run("MULTI").await;
    h.raw(&[b"RESTORE", b"m", b"0", &payload]).await;
    assert_eq!(h.run("EXEC").await, Reply::Array(vec![ok()]));
    assert_eq!(h.run("LLEN m").await, int(2));
}
