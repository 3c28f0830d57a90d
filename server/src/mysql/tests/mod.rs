//! In-process tests of the MySQL front door: the listener on 127.0.0.1:0 with a fake SQL
//! engine, driven by a real client library (`mysql_async`) and by a raw packet client for
//! the paths a library does not exercise (malformed input, limits, status flags).

mod accounts_login;
mod client_library;
mod fake_engine;
mod production_engine;
mod raw_client;
mod raw_protocol;
mod robustness;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use super::{MysqlSettings, serve};
use fake_engine::FakeEngine;

/// Starts a server with the fake engine; returns its address. The server task ends with the
/// test's runtime.
pub async fn start(settings: MysqlSettings) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, Arc::new(FakeEngine), settings));
    addr
}
