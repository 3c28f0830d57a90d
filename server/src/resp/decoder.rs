//! Incremental RESP request decoder: multibulk (`*N\r\n$len\r\n…`) and inline (`PING\r\n`)
//! requests, pipelined, fed whatever bytes have arrived. Written by hand (not redis-protocol)
//! because request limits — before-auth caps, bulk cap, inline cap — must be checked as each
//! header arrives, before any payload is buffered, with Redis's exact error texts.
//!
//! Invariants: never panics or recurses on any input; never allocates from a declared length
//! (payload memory grows only as bytes arrive); a decoded request consumes exactly its bytes,
//! so decoding is independent of how the input was split into reads.

use orcinus_kv::bytes::{Buf, Bytes, BytesMut};

/// Longest inline request and longest `*N` / `$N` header line (Redis PROTO_INLINE_MAX_SIZE).
pub const INLINE_MAX: usize = 64 * 1024;
/// Largest multibulk count once authenticated (Redis: INT_MAX).
pub const MULTIBULK_MAX: i64 = i32::MAX as i64;
/// Before authentication: most arguments per request.
pub const UNAUTH_MULTIBULK_MAX: i64 = 10;
/// Before authentication: largest bulk string.
pub const UNAUTH_BULK_MAX: i64 = 16 * 1024;

/// Limits that depend on the connection's state when each request is decoded.
#[derive(Debug, Clone, Copy)]
pub struct DecodeLimits {
    /// proto-max-bulk-len.
    pub max_bulk_len: u64,
    /// Whether the client has authenticated (caps apply until it has).
    pub authenticated: bool,
}

/// A malformed request; the connection replies `-ERR Protocol error: …` and closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    fn new(what: impl Into<String>) -> Self {
        Self(what.into())
    }

    /// The full error reply text.
    #[must_use]
    pub fn reply_text(&self) -> String {
        format!("ERR Protocol error: {}", self.0)
    }
}

#[derive(Debug)]
struct PendingMultibulk {
    remaining: usize,
    args: Vec<Bytes>,
    bulk_len: Option<usize>,
}

/// Decoder state carried between reads.
#[derive(Debug, Default)]
pub struct RequestDecoder {
    pending: Option<PendingMultibulk>,
}

/// The line at the start of `buf` without its `\n` (and a trailing `\r`), if complete.
fn line_end(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// The decimal integer of a `*N` / `$N` header line (after the prefix): an optional `-` and
/// ASCII digits, nothing else (no `+`, no spaces), within `i64`.
fn parse_header_int(line: &[u8]) -> Option<i64> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (negative, digits) = match line.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, line),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulated as a negative number so that i64::MIN parses.
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_sub(i64::from(d - b'0'))?;
    }
    if negative { Some(n) } else { n.checked_neg() }
}

impl RequestDecoder {
    /// A decoder at a request boundary.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes the next complete request from `buf`, consuming its bytes; `Ok(None)` if more
    /// bytes are needed.
    pub fn decode(
        &mut self,
        buf: &mut BytesMut,
        limits: &DecodeLimits,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        loop {
            if self.pending.is_none() {
                if let Some(args) = decode_whole_multibulk(buf, limits) {
                    return Ok(Some(args));
                }
                match buf.first() {
                    None => return Ok(None),
                    Some(b'*') => {
                        if !self.start_multibulk(buf, limits)? {
                            return Ok(None);
                        }
                    }
                    Some(_) => match decode_inline(buf)? {
                        InlineOutcome::NeedMore => return Ok(None),
                        InlineOutcome::Empty => continue,
                        InlineOutcome::Request(args) => return Ok(Some(args)),
                    },
                }
                continue;
            }
            return self.continue_multibulk(buf, limits);
        }
    }

    /// Parses `*N\r\n`; returns false if the line is incomplete.
    fn start_multibulk(
        &mut self,
        buf: &mut BytesMut,
        limits: &DecodeLimits,
    ) -> Result<bool, ProtocolError> {
        let Some(end) = line_end(buf) else {
            if buf.len() > INLINE_MAX {
                return Err(ProtocolError::new("too big mbulk count string"));
            }
            return Ok(false);
        };
        if end > INLINE_MAX {
            return Err(ProtocolError::new("too big mbulk count string"));
        }
        let count = buf
            .get(1..end)
            .and_then(parse_header_int)
            .filter(|&n| n <= MULTIBULK_MAX)
            .ok_or_else(|| ProtocolError::new("invalid multibulk length"))?;
        if !limits.authenticated && count > UNAUTH_MULTIBULK_MAX {
            return Err(ProtocolError::new("unauthenticated multibulk length"));
        }
        buf.advance(end + 1);
        if count > 0 {
            let remaining = usize::try_from(count).unwrap_or(0);
            self.pending = Some(PendingMultibulk {
                remaining,
                args: Vec::with_capacity(remaining.min(1024)),
                bulk_len: None,
            });
        }
        Ok(true)
    }

    fn continue_multibulk(
        &mut self,
        buf: &mut BytesMut,
        limits: &DecodeLimits,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let Some(pending) = self.pending.as_mut() else {
            return Ok(None);
        };
        while pending.remaining > 0 {
            let len = match pending.bulk_len {
                Some(len) => len,
                None => {
                    let Some(end) = line_end(buf) else {
                        if buf.len() > INLINE_MAX {
                            return Err(ProtocolError::new("too big bulk count string"));
                        }
                        return Ok(None);
                    };
                    if end > INLINE_MAX {
                        return Err(ProtocolError::new("too big bulk count string"));
                    }
                    match buf.first() {
                        Some(b'$') => {}
                        other => {
                            let got = other.map_or(' ', |&c| char::from(c));
                            return Err(ProtocolError::new(format!("expected '$', got '{got}'")));
                        }
                    }
                    let declared = buf
                        .get(1..end)
                        .and_then(parse_header_int)
                        .filter(|&n| {
                            n >= 0 && u64::try_from(n).is_ok_and(|n| n <= limits.max_bulk_len)
                        })
                        .ok_or_else(|| ProtocolError::new("invalid bulk length"))?;
                    if !limits.authenticated && declared > UNAUTH_BULK_MAX {
                        return Err(ProtocolError::new("unauthenticated bulk length"));
                    }
                    buf.advance(end + 1);
                    let len = usize::try_from(declared)
                        .map_err(|_| ProtocolError::new("invalid bulk length"))?;
                    pending.bulk_len = Some(len);
                    len
                }
            };
            let Some(total) = len.checked_add(2) else {
                return Err(ProtocolError::new("invalid bulk length"));
            };
            if buf.len() < total {
                return Ok(None);
            }
            if buf.get(len..total) != Some(b"\r\n".as_slice()) {
                return Err(ProtocolError::new("bulk string not terminated by CRLF"));
            }
            let arg = buf.split_to(len).freeze();
            buf.advance(2);
            pending.args.push(arg);
            pending.bulk_len = None;
            pending.remaining -= 1;
        }
        Ok(self.pending.take().map(|p| p.args))
    }
}

/// Most arguments a request may have to be decoded by [`decode_whole_multibulk`].
const WHOLE_MAX_ARGS: usize = 8;

/// One pass over a multibulk request that is already whole in `buf`, written the canonical way
/// (`*N\r\n`, then `$len\r\n` + payload + `\r\n` per argument, 1..=[`WHOLE_MAX_ARGS`]
/// arguments, within `limits`): consumes it and returns its arguments. Anything else — an
/// incomplete request, other forms, anything over a limit or malformed — returns `None` and
/// consumes nothing; the incremental decoder then decodes it (or reports its error). Both
/// decode an accepted request to the same arguments.
fn decode_whole_multibulk(buf: &mut BytesMut, limits: &DecodeLimits) -> Option<Vec<Bytes>> {
    let bytes: &[u8] = buf;
    let (count, mut at) = canonical_header(bytes, 0, b'*')?;
    let count = usize::try_from(count).ok()?;
    let count_cap = if limits.authenticated {
        WHOLE_MAX_ARGS
    } else {
        WHOLE_MAX_ARGS.min(UNAUTH_MULTIBULK_MAX as usize)
    };
    if count == 0 || count > count_cap {
        return None;
    }
    let bulk_cap = if limits.authenticated {
        limits.max_bulk_len
    } else {
        limits.max_bulk_len.min(UNAUTH_BULK_MAX as u64)
    };
    let mut spans = [(0usize, 0usize); WHOLE_MAX_ARGS];
    for span in spans.iter_mut().take(count) {
        let (len, start) = canonical_header(bytes, at, b'$')?;
        if len > bulk_cap {
            return None;
        }
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        if bytes.get(end..end.checked_add(2)?)? != b"\r\n" {
            return None;
        }
        *span = (start, end);
        at = end + 2;
    }
    let mut args = Vec::with_capacity(count);
    let mut consumed = 0;
    for &(start, end) in spans.iter().take(count) {
        buf.advance(start - consumed);
        args.push(buf.split_to(end - start).freeze());
        consumed = end;
    }
    buf.advance(at - consumed);
    Some(args)
}

/// A header line `<prefix><decimal digits>\r\n` starting at `at` (no sign, at most 18 digits,
/// so it cannot overflow): its number and where the next line starts.
fn canonical_header(bytes: &[u8], at: usize, prefix: u8) -> Option<(u64, usize)> {
    let line = bytes.get(at..)?;
    if line.first() != Some(&prefix) {
        return None;
    }
    let mut n: u64 = 0;
    let mut i = 1;
    loop {
        match *line.get(i)? {
            d @ b'0'..=b'9' if i <= 18 => n = n * 10 + u64::from(d - b'0'),
            b'\r' if i > 1 => break,
            _ => return None,
        }
        i += 1;
    }
    if line.get(i + 1) != Some(&b'\n') {
        return None;
    }
    Some((n, at + i + 2))
}

enum InlineOutcome {
    NeedMore,
    Empty,
    Request(Vec<Bytes>),
}

fn decode_inline(buf: &mut BytesMut) -> Result<InlineOutcome, ProtocolError> {
    let Some(end) = line_end(buf) else {
        if buf.len() > INLINE_MAX {
            return Err(ProtocolError::new("too big inline request"));
        }
        return Ok(InlineOutcome::NeedMore);
    };
    if end > INLINE_MAX {
        return Err(ProtocolError::new("too big inline request"));
    }
    let line = buf.split_to(end + 1);
    let line = line.get(..end).unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let args = split_inline_args(line)
        .ok_or_else(|| ProtocolError::new("unbalanced quotes in request"))?;
    if args.is_empty() {
        return Ok(InlineOutcome::Empty);
    }
    Ok(InlineOutcome::Request(args))
}

fn hex_value(c: u8) -> Option<u8> {
    char::from(c)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Splits an inline request like Redis's `sdssplitargs`: whitespace-separated words,
/// `"…"` with `\n \r \t \b \a \\ \" \xHH` escapes, `'…'` with `\'`. A closing quote must be
/// followed by whitespace or the end. Returns `None` on unbalanced quotes.
#[must_use]
pub fn split_inline_args(line: &[u8]) -> Option<Vec<Bytes>> {
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while line.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let Some(&first) = line.get(i) else {
            return Some(args);
        };
        let mut current = Vec::new();
        match first {
            b'"' => {
                i += 1;
                loop {
                    match (line.get(i), line.get(i + 1)) {
                        (None, _) => return None,
                        (Some(b'\\'), Some(b'x'))
                            if line.get(i + 2).and_then(|&c| hex_value(c)).is_some()
                                && line.get(i + 3).and_then(|&c| hex_value(c)).is_some() =>
                        {
                            let hi = line.get(i + 2).and_then(|&c| hex_value(c)).unwrap_or(0);
                            let lo = line.get(i + 3).and_then(|&c| hex_value(c)).unwrap_or(0);
                            current.push(hi * 16 + lo);
                            i += 4;
                        }
                        (Some(b'\\'), Some(&c)) => {
                            current.push(match c {
                                b'n' => b'\n',
                                b'r' => b'\r',
                                b't' => b'\t',
                                b'b' => 8,
                                b'a' => 7,
                                other => other,
                            });
                            i += 2;
                        }
                        (Some(b'"'), next) => {
                            if next.is_some_and(|c| !c.is_ascii_whitespace()) {
                                return None;
                            }
                            i += 1;
                            break;
                        }
                        (Some(&c), _) => {
                            current.push(c);
                            i += 1;
                        }
                    }
                }
            }
            b'\'' => {
                i += 1;
                loop {
                    match (line.get(i), line.get(i + 1)) {
                        (None, _) => return None,
                        (Some(b'\\'), Some(b'\'')) => {
                            current.push(b'\'');
                            i += 2;
                        }
                        (Some(b'\''), next) => {
                            if next.is_some_and(|c| !c.is_ascii_whitespace()) {
                                return None;
                            }
                            i += 1;
                            break;
                        }
                        (Some(&c), _) => {
                            current.push(c);
                            i += 1;
                        }
                    }
                }
            }
            _ => {
                while let Some(&c) = line.get(i) {
                    if c.is_ascii_whitespace() {
                        break;
                    }
                    current.push(c);
                    i += 1;
                }
            }
        }
        args.push(Bytes::from(current));
    }
}

#[cfg(test)]
mod header_int_tests {
    use super::parse_header_int;

    #[test]
    fn header_integers_parse_like_i64_without_plus_or_spaces() {
        for text in [
            "0",
            "7",
            "-1",
            "0012",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            let with_cr = format!("{text}\r");
            assert_eq!(
                parse_header_int(text.as_bytes()),
                text.parse().ok(),
                "{text}"
            );
            assert_eq!(
                parse_header_int(with_cr.as_bytes()),
                text.parse().ok(),
                "{text}"
            );
        }
        for text in [
            "",
            "\r",
            "-",
            "+1",
            " 1",
            "1 ",
            "1\r\r",
            "9223372036854775808",
            "-9223372036854775809",
            "1a",
            "--1",
            "\u{663}",
        ] {
            assert_eq!(parse_header_int(text.as_bytes()), None, "{text:?}");
        }
    }
}
