//! The account table at start-up: a non-loopback bind is refused while an administrator
//! account has no password (a new data dir's root has none), with one stderr line, before the
//! data dir is created or any account is written.

use crate::harness::TestServer;

const EXPECTED: &str = "orcinus: error: server.bind 0.0.0.0 is not a loopback address and \
                        'root'@'%' has no password; start bound to 127.0.0.1, set one \
                        (ALTER USER ... IDENTIFIED BY), then restart";

#[test]
fn public_bind_on_a_new_data_dir_is_refused_without_creating_it() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let out = TestServer::builder()
        .data_dir(&data_dir)
        .arg("--bind")
        .arg("0.0.0.0")
        .run_to_exit();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(out.stderr_lines(), [EXPECTED], "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(!data_dir.exists(), "the data dir was created");
}

#[test]
fn public_bind_is_refused_while_root_has_no_password() {
    let mut first = TestServer::start();
    assert_eq!(first.stop().code(), Some(0));
    let out = TestServer::builder()
        .data_dir(first.data_dir())
        .arg("--bind")
        .arg("0.0.0.0")
        .run_to_exit();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // The engine was opened (its recovery may log); the refusal is the one error line.
    let lines = out.stderr_lines();
    let errors: Vec<_> = lines.iter().filter(|l| l.starts_with("orcinus:")).collect();
    assert_eq!(errors, [&EXPECTED], "{}", out.stderr);
    assert_eq!(lines.last(), Some(&EXPECTED));
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    // The refused start left the data dir usable on loopback.
    first.restart();
    std::net::TcpStream::connect(first.mysql_addr()).unwrap();
    assert_eq!(first.stop().code(), Some(0));
}
