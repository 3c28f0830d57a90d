//! Property test: random string/generic command sequences give the same replies as a
//! BTreeMap model of Redis semantics.

use crate::harness::*;
use orcinus_kv::Reply;
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Op {
    Set(usize, String),
    Get(usize),
    Del(usize),
    Append(usize, String),
    Incr(usize),
    Strlen(usize),
    Getdel(usize),
    Rename(usize, usize),
    Exists(usize, usize),
}

const KEYS: [&str; 3] = ["a", "b", "c"];

fn op() -> impl Strategy<Value = Op> {
    let key = 0..KEYS.len();
    let value = prop_oneof!["[0-9]{1,3}", "[xy]{1,3}"];
    prop_oneof![
        (key.clone(), value.clone()).prop_map(|(k, v)| Op::Set(k, v)),
        key.clone().prop_map(Op::Get),
        key.clone().prop_map(Op::Del),
        (key.clone(), value).prop_map(|(k, v)| Op::Append(k, v)),
        key.clone().prop_map(Op::Incr),
        key.clone().prop_map(Op::Strlen),
        key.clone().prop_map(Op::Getdel),
        (key.clone(), key.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        (key.clone(), key).prop_map(|(a, b)| Op::Exists(a, b)),
    ]
}

fn model_apply(model: &mut BTreeMap<&'static str, String>, op: &Op) -> (String, Reply) {
    let k = |i: &usize| KEYS[*i];
    match op {
        Op::Set(i, v) => {
            model.insert(k(i), v.clone());
            (format!("SET {} {v}", k(i)), ok())
        }
        Op::Get(i) => (
            format!("GET {}", k(i)),
            model.get(k(i)).map_or(null(), |v| bulk(v)),
        ),
        Op::Del(i) => (
            format!("DEL {}", k(i)),
            int(i64::from(model.remove(k(i)).is_some())),
        ),
        Op::Append(i, v) => {
            let entry = model.entry(k(i)).or_default();
            entry.push_str(v);
            (format!("APPEND {} {v}", k(i)), int(entry.len() as i64))
        }
        Op::Incr(i) => {
            let cmd = format!("INCR {}", k(i));
            let current = model.get(k(i)).cloned().unwrap_or_else(|| "0".into());
            let parsed = orcinus_kv::args::parse_i64_opt(current.as_bytes());
            match parsed.and_then(|n| n.checked_add(1)) {
                Some(n) => {
                    model.insert(k(i), n.to_string());
                    (cmd, int(n))
                }
                None if parsed.is_some() => (cmd, err("ERR increment or decrement would overflow")),
                None => (cmd, err(NOT_INT)),
            }
        }
        Op::Strlen(i) => (
            format!("STRLEN {}", k(i)),
            int(model.get(k(i)).map_or(0, |v| v.len() as i64)),
        ),
        Op::Getdel(i) => (
            format!("GETDEL {}", k(i)),
            model.remove(k(i)).map_or(null(), |v| bulk(&v)),
        ),
        Op::Rename(a, b) => {
            let cmd = format!("RENAME {} {}", k(a), k(b));
            match model.remove(k(a)) {
                None => (cmd, err("ERR no such key")),
                Some(v) => {
                    model.insert(k(b), v);
                    (cmd, ok())
                }
            }
        }
        Op::Exists(a, b) => (
            format!("EXISTS {} {}", k(a), k(b)),
            int(i64::from(model.contains_key(k(a))) + i64::from(model.contains_key(k(b)))),
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    #[test]
    fn strings_match_a_btreemap_model(ops in proptest::collection::vec(op(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut h = Harness::new();
            let mut model = BTreeMap::new();
            for op in &ops {
                let (cmd, expected) = model_apply(&mut model, op);
                let got = h.run(&cmd).await;
                assert_eq!(got, expected, "{cmd} after {ops:?}");
            }
        });
    }
}
