//! Property tests of RESTORE on untrusted payloads: real Redis payloads (`dump_vectors`)
//! truncated, bit-flipped, with bytes inserted or overwritten, with or without a recomputed
//! CRC, and plain random bytes. Every one is either restored (and then reads, dumps and
//! restores again to the same contents) or rejected with one of Redis's two payload errors;
//! nothing panics.

use crate::dump_restore::{BAD_FORMAT, BAD_PAYLOAD, body, dump, restore, snapshot, with_trailer};
use crate::harness::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    FlipBit(usize, u8),
    Insert(usize, Vec<u8>),
    Replace(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let bytes = proptest::collection::vec(any::<u8>(), 1..12);
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        (any::<usize>(), bytes.clone()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), bytes).prop_map(|(i, b)| Mutation::Replace(i, b)),
    ]
}

fn apply(body: &mut Vec<u8>, m: &Mutation) {
    let at = |i: usize, len: usize| if len == 0 { 0 } else { i % len };
    match m {
        Mutation::Truncate(i) => body.truncate(at(*i, body.len())),
        Mutation::FlipBit(i, b) if !body.is_empty() => {
            let i = at(*i, body.len());
            body[i] ^= 1 << b;
        }
        Mutation::FlipBit(..) => {}
        Mutation::Insert(i, bytes) => {
            let i = at(*i, body.len() + 1);
            body.splice(i..i, bytes.iter().copied());
        }
        Mutation::Replace(i, bytes) => {
            let i = at(*i, body.len());
            for (j, b) in bytes.iter().enumerate() {
                if let Some(slot) = body.get_mut(i + j) {
                    *slot = *b;
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    /// Mutated bodies get a valid trailer (so they reach the object decoder) or keep the old
    /// one: RESTORE answers OK or one of Redis's two payload errors, and a restored key can
    /// be read and dumped again.
    #[test]
    fn mutated_payloads_never_crash(
        which in 0usize..super::dump_vectors::VECTOR_COUNT,
        mutations in proptest::collection::vec(mutation(), 1..4),
        fix_crc in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut h = Harness::new();
            let (_, payload) = super::dump_vectors::vector(which);
            let mut mutated = body(&payload).to_vec();
            for m in &mutations {
                apply(&mut mutated, m);
            }
            let payload = if fix_crc {
                with_trailer(&mutated, 10)
            } else {
                [mutated.as_slice(), &payload[payload.len() - 10..]].concat()
            };
            let reply = restore(&mut h, "k", "0", &payload, &["REPLACE"]).await;
            assert!(
                reply == ok() || reply == err(BAD_PAYLOAD) || reply == err(BAD_FORMAT),
                "{reply:?}"
            );
            // (OK without a key: a hash whose field TTLs have all passed.)
            if reply == ok() && h.run("EXISTS k").await == int(1) {
                let again = dump(&mut h, "k").await;
                assert_eq!(restore(&mut h, "k2", "0", &again, &[]).await, ok());
                assert_eq!(snapshot(&mut h, "k2").await, snapshot(&mut h, "k").await);
            }
        });
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]
    /// The same mutations straight at the decoder (no engine), many more of them: an error
    /// or a value that encodes and decodes back to itself.
    #[test]
    fn decoder_survives_mutations(
        which in 0usize..super::dump_vectors::VECTOR_COUNT,
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let (_, payload) = super::dump_vectors::vector(which);
        let mut mutated = body(&payload).to_vec();
        for m in &mutations {
            apply(&mut mutated, m);
        }
        if let Ok(value) = orcinus_kv::dump::decode(&with_trailer(&mutated, 10)) {
            let again = orcinus_kv::dump::encode(&value);
            prop_assert_eq!(orcinus_kv::dump::decode(&again), Ok(value));
        }
    }

    #[test]
    fn random_bytes_are_rejected_or_restored(raw in proptest::collection::vec(any::<u8>(), 0..64)) {
        for payload in [raw.clone(), with_trailer(&raw, 11)] {
            if let Ok(value) = orcinus_kv::dump::decode(&payload) {
                let again = orcinus_kv::dump::encode(&value);
                prop_assert_eq!(orcinus_kv::dump::decode(&again), Ok(value));
            }
        }
    }
}
