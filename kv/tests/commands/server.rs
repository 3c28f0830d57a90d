//! Server commands: INFO sections, CONFIG GET/SET/RESETSTAT, DBSIZE, FLUSHDB/FLUSHALL, TIME,
//! COMMAND introspection.

use crate::harness::*;
use orcinus_kv::Reply;

fn text(reply: Reply) -> String {
    match reply {
        Reply::Bulk(b) | Reply::Verbatim(_, b) => String::from_utf8(b.to_vec()).unwrap(),
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn info_sections() {
    let mut h = Harness::new();
    h.run("SET a 1").await;
    h.run("SET b 2 EX 100").await;
    h.run("SELECT 2").await;
    h.run("SET c 3").await;
    let all = text(h.run("INFO").await);
    for header in [
        "# Server",
        "# Clients",
        "# Memory",
        "# Persistence",
        "# Stats",
        "# Keyspace",
    ] {
        assert!(all.contains(header), "{header} missing in {all}");
    }
    assert!(all.contains("redis_version:7.0.0\r\n"));
    assert!(all.contains("connected_clients:1\r\n"));
    assert!(all.contains("db0:keys=2,expires=1,avg_ttl=0\r\n"), "{all}");
    assert!(all.contains("db2:keys=1,expires=0,avg_ttl=0\r\n"));
    assert!(all.contains("appendfsync:always\r\n"));
    let only = text(h.run("INFO keyspace").await);
    assert!(only.starts_with("# Keyspace\r\n") && !only.contains("# Server"));
    let stats = text(h.run("INFO STATS").await);
    assert!(stats.contains("total_commands_processed:"));
    h.run("HELLO 3").await;
    assert!(matches!(
        h.run("INFO server").await,
        Reply::Verbatim("txt", _)
    ));
}

#[tokio::test]
async fn config_get_globs_and_set_is_refused() {
    let mut h = Harness::new();
    assert_eq!(
        h.run("CONFIG GET save").await,
        Reply::Map(vec![(bulk("save"), bulk(""))])
    );
    assert_eq!(
        h.run("CONFIG GET appendonly").await,
        Reply::Map(vec![(bulk("appendonly"), bulk("yes"))])
    );
    let Reply::Map(max) = h.run("CONFIG GET max*").await else {
        panic!()
    };
    let names: Vec<Reply> = max.into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        names,
        [
            bulk("maxmemory"),
            bulk("maxmemory-policy"),
            bulk("maxclients")
        ]
    );
    let Reply::Map(two) = h.run("CONFIG GET databases proto-max-bulk-len").await else {
        panic!()
    };
    assert_eq!(
        two,
        vec![
            (bulk("databases"), bulk("16")),
            (bulk("proto-max-bulk-len"), bulk("536870912"))
        ]
    );
    assert_eq!(h.run("CONFIG GET nosuch").await, Reply::Map(vec![]));
    assert!(
        matches!(h.run("CONFIG SET maxmemory 1").await, Reply::Error(t) if t.contains("not supported"))
    );
    assert_eq!(h.run("CONFIG RESETSTAT").await, ok());
    assert_eq!(
        h.run("CONFIG GET").await,
        err("ERR wrong number of arguments for 'config|get' command")
    );
    assert_eq!(
        h.run("CONFIG REWRITE").await,
        err("ERR unknown subcommand 'REWRITE'. Try CONFIG HELP.")
    );
}

#[tokio::test]
async fn dbsize_flushdb_flushall_time() {
    let mut h = Harness::new();
    h.run("MSET a 1 b 2").await;
    h.run("HSET h f v").await;
    assert_eq!(h.run("DBSIZE").await, int(3));
    h.run("SELECT 1").await;
    h.run("SET x 1").await;
    assert_eq!(h.run("FLUSHDB").await, ok());
    assert_eq!(h.run("DBSIZE").await, int(0));
    h.run("SELECT 0").await;
    assert_eq!(h.run("DBSIZE").await, int(3));
    assert_eq!(h.run("FLUSHDB BOGUS").await, err(SYNTAX));
    assert_eq!(h.run("FLUSHALL ASYNC").await, ok());
    assert_eq!(h.run("DBSIZE").await, int(0));
    assert_eq!(h.run("HGET h f").await, null());
    let Reply::Array(t) = h.run("TIME").await else {
        panic!()
    };
    assert_eq!(t.len(), 2);
}

#[tokio::test]
async fn command_introspection() {
    let mut h = Harness::new();
    let Reply::Integer(count) = h.run("COMMAND COUNT").await else {
        panic!()
    };
    assert!(count > 70);
    let Reply::Array(all) = h.run("COMMAND").await else {
        panic!()
    };
    assert_eq!(all.len() as i64, count);
    let Reply::Array(info) = h.run("COMMAND INFO get nosuch").await else {
        panic!()
    };
    assert_eq!(info[1], Reply::Null);
    let Reply::Array(get) = &info[0] else {
        panic!()
    };
    assert_eq!(get[0], bulk("get"));
    assert_eq!(get[1], int(2));
    assert_eq!(
        (get[3].clone(), get[4].clone(), get[5].clone()),
        (int(1), int(1), int(1))
    );
    let Reply::Map(docs) = h.run("COMMAND DOCS set").await else {
        panic!()
    };
    assert_eq!(docs[0].0, bulk("set"));
    let Reply::Map(all_docs) = h.run("COMMAND DOCS").await else {
        panic!()
    };
    assert_eq!(all_docs.len() as i64, count);
    assert_eq!(
        h.run("COMMAND FOO").await,
        err("ERR unknown subcommand 'FOO'. Try COMMAND HELP.")
    );
}
