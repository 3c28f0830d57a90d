//! Hash commands, including WRONGTYPE, emptied-hash deletion, and invisibility of fields of an
//! earlier incarnation.

use crate::harness::*;
use orcinus_kv::Reply;

#[tokio::test]
async fn hset_hget_hdel_hlen() {
    let mut h = Harness::new();
    assert_eq!(h.run("HSET h a 1 b 2 a 3").await, int(2));
    assert_eq!(h.run("HGET h a").await, bulk("3"));
    assert_eq!(h.run("HGET h zz").await, null());
    assert_eq!(h.run("HGET none a").await, null());
    assert_eq!(h.run("HLEN h").await, int(2));
    assert_eq!(h.run("HSET h a 4").await, int(0));
    assert_eq!(h.run("HMSET h c 5").await, ok());
    assert_eq!(
        h.run("HMGET h a c zz").await,
        Reply::Array(vec![bulk("4"), bulk("5"), null()])
    );
    assert_eq!(h.run("HMGET none a").await, Reply::Array(vec![null()]));
    assert_eq!(h.run("HEXISTS h a").await, int(1));
    assert_eq!(h.run("HEXISTS h zz").await, int(0));
    assert_eq!(h.run("HSTRLEN h a").await, int(1));
    assert_eq!(h.run("HSTRLEN h zz").await, int(0));
    assert_eq!(h.run("HDEL h a zz").await, int(1));
    assert_eq!(h.run("HDEL none a").await, int(0));
    assert_eq!(h.run("HLEN h").await, int(2));
    assert_eq!(h.run("HDEL h b c").await, int(2));
    assert_eq!(
        h.run("EXISTS h").await,
        int(0),
        "an emptied hash is deleted"
    );
    assert_eq!(
        h.run("HSET h a").await,
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(
        h.run("HSET h a 1 b").await,
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(
        h.run("HMSET h a 1 b").await,
        err("ERR wrong number of arguments for 'hmset' command")
    );
}

#[tokio::test]
async fn hgetall_hkeys_hvals_hsetnx() {
    let mut h = Harness::new();
    assert_eq!(h.run("HGETALL none").await, Reply::Map(vec![]));
    h.run("HSET h b 2 a 1").await;
    assert_eq!(
        h.run("HGETALL h").await,
        Reply::Map(vec![(bulk("a"), bulk("1")), (bulk("b"), bulk("2"))])
    );
    assert_eq!(h.run("HKEYS h").await, array(&["a", "b"]));
    assert_eq!(h.run("HVALS h").await, array(&["1", "2"]));
    assert_eq!(h.run("HSETNX h a 9").await, int(0));
    assert_eq!(h.run("HSETNX h c 3").await, int(1));
    assert_eq!(h.run("HLEN h").await, int(3));
}

#[tokio::test]
async fn hincrby_and_float() {
    let mut h = Harness::new();
    assert_eq!(h.run("HINCRBY h n 5").await, int(5));
    assert_eq!(h.run("HINCRBY h n -7").await, int(-2));
    assert_eq!(h.run("HINCRBY h n x").await, err(NOT_INT));
    h.run("HSET h s abc").await;
    assert_eq!(
        h.run("HINCRBY h s 1").await,
        err("ERR hash value is not an integer")
    );
    assert_eq!(
        h.run("HINCRBYFLOAT h s 1").await,
        err("ERR hash value is not a float")
    );
    assert_eq!(h.run("HINCRBYFLOAT h f 10.5").await, bulk("10.5"));
    assert_eq!(h.run("HINCRBYFLOAT h f 0.1").await, bulk("10.6"));
    assert_eq!(
        h.run("HINCRBYFLOAT h f y").await,
        err("ERR value is not a valid float")
    );
    h.run("HSET h big 9223372036854775807").await;
    assert_eq!(
        h.run("HINCRBY h big 1").await,
        err("ERR increment or decrement would overflow")
    );
    assert_eq!(h.run("HLEN h").await, int(4));
}

#[tokio::test]
async fn hash_wrongtype_and_overwrite() {
    let mut h = Harness::new();
    h.run("SET s v").await;
    for cmd in [
        "HSET s f v",
        "HGET s f",
        "HDEL s f",
        "HGETALL s",
        "HLEN s",
        "HINCRBY s f 1",
        "HSCAN s 0",
    ] {
        assert_eq!(h.run(cmd).await, err(WRONGTYPE), "{cmd}");
    }
    h.run("HSET h f v").await;
    h.run("SET h plain").await;
    assert_eq!(h.run("GET h").await, bulk("plain"));
    h.run("DEL h").await;
    assert_eq!(h.run("HSET h g w").await, int(1));
    assert_eq!(
        h.run("HGETALL h").await,
        Reply::Map(vec![(bulk("g"), bulk("w"))]),
        "old fields stay invisible"
    );
}

#[tokio::test]
async fn hscan_pages() {
    let mut h = Harness::new();
    for i in 0..12 {
        h.run(&format!("HSET h f{i:02} v{i}")).await;
    }
    let mut cursor = "0".to_string();
    let mut fields = 0;
    loop {
        let Reply::Array(parts) = h.run(&format!("HSCAN h {cursor} COUNT 5")).await else {
            panic!()
        };
        let [Reply::Bulk(next), Reply::Array(items)] = parts.as_slice() else {
            panic!()
        };
        fields += items.len() / 2;
        cursor = String::from_utf8(next.to_vec()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(fields, 12);
    let Reply::Array(parts) = h.run("HSCAN h 0 MATCH f1* COUNT 100").await else {
        panic!()
    };
    let Reply::Array(items) = &parts[1] else {
        panic!()
    };
    assert_eq!(items.len(), 4);
    assert_eq!(
        h.run("HSCAN none 0").await,
        Reply::Array(vec![bulk("0"), Reply::Array(vec![])])
    );
}
