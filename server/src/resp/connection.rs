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
//! - Replies on durability: when the input runs dry and the outbox waits for a ticket, a stream
//!   with a direct writer (TCP, `client_stream.rs`) hands the outbox to the ticket
//!   ([`DurabilityTicket::on_durable`]) and the task goes back to reading: the commit
//!   pipeline's sync thread writes the replies as soon as the sync returns, so a client that
//!   waits for its reply costs no wake-up of its task (on a server pinned to one CPU, each such
//!   wake-up was a context switch or two). At most one hand-off is in flight; before the task
//!   writes anything else (or closes) it lands it: waits until the callback ran, writes what the
//!   socket did not take, or, if the sync failed, sends one error instead and closes.
//! - Writes at the end of a round: when the input runs dry after a pipeline (more than one request
//!   since the last read) and the replies need no sync, the task yields once before writing them,
//!   so the other connections whose input is ready run first (tokio runs a yielded task after it
//!   next polls for I/O) and the round's writes go out back to back, as Redis writes its replies at
//!   the end of an event-loop pass. Each write wakes the client's reader; written one per
//!   connection between other connections' work, the reader had mostly gone idle again, and waking
//!   an idle CPU (an inter-processor interrupt, a VM exit under virtualisation) took 13-16% of the
//!   server's CPU under 32 pipelined GET clients, against 2% for Redis; with the yield, about 5%.
//!   128-byte GETs at pipeline 32 went from 1.45M to 1.68M a second in the same run. Unpipelined
//!   requests do not yield: a lone client would pay the extra poll for I/O on every request (about
//!   8% of a single connection's unpipelined GETs), and 32 unpipelined clients gained nothing.
//! - Write groups: consecutive requests the handler accepts for a group (plain data writes) are
//!   held back and run together as one transaction and one commit
//!   (`orcinus_kv::write_group`), before the next request of another kind and before the
//!   input runs dry; their replies enter the outbox in request order with the group's ticket.
//! - A single reply larger than `client_output_buffer_limit` closes the connection.
//! - The query buffer is capped (1 MiB before authentication, `client_query_buffer_limit`
//!   after); a malformed request gets `-ERR Protocol error: …` and the connection closes.
//! - While a command that may block (BLPOP …) runs, the socket is still read (within the
//!   same cap), so a client that disconnects cancels its wait instead of leaving it queued.

use super::RespSettings;
use super::client_stream::{ClientStream, DirectWriter};
use super::decoder::{DecodeLimits, RequestDecoder};
use super::encoder::encode;
use super::handler::CommandHandler;
use super::reply_buffer::ReplyBuffer;
use orcinus_kv::bytes::BytesMut;
use orcinus_kv::{Bytes, GroupMember, KvError, Reply, Route, Session};
use orcinus_storage::DurabilityTicket;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

/// Pending output size that triggers a write in the middle of a pipeline.
pub const FLUSH_THRESHOLD: usize = 64 * 1024;
/// Query buffer cap before authentication (Redis, CVE-2021-32675).
pub const UNAUTH_QUERY_BUFFER_MAX: usize = 1024 * 1024;
/// Read granularity.
const READ_CHUNK: usize = 16 * 1024;
/// Most requests in one write group.
const MAX_GROUP_REQUESTS: usize = 256;
/// A write group whose arguments reach this many bytes runs at once.
const MAX_GROUP_BYTES: usize = 1024 * 1024;

/// Serves one connection until the client closes it, QUIT, or a protocol error.
pub async fn run<S, H>(
    mut stream: S,
    handler: Arc<H>,
    settings: Arc<RespSettings>,
    mut session: Session,
) -> std::io::Result<()>
where
    S: ClientStream,
    H: CommandHandler,
{
    let mut input = BytesMut::with_capacity(READ_CHUNK);
    let mut outbox = Outbox::default();
    let mut decoder = RequestDecoder::new();
    let output_limit = usize::try_from(settings.client_output_buffer_limit).unwrap_or(usize::MAX);
    let mut group = WriteGroup::default();
    // Requests decoded since the last read (see "Writes at the end of a round").
    let mut round = 0usize;
    loop {
        loop {
            let limits = DecodeLimits {
                max_bulk_len: settings.proto_max_bulk_len,
                authenticated: session.authenticated,
            };
            let args = match decoder.decode(&mut input, &limits) {
                Ok(Some(args)) => {
                    round += 1;
                    args
                }
                Ok(None) => break,
                Err(e) => {
                    if group
                        .run(&*handler, &mut session, &mut outbox, output_limit)
                        .await
                    {
                        outbox
                            .push_final(&Reply::Error(e.reply_text()), &mut stream, &session)
                            .await?;
                    } else {
                        outbox.settle(&mut stream, &session).await?;
                    }
                    return outbox.close(&mut stream, &session).await;
                }
            };
            let resolved = match handler.route(&session, &args) {
                Route::WriteGroup(member) => {
                    group.push(member, args);
                    if group.is_full()
                        && !group
                            .run(&*handler, &mut session, &mut outbox, output_limit)
                            .await
                    {
                        outbox.settle(&mut stream, &session).await?;
                        return outbox.close(&mut stream, &session).await;
                    }
                    continue;
                }
                Route::MayBlock => None,
                Route::Now(resolved) => Some(resolved),
            };
            if !group
                .run(&*handler, &mut session, &mut outbox, output_limit)
                .await
            {
                outbox.settle(&mut stream, &session).await?;
                return outbox.close(&mut stream, &session).await;
            }
            let reply = if let Some(resolved) = resolved {
                let (reply, ticket) = handler.execute_resolved(&mut session, resolved, args).await;
                if ticket.is_some() {
                    outbox.ticket = ticket;
                }
                reply
            } else {
                session.publish_activity();
                if !outbox.send(&mut stream, &session).await? {
                    return outbox.close(&mut stream, &session).await;
                }
                let cap = query_buffer_cap(&settings, &session);
                let (reply, gone) =
                    execute_watching(&mut stream, &mut input, cap, &*handler, &mut session, args)
                        .await;
                if gone {
                    return Ok(());
                }
                reply
            };
            if !outbox.push(&reply, &session, output_limit) {
                outbox.settle(&mut stream, &session).await?;
                return outbox.close(&mut stream, &session).await;
            }
            if session.closing {
                outbox.settle(&mut stream, &session).await?;
                return outbox.close(&mut stream, &session).await;
            }
            if outbox.bytes.len() >= FLUSH_THRESHOLD {
                session.publish_activity();
                if !outbox.send(&mut stream, &session).await? {
                    return outbox.close(&mut stream, &session).await;
                }
            }
        }
        // A pipeline of large values arrives in several reads: take what the socket already
        // holds (without waiting) so the group covers the whole pipeline. Only when the input
        // ends inside a request: after a complete one (every unpipelined request) the extra
        // read would mostly find nothing, and its buffer could not reuse the current one,
        // which the held requests still share.
        if group.wants_more()
            && !input.is_empty()
            && input.len() <= query_buffer_cap(&settings, &session)
        {
            reserve_read_space(&mut input);
            if read_ready(&mut stream, &mut input).await? > 0 {
                continue;
            }
        }
        if !group
            .run(&*handler, &mut session, &mut outbox, output_limit)
            .await
        {
            outbox.settle(&mut stream, &session).await?;
            return outbox.close(&mut stream, &session).await;
        }
        session.publish_activity();
        let pipelined = round > 1;
        round = 0;
        if !outbox
            .send_or_hand_off(&mut stream, &session, pipelined)
            .await?
        {
            return outbox.close(&mut stream, &session).await;
        }
        let cap = query_buffer_cap(&settings, &session);
        if input.len() > cap {
            let text = "ERR Protocol error: client query buffer limit exceeded";
            outbox
                .push_final(&Reply::Error(text.into()), &mut stream, &session)
                .await?;
            return outbox.close(&mut stream, &session).await;
        }
        reserve_read_space(&mut input);
        let woken = match outbox.in_flight.clone() {
            None => Woken::Read(stream.read_buf(&mut input).await?),
            // The replies in flight may need the task (a full socket, a failed sync).
            Some(flight) => tokio::select! {
                biased;
                () = flight.needs_task() => Woken::InFlight,
                read = stream.read_buf(&mut input) => Woken::Read(read?),
            },
        };
        match woken {
            Woken::Read(0) => return Ok(()),
            Woken::Read(_) => {}
            Woken::InFlight => {
                if !outbox.land(&mut stream, &session).await? {
                    return outbox.close(&mut stream, &session).await;
                }
            }
        }
    }
}

/// What ended a wait for input.
enum Woken {
    /// Bytes read (0: end of stream).
    Read(usize),
    /// The replies in flight need the task.
    InFlight,
}

/// Makes room for the next read (at least [`READ_CHUNK`], more as the buffered input grows).
fn reserve_read_space(input: &mut BytesMut) {
    if input.capacity() - input.len() < READ_CHUNK {
        input.reserve(READ_CHUNK.max(input.len().min(4 * 1024 * 1024)));
    }
}

/// Reads what the socket holds already, without waiting: `Ok(0)` if nothing is ready (or at
/// end of stream, which the next waiting read reports).
async fn read_ready<S: AsyncRead + Unpin>(
    stream: &mut S,
    input: &mut BytesMut,
) -> std::io::Result<usize> {
    tokio::select! {
        biased;
        read = stream.read_buf(input) => read,
        () = std::future::ready(()) => Ok(0),
    }
}

/// Consecutive requests held back to run as one write group
/// ([`CommandHandler::route`]); run before any other request and before the
/// input runs dry, so replies keep request order.
#[derive(Default)]
struct WriteGroup {
    requests: Vec<(GroupMember, Vec<Bytes>)>,
    bytes: usize,
}

impl WriteGroup {
    fn push(&mut self, member: GroupMember, args: Vec<Bytes>) {
        self.bytes += args.iter().map(Bytes::len).sum::<usize>();
        self.requests.push((member, args));
    }

    /// True if requests are held and more may join.
    fn wants_more(&self) -> bool {
        !self.requests.is_empty() && !self.is_full()
    }

    /// A group this large runs at once (bounds the memory held by one transaction).
    fn is_full(&self) -> bool {
        self.requests.len() >= MAX_GROUP_REQUESTS || self.bytes >= MAX_GROUP_BYTES
    }

    /// Runs the held requests and adds their replies (and the group's ticket) to the outbox.
    /// `false`: a reply exceeded the output limit; the connection must close.
    async fn run<H: CommandHandler>(
        &mut self,
        handler: &H,
        session: &mut Session,
        outbox: &mut Outbox,
        output_limit: usize,
    ) -> bool {
        if self.requests.is_empty() {
            return true;
        }
        self.bytes = 0;
        let requests = std::mem::take(&mut self.requests);
        let (replies, ticket) = handler.execute_write_group(session, requests).await;
        if ticket.is_some() {
            outbox.ticket = ticket;
        }
        replies
            .iter()
            .all(|reply| outbox.push(reply, session, output_limit))
    }
}

/// Encoded replies not yet written, the durability ticket of the last write among them, and
/// the replies handed to the commit pipeline, which go out before these.
#[derive(Default)]
struct Outbox {
    bytes: ReplyBuffer,
    ticket: Option<DurabilityTicket>,
    in_flight: Option<Arc<InFlight>>,
    /// The buffer of the last hand-off that was written in full, kept for the next one.
    spare: ReplyBuffer,
}

/// Replies handed to the commit pipeline (see "Replies on durability").
struct InFlight {
    state: Mutex<FlightState>,
    /// Signalled when the task must act, or when it waits in [`Outbox::land`].
    attention: Notify,
}

struct FlightState {
    outcome: Landing,
    /// The task waits in [`Outbox::land`] (so even a full write must wake it).
    task_waits: bool,
}

enum Landing {
    /// The sync has not completed; the callback holds the replies.
    Waiting,
    /// Everything was written; the buffer comes back for reuse.
    Written(ReplyBuffer),
    /// The socket took only this many bytes (maybe none, or it failed): the task writes the rest.
    Partial(ReplyBuffer, usize),
    /// The sync failed: these replies must never be sent.
    Poisoned,
}

impl InFlight {
    fn lock(&self) -> MutexGuard<'_, FlightState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The callback's side: writes the replies if the sync succeeded (`durable`), lets go of
    /// the socket, then tells the task if it must act.
    fn complete(&self, replies: ReplyBuffer, durable: bool, writer: Arc<dyn DirectWriter>) {
        let outcome = if durable {
            let written = replies.try_write_direct(0, &*writer);
            if written == replies.len() {
                Landing::Written(replies)
            } else {
                Landing::Partial(replies, written)
            }
        } else {
            Landing::Poisoned
        };
        // Before the task can land this: its shutdown wants the only handle on the socket.
        drop(writer);
        let mut state = self.lock();
        let wake = state.task_waits || !matches!(outcome, Landing::Written(_));
        state.outcome = outcome;
        drop(state);
        if wake {
            self.attention.notify_one();
        }
    }

    /// Resolves once the task has to act (a partial write, a failed sync); never if the replies
    /// were written in full.
    async fn needs_task(&self) {
        loop {
            if matches!(
                self.lock().outcome,
                Landing::Partial(..) | Landing::Poisoned
            ) {
                return;
            }
            self.attention.notified().await;
        }
    }
}

impl Outbox {
    /// Encodes `reply`. `false` if it alone exceeds `output_limit`: it is dropped and the
    /// connection must close.
    fn push(&mut self, reply: &Reply, session: &Session, output_limit: usize) -> bool {
        let (before, mark) = (self.bytes.len(), self.bytes.mark());
        encode(reply, session.protocol, &mut self.bytes);
        if self.bytes.len() - before > output_limit {
            tracing::warn!(
                client = session.id,
                "closing RESP client: reply of {} bytes exceeds client_output_buffer_limit",
                self.bytes.len() - before
            );
            self.bytes.truncate(mark);
            return false;
        }
        true
    }

    /// Replaces the pending replies by the error of a failed sync (they acknowledge writes
    /// that may be lost).
    fn poisoned(&mut self, error: orcinus_storage::StorageError, session: &Session) {
        self.ticket = None;
        self.bytes.clear(4 * FLUSH_THRESHOLD, READ_CHUNK);
        let text = KvError::from(error).to_reply_text();
        encode(&Reply::Error(text), session.protocol, &mut self.bytes);
    }

    /// Lands the replies in flight: waits for the callback, then writes what the socket did not
    /// take. `Ok(false)` if the sync failed: the box then holds only the error, and the
    /// connection must close.
    async fn land<S: ClientStream>(
        &mut self,
        stream: &mut S,
        session: &Session,
    ) -> std::io::Result<bool> {
        let Some(flight) = self.in_flight.take() else {
            return Ok(true);
        };
        loop {
            let outcome = {
                let mut state = flight.lock();
                let outcome = std::mem::replace(&mut state.outcome, Landing::Waiting);
                state.task_waits = matches!(outcome, Landing::Waiting);
                outcome
            };
            match outcome {
                Landing::Waiting => flight.attention.notified().await,
                Landing::Written(mut replies) => {
                    replies.clear(4 * FLUSH_THRESHOLD, READ_CHUNK);
                    self.spare = replies;
                    return Ok(true);
                }
                Landing::Partial(replies, written) => {
                    replies.write_from(written, stream).await?;
                    return Ok(true);
                }
                Landing::Poisoned => {
                    self.poisoned(orcinus_storage::StorageError::Poisoned, session);
                    return Ok(false);
                }
            }
        }
    }

    /// Waits until the replies may be sent (the ones in flight are landed first). If the sync
    /// failed, they acknowledge writes that may be lost: they are replaced by one error, and
    /// `Ok(false)` says the connection must close.
    async fn settle<S: ClientStream>(
        &mut self,
        stream: &mut S,
        session: &Session,
    ) -> std::io::Result<bool> {
        if !self.land(stream, session).await? {
            return Ok(false);
        }
        let Some(ticket) = self.ticket.take() else {
            return Ok(true);
        };
        match ticket.wait().await {
            Ok(()) => Ok(true),
            Err(e) => {
                self.poisoned(e, session);
                Ok(false)
            }
        }
    }

    /// Settles and writes the replies; `Ok(false)` if the connection must close (the error
    /// reply is then left in the box).
    async fn send<S: ClientStream>(
        &mut self,
        stream: &mut S,
        session: &Session,
    ) -> std::io::Result<bool> {
        if self.bytes.is_empty() && self.ticket.is_none() && self.in_flight.is_none() {
            return Ok(true);
        }
        if !self.settle(stream, session).await? {
            return Ok(false);
        }
        self.bytes.write_to(stream).await?;
        // A huge reply's buffer is not kept for the life of the connection.
        self.bytes.clear(4 * FLUSH_THRESHOLD, READ_CHUNK);
        Ok(true)
    }

    /// Like [`Outbox::send`], but replies that wait for a sync are handed to it when the
    /// stream has a direct writer (see "Replies on durability"), and the replies of a
    /// `pipelined` round that need no sync are written after a yield (see "Writes at the end
    /// of a round").
    async fn send_or_hand_off<S: ClientStream>(
        &mut self,
        stream: &mut S,
        session: &Session,
        pipelined: bool,
    ) -> std::io::Result<bool> {
        let writer = match (&self.ticket, stream.direct_writer()) {
            (Some(_), Some(writer)) if !self.bytes.is_empty() => writer,
            _ => {
                if pipelined && !self.bytes.is_empty() {
                    tokio::task::yield_now().await;
                }
                return self.send(stream, session).await;
            }
        };
        if !self.land(stream, session).await? {
            return Ok(false);
        }
        let Some(ticket) = self.ticket.take() else {
            return self.send(stream, session).await;
        };
        let replies = std::mem::replace(&mut self.bytes, std::mem::take(&mut self.spare));
        let flight = Arc::new(InFlight {
            state: Mutex::new(FlightState {
                outcome: Landing::Waiting,
                task_waits: false,
            }),
            attention: Notify::new(),
        });
        self.in_flight = Some(Arc::clone(&flight));
        ticket.on_durable(Box::new(move |durable| {
            flight.complete(replies, durable.is_ok(), writer);
        }));
        Ok(true)
    }

    /// Settles, then adds a last reply before the connection closes.
    async fn push_final<S: ClientStream>(
        &mut self,
        reply: &Reply,
        stream: &mut S,
        session: &Session,
    ) -> std::io::Result<()> {
        if self.settle(stream, session).await? {
            encode(reply, session.protocol, &mut self.bytes);
        }
        Ok(())
    }

    /// Lands the replies in flight, writes what is left and shuts the stream down.
    async fn close<S: ClientStream>(
        &mut self,
        stream: &mut S,
        session: &Session,
    ) -> std::io::Result<()> {
        self.land(stream, session).await?;
        if !self.bytes.is_empty() {
            self.bytes.write_to(stream).await?;
        }
        stream.shutdown().await
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
