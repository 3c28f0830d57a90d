//! List commands: every command with its error cases and WRONGTYPE, the RESP2/RESP3 null
//! rules of the pops, the blocking commands (wake-up by another client, timeout, FIFO order,
//! MULTI, disconnect), a VecDeque model property test, and persistence across a reopen.

use crate::harness::*;
use orcinus_kv::Reply;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::time::Duration;

fn nested(key: &str, items: &[&str]) -> Reply {
    Reply::Array(vec![bulk(key), array(items)])
}

#[tokio::test]
async fn push_pop_len_range() {
    let mut h = Harness::new();
    assert_eq!(h.run("RPUSH l a b c").await, int(3));
    assert_eq!(h.run("LPUSH l z y").await, int(5));
    assert_eq!(
        h.run("LRANGE l 0 -1").await,
        array(&["y", "z", "a", "b", "c"])
    );
    assert_eq!(h.run("LRANGE l 1 2").await, array(&["z", "a"]));
    assert_eq!(h.run("LRANGE l -2 100").await, array(&["b", "c"]));
    assert_eq!(h.run("LRANGE l -100 0").await, array(&["y"]));
    assert_eq!(h.run("LRANGE l 3 1").await, array(&[]));
    assert_eq!(h.run("LRANGE l 5 9").await, array(&[]));
    assert_eq!(h.run("LRANGE none 0 -1").await, array(&[]));
    assert_eq!(h.run("LLEN l").await, int(5));
    assert_eq!(h.run("LLEN none").await, int(0));
    assert_eq!(h.run("LPOP l").await, bulk("y"));
    assert_eq!(h.run("RPOP l").await, bulk("c"));
    assert_eq!(h.run("LPOP l 2").await, array(&["z", "a"]));
    assert_eq!(h.run("RPOP l 0").await, array(&[]));
    assert_eq!(h.run("RPOP l 10").await, array(&["b"]));
    assert_eq!(
        h.run("EXISTS l").await,
        int(0),
        "an emptied list is deleted"
    );
    assert_eq!(h.run("LPOP l").await, null());
    assert_eq!(h.run("LPOP l 2").await, Reply::NullArray);
    assert_eq!(h.run("LPOP l 0").await, Reply::NullArray);
    assert_eq!(h.run("LPUSHX l a").await, int(0));
    assert_eq!(h.run("RPUSHX l a").await, int(0));
    assert_eq!(h.run("EXISTS l").await, int(0));
    h.run("RPUSH l m").await;
    assert_eq!(h.run("LPUSHX l a b").await, int(3));
    assert_eq!(h.run("RPUSHX l z").await, int(4));
    assert_eq!(h.run("LRANGE l 0 -1").await, array(&["b", "a", "m", "z"]));
    assert_eq!(h.run("TYPE l").await, Reply::Simple("list".into()));
}

#[tokio::test]
async fn argument_errors_and_wrongtype() {
    let mut h = Harness::new();
    h.run("SET s v").await;
    h.run("RPUSH l a").await;
    let positive = "ERR value is out of range, must be positive";
    assert_eq!(h.run("LPOP l -1").await, err(positive));
    assert_eq!(h.run("LPOP l x").await, err(positive));
    assert_eq!(
        h.run("LPOP l 1 2").await,
        err("ERR wrong number of arguments for 'lpop' command")
    );
    assert_eq!(
        h.run("RPUSH l").await,
        err("ERR wrong number of arguments for 'rpush' command")
    );
    assert_eq!(h.run("LRANGE l a 1").await, err(NOT_INT));
    assert_eq!(h.run("LINDEX l 1.5").await, err(NOT_INT));
    assert_eq!(h.run("LSET l x v").await, err(NOT_INT));
    assert_eq!(h.run("LTRIM l 0 x").await, err(NOT_INT));
    assert_eq!(h.run("LREM l x a").await, err(NOT_INT));
    assert_eq!(h.run("LINSERT l MIDDLE a b").await, err(SYNTAX));
    assert_eq!(h.run("LMOVE l d UP LEFT").await, err(SYNTAX));
    for cmd in [
        "LPUSH s a",
        "RPUSH s a",
        "LPUSHX s a",
        "RPUSHX s a",
        "LPOP s",
        "RPOP s 2",
        "LLEN s",
        "LRANGE s 0 -1",
        "LINDEX s 0",
        "LSET s 0 a",
        "LINSERT s BEFORE a b",
        "LREM s 0 a",
        "LTRIM s 0 1",
        "LPOS s a",
        "LMOVE s l LEFT LEFT",
        "LMOVE l s LEFT LEFT",
        "RPOPLPUSH s l",
        "LMPOP 2 s l LEFT",
        "BLPOP s 0",
        "BRPOP s 0",
        "BLMOVE s l LEFT LEFT 0",
        "BLMPOP 0 1 s LEFT",
    ] {
        assert_eq!(h.run(cmd).await, err(WRONGTYPE), "{cmd}");
    }
    assert_eq!(h.run("LRANGE l 0 -1").await, array(&["a"]), "nothing moved");
    assert_eq!(h.run("HSET l f v").await, err(WRONGTYPE));
    assert_eq!(h.run("GET l").await, err(WRONGTYPE));
}

#[tokio::test]
async fn lindex_lset_ltrim() {
    let mut h = Harness::new();
    h.run("RPUSH l a b c d e").await;
    assert_eq!(h.run("LINDEX l 0").await, bulk("a"));
    assert_eq!(h.run("LINDEX l -1").await, bulk("e"));
    assert_eq!(h.run("LINDEX l 5").await, null());
    assert_eq!(h.run("LINDEX l -6").await, null());
    assert_eq!(h.run("LINDEX none 0").await, null());
    assert_eq!(h.run("LSET l 1 B").await, ok());
    assert_eq!(h.run("LSET l -1 E").await, ok());
    assert_eq!(h.run("LSET l 5 x").await, err("ERR index out of range"));
    assert_eq!(h.run("LSET none 0 x").await, err("ERR no such key"));
    assert_eq!(
        h.run("LRANGE l 0 -1").await,
        array(&["a", "B", "c", "d", "E"])
    );
    assert_eq!(h.run("LTRIM l 1 -2").await, ok());
    assert_eq!(h.run("LRANGE l 0 -1").await, array(&["B", "c", "d"]));
    assert_eq!(h.run("LTRIM l -100 100").await, ok());
    assert_eq!(h.run("LLEN l").await, int(3));
    assert_eq!(h.run("LTRIM l 2 1").await, ok());
    assert_eq!(h.run("EXISTS l").await, int(0));
    assert_eq!(h.run("LTRIM none 0 1").await, ok());
}

#[tokio::test]
async fn linsert_and_lrem() {
    let mut h = Harness::new();
    h.run("RPUSH l a b c d").await;
    assert_eq!(h.run("LINSERT l BEFORE b x").await, int(5));
    assert_eq!(h.run("LINSERT l after d y").await, int(6));
    assert_eq!(h.run("LINSERT l AFTER c z").await, int(7));
    assert_eq!(h.run("LINSERT l BEFORE nope q").await, int(-1));
    assert_eq!(h.run("LINSERT none BEFORE a q").await, int(0));
    assert_eq!(
        h.run("LRANGE l 0 -1").await,
        array(&["a", "x", "b", "c", "z", "d", "y"])
    );
    h.run("DEL l").await;
    h.run("RPUSH l x a x b x c x").await;
    assert_eq!(h.run("LREM l 2 x").await, int(2));
    assert_eq!(
        h.run("LRANGE l 0 -1").await,
        array(&["a", "b", "x", "c", "x"])
    );
    assert_eq!(h.run("LREM l -1 x").await, int(1));
    assert_eq!(h.run("LRANGE l 0 -1").await, array(&["a", "b", "x", "c"]));
    assert_eq!(h.run("LREM l 0 zz").await, int(0));
    assert_eq!(h.run("LREM none 0 a").await, int(0));
    h.run("RPUSH l x x").await;
    assert_eq!(h.run("LREM l 0 x").await, int(3));
    assert_eq!(h.run("LRANGE l 0 -1").await, array(&["a", "b", "c"]));
    assert_eq!(h.run("LREM l 0 a").await, int(1));
    assert_eq!(h.run("LREM l 0 b").await, int(1));
    assert_eq!(h.run("LREM l 0 c").await, int(1));
    assert_eq!(h.run("EXISTS l").await, int(0));
}

#[tokio::test]
async fn lpos_options() {
    let mut h = Harness::new();
    h.run("RPUSH l a b c 1 2 3 c c").await;
    assert_eq!(h.run("LPOS l c").await, int(2));
    assert_eq!(h.run("LPOS l zz").await, null());
    assert_eq!(h.run("LPOS l c RANK 2").await, int(6));
    assert_eq!(h.run("LPOS l c RANK -1").await, int(7));
    assert_eq!(
        h.run("LPOS l c COUNT 2").await,
        Reply::Array(vec![int(2), int(6)])
    );
    assert_eq!(
        h.run("LPOS l c COUNT 0").await,
        Reply::Array(vec![int(2), int(6), int(7)])
    );
    assert_eq!(
        h.run("LPOS l c RANK -1 COUNT 2").await,
        Reply::Array(vec![int(7), int(6)])
    );
    assert_eq!(h.run("LPOS l c MAXLEN 2").await, null());
    assert_eq!(
        h.run("LPOS l c COUNT 0 MAXLEN 7").await,
        Reply::Array(vec![int(2), int(6)])
    );
    assert_eq!(h.run("LPOS l zz COUNT 1").await, Reply::Array(vec![]));
    assert_eq!(h.run("LPOS none a").await, null());
    assert_eq!(h.run("LPOS none a COUNT 1").await, Reply::Array(vec![]));
    assert_eq!(
        h.run("LPOS l c RANK 0").await,
        err(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
        )
    );
    assert_eq!(
        h.run("LPOS l c COUNT -1").await,
        err("ERR COUNT can't be negative")
    );
    assert_eq!(
        h.run("LPOS l c MAXLEN -1").await,
        err("ERR MAXLEN can't be negative")
    );
    assert_eq!(h.run("LPOS l c RANK x").await, err(NOT_INT));
    assert_eq!(h.run("LPOS l c FOO 1").await, err(SYNTAX));
    assert_eq!(h.run("LPOS l c RANK").await, err(SYNTAX));
}

#[tokio::test]
async fn lmove_rpoplpush_lmpop() {
    let mut h = Harness::new();
    h.run("RPUSH src a b c").await;
    assert_eq!(h.run("LMOVE src dst LEFT RIGHT").await, bulk("a"));
    assert_eq!(h.run("LMOVE src dst RIGHT LEFT").await, bulk("c"));
    assert_eq!(h.run("LRANGE dst 0 -1").await, array(&["c", "a"]));
    assert_eq!(h.run("RPOPLPUSH src dst").await, bulk("b"));
    assert_eq!(h.run("EXISTS src").await, int(0));
    assert_eq!(h.run("RPOPLPUSH src dst").await, null());
    assert_eq!(h.run("LMOVE src dst LEFT LEFT").await, null());
    assert_eq!(h.run("LRANGE dst 0 -1").await, array(&["b", "c", "a"]));
    // Same key: rotation.
    assert_eq!(h.run("LMOVE dst dst LEFT RIGHT").await, bulk("b"));
    assert_eq!(h.run("LRANGE dst 0 -1").await, array(&["c", "a", "b"]));
    assert_eq!(h.run("RPOPLPUSH dst dst").await, bulk("b"));
    assert_eq!(h.run("LRANGE dst 0 -1").await, array(&["b", "c", "a"]));

    h.run("RPUSH l2 x y z").await;
    assert_eq!(
        h.run("LMPOP 3 none dst l2 LEFT").await,
        nested("dst", &["b"])
    );
    assert_eq!(
        h.run("LMPOP 2 none l2 RIGHT COUNT 2").await,
        nested("l2", &["z", "y"])
    );
    assert_eq!(h.run("LMPOP 1 none LEFT").await, Reply::NullArray);
    let numkeys = "ERR numkeys should be greater than 0";
    assert_eq!(h.run("LMPOP 0 l2 LEFT").await, err(numkeys));
    assert_eq!(h.run("LMPOP x l2 LEFT").await, err(numkeys));
    assert_eq!(h.run("LMPOP 3 l2 LEFT").await, err(SYNTAX));
    assert_eq!(h.run("LMPOP 1 l2 UP").await, err(SYNTAX));
    assert_eq!(
        h.run("LMPOP 1 l2 LEFT COUNT 0").await,
        err("ERR count should be greater than 0")
    );
    assert_eq!(h.run("LMPOP 1 l2 LEFT COUNT 1 COUNT 1").await, err(SYNTAX));
    assert_eq!(h.run("LMPOP 1 l2 LEFT FOO").await, err(SYNTAX));
}

async fn wait_blocked(h: &Harness, n: usize) {
    for _ in 0..500 {
        if h.server.blocked_clients() == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!(
        "expected {n} blocked clients, have {}",
        h.server.blocked_clients()
    );
}

fn spawn_cmd(h: &Harness, line: &str) -> tokio::task::JoinHandle<Reply> {
    let server = h.server.clone();
    let mut session = h.new_session();
    let line = line.to_string();
    tokio::spawn(async move { run_in(&server, &mut session, &line).await })
}

#[tokio::test]
async fn blpop_is_woken_by_a_push_from_another_client() {
    let mut h = Harness::new();
    h.run("RPUSH ready x").await;
    assert_eq!(h.run("BLPOP none ready 0").await, nested_pair("ready", "x"));
    let waiter = spawn_cmd(&h, "BLPOP q1 q2 0");
    wait_blocked(&h, 1).await;
    let (Reply::Verbatim(_, info) | Reply::Bulk(info)) = h.run("INFO clients").await else {
        panic!("INFO is a bulk string")
    };
    assert!(String::from_utf8_lossy(&info).contains("blocked_clients:1\r\n"));
    assert_eq!(h.run("RPUSH q2 v1 v2").await, int(2));
    assert_eq!(waiter.await.unwrap(), nested_pair("q2", "v1"));
    assert_eq!(h.run("LRANGE q2 0 -1").await, array(&["v2"]));
    assert_eq!(h.server.blocked_clients(), 0);
    let waiter = spawn_cmd(&h, "BRPOP q2 5");
    assert_eq!(waiter.await.unwrap(), nested_pair("q2", "v2"));
}

fn nested_pair(key: &str, value: &str) -> Reply {
    array(&[key, value])
}

#[tokio::test]
async fn blocking_timeout_returns_null_and_validates() {
    let mut h = Harness::new();
    let started = std::time::Instant::now();
    assert_eq!(h.run("BLPOP q 0.05").await, Reply::NullArray);
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!(h.run("BLMOVE q d LEFT LEFT 0.01").await, Reply::NullArray);
    assert_eq!(h.run("BLMPOP 0.01 1 q LEFT").await, Reply::NullArray);
    assert_eq!(h.server.blocked_clients(), 0);
    assert_eq!(
        h.run("BLPOP q abc").await,
        err("ERR timeout is not a float or out of range")
    );
    assert_eq!(h.run("BLPOP q -1").await, err("ERR timeout is negative"));
    assert_eq!(
        h.run("BLPOP q inf").await,
        err("ERR timeout is out of range")
    );
    assert_eq!(
        h.run("BLPOP q").await,
        err("ERR wrong number of arguments for 'blpop' command")
    );
    assert_eq!(h.run("BLMOVE q d LEFT UP 0").await, err(SYNTAX));
    assert_eq!(
        h.run("BLMPOP 0 0 q LEFT").await,
        err("ERR numkeys should be greater than 0")
    );
}

#[tokio::test]
async fn blocked_clients_are_served_in_fifo_order() {
    let mut h = Harness::new();
    let first = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 1).await;
    let second = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 2).await;
    h.run("RPUSH q a").await;
    assert_eq!(first.await.unwrap(), nested_pair("q", "a"));
    wait_blocked(&h, 1).await;
    assert!(!second.is_finished());
    let third = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 2).await;
    h.run("RPUSH q b c").await;
    assert_eq!(second.await.unwrap(), nested_pair("q", "b"));
    assert_eq!(third.await.unwrap(), nested_pair("q", "c"));
    assert_eq!(h.run("EXISTS q").await, int(0));
}

#[tokio::test]
async fn blmove_and_brpoplpush_wait_for_the_source() {
    let mut h = Harness::new();
    let waiter = spawn_cmd(&h, "BLMOVE src dst RIGHT LEFT 0");
    wait_blocked(&h, 1).await;
    h.run("RPUSH src a b").await;
    assert_eq!(waiter.await.unwrap(), bulk("b"));
    assert_eq!(h.run("LRANGE dst 0 -1").await, array(&["b"]));
    // A client blocked on `dst` is woken by the move into it.
    let chained = spawn_cmd(&h, "BRPOPLPUSH other out 0");
    let on_dst = spawn_cmd(&h, "BLMPOP 0.2 2 nothing other LEFT COUNT 5");
    wait_blocked(&h, 2).await;
    assert_eq!(h.run("LMOVE src other LEFT LEFT").await, bulk("a"));
    let (a, b) = (chained.await.unwrap(), on_dst.await.unwrap());
    // The first waiter on `other` gets the element; the BLMPOP then times out.
    assert_eq!(a, bulk("a"));
    assert_eq!(b, Reply::NullArray);
    assert_eq!(h.run("LRANGE out 0 -1").await, array(&["a"]));
}

#[tokio::test]
async fn blocking_commands_inside_multi_do_not_block() {
    let mut h = Harness::new();
    h.run("MULTI").await;
    h.run("BLPOP q 0").await;
    h.run("BLMOVE q d LEFT LEFT 0").await;
    h.run("RPUSH q a").await;
    h.run("BRPOP q 0").await;
    assert_eq!(
        h.run("EXEC").await,
        Reply::Array(vec![
            Reply::NullArray,
            null(),
            int(1),
            nested_pair("q", "a")
        ])
    );
}

#[tokio::test]
async fn a_disconnect_cancels_the_wait() {
    let h = Harness::new();
    let server = h.server.clone();
    let mut session = h.new_session();
    let disconnect = session.disconnect_handle();
    let waiter = tokio::spawn(async move { run_in(&server, &mut session, "BLPOP q 0").await });
    wait_blocked(&h, 1).await;
    disconnect.fire();
    assert_eq!(waiter.await.unwrap(), Reply::NullArray);
    assert_eq!(h.server.blocked_clients(), 0);
}

#[tokio::test]
async fn a_dropped_waiter_leaves_the_queue() {
    let mut h = Harness::new();
    let dropped = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 1).await;
    let served = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 2).await;
    dropped.abort();
    let _ = dropped.await;
    wait_blocked(&h, 1).await;
    h.run("RPUSH q a").await;
    assert_eq!(served.await.unwrap(), nested_pair("q", "a"));
}

#[tokio::test]
async fn lists_survive_a_reopen() {
    let mut h = Harness::new();
    h.run("RPUSH l a b c").await;
    h.run("LPUSH l z").await;
    h.run("LPOP l").await;
    h.run("RPUSH other x").await;
    h.run("RENAME other moved").await;
    let mut h = h.reopen();
    assert_eq!(h.run("LRANGE l 0 -1").await, array(&["a", "b", "c"]));
    assert_eq!(h.run("LRANGE moved 0 -1").await, array(&["x"]));
    assert_eq!(h.run("RPUSH l d").await, int(4));
    assert_eq!(h.run("LINDEX l -1").await, bulk("d"));
}

#[derive(Debug, Clone)]
enum Op {
    Push(bool, Vec<u8>),
    Pop(bool, u8),
    Range(i8, i8),
    Trim(i8, i8),
    Index(i8),
    Set(i8, u8),
    Insert(bool, u8, u8),
    Rem(i8, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<bool>(), prop::collection::vec(0u8..4, 1..4)).prop_map(|(l, v)| Op::Push(l, v)),
        2 => (any::<bool>(), 0u8..4).prop_map(|(l, n)| Op::Pop(l, n)),
        2 => (-6i8..6, -6i8..6).prop_map(|(a, b)| Op::Range(a, b)),
        1 => (-6i8..6, -6i8..6).prop_map(|(a, b)| Op::Trim(a, b)),
        1 => (-6i8..6).prop_map(Op::Index),
        1 => (-6i8..6, 0u8..4).prop_map(|(i, v)| Op::Set(i, v)),
        1 => (any::<bool>(), 0u8..4, 0u8..4).prop_map(|(a, p, v)| Op::Insert(a, p, v)),
        1 => (-3i8..3, 0u8..4).prop_map(|(c, v)| Op::Rem(c, v)),
    ]
}

fn norm(start: i8, stop: i8, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let (mut s, mut e) = (i64::from(start), i64::from(stop));
    if s < 0 {
        s += len;
    }
    if e < 0 {
        e += len;
    }
    s = s.max(0);
    if s > e || s >= len {
        return None;
    }
    Some((s as usize, (e.min(len - 1) + 1) as usize))
}

fn items(model: &VecDeque<String>, range: std::ops::Range<usize>) -> Reply {
    Reply::Array(model.range(range).map(|v| bulk(v)).collect())
}

fn model_apply(m: &mut VecDeque<String>, op: &Op) -> (String, Reply) {
    let v = |n: &u8| format!("v{n}");
    match op {
        Op::Push(left, values) => {
            let values: Vec<String> = values.iter().map(v).collect();
            for x in &values {
                if *left {
                    m.push_front(x.clone());
                } else {
                    m.push_back(x.clone());
                }
            }
            let name = if *left { "LPUSH" } else { "RPUSH" };
            (
                format!("{name} k {}", values.join(" ")),
                int(m.len() as i64),
            )
        }
        Op::Pop(left, n) => {
            let name = if *left { "LPOP" } else { "RPOP" };
            if m.is_empty() {
                return (format!("{name} k {n}"), Reply::NullArray);
            }
            let popped: Vec<Reply> = (0..*n)
                .filter_map(|_| if *left { m.pop_front() } else { m.pop_back() })
                .map(|x| bulk(&x))
                .collect();
            (format!("{name} k {n}"), Reply::Array(popped))
        }
        Op::Range(a, b) => {
            let reply = norm(*a, *b, m.len()).map_or(array(&[]), |(s, e)| items(m, s..e));
            (format!("LRANGE k {a} {b}"), reply)
        }
        Op::Trim(a, b) => {
            match norm(*a, *b, m.len()) {
                Some((s, e)) => {
                    m.truncate(e);
                    m.drain(..s);
                }
                None => m.clear(),
            }
            (format!("LTRIM k {a} {b}"), ok())
        }
        Op::Index(i) => {
            let len = m.len() as i64;
            let at = if *i < 0 {
                i64::from(*i) + len
            } else {
                i64::from(*i)
            };
            let reply = usize::try_from(at)
                .ok()
                .and_then(|at| m.get(at))
                .map_or(null(), |x| bulk(x));
            (format!("LINDEX k {i}"), reply)
        }
        Op::Set(i, x) => {
            let len = m.len() as i64;
            let at = if *i < 0 {
                i64::from(*i) + len
            } else {
                i64::from(*i)
            };
            let reply = if m.is_empty() {
                err("ERR no such key")
            } else if let Some(slot) = usize::try_from(at).ok().and_then(|at| m.get_mut(at)) {
                *slot = v(x);
                ok()
            } else {
                err("ERR index out of range")
            };
            (format!("LSET k {i} {}", v(x)), reply)
        }
        Op::Insert(after, p, x) => {
            let word = if *after { "AFTER" } else { "BEFORE" };
            let line = format!("LINSERT k {word} {} {}", v(p), v(x));
            if m.is_empty() {
                return (line, int(0));
            }
            match m.iter().position(|e| *e == v(p)) {
                Some(at) => {
                    m.insert(at + usize::from(*after), v(x));
                    (line, int(m.len() as i64))
                }
                None => (line, int(-1)),
            }
        }
        Op::Rem(count, x) => {
            let target = v(x);
            let limit = if *count == 0 {
                i64::MAX
            } else {
                i64::from(count.unsigned_abs())
            };
            let mut removed = 0i64;
            if *count < 0 {
                let mut i = m.len();
                while i > 0 && removed < limit {
                    i -= 1;
                    if m[i] == target {
                        m.remove(i);
                        removed += 1;
                    }
                }
            } else {
                let mut i = 0;
                while i < m.len() && removed < limit {
                    if m[i] == target {
                        m.remove(i);
                        removed += 1;
                    } else {
                        i += 1;
                    }
                }
            }
            (format!("LREM k {count} {target}"), int(removed))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn list_commands_match_a_vecdeque_model(ops in prop::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let mut h = Harness::new();
            let mut model = VecDeque::new();
            for op in &ops {
                let (line, expected) = model_apply(&mut model, op);
                let got = h.run(&line).await;
                prop_assert_eq!(&got, &expected, "{}", line);
                let full = h.run("LRANGE k 0 -1").await;
                prop_assert_eq!(full, items(&model, 0..model.len()), "after {}", line);
                prop_assert_eq!(h.run("LLEN k").await, int(model.len() as i64));
                prop_assert_eq!(h.run("EXISTS k").await, int(i64::from(!model.is_empty())));
            }
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn long_lists_use_bounded_ranges_and_edit_both_sides() {
    let mut h = Harness::new();
    let mut model: VecDeque<String> = VecDeque::new();
    for chunk in 0..20 {
        let values: Vec<String> = (0..100).map(|i| format!("e{}", chunk * 100 + i)).collect();
        let line = format!("RPUSH big {}", values.join(" "));
        h.run(&line).await;
        model.extend(values);
    }
    assert_eq!(h.run("LLEN big").await, int(2000));
    let first: Vec<&str> = model.iter().take(100).map(String::as_str).collect();
    assert_eq!(h.run("LRANGE big 0 99").await, array(&first));
    assert_eq!(h.run("LRANGE big -2 -1").await, array(&["e1998", "e1999"]));
    assert_eq!(h.run("LPOS big e1500").await, int(1500));
    assert_eq!(h.run("LPOS big e10 RANK -1").await, int(10));
    // Near the head (the head side moves) and near the tail (the tail side moves).
    assert_eq!(h.run("LINSERT big AFTER e3 x").await, int(2001));
    assert_eq!(h.run("LINSERT big BEFORE e1990 y").await, int(2002));
    model.insert(4, "x".into());
    model.insert(1991, "y".into());
    assert_eq!(h.run("LREM big 1 e1").await, int(1));
    model.remove(1);
    assert_eq!(h.run("LREM big -1 e1995").await, int(1));
    let at = model.iter().position(|e| e == "e1995").unwrap();
    model.remove(at);
    let all: Vec<&str> = model.iter().map(String::as_str).collect();
    assert_eq!(h.run("LRANGE big 0 -1").await, array(&all));
    assert_eq!(h.run("LTRIM big 1000 1009").await, ok());
    let kept: Vec<&str> = model
        .iter()
        .skip(1000)
        .take(10)
        .map(String::as_str)
        .collect();
    assert_eq!(h.run("LRANGE big 0 -1").await, array(&kept));
}

#[tokio::test]
async fn concurrent_pushers_and_blocked_poppers_lose_nothing() {
    let h = Harness::new();
    let mut poppers = Vec::new();
    for _ in 0..4 {
        let server = h.server.clone();
        let mut session = h.new_session();
        poppers.push(tokio::spawn(async move {
            let mut got = Vec::new();
            for _ in 0..25 {
                match run_in(&server, &mut session, "BRPOP work 5").await {
                    Reply::Array(items) => got.push(items[1].clone()),
                    other => panic!("{other:?}"),
                }
            }
            got
        }));
    }
    let mut pushers = Vec::new();
    for p in 0..4 {
        let server = h.server.clone();
        let mut session = h.new_session();
        pushers.push(tokio::spawn(async move {
            for i in 0..25 {
                let line = format!("LPUSH work {p}-{i}");
                let reply = run_in(&server, &mut session, &line).await;
                assert!(matches!(reply, Reply::Integer(_)), "{reply:?}");
            }
        }));
    }
    for p in pushers {
        p.await.unwrap();
    }
    let mut all = Vec::new();
    for p in poppers {
        all.extend(p.await.unwrap());
    }
    assert_eq!(all.len(), 100);
    all.sort_by_key(|r| format!("{r:?}"));
    all.dedup();
    assert_eq!(all.len(), 100, "every element popped exactly once");
    assert_eq!(h.server.blocked_clients(), 0);
}
