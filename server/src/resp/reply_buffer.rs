//! [`ReplyBuffer`]: encoded replies waiting to be written to one client. Small parts (headers,
//! short values, integers …) are copied into one contiguous buffer; a bulk payload of at least
//! [`SHARE_MIN`] bytes is kept by reference (a `Bytes`, or a [`StoredBulk`] that shares the
//! engine's buffer)
//! and goes to the socket with vectored writes. A large GET reply is then copied once, by the
//! kernel, instead of first into this buffer and then by the kernel.
//!
//! Invariant: the bytes written are exactly the concatenation of everything put, in order —
//! a shared payload sits at the offset of the inline buffer where it was put.

use super::client_stream::DirectWriter;
use orcinus_kv::{Bytes, StoredBulk};
use std::io::IoSlice;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Smallest bulk payload kept by reference instead of copied. Below it a copy is cheaper than
/// an extra I/O vector entry.
pub const SHARE_MIN: usize = 512;
/// Most I/O vector entries per write (Linux IOV_MAX is 1024).
const MAX_IOVECS: usize = 512;

/// Where a mark was taken, for [`ReplyBuffer::truncate`].
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    inline: usize,
    shared: usize,
    shared_len: usize,
}

/// A payload kept by reference.
enum Shared {
    Bytes(Bytes),
    Stored(StoredBulk),
}

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        match self {
            Self::Bytes(bytes) => bytes,
            Self::Stored(stored) => stored.bytes(),
        }
    }
}

/// Encoded output: an inline buffer plus shared payloads placed at offsets within it.
#[derive(Default)]
pub struct ReplyBuffer {
    inline: Vec<u8>,
    /// (offset in `inline` the payload follows, payload), offsets non-decreasing.
    shared: Vec<(usize, Shared)>,
    shared_len: usize,
}

impl ReplyBuffer {
    /// Total bytes to write.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inline.len() + self.shared_len
    }

    /// True if nothing is pending.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends bytes (copied).
    pub fn put(&mut self, bytes: &[u8]) {
        self.inline.extend_from_slice(bytes);
    }

    /// Appends one byte.
    pub fn put_byte(&mut self, byte: u8) {
        self.inline.push(byte);
    }

    /// Appends a payload: by reference when it is at least [`SHARE_MIN`] bytes, else copied.
    pub fn put_payload(&mut self, payload: &Bytes) {
        if payload.len() < SHARE_MIN {
            self.inline.extend_from_slice(payload);
        } else {
            self.share(Shared::Bytes(payload.clone()));
        }
    }

    /// Appends a stored value, like [`ReplyBuffer::put_payload`].
    pub fn put_stored(&mut self, payload: &StoredBulk) {
        if payload.len() < SHARE_MIN {
            self.inline.extend_from_slice(payload.bytes());
        } else {
            self.share(Shared::Stored(payload.clone()));
        }
    }

    fn share(&mut self, payload: Shared) {
        self.shared_len += payload.as_ref().len();
        self.shared.push((self.inline.len(), payload));
    }

    /// The current end, to drop what follows it with [`ReplyBuffer::truncate`].
    #[must_use]
    pub fn mark(&self) -> Mark {
        Mark {
            inline: self.inline.len(),
            shared: self.shared.len(),
            shared_len: self.shared_len,
        }
    }

    /// Drops everything put after `mark`.
    pub fn truncate(&mut self, mark: Mark) {
        self.inline.truncate(mark.inline);
        self.shared.truncate(mark.shared);
        self.shared_len = mark.shared_len;
    }

    /// Drops everything, keeping the inline buffer's allocation unless it grew past
    /// `shrink_above` bytes (then it shrinks to `shrink_to`).
    pub fn clear(&mut self, shrink_above: usize, shrink_to: usize) {
        self.inline.clear();
        self.shared.clear();
        self.shared_len = 0;
        if self.inline.capacity() > shrink_above {
            self.inline.shrink_to(shrink_to);
        }
        // Shared payloads are at least SHARE_MIN bytes each: the same bound, in entries.
        if self.shared.capacity() > shrink_above / SHARE_MIN {
            self.shared.shrink_to(shrink_to / SHARE_MIN);
        }
    }

    /// The pieces to write, in order: inline bytes and shared payloads alternately.
    fn parts(&self) -> impl Iterator<Item = &[u8]> {
        let mut start = 0;
        let inline = &self.inline;
        self.shared
            .iter()
            .flat_map(move |(at, payload)| {
                let head = inline.get(start..*at).unwrap_or_default();
                start = *at;
                [head, payload.as_ref()]
            })
            .chain(std::iter::once_with(move || {
                let last = self.shared.last().map_or(0, |(at, _)| *at);
                inline.get(last..).unwrap_or_default()
            }))
    }

    /// At most `max` I/O vector entries for the bytes after the first `skip`.
    fn pieces(&self, mut skip: usize, max: usize) -> Vec<IoSlice<'_>> {
        let mut out = Vec::with_capacity((self.shared.len() * 2 + 1).min(max));
        for part in self.parts() {
            if out.len() == max {
                break;
            }
            if skip >= part.len() {
                skip -= part.len();
                continue;
            }
            out.push(IoSlice::new(part.get(skip..).unwrap_or_default()));
            skip = 0;
        }
        out
    }

    /// Writes everything to `stream` (vectored when there are shared payloads). Does not clear.
    pub async fn write_to<S: AsyncWrite + Unpin>(&self, stream: &mut S) -> std::io::Result<()> {
        self.write_from(0, stream).await
    }

    /// Writes everything after the first `written` bytes to `stream`. Does not clear.
    pub async fn write_from<S: AsyncWrite + Unpin>(
        &self,
        mut written: usize,
        stream: &mut S,
    ) -> std::io::Result<()> {
        if self.shared.is_empty() {
            return stream
                .write_all(self.inline.get(written..).unwrap_or_default())
                .await;
        }
        let total = self.len();
        while written < total {
            let pieces = self.pieces(written, MAX_IOVECS);
            let n = stream.write_vectored(&pieces).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            written += n;
        }
        Ok(())
    }

    /// Writes what `writer` takes without waiting, after the first `written` bytes; returns how
    /// many bytes are written in all. Stops at the first error: the caller writes the rest (and
    /// meets the error) on its own path.
    pub fn try_write_direct(&self, mut written: usize, writer: &dyn DirectWriter) -> usize {
        let total = self.len();
        while written < total {
            match writer.try_write_vectored(&self.pieces(written, MAX_IOVECS)) {
                Ok(n) if n > 0 => written += n,
                _ => break,
            }
        }
        written
    }

    /// Everything as one contiguous vector (tests).
    #[cfg(test)]
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        self.pieces(0, usize::MAX)
            .iter()
            .flat_map(|p| p.iter().copied())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A writer that takes at most `step` bytes per call, vectored or not.
    struct Trickle {
        out: Vec<u8>,
        step: usize,
        calls: usize,
    }

    impl AsyncWrite for Trickle {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            let n = buf.len().min(self.step);
            self.out.extend_from_slice(&buf[..n]);
            self.calls += 1;
            Poll::Ready(Ok(n))
        }

        fn poll_write_vectored(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            bufs: &[IoSlice<'_>],
        ) -> Poll<std::io::Result<usize>> {
            let mut room = self.step;
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(room);
                self.out.extend_from_slice(&b[..take]);
                room -= take;
                n += take;
            }
            self.calls += 1;
            Poll::Ready(Ok(n))
        }

        fn is_write_vectored(&self) -> bool {
            true
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn sample() -> (ReplyBuffer, Vec<u8>) {
        let mut buffer = ReplyBuffer::default();
        let mut expected = Vec::new();
        for i in 0..40usize {
            let size = [0, 3, SHARE_MIN - 1, SHARE_MIN, 5000][i % 5];
            let payload = Bytes::from(vec![b'a' + (i % 26) as u8; size]);
            let head = format!("${size}\r\n");
            buffer.put(head.as_bytes());
            buffer.put_payload(&payload);
            buffer.put_byte(b'\r');
            buffer.put(b"\n");
            expected.extend_from_slice(head.as_bytes());
            expected.extend_from_slice(&payload);
            expected.extend_from_slice(b"\r\n");
        }
        (buffer, expected)
    }

    #[test]
    fn large_payloads_are_shared_and_output_is_the_concatenation() {
        let (buffer, expected) = sample();
        assert_eq!(
            buffer.shared.len(),
            16,
            "payloads >= SHARE_MIN are referenced"
        );
        assert_eq!(buffer.len(), expected.len());
        assert_eq!(buffer.to_vec(), expected);
    }

    #[tokio::test]
    async fn partial_vectored_writes_resume_where_they_stopped() {
        let (buffer, expected) = sample();
        for step in [1, 7, 511, 4096, usize::MAX] {
            let mut w = Trickle {
                out: Vec::new(),
                step,
                calls: 0,
            };
            buffer.write_to(&mut w).await.unwrap();
            assert_eq!(w.out, expected, "step {step}");
        }
        // More pieces than one call may carry: still complete, in several calls.
        let mut many = ReplyBuffer::default();
        let payload = Bytes::from(vec![7u8; SHARE_MIN]);
        for _ in 0..MAX_IOVECS {
            many.put(b"+");
            many.put_payload(&payload);
        }
        let mut w = Trickle {
            out: Vec::new(),
            step: usize::MAX,
            calls: 0,
        };
        many.write_to(&mut w).await.unwrap();
        assert_eq!(w.out, many.to_vec());
        assert!(w.calls >= 2);
    }

    #[test]
    fn stored_values_are_copied_or_shared_like_bytes() {
        let (mut buffer, mut expected) = sample();
        for size in [0, 5, SHARE_MIN - 1, SHARE_MIN, 3000] {
            let record: Vec<u8> = (0..size + 7).map(|i| (i % 251) as u8).collect();
            let stored = StoredBulk::new(orcinus_storage::Slice::from(record.clone()), 7);
            buffer.put(b"+");
            buffer.put_stored(&stored);
            expected.push(b'+');
            expected.extend_from_slice(&record[7..]);
        }
        assert_eq!(buffer.shared.len(), 16 + 2);
        assert_eq!(buffer.len(), expected.len());
        assert_eq!(buffer.to_vec(), expected);
    }

    #[test]
    fn truncate_drops_everything_after_the_mark() {
        let (mut buffer, expected) = sample();
        let mark = buffer.mark();
        buffer.put(b"$5000\r\n");
        buffer.put_payload(&Bytes::from(vec![1u8; 5000]));
        buffer.put(b"\r\n");
        buffer.truncate(mark);
        assert_eq!(buffer.to_vec(), expected);
        buffer.clear(16, 16);
        assert!(buffer.is_empty());
        assert!(buffer.to_vec().is_empty());
    }
}
