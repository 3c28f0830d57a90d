//! List commands: every command with its error cases and WRONGTYPE, the RESP2/RESP3 null
//! rules of the pops, long lists, and persistence across a reopen. Blocking commands are in
//! `list_blocking.rs`, the VecDeque model property test in `list_model.rs`.

use crate::harness::*;
use orcinus_kv::Reply;
use std::collections::VecDeque;

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
