//! Generic key commands: DEL/UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME(NX), EXPIRE
//! family with NX/XX/GT/LT, TTL family, PERSIST, COPY, SELECT isolation, lazy expiry.

use crate::harness::*;
use orcinus_kv::Reply;

#[tokio::test]
async fn del_exists_type() {
    let mut h = Harness::new();
    h.run("MSET a 1 b 2").await;
    h.run("HSET h f v").await;
    assert_eq!(h.run("EXISTS a a b nope").await, int(3));
    assert_eq!(h.run("TYPE a").await, Reply::Simple("string".into()));
    assert_eq!(h.run("TYPE h").await, Reply::Simple("hash".into()));
    assert_eq!(h.run("TYPE nope").await, Reply::Simple("none".into()));
    assert_eq!(h.run("DEL a a nope h").await, int(2));
    assert_eq!(h.run("UNLINK b").await, int(1));
    assert_eq!(h.run("EXISTS a b h").await, int(0));
    assert_eq!(
        h.run("DEL").await,
        err("ERR wrong number of arguments for 'del' command")
    );
}

#[tokio::test]
async fn keys_and_glob() {
    let mut h = Harness::new();
    h.run("MSET user:1 a user:2 b user:10 c other d").await;
    assert_eq!(sorted(h.run("KEYS user:?").await), ["user:1", "user:2"]);
    assert_eq!(
        sorted(h.run("KEYS user:*").await),
        ["user:1", "user:10", "user:2"]
    );
    assert_eq!(sorted(h.run("KEYS *").await).len(), 4);
    assert_eq!(sorted(h.run("KEYS [ou]*").await).len(), 4);
    assert_eq!(sorted(h.run("KEYS nomatch*").await).len(), 0);
    h.run("SELECT 1").await;
    assert_eq!(sorted(h.run("KEYS *").await).len(), 0);
}

fn scan_page(reply: Reply) -> (String, Vec<String>) {
    let Reply::Array(mut parts) = reply else {
        panic!("{reply:?}")
    };
    let keys = sorted(parts.pop().unwrap());
    let Reply::Bulk(cursor) = parts.pop().unwrap() else {
        panic!()
    };
    (String::from_utf8(cursor.to_vec()).unwrap(), keys)
}

#[tokio::test]
async fn scan_iterates_everything_once() {
    let mut h = Harness::new();
    for i in 0..25 {
        h.run(&format!("SET k{i:02} v")).await;
    }
    h.run("HSET hash f v").await;
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    loop {
        let (next, keys) = scan_page(h.run(&format!("SCAN {cursor} COUNT 7")).await);
        seen.extend(keys);
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    seen.sort();
    assert_eq!(seen.len(), 26);
    let (_, hashes) = scan_page(h.run("SCAN 0 COUNT 100 TYPE hash").await);
    assert_eq!(hashes, ["hash"]);
    let (_, matched) = scan_page(h.run("SCAN 0 MATCH k1* COUNT 100").await);
    assert_eq!(matched.len(), 10);
    assert_eq!(h.run("SCAN abc").await, err("ERR invalid cursor"));
    assert_eq!(h.run("SCAN 12345").await, err("ERR invalid cursor"));
    assert_eq!(h.run("SCAN 0 COUNT 0").await, err(SYNTAX));
    assert_eq!(h.run("SCAN 0 COUNT x").await, err(NOT_INT));
    assert_eq!(h.run("SCAN 0 MATCH").await, err(SYNTAX));
}

#[tokio::test]
async fn randomkey() {
    let mut h = Harness::new();
    assert_eq!(h.run("RANDOMKEY").await, null());
    h.run("SET only v").await;
    assert_eq!(h.run("RANDOMKEY").await, bulk("only"));
}

#[tokio::test]
async fn rename_and_renamenx() {
    let mut h = Harness::new();
    assert_eq!(h.run("RENAME a b").await, err("ERR no such key"));
    h.run("SET a 1 EX 100").await;
    assert_eq!(h.run("RENAME a b").await, ok());
    assert_eq!(h.run("GET b").await, bulk("1"));
    assert_eq!(h.run("TTL b").await, int(100));
    assert_eq!(h.run("EXISTS a").await, int(0));
    h.run("SET c 2").await;
    assert_eq!(h.run("RENAMENX b c").await, int(0));
    assert_eq!(h.run("RENAMENX b d").await, int(1));
    assert_eq!(h.run("RENAME d d").await, ok());
    assert_eq!(h.run("GET d").await, bulk("1"));
    h.run("HSET h f1 v1 f2 v2").await;
    assert_eq!(h.run("RENAME h h2").await, ok());
    assert_eq!(h.run("HGET h2 f2").await, bulk("v2"));
    assert_eq!(h.run("HLEN h2").await, int(2));
    assert_eq!(h.run("EXISTS h").await, int(0));
}

#[tokio::test]
async fn expire_family_with_options() {
    let mut h = Harness::new();
    assert_eq!(h.run("EXPIRE nope 10").await, int(0));
    h.run("SET k v").await;
    assert_eq!(h.run("EXPIRE k 100 XX").await, int(0));
    assert_eq!(h.run("EXPIRE k 100 NX").await, int(1));
    assert_eq!(h.run("EXPIRE k 200 NX").await, int(0));
    assert_eq!(h.run("EXPIRE k 50 GT").await, int(0));
    assert_eq!(h.run("EXPIRE k 150 GT").await, int(1));
    assert_eq!(h.run("TTL k").await, int(150));
    assert_eq!(h.run("EXPIRE k 120 LT").await, int(1));
    assert_eq!(h.run("PEXPIRE k 5000").await, int(1));
    let Reply::Integer(pttl) = h.run("PTTL k").await else {
        panic!()
    };
    assert!((4000..=5000).contains(&pttl), "{pttl}");
    assert_eq!(h.run("PERSIST k").await, int(1));
    assert_eq!(h.run("PERSIST k").await, int(0));
    assert_eq!(h.run("TTL k").await, int(-1));
    assert_eq!(
        h.run("EXPIRE k 10 GT").await,
        int(0),
        "no TTL is infinite for GT"
    );
    assert_eq!(
        h.run("EXPIRE k 10 LT").await,
        int(1),
        "no TTL is infinite for LT"
    );
    assert_eq!(h.run("EXPIREAT k 4102444800").await, int(1));
    assert_eq!(h.run("EXPIRETIME k").await, int(4_102_444_800));
    assert_eq!(h.run("PEXPIREAT k 4102444800123").await, int(1));
    assert_eq!(h.run("PEXPIRETIME k").await, int(4_102_444_800_123));
    assert_eq!(h.run("EXPIRETIME nope").await, int(-2));
    assert_eq!(h.run("TTL nope").await, int(-2));
    assert_eq!(
        h.run("EXPIRE k 10 NX XX").await,
        err("ERR NX and XX, GT or LT options at the same time are not compatible")
    );
    assert_eq!(
        h.run("EXPIRE k 10 GT LT").await,
        err("ERR GT and LT options at the same time are not compatible")
    );
    assert_eq!(
        h.run("EXPIRE k 10 FOO").await,
        err("ERR Unsupported option FOO")
    );
    assert_eq!(h.run("EXPIRE k abc").await, err(NOT_INT));
    assert_eq!(
        h.run("EXPIRE k 9223372036854775807").await,
        err("ERR invalid expire time in 'expire' command")
    );
    assert_eq!(h.run("EXPIRE k -1").await, int(1));
    assert_eq!(h.run("EXISTS k").await, int(0));
}

#[tokio::test]
async fn expired_keys_read_as_absent() {
    let mut h = Harness::new();
    h.run("SET k v PX 30").await;
    h.run("HSET h f v").await;
    h.run("PEXPIRE h 30").await;
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    assert_eq!(h.run("GET k").await, null());
    assert_eq!(h.run("EXISTS k h").await, int(0));
    assert_eq!(h.run("TYPE h").await, Reply::Simple("none".into()));
    assert_eq!(h.run("HGET h f").await, null());
    assert_eq!(h.run("DBSIZE").await, int(0));
    assert_eq!(sorted(h.run("KEYS *").await).len(), 0);
    assert_eq!(h.run("SETNX k new").await, int(1));
    assert_eq!(h.run("HLEN h").await, int(0));
    assert_eq!(h.run("HSET h g w").await, int(1));
    assert_eq!(
        h.run("HGETALL h").await,
        Reply::Map(vec![(bulk("g"), bulk("w"))])
    );
}

#[tokio::test]
async fn copy_command() {
    let mut h = Harness::new();
    h.run("SET a 1 EX 100").await;
    assert_eq!(h.run("COPY a b").await, int(1));
    assert_eq!(h.run("GET b").await, bulk("1"));
    assert_eq!(h.run("TTL b").await, int(100));
    assert_eq!(h.run("COPY a b").await, int(0));
    h.run("SET a 2").await;
    assert_eq!(h.run("COPY a b REPLACE").await, int(1));
    assert_eq!(h.run("GET b").await, bulk("2"));
    assert_eq!(
        h.run("COPY a a").await,
        err("ERR source and destination objects are the same")
    );
    assert_eq!(h.run("COPY a a DB 3").await, int(1));
    assert_eq!(
        h.run("COPY a a DB 16").await,
        err("ERR DB index is out of range")
    );
    assert_eq!(h.run("COPY a a DB x").await, err(NOT_INT));
    assert_eq!(h.run("COPY a c BOGUS").await, err(SYNTAX));
    assert_eq!(h.run("COPY nope c").await, int(0));
    h.run("HSET h f v").await;
    assert_eq!(h.run("COPY h h2").await, int(1));
    h.run("HSET h f changed").await;
    assert_eq!(h.run("HGET h2 f").await, bulk("v"));
    h.run("SELECT 3").await;
    assert_eq!(h.run("GET a").await, bulk("2"));
}

#[tokio::test]
async fn select_isolates_databases() {
    let mut h = Harness::new();
    h.run("SET k db0").await;
    assert_eq!(h.run("SELECT 5").await, ok());
    assert_eq!(h.run("GET k").await, null());
    h.run("SET k db5").await;
    assert_eq!(h.run("SELECT 0").await, ok());
    assert_eq!(h.run("GET k").await, bulk("db0"));
    assert_eq!(
        h.run("SELECT 16").await,
        err("ERR DB index is out of range")
    );
    assert_eq!(
        h.run("SELECT -1").await,
        err("ERR DB index is out of range")
    );
    assert_eq!(h.run("SELECT x").await, err(NOT_INT));
}
