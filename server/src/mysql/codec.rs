//! Primitive encodings of the MySQL protocol: little-endian fixed integers,
//! length-encoded integers and strings, NUL-terminated strings.
//!
//! Invariants: [`WireReader`] never panics and never reads past its buffer; every read either
//! returns a value or [`ProtocolError::Malformed`] naming what was truncated, leaving the rest of
//! the connection unaffected. Writers append to a `Vec<u8>` and cannot fail.

use super::error::ProtocolError;

/// A cursor over one packet payload.
#[derive(Debug)]
pub struct WireReader<'a> {
    buf: &'a [u8],
}

impl<'a> WireReader<'a> {
    /// Reads from the start of `buf`.
    #[must_use]
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    /// Bytes not yet read.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// Takes exactly `n` bytes.
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ProtocolError> {
        if n > self.buf.len() {
            return Err(ProtocolError::Malformed(what));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    /// Takes everything that is left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }

    /// One byte.
    pub fn u8(&mut self, what: &'static str) -> Result<u8, ProtocolError> {
        let b = self.bytes(1, what)?;
        Ok(b.first().copied().unwrap_or_default())
    }

    /// A little-endian integer of `n` ≤ 8 bytes.
    pub fn uint(&mut self, n: usize, what: &'static str) -> Result<u64, ProtocolError> {
        let b = self.bytes(n, what)?;
        Ok(b.iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    /// A 2-byte little-endian integer.
    pub fn u16(&mut self, what: &'static str) -> Result<u16, ProtocolError> {
        Ok(self.uint(2, what)? as u16)
    }

    /// A 4-byte little-endian integer.
    pub fn u32(&mut self, what: &'static str) -> Result<u32, ProtocolError> {
        Ok(self.uint(4, what)? as u32)
    }

    /// A length-encoded integer. `0xfb` (NULL in rows) and `0xff` (ERR marker) are not
    /// integers and are rejected as malformed.
    pub fn lenenc_int(&mut self, what: &'static str) -> Result<u64, ProtocolError> {
        match self.u8(what)? {
            b @ 0..=0xfa => Ok(u64::from(b)),
            0xfc => self.uint(2, what),
            0xfd => self.uint(3, what),
            0xfe => self.uint(8, what),
            _ => Err(ProtocolError::Malformed(what)),
        }
    }

    /// A length-encoded string.
    pub fn lenenc_bytes(&mut self, what: &'static str) -> Result<&'a [u8], ProtocolError> {
        let len = self.lenenc_int(what)?;
        let len = usize::try_from(len).map_err(|_| ProtocolError::Malformed(what))?;
        self.bytes(len, what)
    }

    /// A NUL-terminated string (without the NUL). A missing NUL is malformed.
    pub fn nul_terminated(&mut self, what: &'static str) -> Result<&'a [u8], ProtocolError> {
        let end = self
            .buf
            .iter()
            .position(|&b| b == 0)
            .ok_or(ProtocolError::Malformed(what))?;
        let s = self.bytes(end, what)?;
        self.bytes(1, what)?;
        Ok(s)
    }

    /// A NUL-terminated string, or the rest of the buffer if there is no NUL (several
    /// clients omit the final NUL of the last field).
    pub fn nul_terminated_or_rest(&mut self) -> &'a [u8] {
        match self.buf.iter().position(|&b| b == 0) {
            Some(end) => {
                let (s, tail) = self.buf.split_at(end);
                self.buf = tail.get(1..).unwrap_or_default();
                s
            }
            None => self.rest(),
        }
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    if v < 0xfb {
        out.push(v as u8);
    } else if v <= 0xffff {
        out.push(0xfc);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v <= 0xff_ffff {
        out.push(0xfd);
        out.extend((v as u32).to_le_bytes().iter().take(3));
    } else {
        out.push(0xfe);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_lenenc_int(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends a NUL-terminated string.
pub fn put_nul_terminated(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips_every_width() {
        for v in [
            0,
            1,
            250,
            251,
            252,
            0xffff,
            0x1_0000,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            let mut r = WireReader::new(&out);
            assert_eq!(r.lenenc_int("v").unwrap(), v, "{v}");
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn lenenc_prefixes_with_short_buffers_are_malformed() {
        for buf in [
            &[][..],
            &[0xfc][..],
            &[0xfc, 1][..],
            &[0xfd, 1, 2][..],
            &[0xfe, 1, 2, 3, 4, 5, 6, 7][..],
            &[0xfb][..],
            &[0xff][..],
        ] {
            assert!(
                matches!(
                    WireReader::new(buf).lenenc_int("x"),
                    Err(ProtocolError::Malformed("x"))
                ),
                "{buf:?}"
            );
        }
    }

    #[test]
    fn lenenc_string_longer_than_buffer_is_malformed() {
        let mut r = WireReader::new(&[5, b'a', b'b']);
        assert!(r.lenenc_bytes("s").is_err());
        let mut r = WireReader::new(&[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        assert!(r.lenenc_bytes("s").is_err());
    }

    #[test]
    fn nul_terminated_needs_the_nul() {
        let mut r = WireReader::new(b"root\0rest");
        assert_eq!(r.nul_terminated("user").unwrap(), b"root");
        assert!(r.nul_terminated("db").is_err());
        assert_eq!(r.nul_terminated_or_rest(), b"rest");
    }
}
