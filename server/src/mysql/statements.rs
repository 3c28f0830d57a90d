//! Server-side prepared statements (COM_STMT_PREPARE / EXECUTE / SEND_LONG_DATA / RESET /
//! CLOSE): the per-connection protocol state of each statement and the EXECUTE decoding.
//!
//! Invariants: parameter types are kept per statement because libmysqlclient sends them only
//! on the first EXECUTE (or when rebinding); long data accumulates per parameter until the
//! statement is executed or reset and is bounded by `max_allowed_packet`; an EXECUTE whose
//! parameters cannot be decoded is refused whole, so the engine never sees partial input.

use std::collections::HashMap;

use orcinus_sql::session::{
    ColumnDef, ColumnType, PreparedStatement, SqlError, StatementId, Value,
};

use super::binary::{ParamType, decode_param};
use super::codec::WireReader;
use super::error::{ErrPacket, ProtocolError};

/// Protocol-side state of one prepared statement.
#[derive(Debug)]
pub struct StatementState {
    /// Number of placeholders.
    pub param_count: u16,
    param_types: Option<Vec<ParamType>>,
    long_data: Vec<Option<Vec<u8>>>,
    long_data_error: Option<ErrPacket>,
}

/// What COM_STMT_EXECUTE asked for.
#[derive(Debug)]
pub struct ExecuteRequest {
    /// The statement.
    pub id: StatementId,
    /// One value per placeholder.
    pub params: Vec<Value>,
}

/// All prepared statements of one connection.
#[derive(Debug, Default)]
pub struct StatementTable {
    by_id: HashMap<StatementId, StatementState>,
}

/// Placeholder definitions sent after PREPARE_OK (MySQL sends one per `?`).
#[must_use]
pub fn param_definitions(count: u16) -> Vec<ColumnDef> {
    (0..count)
        .map(|_| ColumnDef::new("?", ColumnType::VarChar).binary())
        .collect()
}

/// The COM_STMT_PREPARE OK packet.
#[must_use]
pub fn prepare_ok(p: &PreparedStatement) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&p.id.to_le_bytes());
    out.extend_from_slice(&(p.columns.len().min(usize::from(u16::MAX)) as u16).to_le_bytes());
    out.extend_from_slice(&p.param_count.to_le_bytes());
    out.push(0);
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

impl StatementTable {
    /// Registers a statement the session prepared.
    pub fn insert(&mut self, p: &PreparedStatement) {
        self.by_id.insert(
            p.id,
            StatementState {
                param_count: p.param_count,
                param_types: None,
                long_data: vec![None; usize::from(p.param_count)],
                long_data_error: None,
            },
        );
    }

    /// Forgets a statement; true if it existed.
    pub fn remove(&mut self, id: StatementId) -> bool {
        self.by_id.remove(&id).is_some()
    }

    /// Forgets every statement, returning their ids.
    pub fn clear(&mut self) -> Vec<StatementId> {
        self.by_id.drain().map(|(id, _)| id).collect()
    }

    /// COM_STMT_SEND_LONG_DATA (no response is sent for this command; problems surface at the
    /// next EXECUTE, as in MySQL).
    pub fn send_long_data(&mut self, body: &[u8], limit: u64) -> Result<(), ProtocolError> {
        let mut r = WireReader::new(body);
        let id = r.u32("statement id")?;
        let param = usize::from(r.u16("parameter id")?);
        let data = r.rest();
        let Some(state) = self.by_id.get_mut(&id) else {
            return Ok(());
        };
        match state.long_data.get_mut(param) {
            None => {
                state.long_data_error = Some(ErrPacket::from_sql(&SqlError::WrongArguments(
                    "mysqld_stmt_send_long_data".to_owned(),
                )));
            }
            Some(slot) => {
                let buf = slot.get_or_insert_with(Vec::new);
                if (buf.len() + data.len()) as u64 > limit {
                    state.long_data_error =
                        Some(ErrPacket::from_protocol(&ProtocolError::PacketTooLarge {
                            size: (buf.len() + data.len()) as u64,
                            limit,
                        }));
                } else {
                    buf.extend_from_slice(data);
                }
            }
        }
        Ok(())
    }

    /// COM_STMT_RESET: drops accumulated long data. Unknown ids are an error.
    pub fn reset(&mut self, id: StatementId) -> Result<(), SqlError> {
        let state = self.by_id.get_mut(&id).ok_or(SqlError::UnknownStatement {
            id,
            command: "mysqld_stmt_reset",
        })?;
        state.long_data.iter_mut().for_each(|d| *d = None);
        state.long_data_error = None;
        Ok(())
    }

    /// Decodes COM_STMT_EXECUTE. The outer error is a malformed packet; the inner one an
    /// error to report (unknown statement, cursor request, long-data failure). Long data is
    /// consumed either way.
    pub fn decode_execute(
        &mut self,
        body: &[u8],
    ) -> Result<Result<ExecuteRequest, ErrPacket>, ProtocolError> {
        let mut r = WireReader::new(body);
        let id = r.u32("statement id")?;
        let flags = r.u8("cursor flags")?;
        r.u32("iteration count")?;
        let Some(state) = self.by_id.get_mut(&id) else {
            return Ok(Err(ErrPacket::from_sql(&SqlError::UnknownStatement {
                id,
                command: "mysqld_stmt_execute",
            })));
        };
        let long_data: Vec<Option<Vec<u8>>> =
            state.long_data.iter_mut().map(Option::take).collect();
        if let Some(e) = state.long_data_error.take() {
            return Ok(Err(e));
        }
        if flags != 0 {
            return Ok(Err(ErrPacket::from_sql(&SqlError::NotSupported(
                "cursors on prepared statements".to_owned(),
            ))));
        }
        let count = usize::from(state.param_count);
        if count == 0 {
            return Ok(Ok(ExecuteRequest {
                id,
                params: Vec::new(),
            }));
        }
        let null_bitmap = r.bytes(count.div_ceil(8), "null bitmap")?;
        let new_types = r.u8("new params bound flag")?;
        if new_types == 1 {
            let mut types = Vec::with_capacity(count);
            for _ in 0..count {
                let code = r.u8("parameter type")?;
                let flag = r.u8("parameter flag")?;
                types.push(ParamType {
                    code,
                    unsigned: flag & 0x80 != 0,
                });
            }
            state.param_types = Some(types);
        }
        let Some(types) = &state.param_types else {
            return Err(ProtocolError::Malformed("parameter types were never bound"));
        };
        let mut params = Vec::with_capacity(count);
        for (i, (t, long)) in types.iter().zip(long_data).enumerate() {
            let is_null = null_bitmap
                .get(i / 8)
                .is_some_and(|b| b & (1 << (i % 8)) != 0);
            params.push(match (is_null, long) {
                (true, _) => Value::Null,
                (false, Some(data)) => Value::Bytes(data),
                (false, None) => decode_param(&mut r, *t)?,
            });
        }
        Ok(Ok(ExecuteRequest { id, params }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::constants::column_type as wire;

    fn table(params: u16) -> StatementTable {
        let mut t = StatementTable::default();
        t.insert(&PreparedStatement {
            id: 1,
            param_count: params,
            columns: Vec::new(),
        });
        t
    }

    #[test]
    fn types_are_remembered_between_executes() {
        let mut t = table(2);
        let first = [
            1,
            0,
            0,
            0,
            0,
            1,
            0,
            0,
            0,
            0b10,
            1,
            wire::LONG,
            0,
            wire::LONG,
            0,
            5,
            0,
            0,
            0,
        ];
        let req = t.decode_execute(&first).unwrap().unwrap();
        assert_eq!(req.params, vec![Value::Int(5), Value::Null]);
        let second = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0];
        let req = t.decode_execute(&second).unwrap().unwrap();
        assert_eq!(req.params, vec![Value::Int(6), Value::Int(7)]);
    }

    #[test]
    fn missing_types_and_short_values_are_malformed() {
        let mut t = table(1);
        assert!(
            t.decode_execute(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0])
                .is_err()
        );
        assert!(
            t.decode_execute(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, wire::LONG, 0, 5])
                .is_err()
        );
        assert!(t.decode_execute(&[1, 0]).is_err());
    }

    #[test]
    fn unknown_statement_and_long_data() {
        let mut t = table(1);
        assert!(
            t.decode_execute(&[9, 0, 0, 0, 0, 1, 0, 0, 0])
                .unwrap()
                .is_err()
        );
        t.send_long_data(&[1, 0, 0, 0, 0, 0, b'a', b'b'], 100)
            .unwrap();
        t.send_long_data(&[1, 0, 0, 0, 0, 0, b'c'], 100).unwrap();
        let req = t
            .decode_execute(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, wire::BLOB, 0])
            .unwrap()
            .unwrap();
        assert_eq!(req.params, vec![Value::Bytes(b"abc".to_vec())]);
        t.send_long_data(&[1, 0, 0, 0, 0, 0, b'x', b'y'], 1)
            .unwrap();
        assert!(
            t.decode_execute(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0])
                .unwrap()
                .is_err()
        );
    }
}
