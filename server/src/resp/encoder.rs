//! Encodes a [`Reply`] as RESP2 or RESP3. RESP3-only types degrade in RESP2 the way Redis does
//! it: Map → flat array, Pairs (RESP3: array of 2-element arrays) → flat array, Set → array,
//! Double → bulk string, Boolean → integer, Verbatim → bulk string, Null → `$-1`,
//! NullArray → `*-1`. A Double's text is Redis's in both protocols (`score::format_score`:
//! `1.5`, `1e+20`, `inf`, `-inf`, `nan`): RESP2 `$3\r\n1.5`, RESP3 `,1.5`. Simple strings and
//! errors never carry CR/LF (they are replaced by spaces), so a reply can never break framing.

use super::reply_buffer::ReplyBuffer;
use orcinus_kv::score::format_score;
use orcinus_kv::{Bytes, Protocol, Reply, StoredBulk};

/// Where encoded bytes go.
pub trait Sink {
    /// Appends bytes.
    fn put(&mut self, bytes: &[u8]);
    /// Appends one byte.
    fn put_byte(&mut self, byte: u8);
    /// Appends a bulk payload (a sink may keep a reference instead of copying).
    fn put_payload(&mut self, payload: &Bytes) {
        self.put(payload);
    }
    /// Appends a stored value (a sink may keep a reference instead of copying).
    fn put_stored(&mut self, payload: &StoredBulk) {
        self.put(payload.bytes());
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn put_byte(&mut self, byte: u8) {
        self.push(byte);
    }
}

impl Sink for ReplyBuffer {
    fn put(&mut self, bytes: &[u8]) {
        ReplyBuffer::put(self, bytes);
    }
    fn put_byte(&mut self, byte: u8) {
        ReplyBuffer::put_byte(self, byte);
    }
    fn put_payload(&mut self, payload: &Bytes) {
        ReplyBuffer::put_payload(self, payload);
    }
    fn put_stored(&mut self, payload: &StoredBulk) {
        ReplyBuffer::put_stored(self, payload);
    }
}

fn line(out: &mut impl Sink, prefix: u8, text: &str) {
    out.put_byte(prefix);
    if text.bytes().any(|b| b == b'\r' || b == b'\n') {
        let clean: Vec<u8> = text
            .bytes()
            .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b })
            .collect();
        out.put(&clean);
    } else {
        out.put(text.as_bytes());
    }
    out.put(b"\r\n");
}

/// `prefix`, the decimal digits of `n` (with `-` if `negative`), CRLF.
fn number_line(out: &mut impl Sink, prefix: u8, negative: bool, mut n: u64) {
    let mut buf = [0u8; 24];
    let mut at = buf.len();
    for b in [b'\n', b'\r'] {
        at -= 1;
        if let Some(slot) = buf.get_mut(at) {
            *slot = b;
        }
    }
    loop {
        at -= 1;
        if let Some(slot) = buf.get_mut(at) {
            // n % 10 < 10, so the cast cannot truncate.
            *slot = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        if let Some(slot) = buf.get_mut(at) {
            *slot = b'-';
        }
    }
    out.put_byte(prefix);
    out.put(buf.get(at..).unwrap_or_default());
}

fn header(out: &mut impl Sink, prefix: u8, n: usize) {
    number_line(out, prefix, false, n as u64);
}

fn bulk_bytes(out: &mut impl Sink, bytes: &[u8]) {
    header(out, b'$', bytes.len());
    out.put(bytes);
    out.put(b"\r\n");
}

fn bulk(out: &mut impl Sink, payload: &Bytes) {
    header(out, b'$', payload.len());
    out.put_payload(payload);
    out.put(b"\r\n");
}

/// Appends the encoding of `reply` to `out`.
pub fn encode(reply: &Reply, protocol: Protocol, out: &mut impl Sink) {
    let resp3 = protocol == Protocol::Resp3;
    match reply {
        Reply::Simple(text) => line(out, b'+', text),
        Reply::Error(text) => line(out, b'-', text),
        Reply::Integer(n) => number_line(out, b':', *n < 0, n.unsigned_abs()),
        Reply::Bulk(bytes) => bulk(out, bytes),
        Reply::Stored(stored) => {
            header(out, b'$', stored.len());
            out.put_stored(stored);
            out.put(b"\r\n");
        }
        Reply::Null if resp3 => out.put(b"_\r\n"),
        Reply::Null => out.put(b"$-1\r\n"),
        Reply::NullArray if resp3 => out.put(b"_\r\n"),
        Reply::NullArray => out.put(b"*-1\r\n"),
        Reply::Array(items) => {
            header(out, b'*', items.len());
            for item in items {
                encode(item, protocol, out);
            }
        }
        Reply::Set(items) => {
            header(out, if resp3 { b'~' } else { b'*' }, items.len());
            for item in items {
                encode(item, protocol, out);
            }
        }
        Reply::Map(pairs) => {
            if resp3 {
                header(out, b'%', pairs.len());
            } else {
                header(out, b'*', pairs.len().saturating_mul(2));
            }
            for (k, v) in pairs {
                encode(k, protocol, out);
                encode(v, protocol, out);
            }
        }
        Reply::Pairs(pairs) => {
            if resp3 {
                header(out, b'*', pairs.len());
            } else {
                header(out, b'*', pairs.len().saturating_mul(2));
            }
            for (k, v) in pairs {
                if resp3 {
                    header(out, b'*', 2);
                }
                encode(k, protocol, out);
                encode(v, protocol, out);
            }
        }
        Reply::Double(value) if resp3 => line(out, b',', &format_score(*value)),
        Reply::Double(value) => bulk_bytes(out, format_score(*value).as_bytes()),
        Reply::Boolean(b) if resp3 => out.put(if *b { b"#t\r\n" } else { b"#f\r\n" }),
        Reply::Boolean(b) => line(out, b':', if *b { "1" } else { "0" }),
        Reply::Verbatim(format, text) if resp3 => {
            header(out, b'=', text.len() + 4);
            out.put(format.as_bytes());
            out.put_byte(b':');
            out.put(text);
            out.put(b"\r\n");
        }
        Reply::Verbatim(_, text) => bulk(out, text),
    }
}
