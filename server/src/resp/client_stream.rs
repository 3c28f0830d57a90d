//! [`ClientStream`]: what a RESP connection reads requests from and writes replies to, and
//! whether replies may also be written from outside the connection's task.
//!
//! A TCP client ([`TcpClient`]) offers a [`DirectWriter`]: the commit pipeline (its sync thread)
//! writes a reply with it the moment the sync covering the reply's writes completes, without
//! waking the connection's task (see "Replies on durability" in `connection.rs`). Direct writes
//! never wait: what the socket does not take at once is left to the task.
//!
//! Invariant: the write half is shared only with the callback of the one reply handed off at a
//! time, so nothing else writes to the socket while that reply is in flight, and the socket
//! cannot close (nor its descriptor be reused) before the callback is done with it.

use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// Writes without waiting, from any thread.
pub trait DirectWriter: Send + Sync {
    /// Writes what the socket takes at once; `WouldBlock` if it takes nothing.
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize>;
}

/// A connection's byte stream.
pub trait ClientStream: AsyncRead + AsyncWrite + Unpin {
    /// A writer other threads may use for replies, if this stream has one.
    fn direct_writer(&self) -> Option<Arc<dyn DirectWriter>> {
        None
    }
}

/// In-memory streams (tests) have no direct writer.
impl ClientStream for tokio::io::DuplexStream {}

/// A TCP client whose write half is shared with the reply in flight.
pub struct TcpClient {
    read: OwnedReadHalf,
    write: Arc<SharedWriteHalf>,
}

impl TcpClient {
    pub fn new(stream: TcpStream) -> Self {
        let (read, write) = stream.into_split();
        Self {
            read,
            write: Arc::new(SharedWriteHalf(write)),
        }
    }
}

/// The write half, writable through a shared reference.
pub struct SharedWriteHalf(OwnedWriteHalf);

impl DirectWriter for SharedWriteHalf {
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }
}

impl ClientStream for TcpClient {
    fn direct_writer(&self) -> Option<Arc<dyn DirectWriter>> {
        Some(self.write.clone())
    }
}

impl AsyncRead for TcpClient {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.read).poll_read(cx, buf)
    }
}

impl TcpClient {
    /// Polls a write through the shared half: wait for writability, then try.
    fn poll_try<T>(
        &self,
        cx: &mut Context<'_>,
        mut write: impl FnMut(&OwnedWriteHalf) -> std::io::Result<T>,
    ) -> Poll<std::io::Result<T>> {
        loop {
            ready!(self.write.0.as_ref().poll_write_ready(cx))?;
            match write(&self.write.0) {
                // The failed try cleared the readiness: the next poll waits for the socket.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                done => return Poll::Ready(done),
            }
        }
    }
}

impl AsyncWrite for TcpClient {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_try(cx, |half| half.try_write(buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_try(cx, |half| half.try_write_vectored(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match Arc::get_mut(&mut self.write) {
            Some(half) => Pin::new(&mut half.0).poll_shutdown(cx),
            // A finished reply callback is still letting go of the half: the write side
            // shuts down when the last holder drops it.
            None => Poll::Ready(Ok(())),
        }
    }
}
