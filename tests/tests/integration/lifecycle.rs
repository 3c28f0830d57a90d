//! Process lifecycle: clean shutdown on SIGTERM and SIGINT (exit 0), and restart on the same
//! data dir after SIGKILL with freshly printed addresses.

use crate::harness::TestServer;
use std::net::TcpStream;

#[test]
fn sigterm_shuts_down_with_exit_zero() {
    let mut server = TestServer::start();
    let status = server.stop();
    assert_eq!(status.code(), Some(0), "{status}: {}", server.stderr());
}

#[test]
fn sigint_shuts_down_with_exit_zero() {
    let mut server = TestServer::start();
    let status = server.stop_with_signal("INT");
    assert_eq!(status.code(), Some(0), "{status}");
}

#[test]
fn kill9_then_restart_serves_on_new_addresses() {
    let mut server = TestServer::start();
    server.kill9();
    server.restart();
    TcpStream::connect(server.mysql_addr()).unwrap();
    TcpStream::connect(server.resp_addr()).unwrap();
    assert!(server.data_dir().join("orcinus.lock").exists());
    server.kill9();
    server.restart();
    assert_eq!(server.stop().code(), Some(0));
}
