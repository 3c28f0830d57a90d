//! String commands: GET/SET (all options), SETNX/SETEX/PSETEX, GETSET/GETDEL/GETEX, MGET/MSET/
//! MSETNX, APPEND/STRLEN/GETRANGE/SETRANGE, the INCR family — results and Redis error texts.

use crate::harness::*;

#[tokio::test]
async fn get_set_and_options() {
    let mut h = Harness::new();
    assert_eq!(h.run("GET k").await, null());
    assert_eq!(h.run("SET k v").await, ok());
    assert_eq!(h.run("GET k").await, bulk("v"));
    assert_eq!(h.run("SET k v2 NX").await, null());
    assert_eq!(h.run("SET k v2 XX").await, ok());
    assert_eq!(h.run("SET n v XX").await, null());
    assert_eq!(h.run("SET k v3 GET").await, bulk("v2"));
    assert_eq!(h.run("SET k v4 NX GET").await, bulk("v3"));
    assert_eq!(h.run("SET k v EX 100").await, ok());
    assert_eq!(h.run("TTL k").await, int(100));
    assert_eq!(h.run("SET k v KEEPTTL").await, ok());
    assert_eq!(h.run("TTL k").await, int(100));
    assert_eq!(h.run("SET k v").await, ok());
    assert_eq!(h.run("TTL k").await, int(-1));
    assert_eq!(h.run("SET k v PX 100000").await, ok());
    assert_eq!(h.run("TTL k").await, int(100));
    assert_eq!(h.run("SET k v EXAT 1").await, ok());
    assert_eq!(h.run("GET k").await, null());
    assert_eq!(h.run("SET k v PXAT 99999999999999").await, ok());
    assert_eq!(h.run("PEXPIRETIME k").await, int(99_999_999_999_999));
}

#[tokio::test]
async fn set_errors() {
    let mut h = Harness::new();
    assert_eq!(h.run("SET k v NX XX").await, err(SYNTAX));
    assert_eq!(h.run("SET k v EX 10 PX 10").await, err(SYNTAX));
    assert_eq!(h.run("SET k v EX").await, err(SYNTAX));
    assert_eq!(h.run("SET k v BOGUS").await, err(SYNTAX));
    assert_eq!(h.run("SET k v EX abc").await, err(NOT_INT));
    assert_eq!(
        h.run("SET k v EX 0").await,
        err("ERR invalid expire time in 'set' command")
    );
    assert_eq!(
        h.run("SET k v EX -5").await,
        err("ERR invalid expire time in 'set' command")
    );
    assert_eq!(
        h.run("SET k v EX 9223372036854775807").await,
        err("ERR invalid expire time in 'set' command")
    );
    assert_eq!(
        h.run("SET k").await,
        err("ERR wrong number of arguments for 'set' command")
    );
    assert_eq!(h.run("HSET h f v").await, int(1));
    assert_eq!(h.run("SET h v GET").await, err(WRONGTYPE));
    assert_eq!(h.run("SET h v").await, ok());
    assert_eq!(h.run("GET h").await, bulk("v"));
}

#[tokio::test]
async fn setnx_setex_psetex_getset_getdel() {
    let mut h = Harness::new();
    assert_eq!(h.run("SETNX k a").await, int(1));
    assert_eq!(h.run("SETNX k b").await, int(0));
    assert_eq!(h.run("SETEX k 50 c").await, ok());
    assert_eq!(h.run("TTL k").await, int(50));
    assert_eq!(
        h.run("SETEX k 0 c").await,
        err("ERR invalid expire time in 'setex' command")
    );
    assert_eq!(h.run("PSETEX k 5000 d").await, ok());
    assert_eq!(h.run("TTL k").await, int(5));
    assert_eq!(
        h.run("PSETEX k -1 d").await,
        err("ERR invalid expire time in 'psetex' command")
    );
    assert_eq!(h.run("GETSET k e").await, bulk("d"));
    assert_eq!(h.run("TTL k").await, int(-1));
    assert_eq!(h.run("GETSET new e").await, null());
    assert_eq!(h.run("GETDEL k").await, bulk("e"));
    assert_eq!(h.run("GETDEL k").await, null());
    assert_eq!(h.run("HSET h f v").await, int(1));
    assert_eq!(h.run("GETSET h x").await, err(WRONGTYPE));
    assert_eq!(h.run("GETDEL h").await, err(WRONGTYPE));
    assert_eq!(h.run("GET h").await, err(WRONGTYPE));
}

#[tokio::test]
async fn getex_options() {
    let mut h = Harness::new();
    assert_eq!(h.run("GETEX k").await, null());
    h.run("SET k v").await;
    assert_eq!(h.run("GETEX k EX 100").await, bulk("v"));
    assert_eq!(h.run("TTL k").await, int(100));
    assert_eq!(h.run("GETEX k PERSIST").await, bulk("v"));
    assert_eq!(h.run("TTL k").await, int(-1));
    assert_eq!(
        h.run("GETEX k PX 0").await,
        err("ERR invalid expire time in 'getex' command")
    );
    assert_eq!(h.run("GETEX k EX 1 PX 1").await, err(SYNTAX));
    assert_eq!(h.run("GETEX k FOO").await, err(SYNTAX));
    assert_eq!(h.run("GETEX k PXAT 1").await, bulk("v"));
    assert_eq!(h.run("EXISTS k").await, int(0));
}

#[tokio::test]
async fn mget_mset_msetnx() {
    let mut h = Harness::new();
    assert_eq!(h.run("MSET a 1 b 2 a 3").await, ok());
    assert_eq!(
        h.run("MGET a b c").await,
        Reply::Array(vec![bulk("3"), bulk("2"), null()])
    );
    assert_eq!(
        h.run("MSET a 1 b").await,
        err("ERR wrong number of arguments for 'mset' command")
    );
    assert_eq!(h.run("MSETNX a 1 z 2").await, int(0));
    assert_eq!(h.run("EXISTS z").await, int(0));
    // CVE-2023-28425: the same new key twice.
    assert_eq!(h.run("MSETNX x 1 x 2").await, int(1));
    assert_eq!(h.run("GET x").await, bulk("2"));
    assert_eq!(h.run("HSET h f v").await, int(1));
    assert_eq!(
        h.run("MGET h x").await,
        Reply::Array(vec![null(), bulk("2")])
    );
}

#[tokio::test]
async fn append_strlen_getrange_setrange() {
    let mut h = Harness::new();
    assert_eq!(h.run("APPEND k Hello").await, int(5));
    assert_eq!(h.run("APPEND k World").await, int(10));
    assert_eq!(h.run("STRLEN k").await, int(10));
    assert_eq!(h.run("STRLEN none").await, int(0));
    assert_eq!(h.run("GETRANGE k 0 4").await, bulk("Hello"));
    assert_eq!(h.run("GETRANGE k -5 -1").await, bulk("World"));
    assert_eq!(h.run("GETRANGE k 5 100").await, bulk("World"));
    assert_eq!(h.run("GETRANGE k 6 2").await, bulk(""));
    assert_eq!(h.run("GETRANGE k -1 -5").await, bulk(""));
    assert_eq!(h.run("GETRANGE none 0 -1").await, bulk(""));
    assert_eq!(h.run("GETRANGE k a 1").await, err(NOT_INT));
    assert_eq!(h.run("SETRANGE k 5 _").await, int(10));
    assert_eq!(h.run("GET k").await, bulk("Hello_orld"));
    assert_eq!(h.run("SETRANGE pad 3 x").await, int(4));
    assert_eq!(h.raw(&[b"GET", b"pad"]).await, Reply::bulk(b"\0\0\0x"));
    assert_eq!(
        h.run("SETRANGE k -1 x").await,
        err("ERR offset is out of range")
    );
    assert_eq!(
        h.run("SETRANGE empty 5 ").await,
        err("ERR wrong number of arguments for 'setrange' command")
    );
    assert_eq!(h.raw(&[b"SETRANGE", b"empty", b"5", b""]).await, int(0));
    assert_eq!(h.run("EXISTS empty").await, int(0));
    assert_eq!(
        h.run("SETRANGE k 536870911 xx").await,
        err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    );
    h.run("HSET h f v").await;
    assert_eq!(h.run("APPEND h x").await, err(WRONGTYPE));
    assert_eq!(h.run("STRLEN h").await, err(WRONGTYPE));
}

#[tokio::test]
async fn append_respects_proto_max_bulk_len() {
    let mut h = Harness::with_config(orcinus_kv::KvConfig {
        proto_max_bulk_len: 8,
        ..orcinus_kv::KvConfig::default()
    });
    assert_eq!(h.run("APPEND k 12345").await, int(5));
    assert_eq!(
        h.run("APPEND k 6789").await,
        err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    );
    assert_eq!(h.run("GET k").await, bulk("12345"));
}

#[tokio::test]
async fn incr_family() {
    let mut h = Harness::new();
    assert_eq!(h.run("INCR c").await, int(1));
    assert_eq!(h.run("INCRBY c 10").await, int(11));
    assert_eq!(h.run("DECR c").await, int(10));
    assert_eq!(h.run("DECRBY c 20").await, int(-10));
    assert_eq!(h.run("INCRBY c abc").await, err(NOT_INT));
    h.run("SET s abc").await;
    assert_eq!(h.run("INCR s").await, err(NOT_INT));
    h.run("SET big 9223372036854775807").await;
    assert_eq!(
        h.run("INCR big").await,
        err("ERR increment or decrement would overflow")
    );
    assert_eq!(
        h.run("DECRBY c -9223372036854775808").await,
        err("ERR decrement would overflow")
    );
    h.run("SET t 5 EX 100").await;
    assert_eq!(h.run("INCR t").await, int(6));
    assert_eq!(h.run("TTL t").await, int(100));
    h.run("HSET h f v").await;
    assert_eq!(h.run("INCR h").await, err(WRONGTYPE));
}

#[tokio::test]
async fn incrbyfloat() {
    let mut h = Harness::new();
    h.run("SET f 10.50").await;
    assert_eq!(h.run("INCRBYFLOAT f 0.1").await, bulk("10.6"));
    assert_eq!(h.run("INCRBYFLOAT f -5").await, bulk("5.6"));
    h.run("SET f 5.0e3").await;
    assert_eq!(h.run("INCRBYFLOAT f 2.0e2").await, bulk("5200"));
    assert_eq!(h.run("INCRBYFLOAT n 3").await, bulk("3"));
    assert_eq!(
        h.run("INCRBYFLOAT f x").await,
        err("ERR value is not a valid float")
    );
    h.run("SET s abc").await;
    assert_eq!(
        h.run("INCRBYFLOAT s 1").await,
        err("ERR value is not a valid float")
    );
    assert_eq!(
        h.run("INCRBYFLOAT f inf").await,
        err("ERR increment would produce NaN or Infinity")
    );
}

use orcinus_kv::Reply;
