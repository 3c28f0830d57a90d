//! The background sweeper passes: expired keys and stale collection members are removed, live
//! data is untouched.

use crate::harness::*;
use orcinus_kv::Reply;
use orcinus_kv::sweeper::{sweep_expired, sweep_stale_members};

#[tokio::test]
async fn sweeper_deletes_expired_keys_and_stale_members() {
    let mut h = Harness::new();
    h.run("SET gone v PX 20").await;
    h.run("SET stays v").await;
    h.run("HSET old a 1 b 2 c 3").await;
    h.run("DEL old").await;
    h.run("HSET live a 1").await;
    h.run("HSET replaced x 1").await;
    h.run("SET replaced str").await;
    tokio::time::sleep(std::time::Duration::from_millis(40)).await;

    let mut cursor = None;
    let mut expired = 0;
    loop {
        expired += sweep_expired(&h.server, &mut cursor, 2).await.unwrap();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(expired, 1);
    let mut cursor = None;
    let mut swept = 0;
    loop {
        swept += sweep_stale_members(&h.server, &mut cursor, 2)
            .await
            .unwrap();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(
        swept, 4,
        "3 fields of the deleted hash + 1 of the overwritten one"
    );
    assert_eq!(
        h.run("HGETALL live").await,
        Reply::Map(vec![(bulk("a"), bulk("1"))])
    );
    assert_eq!(h.run("GET stays").await, bulk("v"));
    assert_eq!(h.run("DBSIZE").await, int(3));
}
