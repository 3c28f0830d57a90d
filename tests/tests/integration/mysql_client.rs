//! Shared helpers for the tests that talk to the MySQL port with `mysql_async`: connection
//! options, a per-test runtime, and error inspection.

use mysql_async::{Conn, Error, OptsBuilder};
use std::future::Future;
use std::net::SocketAddr;

/// Options for `root` (no password) on `addr`, optionally selecting `db`.
pub fn opts(addr: SocketAddr, db: Option<&str>) -> OptsBuilder {
    OptsBuilder::default()
        .ip_or_hostname(addr.ip().to_string())
        .tcp_port(addr.port())
        .user(Some("root"))
        .db_name(db)
        .prefer_socket(false)
}

/// A connection as `root`, optionally selecting `db`.
pub async fn connect(addr: SocketAddr, db: Option<&str>) -> Conn {
    Conn::new(opts(addr, db))
        .await
        .expect("connect to the MySQL port")
}

/// Runs `f` to completion on a fresh multi-threaded runtime.
pub fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(f)
}

/// The server error's code, SQLSTATE and message; panics on any other error.
pub fn server_error(e: Error) -> (u16, String, String) {
    match e {
        Error::Server(s) => (s.code, s.state, s.message),
        other => panic!("expected a server error, got {other:?}"),
    }
}
