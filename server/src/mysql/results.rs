//! Writes statement results to the client: OK packets, text and binary result sets, the end
//! marker in EOF or DEPRECATE_EOF framing, and errors.
//!
//! Invariants: each function queues complete packets only; large result sets are flushed in
//! pieces of about [`FLUSH_THRESHOLD`] bytes so memory stays bounded by one chunk plus the
//! engine's rows; the status flags always come from the caller's session state.

use orcinus_sql::session::{ColumnDef, OkSummary, QueryOutcome, ResultSet};
use tokio::io::{AsyncRead, AsyncWrite};

use super::binary::binary_row_into;
use super::codec::put_lenenc_int;
use super::constants::capability;
use super::error::{ErrPacket, ProtocolError};
use super::packet::PacketStream;
use super::response::{
    check_row_widths, column_definition, eof_packet, err_packet, ok_packet, text_row,
};

/// Queued bytes after which a result set is flushed mid-way.
pub const FLUSH_THRESHOLD: usize = 1 << 20;

/// Row encoding of a result set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    /// COM_QUERY results.
    Text,
    /// COM_STMT_EXECUTE results.
    Binary,
}

/// Writes responses for one connection with its negotiated capabilities.
#[derive(Debug, Clone, Copy)]
pub struct ResultWriter {
    /// Effective capabilities of the connection.
    pub capabilities: u32,
}

impl ResultWriter {
    fn deprecate_eof(self) -> bool {
        self.capabilities & capability::DEPRECATE_EOF != 0
    }

    /// Queues an OK packet.
    pub fn ok<S: AsyncRead + AsyncWrite + Unpin>(
        self,
        stream: &mut PacketStream<S>,
        summary: &OkSummary,
        status: u16,
    ) {
        stream.write_packet(&ok_packet(
            0,
            summary.affected_rows,
            summary.last_insert_id,
            status,
            summary.warnings,
            &summary.info,
        ));
    }

    /// Queues an ERR packet.
    pub fn error<S: AsyncRead + AsyncWrite + Unpin>(
        self,
        stream: &mut PacketStream<S>,
        e: &ErrPacket,
    ) {
        stream.write_packet(&err_packet(e));
    }

    /// Queues the packet that ends a list of definitions or rows: EOF, or with DEPRECATE_EOF
    /// an OK with the 0xFE header.
    pub fn end<S: AsyncRead + AsyncWrite + Unpin>(
        self,
        stream: &mut PacketStream<S>,
        status: u16,
        warnings: u16,
    ) {
        if self.deprecate_eof() {
            stream.write_packet(&ok_packet(0xfe, 0, 0, status, warnings, ""));
        } else {
            stream.write_packet(&eof_packet(warnings, status));
        }
    }

    /// Queues the EOF that follows definitions inside a result, omitted with DEPRECATE_EOF.
    pub fn intermediate_eof<S: AsyncRead + AsyncWrite + Unpin>(
        self,
        stream: &mut PacketStream<S>,
        status: u16,
    ) {
        if !self.deprecate_eof() {
            stream.write_packet(&eof_packet(0, status));
        }
    }

    /// Queues column definitions followed by the intermediate EOF.
    pub fn definitions<S: AsyncRead + AsyncWrite + Unpin>(
        self,
        stream: &mut PacketStream<S>,
        columns: &[ColumnDef],
        status: u16,
    ) {
        for c in columns {
            stream.write_packet(&column_definition(c, false));
        }
        self.intermediate_eof(stream, status);
    }

    /// Writes one statement outcome.
    pub async fn outcome<S: AsyncRead + AsyncWrite + Unpin>(
        self,
        stream: &mut PacketStream<S>,
        outcome: &QueryOutcome,
        status: u16,
        format: RowFormat,
    ) -> Result<(), ProtocolError> {
        match outcome {
            QueryOutcome::Done(summary) => {
                self.ok(stream, summary, status);
                Ok(())
            }
            QueryOutcome::Rows(rs) => self.result_set(stream, rs, status, format).await,
        }
    }

    /// Writes a result set; a row that cannot be encoded ends it with an ERR packet.
    pub async fn result_set<S: AsyncRead + AsyncWrite + Unpin>(
        self,
        stream: &mut PacketStream<S>,
        rs: &ResultSet,
        status: u16,
        format: RowFormat,
    ) -> Result<(), ProtocolError> {
        if let Err(e) = check_row_widths(rs) {
            self.error(stream, &e);
            return Ok(());
        }
        let mut count = Vec::with_capacity(9);
        put_lenenc_int(&mut count, rs.columns.len() as u64);
        stream.write_packet(&count);
        self.definitions(stream, &rs.columns, status);
        for row in &rs.rows {
            match format {
                RowFormat::Text => stream.write_packet(&text_row(&rs.columns, row)),
                RowFormat::Binary => {
                    if let Err(e) =
                        stream.write_packet_with(|p| binary_row_into(p, &rs.columns, row))
                    {
                        self.error(stream, &e);
                        return Ok(());
                    }
                }
            }
            if stream.queued() >= FLUSH_THRESHOLD {
                stream.flush().await?;
            }
        }
        self.end(stream, status, rs.warnings);
        Ok(())
    }
}
