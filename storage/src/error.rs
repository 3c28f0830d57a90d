//! The storage error type. Protocols map [`ErrorKind`] to wire codes in one place each
//! (SQL: Deadlock → 1213, LockWaitTimeout → 1205; RESP: a retryable error).

use std::path::PathBuf;

/// Result alias for storage operations.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// Everything that can go wrong in the storage engine.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// This transaction was chosen as the victim of a lock cycle; it must be rolled back.
    #[error("deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// A lock could not be acquired within the configured lock-wait timeout.
    #[error("lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// A lock held by another transaction, asked for by a transaction that does not wait
    /// ([`crate::Transaction::set_lock_wait`]): nothing was locked; the caller decides what
    /// to do (its kind is [`ErrorKind::LockWaitTimeout`]).
    #[error("lock is held by another transaction")]
    WouldWait,
    /// The statement's [`crate::Interrupt`] fired (KILL QUERY) while it waited.
    #[error("query execution was interrupted")]
    Interrupted,
    /// A sync (or a journal write) failed earlier; the engine accepts no more writes.
    #[error("storage engine is poisoned after a failed sync; restart the server")]
    Poisoned,
    /// Another process holds the data directory.
    #[error("data directory {0} is locked by another process")]
    DirectoryLocked(PathBuf),
    /// The engine is shutting down and accepts no new commits.
    #[error("storage engine is shutting down")]
    ShuttingDown,
    /// A keyspace name that the engine does not accept.
    #[error("invalid keyspace name {0:?}")]
    InvalidKeyspaceName(String),
    /// A key that is empty or longer than [`crate::MAX_KEY_LEN`], or a value over [`crate::MAX_VALUE_LEN`].
    #[error("invalid key or value: {0}")]
    InvalidKey(&'static str),
    /// An I/O error from the operating system.
    #[error("storage I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An error reported by the LSM tree (corruption, recovery failure …).
    #[error("storage engine error: {0}")]
    Engine(String),
}

/// Coarse classification of [`StorageError`] for protocol mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Transaction conflict: the victim of a deadlock (retryable).
    Deadlock,
    /// Transaction conflict: lock wait timed out (retryable).
    LockWaitTimeout,
    /// The statement was interrupted (KILL QUERY); nothing of the wait's work was applied.
    Interrupted,
    /// The engine is poisoned or shutting down: fatal for the server.
    Unavailable,
    /// Start-up problem with the data directory.
    DirectoryLocked,
    /// Misuse by the caller (bad keyspace name).
    InvalidArgument,
    /// I/O or LSM failure.
    Io,
}

impl StorageError {
    /// The kind that protocol layers map to their wire codes.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Deadlock => ErrorKind::Deadlock,
            Self::LockWaitTimeout | Self::WouldWait => ErrorKind::LockWaitTimeout,
            Self::Interrupted => ErrorKind::Interrupted,
            Self::Poisoned | Self::ShuttingDown => ErrorKind::Unavailable,
            Self::DirectoryLocked(_) => ErrorKind::DirectoryLocked,
            Self::InvalidKeyspaceName(_) | Self::InvalidKey(_) => ErrorKind::InvalidArgument,
            Self::Io(_) | Self::Engine(_) => ErrorKind::Io,
        }
    }

    /// True for transaction conflicts that a client should retry after rollback.
    #[must_use]
    pub fn is_conflict(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Deadlock | ErrorKind::LockWaitTimeout
        )
    }
}

impl From<fjall::Error> for StorageError {
    fn from(e: fjall::Error) -> Self {
        match e {
            fjall::Error::Poisoned => Self::Poisoned,
            fjall::Error::Io(io) => Self::Io(io),
            other => Self::Engine(format!("{other:?}")),
        }
    }
}
