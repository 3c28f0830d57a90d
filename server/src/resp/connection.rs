//! One RESP connection: read bytes, decode requests, execute them in order, encode replies.
//!
//! Invariants:
//! - Replies go out in request order; a pipelined batch is flushed whenever the pending output
//!   passes [`FLUSH_THRESHOLD`] and whenever the input runs dry, and the next read waits for
//!   that write. A client that stops reading therefore blocks only its own task, holding at
//!   most one read buffer plus one flush batch — memory does not grow with its backlog.
//! - Group commit across a pipeline: every complete request in the read buffer runs at once;
//!   a write is applied (later requests see it) and its durability ticket replaces the
//!   [`Outbox`]'s, without waiting. Before any byte of the outbox is written, its ticket — that
//!   of the last write it acknowledges, which covers every earlier one — must resolve. So no
//!   reply leaves before the sync that covers every write up to it, and a pipeline of N writes
//!   waits for one sync instead of N. If the sync fails, the pending replies are replaced by one
//!   error and the connection closes. Before a command that may block, the outbox is flushed.
//! - A single reply larger than `client_output_buffer_limit` closes the connection.
//! - The query buffer is capped (1 MiB before authentication, `client_query_buffer_limit`
//!   after); a malformed request gets `-ERR Protocol error: …` and the connection closes.
//! - While a command that may block (BLPOP …) runs, the socket is still read (within the
//!   same cap), so a client that disconnects cancels its wait instead of leaving it queued.

use super::RespSettings;
use super::decoder::{DecodeLimits, RequestDecoder};
use super::encoder::encode;
use super::handler::CommandHandler;
use super::reply_buffer::ReplyBuffer;
use orcinus_kv::bytes::BytesMut;
use orcinus_kv::command_table::may_block;
use orcinus_kv::{Bytes, KvError, Reply, Session};
use orcinus_storage::DurabilityTicket;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Pending output size that triggers a write in the middle of a pipeline.
pub const FLUSH_THRESHOLD: usize = 64 * 1024;
/// Query buffer cap before authentication (Redis, CVE-2021-32675).
pub const UNAUTH_QUERY_BUFFER_MAX: usize = 1024 * 1024;
/// Read granularity.
const READ_CHUNK: usize = 16 * 1024;

/// Serves one connection until the client closes it, QUIT, or a protocol error.
pub async fn run<S, H>(
    mut stream: S,
    handler: Arc<H>,
    settings: Arc<RespSettings>,
    mut session: Session,
) -> std::io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
    H: CommandHandler,
{
    let mut input = BytesMut::with_capacity(READ_CHUNK);
    let mut outbox = Outbox::default();
    let mut decoder = RequestDecoder::new();
    let output_limit = usize::try_from(settings.client_output_buffer_limit).unwrap_or(usize::MAX);
    loop {
        loop {
            let limits = DecodeLimits {
                max_bulk_len: settings.proto_max_bulk_len,
                authenticated: session.authenticated,
            };
            let args = match decoder.decode(&mut input, &limits) {
                Ok(Some(args)) => args,
                Ok(None) => break,
                Err(e) => {
                    outbox
                        .push_final(&Reply::Error(e.reply_text()), &session)
                        .await;
                    return close(&mut stream, &outbox.bytes).await;
                }
            };
            let reply = if may_block(&args) {
                if !outbox.send(&mut stream, &session).await? {
                    return close(&mut stream, &outbox.bytes).await;
                }
                let cap = query_buffer_cap(&settings, &session);
                let (reply, gone) =
                    execute_watching(&mut stream, &mut input, cap, &*handler, &mut session, args)
                        .await;
                if gone {
                    return Ok(());
                }
                reply
            } else {
                let (reply, ticket) = handler.execute_deferred(&mut session, args).await;
                if ticket.is_some() {
                    outbox.ticket = ticket;
                }
                reply
            };
            let (before, mark) = (outbox.bytes.len(), outbox.bytes.mark());
            encode(&reply, session.protocol, &mut outbox.bytes);
            if outbox.bytes.len() - before > output_limit {
                tracing::warn!(
                    client = session.id,
                    "closing RESP client: reply of {} bytes exceeds client_output_buffer_limit",
                    outbox.bytes.len() - before
                );
                outbox.bytes.truncate(mark);
                outbox.settle(&session).await;
                return close(&mut stream, &outbox.bytes).await;
            }
            if session.closing {
                outbox.settle(&session).await;
                return close(&mut stream, &outbox.bytes).await;
            }
            if outbox.bytes.len() >= FLUSH_THRESHOLD && !outbox.send(&mut stream, &session).await? {
                return close(&mut stream, &outbox.bytes).await;
            }
        }
        if !outbox.send(&mut stream, &session).await? {
            return close(&mut stream, &outbox.bytes).await;
        }
        let cap = query_buffer_cap(&settings, &session);
        if input.len() > cap {
            let text = "ERR Protocol error: client query buffer limit exceeded";
            outbox
                .push_final(&Reply::Error(text.into()), &session)
                .await;
            return close(&mut stream, &outbox.bytes).await;
        }
        if input.capacity() - input.len() < READ_CHUNK {
            input.reserve(READ_CHUNK.max(input.len().min(4 * 1024 * 1024)));
        }
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
    }
}

/// Encoded replies not yet written, and the durability ticket of the last write among them.
#[derive(Default)]
struct Outbox {
    bytes: ReplyBuffer,
    ticket: Option<DurabilityTicket>,
}

impl Outbox {
    /// Waits until the replies may be sent. If the sync failed, they acknowledge writes that
    /// may be lost: they are replaced by one error, and `false` says the connection must close.
    async fn settle(&mut self, session: &Session) -> bool {
        let Some(ticket) = self.ticket.take() else {
            return true;
        };
        match ticket.wait().await {
            Ok(()) => true,
            Err(e) => {
                self.bytes.clear(4 * FLUSH_THRESHOLD, READ_CHUNK);
                let text = KvError::from(e).to_reply_text();
                encode(&Reply::Error(text), session.protocol, &mut self.bytes);
                false
            }
        }
    }

    /// Settles and writes the replies; `Ok(false)` if the connection must close (the error
    /// reply is then left in the box).
    async fn send<S: AsyncWrite + Unpin>(
        &mut self,
        stream: &mut S,
        session: &Session,
    ) -> std::io::Result<bool> {
        if self.bytes.is_empty() && self.ticket.is_none() {
            return Ok(true);
        }
        if !self.settle(session).await {
            return Ok(false);
        }
        self.bytes.write_to(stream).await?;
        // A huge reply's buffer is not kept for the life of the connection.
        self.bytes.clear(4 * FLUSH_THRESHOLD, READ_CHUNK);
        Ok(true)
    }

    /// Settles, then adds a last reply before the connection closes.
    async fn push_final(&mut self, reply: &Reply, session: &Session) {
        if self.settle(session).await {
            encode(reply, session.protocol, &mut self.bytes);
        }
    }
}

fn query_buffer_cap(settings: &RespSettings, session: &Session) -> usize {
    if session.authenticated {
        usize::try_from(settings.client_query_buffer_limit).unwrap_or(usize::MAX)
    } else {
        UNAUTH_QUERY_BUFFER_MAX
    }
}

/// Runs a command that may block while reading the socket: bytes that arrive (pipelined
/// requests) stay in `input` for later; end of stream or a read error fires the session's
/// disconnect handle, which ends the wait. The command itself is always run to completion
/// (never dropped mid-commit). Returns the reply and whether the client is gone.
async fn execute_watching<S, H>(
    stream: &mut S,
    input: &mut BytesMut,
    cap: usize,
    handler: &H,
    session: &mut Session,
    args: Vec<Bytes>,
) -> (Reply, bool)
where
    S: AsyncRead + Unpin,
    H: CommandHandler,
{
    let disconnect = session.disconnect_handle();
    let exec = handler.execute(session, args);
    tokio::pin!(exec);
    let mut open = true;
    loop {
        tokio::select! {
            reply = &mut exec => return (reply, !open),
            read = stream.read_buf(input), if open && input.len() < cap => {
                if !matches!(read, Ok(n) if n > 0) {
                    open = false;
                    disconnect.fire();
                }
            }
        }
    }
}

async fn close<S: AsyncWrite + Unpin>(stream: &mut S, output: &ReplyBuffer) -> std::io::Result<()> {
    if !output.is_empty() {
        output.write_to(stream).await?;
    }
    stream.shutdown().await
}
