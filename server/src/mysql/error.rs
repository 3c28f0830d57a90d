//! Errors of the MySQL front door, and the one place where errors become MySQL error packets
//! (code, SQLSTATE, message as MySQL 8.0 words them).
//!
//! Invariants: [`ProtocolError`] says whether the connection can continue
//! ([`ProtocolError::is_fatal`]); [`ErrPacket::from_sql`] is the only mapping from
//! [`SqlError`] to wire codes, so a new variant fails to compile until it is mapped.

use orcinus_sql::session::SqlError;
use orcinus_storage::ErrorKind as StorageKind;

/// What went wrong on one connection.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// Socket error or the client went away.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The client closed the connection between packets.
    #[error("connection closed by client")]
    Closed,
    /// A packet (after reassembly) exceeds `max_allowed_packet`.
    #[error("packet of at least {size} bytes exceeds max_allowed_packet {limit}")]
    PacketTooLarge {
        /// Bytes announced so far.
        size: u64,
        /// The configured limit.
        limit: u64,
    },
    /// A packet arrived with an unexpected sequence id.
    #[error("packets out of order: expected sequence {expected}, got {got}")]
    OutOfOrder {
        /// Expected sequence id.
        expected: u8,
        /// Received sequence id.
        got: u8,
    },
    /// A field of a packet is truncated or invalid; names the field.
    #[error("malformed packet: {0}")]
    Malformed(&'static str),
    /// The client did not finish the handshake in time.
    #[error("handshake timed out")]
    HandshakeTimeout,
    /// The client sent no command within `wait_timeout` / `interactive_timeout`.
    #[error("client idle longer than the wait timeout")]
    IdleTimeout,
}

impl ProtocolError {
    /// Coarse class for logs and tests.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Io(_) | Self::Closed => "io",
            Self::PacketTooLarge { .. } => "packet_too_large",
            Self::OutOfOrder { .. } => "out_of_order",
            Self::Malformed(_) => "malformed",
            Self::HandshakeTimeout | Self::IdleTimeout => "timeout",
        }
    }

    /// True if the connection must be closed after this error (the stream position is lost or
    /// MySQL closes in this case); false if an ERR packet lets the client go on.
    #[must_use]
    pub fn is_fatal(&self) -> bool {
        !matches!(self, Self::Malformed(_))
    }
}

/// An ERR packet's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrPacket {
    /// MySQL error number.
    pub code: u16,
    /// Five-character SQLSTATE.
    pub sql_state: &'static str,
    /// Message text.
    pub message: String,
}

impl ErrPacket {
    /// Builds an error packet.
    #[must_use]
    pub fn new(code: u16, sql_state: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            sql_state,
            message: message.into(),
        }
    }

    /// ER_CLIENT_INTERACTION_TIMEOUT, sent before closing an idle connection (MySQL ≥ 8.0.24).
    #[must_use]
    pub fn idle_timeout() -> Self {
        Self::new(
            4031,
            "HY000",
            "The client was disconnected by the server because of inactivity. See wait_timeout \
             and interactive_timeout for configuring this behavior.",
        )
    }

    /// ER_UNKNOWN_COM_ERROR.
    #[must_use]
    pub fn unknown_command() -> Self {
        Self::new(1047, "08S01", "Unknown command")
    }

    /// ER_NET_PACKETS_OUT_OF_ORDER / ER_NET_PACKET_TOO_LARGE / ER_MALFORMED_PACKET for a
    /// protocol error.
    #[must_use]
    pub fn from_protocol(e: &ProtocolError) -> Self {
        match e {
            ProtocolError::PacketTooLarge { .. } => Self::new(
                1153,
                "08S01",
                "Got a packet bigger than 'max_allowed_packet' bytes",
            ),
            ProtocolError::OutOfOrder { .. } => {
                Self::new(1156, "08S01", "Got packets out of order")
            }
            ProtocolError::Malformed(what) => Self::new(
                1835,
                "HY000",
                format!("Malformed communication packet ({what})"),
            ),
            ProtocolError::HandshakeTimeout => Self::new(1043, "08S01", "Bad handshake"),
            ProtocolError::IdleTimeout => Self::idle_timeout(),
            ProtocolError::Io(_) | ProtocolError::Closed => {
                Self::new(1158, "08S01", "Got an error reading communication packets")
            }
        }
    }

    /// The MySQL error for an SQL-layer error.
    #[must_use]
    pub fn from_sql(e: &SqlError) -> Self {
        match e {
            SqlError::AccessDenied {
                user,
                host,
                using_password,
            } => Self::new(
                1045,
                "28000",
                format!(
                    "Access denied for user '{user}'@'{host}' (using password: {})",
                    if *using_password { "YES" } else { "NO" }
                ),
            ),
            SqlError::Engine(e) => Self::new(e.code(), e.sqlstate(), e.to_string()),
            SqlError::UnknownDatabase(db) => {
                Self::new(1049, "42000", format!("Unknown database '{db}'"))
            }
            SqlError::NoSuchTable { database, table } => Self::new(
                1146,
                "42S02",
                format!("Table '{database}.{table}' doesn't exist"),
            ),
            SqlError::NoDatabaseSelected => Self::new(1046, "3D000", "No database selected"),
            SqlError::NotSupportedYet(what) => Self::new(
                1235,
                "42000",
                format!("This version of Orcinus doesn't yet support '{what}'"),
            ),
            SqlError::UnsupportedInPreparedStatement => Self::new(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            ),
            SqlError::EmptyQuery => Self::new(1065, "42000", "Query was empty"),
            SqlError::Syntax { near, line } => Self::new(
                1064,
                "42000",
                format!(
                    "You have an error in your SQL syntax; check the manual that corresponds \
                     to your Orcinus server version for the right syntax to use near '{near}' \
                     at line {line}"
                ),
            ),
            SqlError::UnknownStatement { id, command } => Self::new(
                1243,
                "HY000",
                format!("Unknown prepared statement handler ({id}) given to {command}"),
            ),
            SqlError::WrongArguments(what) => {
                Self::new(1210, "HY000", format!("Incorrect arguments to {what}"))
            }
            SqlError::UnknownSystemVariable(name) => {
                Self::new(1193, "HY000", format!("Unknown system variable '{name}'"))
            }
            SqlError::WrongValueForVariable { name, value } => Self::new(
                1231,
                "42000",
                format!("Variable '{name}' can't be set to the value of '{value}'"),
            ),
            SqlError::ReadOnlyVariable(name) => Self::new(
                1238,
                "HY000",
                format!("Variable '{name}' is a read only variable"),
            ),
            SqlError::Storage(s) => match s.kind() {
                StorageKind::Deadlock => Self::new(
                    1213,
                    "40001",
                    "Deadlock found when trying to get lock; try restarting transaction",
                ),
                StorageKind::LockWaitTimeout => Self::new(
                    1205,
                    "HY000",
                    "Lock wait timeout exceeded; try restarting transaction",
                ),
                _ => Self::new(1030, "HY000", format!("Got error from storage engine: {s}")),
            },
            SqlError::Internal(what) => Self::new(1105, "HY000", format!("Internal error: {what}")),
        }
    }
}
