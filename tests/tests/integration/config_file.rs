//! The `--config` file as the binary sees it: invalid or unreadable files fail the start with
//! one stderr line and create nothing; the checked-in example file starts a server.

use crate::harness::{ExitOutput, TestServer};
use std::path::PathBuf;

fn example_config() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../server/orcinus.example.toml")
}

fn assert_fails_with_one_line(out: &ExitOutput, expected: &str) {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines = out.stderr_lines();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(lines[0].starts_with("orcinus: error: "), "{}", lines[0]);
    assert!(
        lines[0].contains(expected),
        "expected {expected:?} in {}",
        lines[0]
    );
}

#[test]
fn invalid_config_files_fail_with_one_line_and_create_nothing() {
    let cases = [
        ("[server\nbind = 1\n", "invalid config file"),
        ("[server]\nno_such_setting = 1\n", "unknown field"),
        ("[storage]\nsync = \"sometimes\"\n", "line 2"),
        ("[server]\nmysql_port = -5\n", "invalid config file"),
        (
            "[storage]\ncache_size_bytes = 1\n",
            "storage.cache_size_bytes",
        ),
        ("[storage]\npath = \"/tmp/elsewhere\"\n", "storage.path"),
    ];
    for (toml, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("data");
        let out = TestServer::builder()
            .config(toml)
            .data_dir(&data_dir)
            .run_to_exit();
        assert_fails_with_one_line(&out, expected);
        assert!(!data_dir.exists(), "{toml:?} created the data dir");
    }
}

#[test]
fn unreadable_config_path_fails() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let out = TestServer::builder()
        .arg("--config")
        .arg(&missing)
        .run_to_exit();
    assert_fails_with_one_line(&out, "cannot read config file");
    let out = TestServer::builder()
        .arg("--config")
        .arg(dir.path())
        .run_to_exit();
    assert_fails_with_one_line(&out, "cannot read config file");
}

#[test]
fn example_config_starts_a_server() {
    let mut server = TestServer::builder()
        .arg("--config")
        .arg(example_config())
        .arg("--mysql-port")
        .arg("0")
        .arg("--redis-port")
        .arg("0")
        .start();
    assert!(server.data_dir().join("orcinus.lock").exists());
    assert_eq!(server.stop().code(), Some(0));
}

#[test]
fn try_start_reports_the_stderr_of_a_failed_start() {
    let err = TestServer::builder()
        .config("[server]\nno_such_setting = 1\n")
        .try_start()
        .err()
        .expect("a server with an invalid config started");
    assert!(err.contains("orcinus did not start"), "{err}");
    assert!(err.contains("orcinus: error: invalid config file"), "{err}");
}
