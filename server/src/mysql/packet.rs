//! Packet framing: a 3-byte little-endian payload length, a 1-byte sequence id, the payload.
//! Payloads of 16 MiB − 1 bytes or more are split into chunks and reassembled here.
//!
//! Invariants: a payload is returned only when complete; the sequence id of every received
//! chunk is checked; the reassembled size is checked against `max_allowed_packet` before the
//! bytes are read, so an oversized packet costs no memory; a started packet must complete
//! within the read timeout and a flush within the write timeout. Writes are buffered until
//! [`PacketStream::flush`], so one response is one `write` in the common case.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use super::constants::MAX_PACKET_CHUNK;
use super::error::ProtocolError;

/// A framed MySQL connection.
#[derive(Debug)]
pub struct PacketStream<S> {
    stream: BufReader<S>,
    out: Vec<u8>,
    sequence: u8,
    max_packet: u64,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

fn timed_out(what: &str) -> ProtocolError {
    ProtocolError::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("timed out {what}"),
    ))
}

impl<S: AsyncRead + AsyncWrite + Unpin> PacketStream<S> {
    /// Frames `stream`, rejecting received payloads larger than `max_packet` bytes.
    pub fn new(stream: S, max_packet: u64) -> Self {
        Self {
            stream: BufReader::with_capacity(16 * 1024, stream),
            out: Vec::with_capacity(16 * 1024),
            sequence: 0,
            max_packet,
            read_timeout: None,
            write_timeout: None,
        }
    }

    /// Starts a new command exchange: the next packet read must have sequence id 0.
    pub fn reset_sequence(&mut self) {
        self.sequence = 0;
    }

    /// Changes the payload limit (after authentication the configured limit applies; before
    /// it, a small cap).
    pub fn set_max_packet(&mut self, max_packet: u64) {
        self.max_packet = max_packet;
    }

    /// Sets the limits for reading the rest of a packet once its first byte arrived and for
    /// sending queued bytes (MySQL `net_read_timeout`, `net_write_timeout`).
    pub fn set_timeouts(&mut self, read: Duration, write: Duration) {
        self.read_timeout = Some(read);
        self.write_timeout = Some(write);
    }

    /// Reads one (reassembled) payload. A clean EOF before the first header byte is
    /// [`ProtocolError::Closed`]. Waiting for the first byte is not limited here (the caller
    /// applies its idle limit); the rest of the packet must arrive within the read timeout.
    pub async fn read_packet(&mut self) -> Result<Vec<u8>, ProtocolError> {
        let mut first = [0u8; 1];
        if self.stream.read(&mut first).await? == 0 {
            return Err(ProtocolError::Closed);
        }
        let [first] = first;
        match self.read_timeout {
            Some(limit) => tokio::time::timeout(limit, self.read_rest(first))
                .await
                .map_err(|_| timed_out("reading a packet"))?,
            None => self.read_rest(first).await,
        }
    }

    async fn read_rest(&mut self, first: u8) -> Result<Vec<u8>, ProtocolError> {
        let mut payload = Vec::new();
        let mut header = [first, 0, 0, 0];
        if let Some(rest) = header.get_mut(1..) {
            self.stream.read_exact(rest).await?;
        }
        loop {
            let [l0, l1, l2, seq] = header;
            let len = usize::from(l0) | usize::from(l1) << 8 | usize::from(l2) << 16;
            if seq != self.sequence {
                return Err(ProtocolError::OutOfOrder {
                    expected: self.sequence,
                    got: seq,
                });
            }
            self.sequence = seq.wrapping_add(1);
            let total = (payload.len() + len) as u64;
            if total > self.max_packet {
                return Err(ProtocolError::PacketTooLarge {
                    size: total,
                    limit: self.max_packet,
                });
            }
            // Grow the buffer as bytes arrive, so an announced length costs no memory by itself.
            let got = (&mut self.stream)
                .take(len as u64)
                .read_to_end(&mut payload)
                .await?;
            if got < len {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
            }
            if len < MAX_PACKET_CHUNK {
                return Ok(payload);
            }
            self.stream.read_exact(&mut header).await?;
        }
    }

    /// Queues one payload, split into chunks as needed (a payload that is an exact multiple of
    /// the chunk size ends with an empty chunk).
    pub fn write_packet(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let take = rest.len().min(MAX_PACKET_CHUNK);
            let (chunk, tail) = rest.split_at(take);
            self.out.extend((take as u32).to_le_bytes().iter().take(3));
            self.out.push(self.sequence);
            self.sequence = self.sequence.wrapping_add(1);
            self.out.extend_from_slice(chunk);
            rest = tail;
            if take < MAX_PACKET_CHUNK {
                return;
            }
        }
    }

    /// Queues one payload that `build` appends to the buffer it is given (saving a separate
    /// allocation and copy per packet). If `build` fails nothing is queued. A payload of a
    /// chunk's size or more is split into chunks as [`PacketStream::write_packet`] does.
    pub fn write_packet_with<E>(
        &mut self,
        build: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        if let Err(e) = build(&mut self.out) {
            self.out.truncate(start);
            return Err(e);
        }
        let len = self.out.len() - start - 4;
        if len >= MAX_PACKET_CHUNK {
            let payload = self.out.split_off(start + 4);
            self.out.truncate(start);
            self.write_packet(&payload);
            return Ok(());
        }
        let [l0, l1, l2, _] = (len as u32).to_le_bytes();
        if let Some(header) = self.out.get_mut(start..start + 4) {
            header.copy_from_slice(&[l0, l1, l2, self.sequence]);
        }
        self.sequence = self.sequence.wrapping_add(1);
        Ok(())
    }

    /// Sends everything queued.
    pub async fn flush(&mut self) -> Result<(), ProtocolError> {
        if !self.out.is_empty() {
            let write = self.stream.get_mut().write_all(&self.out);
            match self.write_timeout {
                Some(limit) => tokio::time::timeout(limit, write)
                    .await
                    .map_err(|_| timed_out("writing to the client"))??,
                None => write.await?,
            }
            self.out.clear();
        }
        self.stream.get_mut().flush().await?;
        Ok(())
    }

    /// The underlying stream.
    #[cfg(test)]
    pub fn into_inner(self) -> S {
        self.stream.into_inner()
    }

    /// Bytes queued and not yet flushed (to flush large result sets early).
    #[must_use]
    pub fn queued(&self) -> usize {
        self.out.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn frame(payloads: &[&[u8]]) -> Vec<u8> {
        let mut s = PacketStream::new(Cursor::new(Vec::new()), u64::MAX);
        for p in payloads {
            s.write_packet(p);
        }
        s.out.clone()
    }

    #[tokio::test]
    async fn framing_split_across_reads() {
        let bytes = frame(&[b"hello", b"", b"world!"]);
        let (mut client, server) = tokio::io::duplex(3);
        let writer = tokio::spawn(async move {
            for b in bytes {
                client.write_all(&[b]).await.unwrap();
            }
            client
        });
        let mut s = PacketStream::new(server, 1024);
        assert_eq!(s.read_packet().await.unwrap(), b"hello");
        assert_eq!(s.read_packet().await.unwrap(), b"");
        assert_eq!(s.read_packet().await.unwrap(), b"world!");
        drop(writer.await.unwrap());
        assert!(matches!(s.read_packet().await, Err(ProtocolError::Closed)));
    }

    #[tokio::test]
    async fn payloads_over_16_mib_are_reassembled() {
        for size in [
            MAX_PACKET_CHUNK,
            MAX_PACKET_CHUNK + 10,
            2 * MAX_PACKET_CHUNK,
        ] {
            let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let bytes = frame(&[&payload, b"next"]);
            let mut s = PacketStream::new(Cursor::new(bytes), 64 << 20);
            assert_eq!(s.read_packet().await.unwrap(), payload);
            assert_eq!(s.read_packet().await.unwrap(), b"next");
        }
    }

    #[tokio::test]
    async fn oversized_and_out_of_order_packets_are_rejected() {
        let mut s = PacketStream::new(Cursor::new(frame(&[&[0u8; 100]])), 99);
        assert!(matches!(
            s.read_packet().await,
            Err(ProtocolError::PacketTooLarge {
                size: 100,
                limit: 99
            })
        ));
        let mut bytes = frame(&[b"x"]);
        bytes[3] = 5;
        let mut s = PacketStream::new(Cursor::new(bytes), 99);
        assert!(matches!(
            s.read_packet().await,
            Err(ProtocolError::OutOfOrder {
                expected: 0,
                got: 5
            })
        ));
    }

    #[tokio::test]
    async fn truncated_header_is_an_io_error() {
        let mut s = PacketStream::new(Cursor::new(vec![5u8, 0]), 99);
        assert!(matches!(s.read_packet().await, Err(ProtocolError::Io(_))));
    }
}
