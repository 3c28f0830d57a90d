//! Property test: random list command sequences (push, pop, range, trim, index, set, insert,
//! remove) give the same replies and contents as a VecDeque model.

use crate::harness::*;
use orcinus_kv::Reply;
use proptest::prelude::*;
use std::collections::VecDeque;

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
