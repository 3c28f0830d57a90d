//! The binary protocol of prepared statements: parameter values in COM_STMT_EXECUTE and
//! result rows of executed statements.
//!
//! Invariants: a parameter is decoded strictly by the type the client bound (unsigned flag
//! included); a truncated value is `Malformed`, never a panic or a guess. A row value is
//! encoded in the width its column's type announces; a value that cannot be represented in that
//! type is reported as an internal error instead of a corrupt row.

use orcinus_sql::session::{ColumnDef, ColumnType, Date, DateTime, Time, Value};

use super::codec::{WireReader, put_lenenc_bytes};
use super::constants::column_type as wire;
use super::error::{ErrPacket, ProtocolError};
use super::response::{display_decimals, text_value};

/// A bound parameter type: the wire type code and the unsigned flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamType {
    /// `MYSQL_TYPE_*`.
    pub code: u8,
    /// The client marked the value unsigned.
    pub unsigned: bool,
}

/// Decodes one non-NULL parameter value of type `t`.
pub fn decode_param(r: &mut WireReader<'_>, t: ParamType) -> Result<Value, ProtocolError> {
    const W: &str = "parameter value";
    let int = |v: u64, bits: u32| -> Value {
        if t.unsigned {
            Value::UInt(v)
        } else {
            // Sign-extend from `bits`.
            let shift = 64 - bits;
            Value::Int(((v << shift) as i64) >> shift)
        }
    };
    Ok(match t.code {
        wire::NULL => Value::Null,
        wire::TINY => int(r.uint(1, W)?, 8),
        wire::SHORT | wire::YEAR => int(r.uint(2, W)?, 16),
        wire::LONG | wire::INT24 => int(r.uint(4, W)?, 32),
        wire::LONGLONG => int(r.uint(8, W)?, 64),
        wire::FLOAT => Value::Float(f32::from_bits(r.u32(W)?)),
        wire::DOUBLE => Value::Double(f64::from_bits(r.uint(8, W)?)),
        wire::DECIMAL | wire::NEWDECIMAL => {
            let text = std::str::from_utf8(r.lenenc_bytes(W)?)
                .map_err(|_| ProtocolError::Malformed("decimal parameter"))?;
            Value::Decimal(text.to_owned())
        }
        wire::DATE | wire::DATETIME | wire::TIMESTAMP => decode_datetime(r, t.code)?,
        wire::TIME => decode_time(r)?,
        wire::VARCHAR
        | wire::VAR_STRING
        | wire::STRING
        | wire::TINY_BLOB
        | wire::MEDIUM_BLOB
        | wire::LONG_BLOB
        | wire::BLOB
        | wire::JSON
        | wire::ENUM
        | wire::SET
        | wire::BIT => Value::Bytes(r.lenenc_bytes(W)?.to_vec()),
        _ => return Err(ProtocolError::Malformed("unsupported parameter type")),
    })
}

fn decode_datetime(r: &mut WireReader<'_>, code: u8) -> Result<Value, ProtocolError> {
    const W: &str = "datetime parameter";
    let len = r.u8(W)?;
    if !matches!(len, 0 | 4 | 7 | 11) {
        return Err(ProtocolError::Malformed(W));
    }
    let mut dt = DateTime::default();
    if len >= 4 {
        dt.date = Date {
            year: r.u16(W)?,
            month: r.u8(W)?,
            day: r.u8(W)?,
        };
    }
    if len >= 7 {
        dt.hour = r.u8(W)?;
        dt.minute = r.u8(W)?;
        dt.second = r.u8(W)?;
    }
    if len == 11 {
        dt.microsecond = r.u32(W)?;
    }
    Ok(if code == wire::DATE {
        Value::Date(dt.date)
    } else {
        Value::DateTime(dt)
    })
}

fn decode_time(r: &mut WireReader<'_>) -> Result<Value, ProtocolError> {
    const W: &str = "time parameter";
    let len = r.u8(W)?;
    if !matches!(len, 0 | 8 | 12) {
        return Err(ProtocolError::Malformed(W));
    }
    let mut t = Time::default();
    if len >= 8 {
        t.negative = r.u8(W)? != 0;
        t.days = r.u32(W)?;
        t.hours = r.u8(W)?;
        t.minutes = r.u8(W)?;
        t.seconds = r.u8(W)?;
    }
    if len == 12 {
        t.microseconds = r.u32(W)?;
    }
    Ok(Value::Time(t))
}

fn unrepresentable(c: &ColumnDef, v: &Value) -> ErrPacket {
    ErrPacket::new(
        1105,
        "HY000",
        format!(
            "Internal error: value {v:?} cannot be sent as column '{}' of type {:?}",
            c.name, c.column_type
        ),
    )
}

fn put_int(out: &mut Vec<u8>, c: &ColumnDef, v: &Value, width: usize) -> Result<(), ErrPacket> {
    let bits = (width * 8) as u32;
    let fits = match v {
        Value::Int(i) if bits == 64 => Some(*i as u64),
        Value::UInt(u) if bits == 64 => Some(*u),
        Value::Int(i) if (i >> (bits - 1)) == 0 || (i >> (bits - 1)) == -1 => Some(*i as u64),
        Value::Int(i) if *i >= 0 && (*i as u64) >> bits == 0 => Some(*i as u64),
        Value::UInt(u) if u >> bits == 0 => Some(*u),
        _ => None,
    };
    let raw = fits.ok_or_else(|| unrepresentable(c, v))?;
    out.extend(raw.to_le_bytes().iter().take(width));
    Ok(())
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Double(d) => Some(*d),
        Value::Float(f) => Some(f64::from(*f)),
        Value::Int(i) => Some(*i as f64),
        Value::UInt(u) => Some(*u as f64),
        _ => None,
    }
}

fn put_datetime(out: &mut Vec<u8>, dt: &DateTime) {
    let has_time = dt.hour != 0 || dt.minute != 0 || dt.second != 0 || dt.microsecond != 0;
    let len = match (dt.microsecond != 0, has_time) {
        (true, _) => 11,
        (false, true) => 7,
        (false, false) => 4,
    };
    out.push(len);
    out.extend_from_slice(&dt.date.year.to_le_bytes());
    out.extend_from_slice(&[dt.date.month, dt.date.day]);
    if len >= 7 {
        out.extend_from_slice(&[dt.hour, dt.minute, dt.second]);
    }
    if len == 11 {
        out.extend_from_slice(&dt.microsecond.to_le_bytes());
    }
}

fn encode_value(out: &mut Vec<u8>, c: &ColumnDef, v: &Value) -> Result<(), ErrPacket> {
    match c.column_type {
        ColumnType::Tiny => put_int(out, c, v, 1),
        ColumnType::Short | ColumnType::Year => put_int(out, c, v, 2),
        ColumnType::Long | ColumnType::Int24 => put_int(out, c, v, 4),
        ColumnType::LongLong => put_int(out, c, v, 8),
        ColumnType::Float => {
            let f = as_f64(v).ok_or_else(|| unrepresentable(c, v))? as f32;
            out.extend_from_slice(&f.to_le_bytes());
            Ok(())
        }
        ColumnType::Double => {
            let d = as_f64(v).ok_or_else(|| unrepresentable(c, v))?;
            out.extend_from_slice(&d.to_le_bytes());
            Ok(())
        }
        ColumnType::Date | ColumnType::DateTime | ColumnType::Timestamp => {
            match v {
                Value::Date(d) => put_datetime(
                    out,
                    &DateTime {
                        date: *d,
                        ..DateTime::default()
                    },
                ),
                Value::DateTime(dt) => put_datetime(out, dt),
                _ => return Err(unrepresentable(c, v)),
            }
            Ok(())
        }
        ColumnType::Time => {
            let Value::Time(t) = v else {
                return Err(unrepresentable(c, v));
            };
            let len: u8 = if t.microseconds != 0 { 12 } else { 8 };
            out.push(len);
            out.push(u8::from(t.negative));
            out.extend_from_slice(&t.days.to_le_bytes());
            out.extend_from_slice(&[t.hours, t.minutes, t.seconds]);
            if len == 12 {
                out.extend_from_slice(&t.microseconds.to_le_bytes());
            }
            Ok(())
        }
        ColumnType::Decimal
        | ColumnType::VarChar
        | ColumnType::Char
        | ColumnType::Blob
        | ColumnType::Json
        | ColumnType::Bit
        | ColumnType::Null => {
            // Strings and decimals are sent as they are, without an intermediate copy.
            match v {
                Value::Bytes(b) => {
                    put_lenenc_bytes(out, b);
                    return Ok(());
                }
                Value::Decimal(d) => {
                    put_lenenc_bytes(out, d.as_bytes());
                    return Ok(());
                }
                _ => {}
            }
            let text = text_value(v, display_decimals(c)).ok_or_else(|| unrepresentable(c, v))?;
            put_lenenc_bytes(out, &text);
            Ok(())
        }
    }
}

/// [`binary_row_into`] as a packet of its own.
#[cfg(test)]
pub fn binary_row(columns: &[ColumnDef], row: &[Value]) -> Result<Vec<u8>, ErrPacket> {
    let mut p = Vec::new();
    binary_row_into(&mut p, columns, row)?;
    Ok(p)
}

/// Appends a binary-protocol row to `p` (a packet being built in place): header 0x00, NULL
/// bitmap (offset 2), then the non-NULL values.
pub fn binary_row_into(
    p: &mut Vec<u8>,
    columns: &[ColumnDef],
    row: &[Value],
) -> Result<(), ErrPacket> {
    let bitmap_len = (columns.len() + 7 + 2) / 8;
    p.reserve(1 + bitmap_len + row.len() * 8);
    p.push(0);
    let bitmap_start = p.len();
    p.resize(bitmap_start + bitmap_len, 0);
    for (i, (c, v)) in columns.iter().zip(row).enumerate() {
        if v.is_null() {
            let bit = i + 2;
            if let Some(byte) = p.get_mut(bitmap_start + bit / 8) {
                *byte |= 1 << (bit % 8);
            }
        } else {
            encode_value(p, c, v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(code: u8, unsigned: bool) -> ParamType {
        ParamType { code, unsigned }
    }

    #[test]
    fn integer_params_respect_sign_and_width() {
        let mut r = WireReader::new(&[0xff, 0xfe, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            decode_param(&mut r, p(wire::TINY, false)).unwrap(),
            Value::Int(-1)
        );
        assert_eq!(
            decode_param(&mut r, p(wire::LONG, false)).unwrap(),
            Value::Int(-2)
        );
        let mut r = WireReader::new(&[0xff]);
        assert_eq!(
            decode_param(&mut r, p(wire::TINY, true)).unwrap(),
            Value::UInt(255)
        );
    }

    #[test]
    fn truncated_params_are_malformed() {
        for (bytes, t) in [
            (&[1u8, 2][..], wire::LONG),
            (&[][..], wire::LONGLONG),
            (&[5, b'a'][..], wire::VAR_STRING),
            (&[7, 0xe8, 0x07, 1][..], wire::DATETIME),
            (&[3, 1, 2, 3][..], wire::DATE),
            (&[0][..], 0x99),
        ] {
            let mut r = WireReader::new(bytes);
            assert!(decode_param(&mut r, p(t, false)).is_err(), "{t}");
        }
    }

    #[test]
    fn datetime_param_round_trip() {
        let mut r = WireReader::new(&[11, 0xe8, 0x07, 2, 29, 13, 14, 15, 0x40, 0xe2, 0x01, 0]);
        let Value::DateTime(dt) = decode_param(&mut r, p(wire::DATETIME, false)).unwrap() else {
            panic!("not a datetime");
        };
        assert_eq!((dt.date.year, dt.date.month, dt.date.day), (2024, 2, 29));
        assert_eq!(
            (dt.hour, dt.minute, dt.second, dt.microsecond),
            (13, 14, 15, 123_456)
        );
        let mut out = Vec::new();
        put_datetime(&mut out, &dt);
        assert_eq!(
            out,
            [11, 0xe8, 0x07, 2, 29, 13, 14, 15, 0x40, 0xe2, 0x01, 0]
        );
    }

    #[test]
    fn binary_row_null_bitmap_and_widths() {
        let cols = vec![
            ColumnDef::new("a", ColumnType::Long),
            ColumnDef::new("b", ColumnType::VarChar),
            ColumnDef::new("c", ColumnType::Tiny),
        ];
        let row = binary_row(&cols, &[Value::Int(-2), Value::Null, Value::Int(7)]).unwrap();
        assert_eq!(row, vec![0, 0b1000, 0xfe, 0xff, 0xff, 0xff, 7]);
        assert!(binary_row(&cols, &[Value::Int(1 << 40), Value::Null, Value::Int(0)]).is_err());
        assert!(binary_row(&cols, &[Value::text("x"), Value::Null, Value::Int(0)]).is_err());
    }
}
