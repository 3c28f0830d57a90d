//! Start-up against resources someone else holds: a port in use, a locked data dir. The start
//! fails with one stderr line, leaves the data dir as it was, and the other holder is unaffected.

use crate::harness::TestServer;
use std::collections::BTreeSet;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

fn dir_listing(dir: &Path) -> BTreeSet<PathBuf> {
    let mut listing = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            listing.insert(path);
        }
    }
    listing
}

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

#[test]
fn second_server_on_a_locked_data_dir_fails_and_the_first_keeps_serving() {
    let mut first = TestServer::start();
    let before = dir_listing(first.data_dir());
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
    assert_eq!(dir_listing(first.data_dir()), before);
    TcpStream::connect(first.mysql_addr()).unwrap();
    TcpStream::connect(first.resp_addr()).unwrap();
    assert_eq!(first.stop().code(), Some(0));
}
