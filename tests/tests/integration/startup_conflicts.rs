//! Start-up against resources someone else holds: a port in use, a locked data dir. The start
//! fails with one stderr line, leaves the data dir as it was, and the other holder is unaffected.

use crate::harness::TestServer;
use std::collections::BTreeSet;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

#[test]
fn port_in_use_fails_before_touching_the_data_dir() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    for (flag, protocol) in [("--mysql-port", "mysql"), ("--redis-port", "redis")] {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("data");
        let out = TestServer::builder()
            .data_dir(&data_dir)
            .arg(flag)
            .arg(&port)
            .run_to_exit();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let lines = out.stderr_lines();
        assert_eq!(lines.len(), 1, "{}", out.stderr);
        let expected = format!("orcinus: error: {protocol} port 127.0.0.1:{port} is in use");
        assert_eq!(lines[0], expected);
        assert!(!data_dir.exists(), "the data dir was created");
    }
}

/// What a second process could touch before it finds the lock: the data dir's own entries and
/// the lock file. (Everything under `lsm/` belongs to the running first server, which keeps
/// flushing and compacting there, so it is not part of the comparison.)
fn top_level_state(dir: &Path) -> (BTreeSet<PathBuf>, std::time::SystemTime) {
    let entries = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let lock_mtime = std::fs::metadata(dir.join("orcinus.lock"))
        .unwrap()
        .modified()
        .unwrap();
    (entries, lock_mtime)
}

#[test]
fn second_server_on_a_locked_data_dir_fails_and_the_first_keeps_serving() {
    let mut first = TestServer::start();
    let before = top_level_state(first.data_dir());
    let out = TestServer::builder()
        .data_dir(first.data_dir())
        .run_to_exit();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains("is locked by another process"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains(&first.data_dir().display().to_string()));
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_eq!(top_level_state(first.data_dir()), before);
    TcpStream::connect(first.mysql_addr()).unwrap();
    TcpStream::connect(first.resp_addr()).unwrap();
    assert_eq!(first.stop().code(), Some(0));
}
