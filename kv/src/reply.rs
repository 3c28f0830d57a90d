//! [`Reply`]: the typed answer of every command. Handlers never build RESP bytes and never
//! choose a shape by protocol; the connection encodes a `Reply` as RESP2 or RESP3 (RESP3-only
//! types degrade to their RESP2 equivalents there). Error texts start with the Redis error code
//! and contain no CR/LF.

use bytes::Bytes;

/// A command's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+text` (never contains CR/LF).
    Simple(String),
    /// `-CODE text`.
    Error(String),
    /// `:n`.
    Integer(i64),
    /// `$len\r\nbytes`.
    Bulk(Bytes),
    /// A missing value: `$-1` in RESP2, `_` in RESP3.
    Null,
    /// A missing array (aborted EXEC): `*-1` in RESP2, `_` in RESP3.
    NullArray,
    /// `*n` elements.
    Array(Vec<Reply>),
    /// RESP3 map; a flat array of key, value, … in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// Pairs that may repeat or whose order matters (HRANDFIELD … WITHVALUES, member/score
    /// pairs of ZRANGE … WITHSCORES): an array of 2-element arrays in RESP3, a flat array of
    /// key, value, … in RESP2.
    Pairs(Vec<(Reply, Reply)>),
    /// RESP3 set; an array in RESP2.
    Set(Vec<Reply>),
    /// RESP3 double; a bulk string in RESP2. Both carry Redis's text for the value
    /// (`score::format_score`: `1.5`, `1e+20`, `inf`, `-inf`, `nan`).
    Double(f64),
    /// RESP3 boolean; the integer 1 or 0 in RESP2.
    Boolean(bool),
    /// RESP3 verbatim string with a 3-letter format (`txt`, `mkd`); a bulk string in RESP2.
    Verbatim(&'static str, Bytes),
}

impl Reply {
    /// `+OK`.
    #[must_use]
    pub fn ok() -> Self {
        Self::Simple("OK".into())
    }

    /// A bulk string copied from `bytes`.
    pub fn bulk(bytes: impl AsRef<[u8]>) -> Self {
        Self::Bulk(Bytes::copy_from_slice(bytes.as_ref()))
    }

    /// A bulk string, or `Null` for `None`.
    pub fn bulk_or_null(value: Option<impl AsRef<[u8]>>) -> Self {
        value.map_or(Self::Null, Self::bulk)
    }

    /// An error reply with the given full text.
    pub fn error(text: impl Into<String>) -> Self {
        Self::Error(text.into())
    }

    /// True for an error reply.
    #[must_use]
    pub fn is_error(&self) -> bool {
        matches!(self, Self::Error(_))
    }
}
