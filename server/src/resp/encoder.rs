//! Encodes a [`Reply`] as RESP2 or RESP3. RESP3-only types degrade in RESP2 the way Redis does
//! it: Map → flat array, Pairs (RESP3: array of 2-element arrays) → flat array, Set → array,
//! Double → bulk string, Boolean → integer, Verbatim → bulk string, Null → `$-1`,
//! NullArray → `*-1`. A Double's text is Redis's in both protocols (`score::format_score`:
//! `1.5`, `1e+20`, `inf`, `-inf`, `nan`): RESP2 `$3\r\n1.5`, RESP3 `,1.5`. Simple strings and
//! errors never carry CR/LF (they are replaced by spaces), so a reply can never break framing.

use orcinus_kv::score::format_score;
use orcinus_kv::{Protocol, Reply};
use std::io::Write as _;

fn line(out: &mut Vec<u8>, prefix: u8, text: &str) {
    out.push(prefix);
    out.extend(
        text.bytes()
            .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

fn header(out: &mut Vec<u8>, prefix: u8, n: usize) {
    out.push(prefix);
    // Formatted straight into the buffer (writing to a Vec cannot fail).
    let _ = write!(out, "{n}");
    out.extend_from_slice(b"\r\n");
}

fn bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    header(out, b'$', bytes.len());
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// Appends the encoding of `reply` to `out`.
pub fn encode(reply: &Reply, protocol: Protocol, out: &mut Vec<u8>) {
    let resp3 = protocol == Protocol::Resp3;
    match reply {
        Reply::Simple(text) => line(out, b'+', text),
        Reply::Error(text) => line(out, b'-', text),
        Reply::Integer(n) => {
            out.push(b':');
            let _ = write!(out, "{n}");
            out.extend_from_slice(b"\r\n");
        }
        Reply::Bulk(bytes) => bulk(out, bytes),
        Reply::Null if resp3 => out.extend_from_slice(b"_\r\n"),
        Reply::Null => out.extend_from_slice(b"$-1\r\n"),
        Reply::NullArray if resp3 => out.extend_from_slice(b"_\r\n"),
        Reply::NullArray => out.extend_from_slice(b"*-1\r\n"),
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
        Reply::Double(value) => bulk(out, format_score(*value).as_bytes()),
        Reply::Boolean(b) if resp3 => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
        Reply::Boolean(b) => line(out, b':', if *b { "1" } else { "0" }),
        Reply::Verbatim(format, text) if resp3 => {
            header(out, b'=', text.len() + 4);
            out.extend_from_slice(format.as_bytes());
            out.push(b':');
            out.extend_from_slice(text);
            out.extend_from_slice(b"\r\n");
        }
        Reply::Verbatim(_, text) => bulk(out, text),
    }
}
