//! Numbers of the MySQL client/server protocol: capability and status flags, command bytes,
//! column type codes. Values are those of MySQL 8.0 `include/mysql_com.h` and `field_types.h`.
//!
//! Invariant: this file holds only constants; behaviour keyed on them lives with the code that
//! uses them.

/// Capability flags (`CLIENT_*`).
pub mod capability {
    pub const LONG_PASSWORD: u32 = 1;
    pub const FOUND_ROWS: u32 = 1 << 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const LOCAL_FILES: u32 = 1 << 7;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const INTERACTIVE: u32 = 1 << 10;
    pub const SSL: u32 = 1 << 11;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const DEPRECATE_EOF: u32 = 1 << 24;
}

/// What this server advertises. Not advertised (and therefore never used by a conforming
/// client): SSL, COMPRESS, SESSION_TRACK, QUERY_ATTRIBUTES, IGNORE_SPACE (it would
/// change how the SQL layer parses function names).
pub const SERVER_CAPABILITIES: u32 = capability::LONG_PASSWORD
    | capability::FOUND_ROWS
    | capability::LONG_FLAG
    | capability::CONNECT_WITH_DB
    | capability::LOCAL_FILES
    | capability::PROTOCOL_41
    | capability::INTERACTIVE
    | capability::TRANSACTIONS
    | capability::SECURE_CONNECTION
    | capability::MULTI_STATEMENTS
    | capability::MULTI_RESULTS
    | capability::PS_MULTI_RESULTS
    | capability::PLUGIN_AUTH
    | capability::CONNECT_ATTRS
    | capability::PLUGIN_AUTH_LENENC_CLIENT_DATA
    | capability::DEPRECATE_EOF;

/// Server status flags (`SERVER_STATUS_*`).
pub mod status {
    pub const IN_TRANS: u16 = 1;
    pub const AUTOCOMMIT: u16 = 1 << 1;
    pub const MORE_RESULTS_EXISTS: u16 = 1 << 3;
}

/// Command bytes (`COM_*`).
pub mod command {
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const STATISTICS: u8 = 0x09;
    pub const PING: u8 = 0x0e;
    pub const CHANGE_USER: u8 = 0x11;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1a;
    pub const SET_OPTION: u8 = 0x1b;
    pub const STMT_FETCH: u8 = 0x1c;
    pub const RESET_CONNECTION: u8 = 0x1f;
}

/// Column type codes on the wire (`MYSQL_TYPE_*`).
pub mod column_type {
    pub const DECIMAL: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const JSON: u8 = 245;
    pub const NEWDECIMAL: u8 = 246;
    pub const ENUM: u8 = 247;
    pub const SET: u8 = 248;
    pub const TINY_BLOB: u8 = 249;
    pub const MEDIUM_BLOB: u8 = 250;
    pub const LONG_BLOB: u8 = 251;
    pub const BLOB: u8 = 252;
    pub const VAR_STRING: u8 = 253;
    pub const STRING: u8 = 254;
}

/// Collation id announced in the handshake: utf8mb4_0900_ai_ci.
pub const SERVER_COLLATION: u8 = 255;
/// Largest payload of one physical packet; a payload of exactly this size continues in the
/// next packet.
pub const MAX_PACKET_CHUNK: usize = 0xff_ff_ff;
/// Server version string in the handshake and `@@version`.
pub const SERVER_VERSION: &str = "8.0.36-orcinus";
/// Authentication plugin names.
pub const NATIVE_PASSWORD: &str = "mysql_native_password";
pub const CACHING_SHA2_PASSWORD: &str = "caching_sha2_password";
