//! Byte encodings of SQL data in storage: order-preserving index keys ([`key`]) and compact row
//! values ([`row`]). The layouts are specified in `sql/FORMAT.md`; every change there needs a new
//! format version byte.

pub mod key;
pub mod row;

/// Errors from decoding stored bytes (corruption or a format this build does not know).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The bytes ended before the value did.
    #[error("truncated {0}")]
    Truncated(&'static str),
    /// A tag or version byte this build does not know.
    #[error("unknown {what} byte {byte:#04x}")]
    UnknownTag { what: &'static str, byte: u8 },
    /// The value does not fit the column type.
    #[error("value does not fit column type {0}")]
    TypeMismatch(String),
}
