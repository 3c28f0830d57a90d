//! [`Reply`]: the typed answer of every command. Handlers never build RESP bytes and never
//! choose a shape by protocol; the connection encodes a `Reply` as RESP2 or RESP3 (RESP3-only
//! types degrade to their RESP2 equivalents there). Error texts start with the Redis error code
//! and contain no CR/LF.

use bytes::Bytes;
use orcinus_storage::Slice;
use std::borrow::Cow;

/// A command's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+text` (never contains CR/LF). Borrowed for fixed texts (`+OK`, `+QUEUED` …), so the
    /// common replies allocate nothing.
    Simple(Cow<'static, str>),
    /// `-CODE text`.
    Error(String),
    /// `:n`.
    Integer(i64),
    /// `$len\r\nbytes`.
    Bulk(Bytes),
    /// `$len\r\nbytes` of a value read from storage, sharing the engine's buffer: a GET is
    /// answered without copying the value or allocating. Encoded exactly like `Bulk`.
    Stored(StoredBulk),
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
        Self::Simple(Cow::Borrowed("OK"))
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

    /// The same reply with every [`Reply::Stored`] turned into the [`Reply::Bulk`] a client
    /// receives for it (for comparing replies).
    #[must_use]
    pub fn into_plain(self) -> Self {
        let all = |items: Vec<Self>| items.into_iter().map(Self::into_plain).collect();
        let pairs = |pairs: Vec<(Self, Self)>| {
            pairs
                .into_iter()
                .map(|(k, v)| (k.into_plain(), v.into_plain()))
                .collect()
        };
        match self {
            Self::Stored(stored) => Self::bulk(stored.bytes()),
            Self::Array(items) => Self::Array(all(items)),
            Self::Set(items) => Self::Set(all(items)),
            Self::Map(items) => Self::Map(pairs(items)),
            Self::Pairs(items) => Self::Pairs(pairs(items)),
            other => other,
        }
    }
}

/// The bytes of a stored record from an offset on (a string value after its meta header),
/// holding the record's buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBulk {
    record: Slice,
    start: usize,
}

impl StoredBulk {
    /// `record[start..]` (empty if `start` is past the end).
    #[must_use]
    pub fn new(record: Slice, start: usize) -> Self {
        let start = start.min(record.len());
        Self { record, start }
    }

    /// The bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.record.get(self.start..).unwrap_or_default()
    }

    /// Their number.
    #[must_use]
    pub fn len(&self) -> usize {
        self.record.len() - self.start
    }

    /// True if there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl AsRef<[u8]> for StoredBulk {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}
