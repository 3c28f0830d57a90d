//! The kv error type. Command errors carry the exact Redis error text (prefix included, e.g.
//! `WRONGTYPE …` or `ERR syntax error`); storage failures are wrapped and turned into a reply in
//! one place, [`KvError::to_reply_text`], which is also where lock conflicts become the
//! retryable `TRYAGAIN` error.

use orcinus_storage::{ErrorKind as StorageKind, StorageError};

/// Result alias for kv operations.
pub type KvResult<T> = Result<T, KvError>;

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// A Redis error reply; the text starts with its error code (`ERR`, `WRONGTYPE`, …).
    #[error("{0}")]
    Command(String),
    /// The storage engine failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A stored record could not be decoded (see FORMAT.md).
    #[error("corrupt record: {0}")]
    Corrupt(String),
}

/// Coarse classification of [`KvError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The client's request was wrong (syntax, type, range …).
    Command,
    /// A lock conflict (deadlock victim or lock-wait timeout): nothing was applied; retry.
    Retryable,
    /// The engine is poisoned or shutting down.
    Unavailable,
    /// I/O, LSM failure, or a record we cannot decode.
    Internal,
}

/// `WRONGTYPE` error text (Redis wording).
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// `ERR syntax error`.
pub const SYNTAX: &str = "ERR syntax error";
/// The integer-parse error.
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
/// The float-parse error.
pub const NOT_FLOAT: &str = "ERR value is not a valid float";

impl KvError {
    /// A command error with the given full text.
    pub fn command(text: impl Into<String>) -> Self {
        Self::Command(text.into())
    }

    /// `WRONGTYPE …`.
    #[must_use]
    pub fn wrong_type() -> Self {
        Self::Command(WRONGTYPE.into())
    }

    /// `ERR syntax error`.
    #[must_use]
    pub fn syntax() -> Self {
        Self::Command(SYNTAX.into())
    }

    /// `ERR value is not an integer or out of range`.
    #[must_use]
    pub fn not_integer() -> Self {
        Self::Command(NOT_INTEGER.into())
    }

    /// `ERR wrong number of arguments for 'name' command`.
    #[must_use]
    pub fn arity(name: &str) -> Self {
        Self::Command(format!(
            "ERR wrong number of arguments for '{name}' command"
        ))
    }

    /// True for the `WRONGTYPE` error.
    #[must_use]
    pub fn is_wrong_type(&self) -> bool {
        matches!(self, Self::Command(text) if text == WRONGTYPE)
    }

    /// The error's kind.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Command(_) => ErrorKind::Command,
            Self::Storage(e) => match e.kind() {
                // KV commands run in no interrupt scope; an interruption would be retryable.
                StorageKind::Deadlock | StorageKind::LockWaitTimeout | StorageKind::Interrupted => {
                    ErrorKind::Retryable
                }
                StorageKind::Unavailable => ErrorKind::Unavailable,
                StorageKind::DirectoryLocked | StorageKind::InvalidArgument | StorageKind::Io => {
                    ErrorKind::Internal
                }
            },
            Self::Corrupt(_) => ErrorKind::Internal,
        }
    }

    /// The error reply text sent to the client (the single mapping from errors to RESP).
    #[must_use]
    pub fn to_reply_text(&self) -> String {
        match (self.kind(), self) {
            (_, Self::Command(text)) => text.clone(),
            (ErrorKind::Retryable, e) => format!("TRYAGAIN {e}"),
            (ErrorKind::Unavailable, e) => format!("ERR server unavailable: {e}"),
            (_, e) => format!("ERR internal error: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_conflicts_map_to_retryable_tryagain() {
        let deadlock = KvError::from(StorageError::Deadlock);
        assert_eq!(deadlock.kind(), ErrorKind::Retryable);
        assert!(deadlock.to_reply_text().starts_with("TRYAGAIN deadlock"));
        let timeout = KvError::from(StorageError::LockWaitTimeout);
        assert_eq!(timeout.kind(), ErrorKind::Retryable);
        assert!(
            timeout
                .to_reply_text()
                .starts_with("TRYAGAIN lock wait timeout")
        );
    }

    #[test]
    fn other_errors_keep_their_text_or_become_err() {
        assert_eq!(KvError::wrong_type().to_reply_text(), WRONGTYPE);
        assert_eq!(KvError::wrong_type().kind(), ErrorKind::Command);
        let poisoned = KvError::from(StorageError::Poisoned);
        assert_eq!(poisoned.kind(), ErrorKind::Unavailable);
        assert!(
            poisoned
                .to_reply_text()
                .starts_with("ERR server unavailable")
        );
        let corrupt = KvError::Corrupt("x".into());
        assert_eq!(corrupt.kind(), ErrorKind::Internal);
        assert!(corrupt.to_reply_text().starts_with("ERR internal error"));
    }
}
