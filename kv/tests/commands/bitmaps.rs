//! Bitmap commands on strings (examples from the Redis documentation), offset bounds from
//! proto-max-bulk-len, BYTE / BIT ranges, BITOP, WRONGTYPE and TTL handling.

use crate::harness::*;
use orcinus_kv::{KvConfig, Reply};

const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";

#[tokio::test]
async fn setbit_getbit() {
    let mut h = Harness::new();
    assert_eq!(h.run("SETBIT k 7 1").await, int(0));
    assert_eq!(h.run("SETBIT k 7 1").await, int(1));
    assert_eq!(h.run("GETBIT k 0").await, int(0));
    assert_eq!(h.run("GETBIT k 7").await, int(1));
    assert_eq!(h.run("GETBIT k 100").await, int(0));
    assert_eq!(h.run("GETBIT none 3").await, int(0));
    assert_eq!(h.run("GET k").await, bulk("\u{1}"));
    assert_eq!(h.run("SETBIT k 9 1").await, int(0));
    assert_eq!(h.run("STRLEN k").await, int(2), "grown with zero bytes");
    assert_eq!(h.run("SETBIT k 7 0").await, int(1));
    assert_eq!(h.run("GETBIT k 7").await, int(0));
    assert_eq!(h.run("SETBIT k -1 1").await, err(BAD_OFFSET));
    assert_eq!(h.run("SETBIT k x 1").await, err(BAD_OFFSET));
    assert_eq!(h.run("GETBIT k -1").await, err(BAD_OFFSET));
    assert_eq!(h.run("SETBIT k 4294967296 1").await, err(BAD_OFFSET));
    assert_eq!(
        h.run("SETBIT k 1 2").await,
        err("ERR bit is not an integer or out of range")
    );
    assert_eq!(
        h.run("SETBIT k 1 x").await,
        err("ERR bit is not an integer or out of range")
    );
    h.run("EXPIRE k 100").await;
    h.run("SETBIT k 3 1").await;
    assert!(
        matches!(h.run("TTL k").await, Reply::Integer(t) if t > 0),
        "SETBIT keeps the TTL"
    );
}

#[tokio::test]
async fn offsets_are_bounded_by_proto_max_bulk_len() {
    let mut h = Harness::with_config(KvConfig {
        proto_max_bulk_len: 16,
        ..KvConfig::default()
    });
    assert_eq!(h.run("SETBIT k 127 1").await, int(0));
    assert_eq!(h.run("STRLEN k").await, int(16));
    assert_eq!(h.run("SETBIT k 128 1").await, err(BAD_OFFSET));
    assert_eq!(h.run("GETBIT k 128").await, err(BAD_OFFSET));
    assert_eq!(h.run("GETBIT k 127").await, int(1));
}

#[tokio::test]
async fn bitcount_ranges() {
    let mut h = Harness::new();
    h.run("SET k foobar").await;
    assert_eq!(h.run("BITCOUNT k").await, int(26));
    assert_eq!(h.run("BITCOUNT k 0 0").await, int(4));
    assert_eq!(h.run("BITCOUNT k 1 1").await, int(6));
    assert_eq!(h.run("BITCOUNT k 1 1 BYTE").await, int(6));
    assert_eq!(h.run("BITCOUNT k 5 30 BIT").await, int(17));
    assert_eq!(h.run("BITCOUNT k 0 -1").await, int(26));
    assert_eq!(h.run("BITCOUNT k -2 -1").await, int(7), "'a' + 'r'");
    assert_eq!(h.run("BITCOUNT k -1 -2").await, int(0));
    assert_eq!(h.run("BITCOUNT k -100 -200").await, int(0));
    assert_eq!(h.run("BITCOUNT k 4 2").await, int(0));
    assert_eq!(h.run("BITCOUNT k 0 1000").await, int(26));
    assert_eq!(
        h.run("BITCOUNT k 0 0 BIT").await,
        int(0),
        "first bit of 'f'"
    );
    assert_eq!(h.run("BITCOUNT k 1 2 BIT").await, int(2));
    assert_eq!(h.run("BITCOUNT none").await, int(0));
    assert_eq!(h.run("BITCOUNT none 0 1").await, int(0));
    assert_eq!(h.run("BITCOUNT k 0").await, err(SYNTAX));
    assert_eq!(h.run("BITCOUNT k 0 1 BYTE x").await, err(SYNTAX));
    assert_eq!(h.run("BITCOUNT k 0 1 WORD").await, err(SYNTAX));
    assert_eq!(h.run("BITCOUNT k a 1").await, err(NOT_INT));
    h.run("SET y y").await;
    assert_eq!(h.run("BITCOUNT y 0 -1 BIT").await, int(5), "'y' = 0x79");
    assert_eq!(h.run("BITCOUNT y 1 4 BIT").await, int(4));
}

#[tokio::test]
async fn bitpos_ranges() {
    let mut h = Harness::new();
    h.raw(&[b"SET", b"k", b"\xff\xf0\x00"]).await;
    assert_eq!(h.run("BITPOS k 0").await, int(12));
    h.raw(&[b"SET", b"k", b"\x00\xff\xf0"]).await;
    assert_eq!(h.run("BITPOS k 1 0").await, int(8));
    assert_eq!(h.run("BITPOS k 1 2").await, int(16));
    assert_eq!(h.run("BITPOS k 1 2 -1 BYTE").await, int(16));
    assert_eq!(h.run("BITPOS k 1 7 15 BIT").await, int(8));
    assert_eq!(h.run("BITPOS k 0 8 15 BIT").await, int(-1));
    assert_eq!(
        h.run("BITPOS k 0 8 BIT").await,
        err(NOT_INT),
        "BIT needs an end"
    );
    assert_eq!(
        h.run("BITPOS k 0 1 1").await,
        int(-1),
        "0xff has no clear bit"
    );
    assert_eq!(h.run("BITPOS k 0 12 20 BIT").await, int(20));
    h.raw(&[b"SET", b"k", b"\x00\x00\x00"]).await;
    assert_eq!(h.run("BITPOS k 1").await, int(-1));
    assert_eq!(h.run("BITPOS k 1 7 -3 BIT").await, int(-1));
    h.raw(&[b"SET", b"k", b"\xff\xff\xff"]).await;
    assert_eq!(
        h.run("BITPOS k 0").await,
        int(24),
        "no end: padded with zeros"
    );
    assert_eq!(h.run("BITPOS k 0 1").await, int(24));
    assert_eq!(h.run("BITPOS k 0 0 -1").await, int(-1), "explicit end");
    assert_eq!(h.run("BITPOS k 1 5 2").await, int(-1), "empty range");
    assert_eq!(h.run("BITPOS none 0").await, int(0));
    assert_eq!(h.run("BITPOS none 1").await, int(-1));
    assert_eq!(
        h.run("BITPOS none 1 x").await,
        int(-1),
        "missing key answers first"
    );
    assert_eq!(
        h.run("BITPOS k 2").await,
        err("ERR The bit argument must be 1 or 0.")
    );
    assert_eq!(h.run("BITPOS k x").await, err(NOT_INT));
    assert_eq!(h.run("BITPOS k 1 x").await, err(NOT_INT));
    assert_eq!(h.run("BITPOS k 1 0 1 WORD").await, err(SYNTAX));
    assert_eq!(h.run("BITPOS k 1 0 1 BIT x").await, err(SYNTAX));
    h.run("SET e x").await;
    h.run("GETDEL e").await;
    h.raw(&[b"SET", b"e", b""]).await;
    assert_eq!(h.run("BITPOS e 0").await, int(-1), "empty string");
}

#[tokio::test]
async fn bitop_operations() {
    let mut h = Harness::new();
    h.run("SET key1 foobar").await;
    h.run("SET key2 abcdef").await;
    assert_eq!(h.run("BITOP AND dest key1 key2").await, int(6));
    assert_eq!(h.run("GET dest").await, bulk("`bc`ab"));
    h.raw(&[b"SET", b"a", b"\x0f\xf0"]).await;
    h.raw(&[b"SET", b"b", b"\xff"]).await;
    assert_eq!(h.run("BITOP OR d a b").await, int(2));
    assert_eq!(h.run("GET d").await, Reply::bulk(b"\xff\xf0"));
    assert_eq!(h.run("BITOP XOR d a b").await, int(2));
    assert_eq!(h.run("GET d").await, Reply::bulk(b"\xf0\xf0"));
    assert_eq!(h.run("BITOP AND d a b none").await, int(2));
    assert_eq!(h.run("GET d").await, Reply::bulk(b"\x00\x00"));
    assert_eq!(h.run("BITOP not d a").await, int(2));
    assert_eq!(h.run("GET d").await, Reply::bulk(b"\xf0\x0f"));
    h.run("EXPIRE d 100").await;
    assert_eq!(h.run("BITOP OR d a").await, int(2));
    assert_eq!(h.run("TTL d").await, int(-1), "dest replaced like SET");
    assert_eq!(h.run("BITOP OR d none1 none2").await, int(0));
    assert_eq!(h.run("EXISTS d").await, int(0), "empty result deletes dest");
    assert_eq!(
        h.run("BITOP NOT d a b").await,
        err("ERR BITOP NOT must be called with a single source key.")
    );
    assert_eq!(h.run("BITOP NAND d a b").await, err(SYNTAX));
    assert_eq!(
        h.run("BITOP AND d").await,
        err("ERR wrong number of arguments for 'bitop' command")
    );
    h.run("HSET hash f v").await;
    assert_eq!(h.run("BITOP AND d a hash").await, err(WRONGTYPE));
    assert_eq!(
        h.run("BITOP AND hash a").await,
        int(2),
        "dest type is irrelevant"
    );
    assert_eq!(h.run("TYPE hash").await, Reply::Simple("string".into()));
}

#[tokio::test]
async fn bitmap_wrongtype() {
    let mut h = Harness::new();
    h.run("SADD s a").await;
    for cmd in [
        "SETBIT s 1 1",
        "GETBIT s 1",
        "BITCOUNT s",
        "BITCOUNT s 0 1",
        "BITPOS s 1",
    ] {
        assert_eq!(h.run(cmd).await, err(WRONGTYPE), "{cmd}");
    }
}
