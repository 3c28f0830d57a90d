//! Order-preserving ("memcomparable") encoding of SQL values for storage keys: for two values `a`
//! and `b` of the same column type, `encode(a) < encode(b)` bytewise iff `a < b` in SQL order
//! (NULL first). Strings compare by bytes (binary collation) in this format version.
//!
//! Per value: a null marker (0x00 NULL, 0x01 present) then the type's body:
//! signed integers, dates, datetimes and decimals (unscaled, rescaled to the column scale) are
//! big-endian with the sign bit flipped; unsigned integers are big-endian; doubles are IEEE-754 bits
//! with the sign bit flipped for positives and all bits flipped for negatives; strings escape 0x00 as
//! 0x00 0xFF and end with 0x00 0x01.

use super::CodecError;
use crate::types::{Datum, SqlType};

const NULL: u8 = 0x00;
const PRESENT: u8 = 0x01;

/// Family tag of row keys: `b'r' | table id (u32 BE) | primary key columns`.
pub const ROW_TAG: u8 = b'r';
/// Family tag of secondary index keys: `b'i' | index id (u32 BE) | index columns | [pk columns]`.
pub const INDEX_TAG: u8 = b'i';

/// The key prefix shared by all rows of `table_id`.
#[must_use]
pub fn row_prefix(table_id: u32) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    k.push(ROW_TAG);
    k.extend_from_slice(&table_id.to_be_bytes());
    k
}

/// The key prefix shared by all entries of `index_id`.
#[must_use]
pub fn index_prefix(index_id: u32) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    k.push(INDEX_TAG);
    k.extend_from_slice(&index_id.to_be_bytes());
    k
}

fn flip_i64(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1 << 63)).to_be_bytes()
}

fn unflip_i64(b: [u8; 8]) -> i64 {
    (u64::from_be_bytes(b) ^ (1 << 63)) as i64
}

fn take<const N: usize>(input: &mut &[u8], what: &'static str) -> Result<[u8; N], CodecError> {
    let (head, rest) = input
        .split_first_chunk::<N>()
        .ok_or(CodecError::Truncated(what))?;
    *input = rest;
    Ok(*head)
}

fn mismatch(d: &Datum, ty: SqlType) -> CodecError {
    CodecError::TypeMismatch(format!("{} for {d:?}", ty.sql_name()))
}

/// Appends the order-preserving encoding of `d` as a value of column type `ty`.
pub fn encode(buf: &mut Vec<u8>, d: &Datum, ty: SqlType) -> Result<(), CodecError> {
    if d.is_null() {
        buf.push(NULL);
        return Ok(());
    }
    buf.push(PRESENT);
    match ty {
        SqlType::TinyInt { unsigned: false }
        | SqlType::SmallInt { unsigned: false }
        | SqlType::Int { unsigned: false }
        | SqlType::BigInt { unsigned: false } => match d {
            Datum::Int(v) => buf.extend_from_slice(&flip_i64(*v)),
            _ => return Err(mismatch(d, ty)),
        },
        SqlType::TinyInt { unsigned: true }
        | SqlType::SmallInt { unsigned: true }
        | SqlType::Int { unsigned: true }
        | SqlType::BigInt { unsigned: true } => {
            let v = match d {
                Datum::Int(v) => u64::try_from(*v).map_err(|_| mismatch(d, ty))?,
                Datum::UInt(v) => *v,
                _ => return Err(mismatch(d, ty)),
            };
            buf.extend_from_slice(&v.to_be_bytes());
        }
        SqlType::Double | SqlType::Float => match d {
            Datum::Double(v) => {
                let bits = v.to_bits();
                let ordered = if bits >> 63 == 1 {
                    !bits
                } else {
                    bits | (1 << 63)
                };
                buf.extend_from_slice(&ordered.to_be_bytes());
            }
            _ => return Err(mismatch(d, ty)),
        },
        SqlType::Decimal { scale, .. } => match d {
            Datum::Decimal {
                unscaled,
                scale: from,
            } => {
                let v = Datum::rescale_decimal(*unscaled, *from, scale)
                    .ok_or_else(|| mismatch(d, ty))?;
                buf.extend_from_slice(&((v as u128) ^ (1 << 127)).to_be_bytes());
            }
            _ => return Err(mismatch(d, ty)),
        },
        SqlType::Char { .. } | SqlType::Varchar { .. } | SqlType::Text | SqlType::Blob => match d {
            Datum::Bytes(b) => {
                for &byte in b {
                    buf.push(byte);
                    if byte == 0 {
                        buf.push(0xFF);
                    }
                }
                buf.extend_from_slice(&[0x00, 0x01]);
            }
            _ => return Err(mismatch(d, ty)),
        },
        SqlType::Date => match d {
            Datum::Date(v) => buf.extend_from_slice(&((*v as u32) ^ (1 << 31)).to_be_bytes()),
            _ => return Err(mismatch(d, ty)),
        },
        SqlType::DateTime | SqlType::Timestamp => match d {
            Datum::DateTime(v) => buf.extend_from_slice(&flip_i64(*v)),
            _ => return Err(mismatch(d, ty)),
        },
    }
    Ok(())
}

/// Decodes one value of type `ty` from the front of `input`, advancing it.
pub fn decode(input: &mut &[u8], ty: SqlType) -> Result<Datum, CodecError> {
    match take::<1>(input, "key null marker")? {
        [NULL] => return Ok(Datum::Null),
        [PRESENT] => {}
        [byte] => {
            return Err(CodecError::UnknownTag {
                what: "key null marker",
                byte,
            });
        }
    }
    Ok(match ty {
        SqlType::TinyInt { unsigned: false }
        | SqlType::SmallInt { unsigned: false }
        | SqlType::Int { unsigned: false }
        | SqlType::BigInt { unsigned: false } => Datum::Int(unflip_i64(take(input, "int key")?)),
        SqlType::TinyInt { unsigned: true }
        | SqlType::SmallInt { unsigned: true }
        | SqlType::Int { unsigned: true }
        | SqlType::BigInt { unsigned: true } => {
            let v = u64::from_be_bytes(take(input, "uint key")?);
            i64::try_from(v).map_or(Datum::UInt(v), Datum::Int)
        }
        SqlType::Double | SqlType::Float => {
            let ordered = u64::from_be_bytes(take(input, "double key")?);
            let bits = if ordered >> 63 == 1 {
                ordered & !(1 << 63)
            } else {
                !ordered
            };
            Datum::Double(f64::from_bits(bits))
        }
        SqlType::Decimal { scale, .. } => {
            let v = u128::from_be_bytes(take(input, "decimal key")?) ^ (1 << 127);
            Datum::Decimal {
                unscaled: v as i128,
                scale,
            }
        }
        SqlType::Char { .. } | SqlType::Varchar { .. } | SqlType::Text | SqlType::Blob => {
            let mut out = Vec::new();
            loop {
                let [byte] = take::<1>(input, "string key")?;
                if byte != 0 {
                    out.push(byte);
                    continue;
                }
                match take::<1>(input, "string key escape")? {
                    [0xFF] => out.push(0),
                    [0x01] => break,
                    [b] => {
                        return Err(CodecError::UnknownTag {
                            what: "string key escape",
                            byte: b,
                        });
                    }
                }
            }
            Datum::Bytes(out)
        }
        SqlType::Date => {
            Datum::Date((u32::from_be_bytes(take(input, "date key")?) ^ (1 << 31)) as i32)
        }
        SqlType::DateTime | SqlType::Timestamp => {
            Datum::DateTime(unflip_i64(take(input, "datetime key")?))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn enc(d: &Datum, ty: SqlType) -> Vec<u8> {
        let mut b = Vec::new();
        encode(&mut b, d, ty).unwrap();
        b
    }

    fn roundtrip(d: Datum, ty: SqlType) {
        let b = enc(&d, ty);
        let mut s = b.as_slice();
        assert_eq!(decode(&mut s, ty).unwrap(), d);
        assert!(s.is_empty());
    }

    proptest! {
        #[test]
        fn ints_order_and_roundtrip(a: i64, b: i64) {
            let ty = SqlType::BigInt { unsigned: false };
            prop_assert_eq!(a.cmp(&b), enc(&Datum::Int(a), ty).cmp(&enc(&Datum::Int(b), ty)));
            roundtrip(Datum::Int(a), ty);
        }

        #[test]
        fn doubles_order_and_roundtrip(a in -1e300f64..1e300, b in -1e300f64..1e300) {
            let ty = SqlType::Double;
            prop_assert_eq!(a.partial_cmp(&b).unwrap(), enc(&Datum::Double(a), ty).cmp(&enc(&Datum::Double(b), ty)));
            roundtrip(Datum::Double(a), ty);
        }

        #[test]
        fn strings_order_and_roundtrip(a: Vec<u8>, b: Vec<u8>) {
            let ty = SqlType::Varchar { len: 100 };
            prop_assert_eq!(a.cmp(&b), enc(&Datum::Bytes(a.clone()), ty).cmp(&enc(&Datum::Bytes(b), ty)));
            roundtrip(Datum::Bytes(a), ty);
        }

        #[test]
        fn decimals_order_and_roundtrip(a in -10i128.pow(30)..10i128.pow(30), b in -10i128.pow(30)..10i128.pow(30)) {
            let ty = SqlType::Decimal { precision: 38, scale: 2 };
            let (da, db) = (Datum::Decimal { unscaled: a, scale: 2 }, Datum::Decimal { unscaled: b, scale: 2 });
            prop_assert_eq!(a.cmp(&b), enc(&da, ty).cmp(&enc(&db, ty)));
            roundtrip(da, ty);
        }

        #[test]
        fn composite_keys_order_like_tuples(a: (i32, Vec<u8>), b: (i32, Vec<u8>)) {
            let key = |t: &(i32, Vec<u8>)| {
                let mut k = Vec::new();
                encode(&mut k, &Datum::Int(i64::from(t.0)), SqlType::Int { unsigned: false }).unwrap();
                encode(&mut k, &Datum::Bytes(t.1.clone()), SqlType::Text).unwrap();
                k
            };
            prop_assert_eq!(a.cmp(&b), key(&a).cmp(&key(&b)));
        }
    }

    #[test]
    fn null_sorts_first_and_other_types_roundtrip() {
        let ty = SqlType::Int { unsigned: false };
        assert!(enc(&Datum::Null, ty) < enc(&Datum::Int(i64::MIN), ty));
        roundtrip(Datum::Null, ty);
        roundtrip(Datum::UInt(u64::MAX), SqlType::BigInt { unsigned: true });
        roundtrip(Datum::Date(-5), SqlType::Date);
        roundtrip(Datum::DateTime(1_700_000_000_000_000), SqlType::DateTime);
        assert!(enc(&Datum::Date(-1), SqlType::Date) < enc(&Datum::Date(0), SqlType::Date));
    }

    #[test]
    fn truncated_and_mismatched_inputs_are_errors() {
        let ty = SqlType::BigInt { unsigned: false };
        let b = enc(&Datum::Int(7), ty);
        let mut short = &b[..4];
        assert!(matches!(
            decode(&mut short, ty),
            Err(CodecError::Truncated(_))
        ));
        let mut unterminated: &[u8] = &[0x01, b'a', 0x00];
        assert!(decode(&mut unterminated, SqlType::Text).is_err());
        assert!(encode(&mut Vec::new(), &Datum::Bytes(vec![1]), ty).is_err());
        assert!(
            encode(
                &mut Vec::new(),
                &Datum::Int(-1),
                SqlType::Int { unsigned: true }
            )
            .is_err()
        );
    }
}
