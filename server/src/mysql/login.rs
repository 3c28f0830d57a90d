//! The connection phase as a whole: send the handshake, read the client's response,
//! authenticate, open the SQL session, answer OK or ERR. Also used by COM_CHANGE_USER.
//!
//! Invariants: a session is opened only after authentication succeeded; every refusal is
//! answered with one ERR packet and the caller closes the connection.

use orcinus_sql::session::{SessionContext, SessionStatus, SqlEngine, SqlSession};
use tokio::io::{AsyncRead, AsyncWrite};

use super::connection::ConnectionSetup;
use super::constants::capability;
use super::error::{ErrPacket, ProtocolError};
use super::handshake::{
    ClientLogin, NONCE_LEN, authenticate, initial_handshake, parse_handshake_response,
};
use super::packet::PacketStream;
use super::response::status_flags;
use super::results::ResultWriter;

/// Runs the connection phase; `None` if the client was refused (the ERR is already sent).
pub async fn login<E: SqlEngine, S: AsyncRead + AsyncWrite + Unpin + Send>(
    stream: &mut PacketStream<S>,
    setup: &ConnectionSetup<E>,
    nonce: &[u8; NONCE_LEN],
) -> Result<Option<(E::Session, u32)>, ProtocolError> {
    let initial_status = status_flags(
        SessionStatus {
            autocommit: true,
            in_transaction: false,
        },
        false,
    );
    stream.write_packet(&initial_handshake(
        setup.connection_id,
        nonce,
        initial_status,
    ));
    stream.flush().await?;
    let payload = stream.read_packet().await?;
    let mut login = match parse_handshake_response(&payload) {
        Ok(l) => l,
        Err(e) => {
            let writer = ResultWriter { capabilities: 0 };
            writer.error(
                stream,
                &ErrPacket::new(1043, "08S01", format!("Bad handshake: {e}")),
            );
            stream.flush().await?;
            return Ok(None);
        }
    };
    let writer = ResultWriter {
        capabilities: login.capabilities,
    };
    match open_session(stream, setup, &mut login, nonce).await? {
        Ok(session) => {
            writer.ok(
                stream,
                &Default::default(),
                status_flags(session.status(), false),
            );
            stream.flush().await?;
            Ok(Some((session, login.capabilities)))
        }
        Err(e) => {
            writer.error(stream, &e);
            stream.flush().await?;
            Ok(None)
        }
    }
}

/// Authenticates `login` and opens its session.
pub async fn open_session<E: SqlEngine, S: AsyncRead + AsyncWrite + Unpin + Send>(
    stream: &mut PacketStream<S>,
    setup: &ConnectionSetup<E>,
    login: &mut ClientLogin,
    nonce: &[u8; NONCE_LEN],
) -> Result<Result<E::Session, ErrPacket>, ProtocolError> {
    if let Err(e) = authenticate(stream, setup.engine.as_ref(), login, nonce, setup.peer).await? {
        return Ok(Err(e));
    }
    let context = SessionContext {
        user: login.user.clone(),
        host: setup.peer.to_string(),
        connection_id: setup.connection_id,
        database: login.database.clone(),
        multi_statements: login.capabilities & capability::MULTI_STATEMENTS != 0,
        interactive: login.capabilities & capability::INTERACTIVE != 0,
        found_rows: login.capabilities & capability::FOUND_ROWS != 0,
    };
    Ok(setup
        .engine
        .open_session(context)
        .await
        .map_err(|e| ErrPacket::from_sql(&e)))
}
