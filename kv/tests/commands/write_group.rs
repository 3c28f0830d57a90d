//! Write groups (`orcinus_kv::write_group`): a pipeline run with its consecutive writes grouped
//! must answer and leave the data exactly as the same requests run one by one; a grouped
//! command that meets another transaction's lock waits for it without holding the group's
//! earlier locks, and those earlier writes are committed before it waits.

use crate::harness::*;
use orcinus_kv::{Bytes, KvServer, Reply, Session};
use proptest::prelude::*;
use std::time::Duration;

const KEYS: [&str; 3] = ["a", "b", "c"];

/// Commands over three keys mixing types, so WRONGTYPE and parse errors occur mid-group.
fn command() -> impl Strategy<Value = String> {
    let key = proptest::sample::select(KEYS.to_vec());
    let word = prop_oneof!["[0-9]{1,2}", "[xy]{1,2}"];
    prop_oneof![
        (key.clone(), word.clone()).prop_map(|(k, v)| format!("SET {k} {v}")),
        (key.clone(), word.clone()).prop_map(|(k, v)| format!("SET {k} {v} XX GET")),
        (key.clone(), word.clone()).prop_map(|(k, v)| format!("SETNX {k} {v}")),
        (key.clone(), word.clone()).prop_map(|(k, v)| format!("APPEND {k} {v}")),
        key.clone().prop_map(|k| format!("INCR {k}")),
        (key.clone(), word.clone()).prop_map(|(k, v)| format!("INCRBY {k} {v}")),
        (key.clone(), key.clone()).prop_map(|(a, b)| format!("DEL {a} {b}")),
        key.clone().prop_map(|k| format!("GETDEL {k}")),
        (key.clone(), word.clone(), key.clone(), word.clone())
            .prop_map(|(a, v, b, w)| format!("MSET {a} {v} {b} {w}")),
        (key.clone(), word.clone(), word.clone()).prop_map(|(k, f, v)| format!("HSET {k} {f} {v}")),
        (key.clone(), word.clone()).prop_map(|(k, f)| format!("HDEL {k} {f}")),
        (key.clone(), word.clone()).prop_map(|(k, v)| format!("LPUSH {k} {v}")),
        key.clone().prop_map(|k| format!("RPOP {k}")),
        (key.clone(), word.clone()).prop_map(|(k, v)| format!("SADD {k} {v}")),
        (key.clone(), key.clone()).prop_map(|(a, b)| format!("RENAME {a} {b}")),
        key.clone().prop_map(|k| format!("EXPIRE {k} 100")),
        key.clone().prop_map(|k| format!("GET {k}")),
        key.clone().prop_map(|k| format!("TYPE {k}")),
        key.clone().prop_map(|k| format!("HGETALL {k}")),
        key.prop_map(|k| format!("LRANGE {k} 0 -1")),
        Just("SET a".to_string()),
        Just("NOSUCHCOMMAND x".to_string()),
    ]
}

fn args(line: &str) -> Vec<Bytes> {
    line.split_whitespace()
        .map(|w| Bytes::copy_from_slice(w.as_bytes()))
        .collect()
}

/// Runs `lines` as a connection runs a pipeline: consecutive requests that join a write group
/// run as one group, the others one by one. Waits for every ticket.
async fn pipelined(server: &KvServer, session: &mut Session, lines: &[String]) -> Vec<Reply> {
    let mut replies = Vec::new();
    let mut group = Vec::new();
    for line in lines {
        let request = args(line);
        if server.joins_write_group(session, &request) {
            group.push(request);
            continue;
        }
        run_group(server, session, &mut group, &mut replies).await;
        let (reply, ticket) = server.execute_deferred(session, request).await;
        if let Some(ticket) = ticket {
            ticket.wait().await.unwrap();
        }
        replies.push(reply.into_plain());
    }
    run_group(server, session, &mut group, &mut replies).await;
    replies
}

async fn run_group(
    server: &KvServer,
    session: &mut Session,
    group: &mut Vec<Vec<Bytes>>,
    replies: &mut Vec<Reply>,
) {
    if group.is_empty() {
        return;
    }
    let (got, ticket) = server
        .execute_write_group(session, std::mem::take(group))
        .await;
    if let Some(ticket) = ticket {
        ticket.wait().await.unwrap();
    }
    replies.extend(got.into_iter().map(Reply::into_plain));
}

async fn dump(h: &mut Harness) -> Vec<Reply> {
    let mut out = Vec::new();
    for k in KEYS {
        for cmd in ["TYPE", "GET", "HGETALL", "LRANGE", "SMEMBERS", "TTL"] {
            let line = match cmd {
                "LRANGE" => format!("LRANGE {k} 0 -1"),
                other => format!("{other} {k}"),
            };
            let reply = h.run(&line).await;
            // The seconds left depend on when each run happened: compare presence only.
            out.push(match reply {
                Reply::Integer(n) if cmd == "TTL" && n > 0 => Reply::Integer(1),
                other => other,
            });
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn grouped_pipeline_answers_as_one_by_one(lines in proptest::collection::vec(command(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut alone = Harness::new();
            let mut expected = Vec::new();
            for line in &lines {
                expected.push(alone.run(line).await);
            }
            let mut grouped = Harness::new();
            let got = pipelined(&grouped.server, &mut grouped.session, &lines).await;
            assert_eq!(got, expected, "{lines:?}");
            assert_eq!(dump(&mut grouped).await, dump(&mut alone).await, "{lines:?}");
        });
    }
}

#[test]
fn only_plain_writes_outside_multi_join_a_group() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut h = Harness::new();
        let joins = |h: &Harness, line: &str| h.server.joins_write_group(&h.session, &args(line));
        assert!(joins(&h, "SET k v"));
        assert!(joins(&h, "set k v"));
        assert!(joins(&h, "HSET h f v"));
        assert!(!joins(&h, "GET k"), "reads run alone");
        assert!(!joins(&h, "SET k"), "arity errors run alone");
        assert!(!joins(&h, "BLPOP l 0"), "blocking commands run alone");
        assert!(!joins(&h, "FLUSHALL"));
        assert!(!joins(&h, "MULTI"));
        h.run("MULTI").await;
        assert!(!joins(&h, "SET k v"), "inside MULTI a write is queued");
        h.run("DISCARD").await;
        assert!(joins(&h, "SET k v"));
    });
}

#[test]
fn a_grouped_write_that_meets_a_lock_waits_after_committing_the_group() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut h = Harness::new();
        let server = h.server.clone();
        // Another transaction holds the lock of "b".
        let mut holder = server.store().begin(orcinus_kv::clock::now_ms());
        holder.lock_keys(0, &[b"b".as_slice()]).await.unwrap();
        let mut session = h.new_session();
        let worker = server.clone();
        let group = tokio::spawn(async move {
            let requests = ["SET a 1", "SET b 2", "SET c 3"].map(args).to_vec();
            let (replies, ticket) = worker.execute_write_group(&mut session, requests).await;
            ticket.unwrap().wait().await.unwrap();
            replies
        });
        // "SET a 1" is committed (visible, its lock released) while "SET b 2" waits.
        let mut seen = Reply::Null;
        for _ in 0..200 {
            seen = h.run("GET a").await;
            if seen != Reply::Null {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(seen, bulk("1"));
        assert_eq!(
            h.run("SET a 9").await,
            ok(),
            "the group no longer holds a's lock"
        );
        assert_eq!(h.run("GET b").await, Reply::Null);
        assert!(!group.is_finished());
        holder.commit().await.unwrap();
        let replies = group.await.unwrap();
        assert_eq!(replies, vec![ok(), ok(), ok()]);
        assert_eq!(h.run("GET b").await, bulk("2"));
        assert_eq!(h.run("GET c").await, bulk("3"));
        assert_eq!(h.run("GET a").await, bulk("9"));
    });
}
