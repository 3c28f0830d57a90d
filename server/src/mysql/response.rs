//! Server response packets: OK, ERR, EOF, column definitions, text-protocol rows, and result
//! sets in either EOF or DEPRECATE_EOF framing.
//!
//! Invariants: every OK and EOF carries the session's status flags (AUTOCOMMIT, IN_TRANS) plus
//! MORE_RESULTS_EXISTS when another result follows; with CLIENT_DEPRECATE_EOF the
//! intermediate EOF after column definitions is omitted and the terminating packet is an OK
//! with the 0xFE header; a row whose width differs from its columns is never sent.

use orcinus_sql::session::{ColumnDef, ColumnType, ResultSet, SessionStatus, Value};

use super::codec::{put_lenenc_bytes, put_lenenc_int};
use super::constants::{column_type, status};
use super::error::ErrPacket;

/// Status flags for a session state.
#[must_use]
pub fn status_flags(s: SessionStatus, more_results: bool) -> u16 {
    let mut flags = 0;
    if s.autocommit {
        flags |= status::AUTOCOMMIT;
    }
    if s.in_transaction {
        flags |= status::IN_TRANS;
    }
    if more_results {
        flags |= status::MORE_RESULTS_EXISTS;
    }
    flags
}

/// An OK packet (`header` 0x00, or 0xFE when it ends a result set under DEPRECATE_EOF).
#[must_use]
pub fn ok_packet(
    header: u8,
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) -> Vec<u8> {
    let mut p = Vec::with_capacity(16 + info.len());
    p.push(header);
    put_lenenc_int(&mut p, affected_rows);
    put_lenenc_int(&mut p, last_insert_id);
    p.extend_from_slice(&status.to_le_bytes());
    p.extend_from_slice(&warnings.to_le_bytes());
    if !info.is_empty() {
        // MySQL's net_send_ok writes the info as a length-encoded string (the manual's
        // string<EOF> is wrong), and libmysqlclient reads it that way.
        put_lenenc_bytes(&mut p, info.as_bytes());
    }
    p
}

/// An EOF packet.
#[must_use]
pub fn eof_packet(warnings: u16, status: u16) -> Vec<u8> {
    let mut p = vec![0xfe];
    p.extend_from_slice(&warnings.to_le_bytes());
    p.extend_from_slice(&status.to_le_bytes());
    p
}

/// An ERR packet (protocol 4.1 form with SQLSTATE).
#[must_use]
pub fn err_packet(e: &ErrPacket) -> Vec<u8> {
    let mut p = Vec::with_capacity(9 + e.message.len());
    p.push(0xff);
    p.extend_from_slice(&e.code.to_le_bytes());
    p.push(b'#');
    p.extend(e.sql_state.bytes().chain(std::iter::repeat(b'0')).take(5));
    p.extend_from_slice(e.message.as_bytes());
    p
}

/// The wire type code of a column type.
#[must_use]
pub fn wire_type(t: ColumnType) -> u8 {
    match t {
        ColumnType::Tiny => column_type::TINY,
        ColumnType::Short => column_type::SHORT,
        ColumnType::Int24 => column_type::INT24,
        ColumnType::Long => column_type::LONG,
        ColumnType::LongLong => column_type::LONGLONG,
        ColumnType::Float => column_type::FLOAT,
        ColumnType::Double => column_type::DOUBLE,
        ColumnType::Decimal => column_type::NEWDECIMAL,
        ColumnType::Year => column_type::YEAR,
        ColumnType::Date => column_type::DATE,
        ColumnType::Time => column_type::TIME,
        ColumnType::DateTime => column_type::DATETIME,
        ColumnType::Timestamp => column_type::TIMESTAMP,
        ColumnType::VarChar => column_type::VAR_STRING,
        ColumnType::Char => column_type::STRING,
        ColumnType::Blob => column_type::BLOB,
        ColumnType::Json => column_type::JSON,
        ColumnType::Bit => column_type::BIT,
        ColumnType::Null => column_type::NULL,
    }
}

/// A ColumnDefinition41 packet; `field_list` appends the default-value field COM_FIELD_LIST
/// responses carry (NULL: no default reported).
#[must_use]
pub fn column_definition(c: &ColumnDef, field_list: bool) -> Vec<u8> {
    let mut p = Vec::with_capacity(48 + c.name.len() * 2);
    put_lenenc_bytes(&mut p, b"def");
    put_lenenc_bytes(&mut p, c.database.as_bytes());
    put_lenenc_bytes(&mut p, c.table.as_bytes());
    put_lenenc_bytes(&mut p, c.original_table.as_bytes());
    put_lenenc_bytes(&mut p, c.name.as_bytes());
    put_lenenc_bytes(&mut p, c.original_name.as_bytes());
    p.push(0x0c);
    p.extend_from_slice(&c.collation.to_le_bytes());
    p.extend_from_slice(&c.length.to_le_bytes());
    p.push(wire_type(c.column_type));
    p.extend_from_slice(&c.flags.0.to_le_bytes());
    p.push(c.decimals);
    p.extend_from_slice(&[0, 0]);
    if field_list {
        p.push(0xfb);
    }
    p
}

/// Column decimals meaning "not fixed" for FLOAT/DOUBLE (MySQL `DECIMAL_NOT_SPECIFIED`).
const DECIMALS_NOT_FIXED: u8 = 31;

/// The decimals that govern how a value prints in column `c`: the column's own for numeric
/// and temporal columns, "not fixed" for text columns (whose values are not formatted).
#[must_use]
pub fn display_decimals(c: &ColumnDef) -> u8 {
    if c.column_type.is_text() {
        DECIMALS_NOT_FIXED
    } else {
        c.decimals
    }
}

/// The text form of a value as MySQL prints it; `None` for NULL. `decimals` (see
/// [`display_decimals`]) gives the fractional-second digits of temporal values (31: as many as
/// the value needs) and, below 31, the fixed number of decimals of floats (MySQL `my_fcvt`). Not-fixed floats use the shortest round-trip
/// form; MySQL switches to exponent notation for very large or small magnitudes, which this
/// does not reproduce yet.
#[must_use]
pub fn text_value(v: &Value, decimals: u8) -> Option<Vec<u8>> {
    let fraction = |micros: u32| {
        let digits = match decimals {
            DECIMALS_NOT_FIXED.. if micros != 0 => 6,
            DECIMALS_NOT_FIXED.. => 0,
            d => usize::from(d.min(6)),
        };
        if digits == 0 {
            String::new()
        } else {
            let s = format!("{micros:06}");
            format!(".{}", s.get(..digits).unwrap_or_default())
        }
    };
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Float(f) if decimals < DECIMALS_NOT_FIXED => {
            format!("{f:.*}", usize::from(decimals)).into_bytes()
        }
        Value::Double(d) if decimals < DECIMALS_NOT_FIXED => {
            format!("{d:.*}", usize::from(decimals)).into_bytes()
        }
        Value::Float(f) => f.to_string().into_bytes(),
        Value::Double(d) => d.to_string().into_bytes(),
        Value::Decimal(s) => s.clone().into_bytes(),
        Value::Bytes(b) => b.clone(),
        Value::Date(d) => format!("{:04}-{:02}-{:02}", d.year, d.month, d.day).into_bytes(),
        Value::DateTime(t) => format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}{}",
            t.date.year,
            t.date.month,
            t.date.day,
            t.hour,
            t.minute,
            t.second,
            fraction(t.microsecond)
        )
        .into_bytes(),
        Value::Time(t) => format!(
            "{}{:02}:{:02}:{:02}{}",
            if t.negative { "-" } else { "" },
            u64::from(t.days) * 24 + u64::from(t.hours),
            t.minutes,
            t.seconds,
            fraction(t.microseconds)
        )
        .into_bytes(),
    })
}

/// A text-protocol row.
#[must_use]
pub fn text_row(columns: &[ColumnDef], row: &[Value]) -> Vec<u8> {
    let mut p = Vec::with_capacity(row.len() * 8);
    for (c, v) in columns.iter().zip(row) {
        match text_value(v, display_decimals(c)) {
            Some(b) => put_lenenc_bytes(&mut p, &b),
            None => p.push(0xfb),
        }
    }
    p
}

/// Checks that a result set can be sent: at least one column (a column count of 0 would read
/// as an OK packet) and one value per column in every row.
pub fn check_row_widths(rs: &ResultSet) -> Result<(), ErrPacket> {
    if rs.columns.is_empty() {
        return Err(ErrPacket::new(
            1105,
            "HY000",
            "Internal error: result set without columns",
        ));
    }
    match rs.rows.iter().find(|r| r.len() != rs.columns.len()) {
        Some(r) => Err(ErrPacket::new(
            1105,
            "HY000",
            format!(
                "Internal error: row of {} values for {} columns",
                r.len(),
                rs.columns.len()
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orcinus_sql::session::{Date, DateTime, Time};

    #[test]
    fn err_packet_layout() {
        let p = err_packet(&ErrPacket::unknown_command());
        assert_eq!(
            &p[..9],
            &[0xff, 0x17, 0x04, b'#', b'0', b'8', b'S', b'0', b'1']
        );
        assert_eq!(&p[9..], b"Unknown command");
    }

    #[test]
    fn temporal_text_forms() {
        let d = Date {
            year: 2024,
            month: 2,
            day: 9,
        };
        assert_eq!(text_value(&Value::Date(d), 0).unwrap(), b"2024-02-09");
        let t = DateTime {
            date: d,
            hour: 1,
            minute: 2,
            second: 3,
            microsecond: 450_000,
        };
        assert_eq!(
            text_value(&Value::DateTime(t), 0).unwrap(),
            b"2024-02-09 01:02:03"
        );
        assert_eq!(
            text_value(&Value::DateTime(t), 2).unwrap(),
            b"2024-02-09 01:02:03.45"
        );
        let tm = Time {
            negative: true,
            days: 1,
            hours: 2,
            minutes: 3,
            seconds: 4,
            microseconds: 0,
        };
        assert_eq!(text_value(&Value::Time(tm), 0).unwrap(), b"-26:03:04");
        assert_eq!(text_value(&Value::Null, 0), None);
        assert_eq!(text_value(&Value::Double(1.5), 31).unwrap(), b"1.5");
        assert_eq!(text_value(&Value::Double(1.0), 31).unwrap(), b"1");
        assert_eq!(text_value(&Value::Double(1.005), 2).unwrap(), b"1.00");
        assert_eq!(text_value(&Value::Float(2.5), 3).unwrap(), b"2.500");
        assert_eq!(
            text_value(&Value::DateTime(t), 31).unwrap(),
            b"2024-02-09 01:02:03.450000"
        );
        let text_column = ColumnDef::new("v", orcinus_sql::session::ColumnType::VarChar);
        assert_eq!(
            text_row(&[text_column], &[Value::Double(1.25)]),
            b"\x041.25".to_vec()
        );
    }

    #[test]
    fn result_sets_must_have_columns_and_matching_rows() {
        use orcinus_sql::session::ColumnType;
        let mut rs = ResultSet::default();
        assert!(check_row_widths(&rs).is_err());
        rs.columns.push(ColumnDef::new("a", ColumnType::Long));
        rs.rows.push(vec![Value::Int(1)]);
        assert!(check_row_widths(&rs).is_ok());
        rs.rows.push(vec![]);
        assert!(check_row_widths(&rs).is_err());
    }

    #[test]
    fn status_flags_follow_session_state() {
        let s = SessionStatus {
            autocommit: true,
            in_transaction: true,
        };
        assert_eq!(
            status_flags(s, true),
            status::AUTOCOMMIT | status::IN_TRANS | status::MORE_RESULTS_EXISTS
        );
    }
}
