//! Compact row values: `version (1) | column count (varint) | null bitmap (ceil(n/8) bytes, bit i of
//! byte i/8 set = column i is NULL) | non-null values in column order`.
//!
//! Value bodies: signed integers, dates, datetimes and decimals (unscaled, at the column scale) as
//! zigzag LEB128 varints; unsigned integers as LEB128; DOUBLE/FLOAT as 8 bytes little-endian IEEE;
//! strings as a LEB128 length then the bytes. A row with fewer stored columns than the table has
//! (columns added later) decodes the missing tail as NULL; the caller applies defaults.

use super::CodecError;
use crate::types::{Datum, SqlType};

/// Current row format version.
pub const ROW_FORMAT_V1: u8 = 1;

fn put_varint(buf: &mut Vec<u8>, mut v: u128) {
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            buf.push(byte);
            return;
        }
        buf.push(byte | 0x80);
    }
}

fn get_varint(input: &mut &[u8]) -> Result<u128, CodecError> {
    // One byte (column counts, short string lengths, small integers) is the common case.
    if let Some((&byte, rest)) = input.split_first()
        && byte & 0x80 == 0
    {
        *input = rest;
        return Ok(u128::from(byte));
    }
    let mut v: u128 = 0;
    for shift in (0..128).step_by(7) {
        let (&byte, rest) = input.split_first().ok_or(CodecError::Truncated("varint"))?;
        *input = rest;
        v |= u128::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(CodecError::Truncated("varint longer than 128 bits"))
}

fn zigzag(v: i128) -> u128 {
    ((v << 1) ^ (v >> 127)) as u128
}

fn unzigzag(v: u128) -> i128 {
    ((v >> 1) as i128) ^ -((v & 1) as i128)
}

fn mismatch(d: &Datum, ty: SqlType) -> CodecError {
    CodecError::TypeMismatch(format!("{} for {d:?}", ty.sql_name()))
}

fn encode_value(buf: &mut Vec<u8>, d: &Datum, ty: SqlType) -> Result<(), CodecError> {
    match (ty, d) {
        (t, Datum::Int(v)) if t.is_integer() => put_varint(buf, zigzag(i128::from(*v))),
        (t, Datum::UInt(v)) if t.is_integer() => put_varint(buf, zigzag(i128::from(*v))),
        (SqlType::Double | SqlType::Float, Datum::Double(v)) => {
            buf.extend_from_slice(&v.to_le_bytes())
        }
        (
            SqlType::Decimal { scale, .. },
            Datum::Decimal {
                unscaled,
                scale: from,
            },
        ) => {
            let v =
                Datum::rescale_decimal(*unscaled, *from, scale).ok_or_else(|| mismatch(d, ty))?;
            put_varint(buf, zigzag(v));
        }
        (
            SqlType::Char { .. } | SqlType::Varchar { .. } | SqlType::Text | SqlType::Blob,
            Datum::Bytes(b),
        ) => {
            put_varint(buf, b.len() as u128);
            buf.extend_from_slice(b);
        }
        (SqlType::Date, Datum::Date(v)) => put_varint(buf, zigzag(i128::from(*v))),
        (SqlType::DateTime | SqlType::Timestamp, Datum::DateTime(v)) => {
            put_varint(buf, zigzag(i128::from(*v)))
        }
        _ => return Err(mismatch(d, ty)),
    }
    Ok(())
}

/// Encodes a full row; `values` and `types` are in column order and of equal length.
pub fn encode_row(values: &[Datum], types: &[SqlType]) -> Result<Vec<u8>, CodecError> {
    if values.len() != types.len() {
        return Err(CodecError::TypeMismatch(format!(
            "{} values for {} columns",
            values.len(),
            types.len()
        )));
    }
    let mut buf = Vec::with_capacity(16 + values.len() * 8);
    buf.push(ROW_FORMAT_V1);
    put_varint(&mut buf, values.len() as u128);
    let bitmap_at = buf.len();
    buf.resize(bitmap_at + values.len().div_ceil(8), 0);
    for (i, (d, ty)) in values.iter().zip(types).enumerate() {
        if d.is_null() {
            if let Some(byte) = buf.get_mut(bitmap_at + i / 8) {
                *byte |= 1 << (i % 8);
            }
        } else {
            encode_value(&mut buf, d, *ty)?;
        }
    }
    Ok(buf)
}

/// One stored value, borrowed from the row bytes: integers, dates, datetimes and decimals
/// (unscaled, at the column's scale) as `Int`, DOUBLE/FLOAT as `Double`, strings and blobs as
/// `Bytes`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawValue<'a> {
    Null,
    Int(i128),
    Double(f64),
    Bytes(&'a [u8]),
}

fn read_value<'a>(input: &mut &'a [u8], ty: SqlType) -> Result<RawValue<'a>, CodecError> {
    Ok(match ty {
        SqlType::Double | SqlType::Float => {
            let (head, rest) = input
                .split_first_chunk::<8>()
                .ok_or(CodecError::Truncated("double"))?;
            *input = rest;
            RawValue::Double(f64::from_le_bytes(*head))
        }
        SqlType::Char { .. } | SqlType::Varchar { .. } | SqlType::Text | SqlType::Blob => {
            let len =
                usize::try_from(get_varint(input)?).map_err(|_| CodecError::Truncated("string"))?;
            if input.len() < len {
                return Err(CodecError::Truncated("string"));
            }
            let (body, rest) = input.split_at(len);
            *input = rest;
            RawValue::Bytes(body)
        }
        _ => RawValue::Int(unzigzag(get_varint(input)?)),
    })
}

fn skip_value(input: &mut &[u8], ty: SqlType) -> Result<(), CodecError> {
    match ty {
        SqlType::Double | SqlType::Float => {
            *input = input.get(8..).ok_or(CodecError::Truncated("double"))?;
        }
        SqlType::Char { .. } | SqlType::Varchar { .. } | SqlType::Text | SqlType::Blob => {
            let len =
                usize::try_from(get_varint(input)?).map_err(|_| CodecError::Truncated("string"))?;
            *input = input.get(len..).ok_or(CodecError::Truncated("string"))?;
        }
        _ => {
            get_varint(input)?;
        }
    }
    Ok(())
}

/// The fixed part of a stored row: how many columns it stores, their null bitmap, and the
/// bytes of the non-null values that follow.
struct RowHeader<'a> {
    stored: usize,
    bitmap: &'a [u8],
    input: &'a [u8],
}

/// Reads a stored row's version byte, column count and null bitmap.
fn row_header(bytes: &[u8]) -> Result<RowHeader<'_>, CodecError> {
    let (&version, mut input) = bytes
        .split_first()
        .ok_or(CodecError::Truncated("row version"))?;
    if version != ROW_FORMAT_V1 {
        return Err(CodecError::UnknownTag {
            what: "row format version",
            byte: version,
        });
    }
    let stored =
        usize::try_from(get_varint(&mut input)?).map_err(|_| CodecError::Truncated("row"))?;
    let bitmap_len = stored.div_ceil(8);
    let bitmap = input
        .get(..bitmap_len)
        .ok_or(CodecError::Truncated("null bitmap"))?;
    let input = input
        .get(bitmap_len..)
        .ok_or(CodecError::Truncated("null bitmap"))?;
    Ok(RowHeader {
        stored,
        bitmap,
        input,
    })
}

/// Walks a stored row and calls `f(slot, value)` for each column listed in `wanted`
/// (ascending column indexes; `slot` is the position in `wanted`), without allocating. Columns
/// not stored are `Null`. An error from `f` stops the walk and is returned.
pub fn visit_columns<'a, E: From<CodecError>>(
    bytes: &'a [u8],
    types: &[SqlType],
    wanted: &[usize],
    mut f: impl FnMut(usize, RawValue<'a>) -> Result<(), E>,
) -> Result<(), E> {
    let RowHeader {
        stored,
        bitmap,
        mut input,
    } = row_header(bytes)?;
    let mut slot = 0usize;
    for (i, &ty) in types.iter().enumerate() {
        let Some(&want) = wanted.get(slot) else { break };
        let is_null = i >= stored || bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0);
        if want == i {
            let value = if is_null {
                RawValue::Null
            } else {
                read_value(&mut input, ty)?
            };
            f(slot, value)?;
            slot += 1;
        } else if !is_null {
            skip_value(&mut input, ty)?;
        }
    }
    if slot != wanted.len() {
        return Err(CodecError::TypeMismatch("column index beyond table width".into()).into());
    }
    Ok(())
}

fn datum_of(v: RawValue<'_>, ty: SqlType) -> Result<Datum, CodecError> {
    Ok(match (v, ty) {
        (RawValue::Null, _) => Datum::Null,
        (RawValue::Double(d), _) => Datum::Double(d),
        (RawValue::Bytes(b), _) => Datum::Bytes(b.to_vec()),
        (RawValue::Int(v), SqlType::Decimal { scale, .. }) => Datum::Decimal { unscaled: v, scale },
        (RawValue::Int(v), SqlType::Date) => {
            Datum::Date(i32::try_from(v).map_err(|_| CodecError::TypeMismatch("date".into()))?)
        }
        (RawValue::Int(v), SqlType::DateTime | SqlType::Timestamp) => Datum::DateTime(
            i64::try_from(v).map_err(|_| CodecError::TypeMismatch("datetime".into()))?,
        ),
        (RawValue::Int(v), _) => i64::try_from(v)
            .map(Datum::Int)
            .or_else(|_| u64::try_from(v).map(Datum::UInt))
            .map_err(|_| CodecError::TypeMismatch("integer out of range".into()))?,
    })
}

/// Decodes the columns listed in `wanted` (ascending column indexes) from a stored row;
/// returns them in the order of `wanted`. Columns not stored decode as NULL.
pub fn decode_columns(
    bytes: &[u8],
    types: &[SqlType],
    wanted: &[usize],
) -> Result<Vec<Datum>, CodecError> {
    let mut out = Vec::with_capacity(wanted.len());
    visit_columns(bytes, types, wanted, |slot, v| {
        let col = wanted.get(slot).copied().unwrap_or_default();
        let ty = types
            .get(col)
            .copied()
            .ok_or_else(|| CodecError::TypeMismatch("column index beyond table width".into()))?;
        out.push(datum_of(v, ty)?);
        Ok::<(), CodecError>(())
    })?;
    Ok(out)
}

/// Decodes every column of a stored row.
pub fn decode_row(bytes: &[u8], types: &[SqlType]) -> Result<Vec<Datum>, CodecError> {
    let mut out = Vec::with_capacity(types.len());
    visit_all_columns(bytes, types, |v, ty| {
        out.push(datum_of(v, ty)?);
        Ok(())
    })?;
    Ok(out)
}

/// Decodes a stored row into a full-width row in which only the columns listed in `wanted`
/// (ascending column indexes) hold their values; every other column is `Null` and its bytes are
/// skipped without being copied. For readers that know which columns they use (a query that
/// projects `c` out of `(id, k, c, pad)` never copies `pad`).
pub fn decode_projected(
    bytes: &[u8],
    types: &[SqlType],
    wanted: &[usize],
) -> Result<Vec<Datum>, CodecError> {
    let mut out = vec![Datum::Null; types.len()];
    visit_columns(bytes, types, wanted, |slot, v| {
        let col = wanted.get(slot).copied().unwrap_or_default();
        let ty = types
            .get(col)
            .copied()
            .ok_or_else(|| CodecError::TypeMismatch("column index beyond table width".into()))?;
        let d = datum_of(v, ty)?;
        if let Some(place) = out.get_mut(col) {
            *place = d;
        }
        Ok::<(), CodecError>(())
    })?;
    Ok(out)
}

/// [`decode_projected`] into `out`, reusing its allocation: afterwards `out` is a full-width
/// row whose columns in `wanted` hold this row's values. A column not in `wanted` is left as it
/// was, which is `Null` as long as the caller only ever takes values out of `out` (replacing
/// them with `Null`) between calls; a row of another width is replaced by a `Null` row first.
pub fn decode_projected_into(
    bytes: &[u8],
    types: &[SqlType],
    wanted: &[usize],
    out: &mut Vec<Datum>,
) -> Result<(), CodecError> {
    if out.len() != types.len() {
        out.clear();
        out.resize(types.len(), Datum::Null);
    }
    visit_columns(bytes, types, wanted, |slot, v| {
        let col = wanted.get(slot).copied().unwrap_or_default();
        let (ty, place) = types
            .get(col)
            .copied()
            .zip(out.get_mut(col))
            .ok_or_else(|| CodecError::TypeMismatch("column index beyond table width".into()))?;
        *place = datum_of(v, ty)?;
        Ok::<(), CodecError>(())
    })
}

/// [`decode_row`] into `out`, reusing its allocation.
pub fn decode_row_into(
    bytes: &[u8],
    types: &[SqlType],
    out: &mut Vec<Datum>,
) -> Result<(), CodecError> {
    out.clear();
    visit_all_columns(bytes, types, |v, ty| {
        out.push(datum_of(v, ty)?);
        Ok(())
    })
}

/// Walks every column of a stored row in order, calling `f(value, type)`; columns not stored
/// are `Null`.
fn visit_all_columns<'a>(
    bytes: &'a [u8],
    types: &[SqlType],
    mut f: impl FnMut(RawValue<'a>, SqlType) -> Result<(), CodecError>,
) -> Result<(), CodecError> {
    let RowHeader {
        stored,
        bitmap,
        mut input,
    } = row_header(bytes)?;
    for (i, &ty) in types.iter().enumerate() {
        let is_null = i >= stored || bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0);
        let value = if is_null {
            RawValue::Null
        } else {
            read_value(&mut input, ty)?
        };
        f(value, ty)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TYPES: [SqlType; 6] = [
        SqlType::Int { unsigned: false },
        SqlType::Char { len: 120 },
        SqlType::Decimal {
            precision: 15,
            scale: 2,
        },
        SqlType::Double,
        SqlType::Date,
        SqlType::BigInt { unsigned: true },
    ];

    #[test]
    fn projected_decode_keeps_only_wanted_columns() {
        let row = vec![
            Datum::Int(7),
            Datum::Bytes(b"abc".to_vec()),
            Datum::Null,
            Datum::Double(1.5),
            Datum::Date(3),
            Datum::Int(9),
        ];
        let bytes = encode_row(&row, &TYPES).unwrap();
        assert_eq!(decode_row(&bytes, &TYPES).unwrap(), row);
        assert_eq!(
            decode_projected(&bytes, &TYPES, &[1, 3]).unwrap(),
            vec![
                Datum::Null,
                Datum::Bytes(b"abc".to_vec()),
                Datum::Null,
                Datum::Double(1.5),
                Datum::Null,
                Datum::Null,
            ]
        );
        assert_eq!(
            decode_projected(&bytes, &TYPES, &[]).unwrap(),
            vec![Datum::Null; 6]
        );
        assert!(decode_projected(&bytes[..bytes.len() - 1], &TYPES, &[5]).is_err());
    }

    fn datum_for(ty: SqlType) -> BoxedStrategy<Datum> {
        let value = match ty {
            SqlType::Int { .. } => any::<i32>().prop_map(|v| Datum::Int(i64::from(v))).boxed(),
            SqlType::BigInt { .. } => any::<u64>()
                .prop_map(|v| i64::try_from(v).map_or(Datum::UInt(v), Datum::Int))
                .boxed(),
            SqlType::Decimal { .. } => any::<i64>()
                .prop_map(|v| Datum::Decimal {
                    unscaled: i128::from(v),
                    scale: 2,
                })
                .boxed(),
            SqlType::Double => (-1e9f64..1e9).prop_map(Datum::Double).boxed(),
            SqlType::Date => any::<i32>().prop_map(Datum::Date).boxed(),
            _ => prop::collection::vec(any::<u8>(), 0..200)
                .prop_map(Datum::Bytes)
                .boxed(),
        };
        prop_oneof![1 => Just(Datum::Null), 4 => value].boxed()
    }

    proptest! {
        #[test]
        fn rows_roundtrip_and_project(row in TYPES.iter().map(|t| datum_for(*t)).collect::<Vec<_>>()) {
            let bytes = encode_row(&row, &TYPES).unwrap();
            prop_assert_eq!(decode_row(&bytes, &TYPES).unwrap(), row.clone());
            let picked = decode_columns(&bytes, &TYPES, &[1, 4]).unwrap();
            prop_assert_eq!(picked, vec![row[1].clone(), row[4].clone()]);
            let projected = decode_projected(&bytes, &TYPES, &[0, 2, 5]).unwrap();
            let masked: Vec<Datum> = row
                .iter()
                .enumerate()
                .map(|(i, d)| if [0, 2, 5].contains(&i) { d.clone() } else { Datum::Null })
                .collect();
            prop_assert_eq!(projected, masked);
            for cut in 0..bytes.len() {
                let _ = decode_row(&bytes[..cut], &TYPES);
            }
        }
    }

    #[test]
    fn decoding_into_a_reused_row_matches_a_fresh_decode() {
        let types = [
            SqlType::Int { unsigned: false },
            SqlType::Int { unsigned: false },
            SqlType::Char { len: 120 },
            SqlType::Char { len: 60 },
        ];
        let a = [
            Datum::Int(1),
            Datum::Int(7),
            Datum::Bytes(b"first".to_vec()),
            Datum::Bytes(b"pad".to_vec()),
        ];
        let b = [
            Datum::Int(2),
            Datum::Null,
            Datum::Bytes(b"second".to_vec()),
            Datum::Null,
        ];
        let (ea, eb) = (
            encode_row(&a, &types).unwrap(),
            encode_row(&b, &types).unwrap(),
        );
        let mut row = Vec::new();
        for (bytes, wanted) in [(&ea, &[0usize, 2][..]), (&eb, &[0, 1, 2]), (&ea, &[2])] {
            decode_projected_into(bytes, &types, wanted, &mut row).unwrap();
            assert_eq!(row, decode_projected(bytes, &types, wanted).unwrap());
            // A caller takes the values it uses out of the row.
            for &c in wanted {
                row[c] = Datum::Null;
            }
        }
        decode_row_into(&eb, &types, &mut row).unwrap();
        assert_eq!(row, b.to_vec());
        row.clear();
        decode_projected_into(&ea, &types, &[3], &mut row).unwrap();
        assert_eq!(row, decode_projected(&ea, &types, &[3]).unwrap());
    }

    #[test]
    fn rows_written_before_a_column_was_added_decode_it_as_null() {
        let old = encode_row(&[Datum::Int(1)], &TYPES[..1]).unwrap();
        let row = decode_row(&old, &TYPES[..2]).unwrap();
        assert_eq!(row, vec![Datum::Int(1), Datum::Null]);
    }

    #[test]
    fn bad_version_and_truncation_are_errors() {
        assert!(matches!(
            decode_row(&[9], &TYPES),
            Err(CodecError::UnknownTag { .. })
        ));
        let bytes =
            encode_row(&[Datum::Int(1), Datum::Bytes(vec![b'x'; 10])], &TYPES[..2]).unwrap();
        assert!(decode_row(&bytes[..bytes.len() - 1], &TYPES[..2]).is_err());
    }
}
