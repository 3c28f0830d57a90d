//! The RDB primitives a DUMP payload is made of (kv/FORMAT.md, "DUMP / RESTORE payload"):
//! the CRC-64 of the trailer (Jones polynomial, reflected, as Redis's `crc64.c`), RDB length
//! encoding, RDB strings (raw, the three integer encodings and LZF-compressed), and LZF
//! decompression.
//!
//! Invariants: [`Reader`] never reads past its input and never allocates from a declared
//! size: every length is checked against the bytes actually left before anything is copied,
//! and an LZF string's declared size must be reachable from its compressed size (LZF expands
//! at most [`LZF_MAX_RATIO`] times). Every malformed input is an `Err(BadFormat)`, never a
//! panic.

/// A payload that is not a valid RDB object (RESTORE answers `ERR Bad data format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadFormat;

/// Result of payload decoding.
pub type DecodeResult<T> = Result<T, BadFormat>;

/// Reflected form of the Jones polynomial 0xad93d23594c935a9 (Redis `crc64.c`).
const CRC64_POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;

// Evaluated at compile time: the loop bound keeps every index in range.
#[allow(clippy::indexing_slicing)]
const fn crc64_table() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ CRC64_POLY_REFLECTED
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

static CRC64_TABLE: [u64; 256] = crc64_table();

/// Redis's CRC-64 of `bytes` (initial value 0, no final xor).
#[must_use]
pub fn crc64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |crc, &b| {
        let slot = usize::from((crc as u8) ^ b);
        CRC64_TABLE.get(slot).copied().unwrap_or(0) ^ (crc >> 8)
    })
}

/// Largest output / input ratio of LZF (a 3-byte back reference yields 264 bytes).
pub const LZF_MAX_RATIO: usize = 88;

/// Decompresses LZF `input` (liblzf format, as Redis's `lzf_d.c`) into exactly `len` bytes.
pub fn lzf_decompress(input: &[u8], len: usize) -> DecodeResult<Vec<u8>> {
    if len > input.len().saturating_mul(LZF_MAX_RATIO) {
        return Err(BadFormat);
    }
    let mut out: Vec<u8> = Vec::new();
    let mut ip = input.iter().copied();
    while let Some(ctrl) = ip.next() {
        let ctrl = usize::from(ctrl);
        if ctrl < 32 {
            // A literal run of ctrl + 1 bytes.
            for _ in 0..=ctrl {
                out.push(ip.next().ok_or(BadFormat)?);
            }
        } else {
            // A back reference of (ctrl >> 5) + 2 bytes.
            let mut run = ctrl >> 5;
            if run == 7 {
                run += usize::from(ip.next().ok_or(BadFormat)?);
            }
            let offset = ((ctrl & 0x1f) << 8) + usize::from(ip.next().ok_or(BadFormat)?) + 1;
            // Byte by byte: the source may overlap the bytes being written (a repeat).
            let start = out.len().checked_sub(offset).ok_or(BadFormat)?;
            for from in start..start + run + 2 {
                let byte = *out.get(from).ok_or(BadFormat)?;
                out.push(byte);
            }
        }
        if out.len() > len {
            return Err(BadFormat);
        }
    }
    if out.len() == len {
        Ok(out)
    } else {
        Err(BadFormat)
    }
}

const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
const ENC_LZF: u8 = 3;

/// An RDB length, or the special string encoding that takes its place.
enum Length {
    Plain(u64),
    Encoded(u8),
}

/// A bounds-checked cursor over a payload.
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }

    /// Bytes not read yet.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        let (head, tail) = self.rest.split_at_checked(n).ok_or(BadFormat)?;
        self.rest = tail;
        Ok(head)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> DecodeResult<[u8; N]> {
        let (head, tail) = self.rest.split_first_chunk::<N>().ok_or(BadFormat)?;
        self.rest = tail;
        Ok(*head)
    }

    /// One byte.
    pub fn byte(&mut self) -> DecodeResult<u8> {
        self.array::<1>().map(|[b]| b)
    }

    fn length_or_encoding(&mut self) -> DecodeResult<Length> {
        let first = self.byte()?;
        match first >> 6 {
            0 => Ok(Length::Plain(u64::from(first & 0x3f))),
            1 => Ok(Length::Plain(
                (u64::from(first & 0x3f) << 8) | u64::from(self.byte()?),
            )),
            2 if first == 0x80 => Ok(Length::Plain(u64::from(u32::from_be_bytes(self.array()?)))),
            2 if first == 0x81 => Ok(Length::Plain(u64::from_be_bytes(self.array()?))),
            3 => Ok(Length::Encoded(first & 0x3f)),
            _ => Err(BadFormat),
        }
    }

    /// An RDB length.
    pub fn length(&mut self) -> DecodeResult<u64> {
        match self.length_or_encoding()? {
            Length::Plain(n) => Ok(n),
            Length::Encoded(_) => Err(BadFormat),
        }
    }

    /// A count of items that take at least `min_item_bytes` bytes each: larger than the
    /// bytes left can hold is malformed (so no loop or allocation follows a forged count).
    pub fn count(&mut self, min_item_bytes: usize) -> DecodeResult<usize> {
        let n = usize::try_from(self.length()?).map_err(|_| BadFormat)?;
        if n.saturating_mul(min_item_bytes.max(1)) > self.remaining() {
            return Err(BadFormat);
        }
        Ok(n)
    }

    /// An RDB string: raw, an 8/16/32-bit integer (as its decimal text), or LZF-compressed.
    pub fn string(&mut self) -> DecodeResult<Vec<u8>> {
        match self.length_or_encoding()? {
            Length::Plain(n) => {
                let n = usize::try_from(n).map_err(|_| BadFormat)?;
                Ok(self.take(n)?.to_vec())
            }
            Length::Encoded(ENC_INT8) => {
                Ok(i8::from_le_bytes(self.array()?).to_string().into_bytes())
            }
            Length::Encoded(ENC_INT16) => {
                Ok(i16::from_le_bytes(self.array()?).to_string().into_bytes())
            }
            Length::Encoded(ENC_INT32) => {
                Ok(i32::from_le_bytes(self.array()?).to_string().into_bytes())
            }
            Length::Encoded(ENC_LZF) => {
                let compressed = usize::try_from(self.length()?).map_err(|_| BadFormat)?;
                let len = usize::try_from(self.length()?).map_err(|_| BadFormat)?;
                lzf_decompress(self.take(compressed)?, len)
            }
            Length::Encoded(_) => Err(BadFormat),
        }
    }

    /// A little-endian u64 (RDB millisecond times).
    pub fn u64_le(&mut self) -> DecodeResult<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
}

/// Appends an RDB length (the shortest of the 6-, 14-, 32- and 64-bit forms).
pub fn put_length(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if let Ok(n32) = u32::try_from(n) {
        out.push(0x80);
        out.extend_from_slice(&n32.to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Appends a raw RDB string (length, then the bytes).
pub fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    put_length(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_matches_redis_check_value() {
        // crc64.c's self test: crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(crc64(b""), 0);
    }

    #[test]
    fn lengths_round_trip_at_every_width() {
        for n in [0, 1, 63, 64, 16_383, 16_384, u64::from(u32::MAX), 1 << 40] {
            let mut out = Vec::new();
            put_length(&mut out, n);
            let mut r = Reader::new(&out);
            assert_eq!(r.length().unwrap(), n);
            assert_eq!(r.remaining(), 0);
        }
        assert!(Reader::new(&[0x82]).length().is_err());
        assert!(Reader::new(&[0x40]).length().is_err());
        assert!(Reader::new(&[0xc0, 1]).length().is_err());
    }

    #[test]
    fn integer_strings_decode_to_decimal_text() {
        assert_eq!(Reader::new(&[0xc0, 0xfb]).string().unwrap(), b"-5");
        assert_eq!(Reader::new(&[0xc1, 0x39, 0x30]).string().unwrap(), b"12345");
        let mut raw = vec![0xc2];
        raw.extend_from_slice(&(-2_000_000_i32).to_le_bytes());
        assert_eq!(Reader::new(&raw).string().unwrap(), b"-2000000");
        assert!(Reader::new(&[0xc4]).string().is_err());
        assert!(Reader::new(&[0x05, b'a']).string().is_err());
    }

    #[test]
    fn lzf_literals_and_back_references() {
        // "abcabcabcabc": literal "abc", then a back reference of 9 bytes at offset 3.
        let compressed = [2, b'a', b'b', b'c', 7 << 5, 0, 2];
        assert_eq!(lzf_decompress(&compressed, 12).unwrap(), b"abcabcabcabc");
        assert!(
            lzf_decompress(&compressed, 11).is_err(),
            "longer than declared"
        );
        assert!(
            lzf_decompress(&compressed, 13).is_err(),
            "shorter than declared"
        );
        assert!(
            lzf_decompress(&[0x20, 0], 2).is_err(),
            "reference before start"
        );
        assert!(lzf_decompress(&[3, b'a'], 4).is_err(), "truncated literal");
        assert!(
            lzf_decompress(&[0], 1 << 20).is_err(),
            "impossible expansion"
        );
        let mut raw = vec![0xc3];
        put_length(&mut raw, compressed.len() as u64);
        put_length(&mut raw, 12);
        raw.extend_from_slice(&compressed);
        assert_eq!(Reader::new(&raw).string().unwrap(), b"abcabcabcabc");
    }

    #[test]
    fn counts_are_bounded_by_the_bytes_left() {
        let mut raw = Vec::new();
        put_length(&mut raw, 1 << 40);
        assert!(Reader::new(&raw).count(1).is_err());
        let mut r = Reader::new(&[3, 0, 0, 0]);
        assert_eq!(r.count(1).unwrap(), 3);
        assert!(Reader::new(&[3, 0, 0, 0]).count(2).is_err());
    }
}
