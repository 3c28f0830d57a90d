//! One client connection: handshake and authentication, then the command loop.
//!
//! Invariants: a command is answered completely before the next is read; a malformed command
//! gets an ERR and the connection goes on; a protocol error that loses the stream position
//! (oversized packet, out-of-order sequence, I/O) ends the connection after a best-effort ERR;
//! the session is always closed (rolling back its transaction) when the connection ends;
//! `KILL CONNECTION` from another session ends the connection at the next command boundary
//! (a running statement is interrupted first); a LOAD DATA LOCAL transfer is always read to its
//! end (the client's empty packet), even when the statement failed, so the stream stays in step.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use orcinus_sql::session::{LocalInfile, SqlEngine, SqlError, SqlSession};
use tokio::io::{AsyncRead, AsyncWrite};

use super::codec::WireReader;
use super::constants::{capability, command};
use super::error::{ErrPacket, ProtocolError};
use super::handshake::{NONCE_LEN, new_nonce, parse_change_user};
use super::login::{login, open_session};
use super::packet::PacketStream;
use super::response::status_flags;
use super::results::{ResultWriter, RowFormat};
use super::statements::{StatementTable, param_definitions, prepare_ok};
use super::stats::ServerStats;

/// Largest packet accepted before authentication.
const PRE_AUTH_MAX_PACKET: u64 = 64 * 1024;
/// Time a client has to complete the handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything a connection needs from the server.
pub struct ConnectionSetup<E> {
    /// The SQL engine.
    pub engine: Arc<E>,
    /// Server counters.
    pub stats: Arc<ServerStats>,
    /// Connection id.
    pub connection_id: u32,
    /// Peer address.
    pub peer: IpAddr,
    /// `max_allowed_packet`.
    pub max_allowed_packet: u64,
    /// Idle limit of non-interactive clients.
    pub wait_timeout: Duration,
    /// Idle limit of CLIENT_INTERACTIVE clients.
    pub interactive_timeout: Duration,
    /// Limit for receiving the rest of a started packet.
    pub net_read_timeout: Duration,
    /// Limit for sending a response.
    pub net_write_timeout: Duration,
}

struct Connection<E: SqlEngine, S> {
    stream: PacketStream<S>,
    setup: ConnectionSetup<E>,
    session: E::Session,
    writer: ResultWriter,
    nonce: [u8; NONCE_LEN],
    statements: StatementTable,
    /// Resolves when the current session is killed (`KILL CONNECTION`); replaced with the
    /// session on COM_CHANGE_USER.
    killed: Pin<Box<dyn Future<Output = ()> + Send>>,
}

/// What the command loop does after a command.
enum Next {
    Continue,
    Close,
}

/// Serves one connection until the client quits or fails.
pub async fn run<E: SqlEngine, S: AsyncRead + AsyncWrite + Unpin + Send>(
    socket: S,
    setup: ConnectionSetup<E>,
) -> Result<(), ProtocolError> {
    let mut stream = PacketStream::new(socket, PRE_AUTH_MAX_PACKET);
    let nonce = new_nonce();
    let login = tokio::time::timeout(HANDSHAKE_TIMEOUT, login(&mut stream, &setup, &nonce))
        .await
        .map_err(|_| ProtocolError::HandshakeTimeout)?;
    let Some((session, capabilities)) = login? else {
        return Ok(());
    };
    stream.set_max_packet(setup.max_allowed_packet);
    stream.set_timeouts(setup.net_read_timeout, setup.net_write_timeout);
    let killed = Box::pin(session.killed());
    let mut conn = Connection {
        stream,
        setup,
        killed,
        session,
        writer: ResultWriter { capabilities },
        nonce,
        statements: StatementTable::default(),
    };
    let result = conn.command_loop().await;
    conn.session.close().await;
    result
}

fn utf8(bytes: &[u8]) -> Result<&str, ErrPacket> {
    std::str::from_utf8(bytes)
        .map_err(|_| ErrPacket::new(1300, "HY000", "Invalid utf8mb4 character string"))
}

impl<E: SqlEngine, S: AsyncRead + AsyncWrite + Unpin + Send> Connection<E, S> {
    fn status(&self, more: bool) -> u16 {
        status_flags(self.session.status(), more)
    }

    async fn command_loop(&mut self) -> Result<(), ProtocolError> {
        let configured_idle_limit = if self.writer.capabilities & capability::INTERACTIVE != 0 {
            self.setup.interactive_timeout
        } else {
            self.setup.wait_timeout
        };
        loop {
            // The session's timeouts, which `SET [SESSION] wait_timeout` etc. change.
            let idle_limit = match self.session.timeouts() {
                Some(t) => {
                    self.stream.set_timeouts(t.net_read, t.net_write);
                    t.idle
                }
                None => configured_idle_limit,
            };
            self.stream.reset_sequence();
            let read = tokio::select! {
                biased;
                () = &mut self.killed => {
                    tracing::debug!(connection_id = self.setup.connection_id, "connection killed");
                    return Ok(());
                }
                read = tokio::time::timeout(idle_limit, self.stream.read_packet()) => read,
            };
            let Ok(read) = read else {
                self.writer
                    .error(&mut self.stream, &ErrPacket::idle_timeout());
                let _ = self.stream.flush().await;
                return Err(ProtocolError::IdleTimeout);
            };
            let packet = match read {
                Ok(p) => p,
                Err(ProtocolError::Closed) => return Ok(()),
                Err(e) => {
                    if matches!(
                        e,
                        ProtocolError::PacketTooLarge { .. } | ProtocolError::OutOfOrder { .. }
                    ) {
                        self.writer
                            .error(&mut self.stream, &ErrPacket::from_protocol(&e));
                        let _ = self.stream.flush().await;
                    }
                    return Err(e);
                }
            };
            let next = match self.dispatch(&packet).await {
                Ok(next) => next,
                Err(e) if !e.is_fatal() => {
                    self.writer
                        .error(&mut self.stream, &ErrPacket::from_protocol(&e));
                    Next::Continue
                }
                Err(e) => return Err(e),
            };
            self.stream.flush().await?;
            if matches!(next, Next::Close) {
                return Ok(());
            }
        }
    }

    async fn dispatch(&mut self, packet: &[u8]) -> Result<Next, ProtocolError> {
        let (&cmd, body) = packet
            .split_first()
            .ok_or(ProtocolError::Malformed("empty command packet"))?;
        match cmd {
            command::QUIT => return Ok(Next::Close),
            command::PING => self.ok(),
            command::QUERY => {
                self.setup.stats.count_question();
                self.query(body).await?;
            }
            command::INIT_DB => {
                let result = match utf8(body) {
                    Ok(db) => self
                        .session
                        .use_database(db)
                        .await
                        .map_err(|e| ErrPacket::from_sql(&e)),
                    Err(e) => Err(e),
                };
                self.ok_or_error(result);
            }
            command::FIELD_LIST => self.field_list(body).await?,
            command::STATISTICS => {
                let text = self.setup.stats.summary();
                self.stream.write_packet(text.as_bytes());
            }
            command::RESET_CONNECTION => {
                for id in self.statements.clear() {
                    self.session.close_prepared(id);
                }
                let result = self
                    .session
                    .reset()
                    .await
                    .map_err(|e| ErrPacket::from_sql(&e));
                self.ok_or_error(result);
            }
            command::SET_OPTION => {
                let mut r = WireReader::new(body);
                match r.u16("option")? {
                    0 => self.session.set_multi_statements(true),
                    1 => self.session.set_multi_statements(false),
                    _ => {
                        self.writer
                            .error(&mut self.stream, &ErrPacket::unknown_command());
                        return Ok(Next::Continue);
                    }
                }
                let status = self.status(false);
                self.writer.end(&mut self.stream, status, 0);
            }
            command::CHANGE_USER => return self.change_user(body).await,
            command::STMT_PREPARE => self.prepare(body).await,
            command::STMT_EXECUTE => {
                self.setup.stats.count_question();
                self.execute(body).await?;
            }
            // These two commands never get a response, so a malformed one cannot be answered
            // without desynchronizing the client; like MySQL, it is dropped (and logged).
            command::STMT_SEND_LONG_DATA => {
                if let Err(e) = self
                    .statements
                    .send_long_data(body, self.setup.max_allowed_packet)
                {
                    tracing::debug!(error = %e, "dropped malformed COM_STMT_SEND_LONG_DATA");
                }
            }
            command::STMT_CLOSE => match WireReader::new(body).u32("statement id") {
                Ok(id) => {
                    if self.statements.remove(id) {
                        self.session.close_prepared(id);
                    }
                }
                Err(e) => tracing::debug!(error = %e, "dropped malformed COM_STMT_CLOSE"),
            },
            command::STMT_RESET => {
                let id = WireReader::new(body).u32("statement id")?;
                let result = self
                    .statements
                    .reset(id)
                    .map_err(|e| ErrPacket::from_sql(&e));
                self.ok_or_error(result);
            }
            command::STMT_FETCH => self.writer.error(
                &mut self.stream,
                &ErrPacket::from_sql(&SqlError::NotSupported("COM_STMT_FETCH (cursors)".into())),
            ),
            _ => self
                .writer
                .error(&mut self.stream, &ErrPacket::unknown_command()),
        }
        Ok(Next::Continue)
    }

    fn ok(&mut self) {
        let status = self.status(false);
        self.writer
            .ok(&mut self.stream, &Default::default(), status);
    }

    fn ok_or_error(&mut self, result: Result<(), ErrPacket>) {
        match result {
            Ok(()) => self.ok(),
            Err(e) => self.writer.error(&mut self.stream, &e),
        }
    }

    async fn query(&mut self, body: &[u8]) -> Result<(), ProtocolError> {
        let sql = match utf8(body) {
            Ok(s) => s,
            Err(e) => {
                self.writer.error(&mut self.stream, &e);
                return Ok(());
            }
        };
        let mut infile = ClientInfile {
            stream: &mut self.stream,
            enabled: self.writer.capabilities & capability::LOCAL_FILES != 0,
            read_timeout: self.setup.net_read_timeout,
            state: InfileState::NotRequested,
            broken: None,
        };
        let mut response = self.session.query_with_infile(sql, &mut infile).await;
        infile.finish().await?;
        if response.completed.is_empty() && response.error.is_none() {
            // Every query must be answered; an engine that returned nothing has a bug.
            response.error = Some(SqlError::Internal("query produced no result".into()));
        }
        let last = response.completed.len().saturating_sub(1);
        for (i, executed) in response.completed.iter().enumerate() {
            let more = i < last || response.error.is_some();
            let status = status_flags(executed.status, more);
            self.writer
                .outcome(&mut self.stream, &executed.outcome, status, RowFormat::Text)
                .await?;
        }
        if let Some(e) = &response.error {
            self.writer.error(&mut self.stream, &ErrPacket::from_sql(e));
        }
        Ok(())
    }

    async fn field_list(&mut self, body: &[u8]) -> Result<(), ProtocolError> {
        let mut r = WireReader::new(body);
        let table = r.nul_terminated("table name")?;
        let pattern = r.rest();
        let columns = match (utf8(table), utf8(pattern)) {
            (Ok(t), Ok(p)) => self
                .session
                .field_list(t, p)
                .await
                .map_err(|e| ErrPacket::from_sql(&e)),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        match columns {
            Ok(columns) => {
                for c in &columns {
                    self.stream
                        .write_packet(&super::response::column_definition(c, true));
                }
                let status = self.status(false);
                self.writer.end(&mut self.stream, status, 0);
            }
            Err(e) => self.writer.error(&mut self.stream, &e),
        }
        Ok(())
    }

    async fn prepare(&mut self, body: &[u8]) {
        let prepared = match utf8(body) {
            Ok(sql) => self
                .session
                .prepare(sql)
                .await
                .map_err(|e| ErrPacket::from_sql(&e)),
            Err(e) => Err(e),
        };
        match prepared {
            Ok(p) => {
                self.statements.insert(&p);
                self.stream.write_packet(&prepare_ok(&p));
                let status = self.status(false);
                if p.param_count > 0 {
                    self.writer.definitions(
                        &mut self.stream,
                        &param_definitions(p.param_count),
                        status,
                    );
                }
                if !p.columns.is_empty() {
                    self.writer
                        .definitions(&mut self.stream, &p.columns, status);
                }
            }
            Err(e) => self.writer.error(&mut self.stream, &e),
        }
    }

    async fn execute(&mut self, body: &[u8]) -> Result<(), ProtocolError> {
        let request = match self.statements.decode_execute(body)? {
            Ok(r) => r,
            Err(e) => {
                self.writer.error(&mut self.stream, &e);
                return Ok(());
            }
        };
        match self
            .session
            .execute_prepared(request.id, request.params)
            .await
        {
            Ok(outcome) => {
                let status = self.status(false);
                self.writer
                    .outcome(&mut self.stream, &outcome, status, RowFormat::Binary)
                    .await
            }
            Err(e) => {
                self.writer
                    .error(&mut self.stream, &ErrPacket::from_sql(&e));
                Ok(())
            }
        }
    }

    /// COM_CHANGE_USER: authenticate again with the connection's nonce and replace the
    /// session. A refused change closes the connection, as MySQL does.
    async fn change_user(&mut self, body: &[u8]) -> Result<Next, ProtocolError> {
        let mut login = parse_change_user(body, self.writer.capabilities)?;
        let nonce = self.nonce;
        match open_session(&mut self.stream, &self.setup, &mut login, &nonce).await? {
            Ok(new_session) => {
                self.statements.clear();
                let old = std::mem::replace(&mut self.session, new_session);
                old.close().await;
                self.killed = Box::pin(self.session.killed());
                self.ok();
                Ok(Next::Continue)
            }
            Err(e) => {
                self.writer.error(&mut self.stream, &e);
                Ok(Next::Close)
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InfileState {
    NotRequested,
    Streaming,
    Done,
}

/// LOAD DATA LOCAL over this connection: the LOCAL INFILE request (0xFB and the file name),
/// then the client's file as packets up to an empty one.
struct ClientInfile<'a, S> {
    stream: &'a mut PacketStream<S>,
    /// The client negotiated CLIENT_LOCAL_FILES.
    enabled: bool,
    read_timeout: Duration,
    state: InfileState,
    /// The protocol error that broke the transfer; it ends the connection.
    broken: Option<ProtocolError>,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> ClientInfile<'_, S> {
    fn lost(&mut self, e: ProtocolError) -> SqlError {
        let message = format!("Lost connection to the client during LOAD DATA LOCAL: {e}");
        self.broken = Some(e);
        self.state = InfileState::Done;
        SqlError::QueryFailed(message)
    }

    async fn read(&mut self) -> Result<Vec<u8>, ProtocolError> {
        tokio::time::timeout(self.read_timeout, self.stream.read_packet())
            .await
            .map_err(|_| {
                ProtocolError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "timed out waiting for LOCAL INFILE data",
                ))
            })?
    }

    /// After the statement: reads whatever the client still sends of its file, or reports
    /// the error that broke the transfer.
    async fn finish(mut self) -> Result<(), ProtocolError> {
        if let Some(e) = self.broken.take() {
            return Err(e);
        }
        while self.state == InfileState::Streaming {
            if self.read().await?.is_empty() {
                self.state = InfileState::Done;
            }
        }
        Ok(())
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> LocalInfile for ClientInfile<'_, S> {
    fn enabled(&self) -> bool {
        self.enabled
    }

    async fn request(&mut self, file_name: &str) -> Result<(), SqlError> {
        if self.state != InfileState::NotRequested {
            return Err(SqlError::Internal("a second LOCAL INFILE request".into()));
        }
        let mut payload = Vec::with_capacity(1 + file_name.len());
        payload.push(0xFB);
        payload.extend_from_slice(file_name.as_bytes());
        self.stream.write_packet(&payload);
        match self.stream.flush().await {
            Ok(()) => {
                self.state = InfileState::Streaming;
                Ok(())
            }
            Err(e) => Err(self.lost(e)),
        }
    }

    async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, SqlError> {
        if self.state != InfileState::Streaming {
            return Ok(None);
        }
        match self.read().await {
            Ok(packet) if packet.is_empty() => {
                self.state = InfileState::Done;
                Ok(None)
            }
            Ok(packet) => Ok(Some(packet)),
            Err(e) => Err(self.lost(e)),
        }
    }
}
