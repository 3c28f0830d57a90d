//! The account table against the real binary: a non-loopback bind is refused while an
//! administrator account has no password (a new data dir's root has none), with one stderr
//! line, before the data dir is created or any account is written; a user created over MySQL
//! (mysql CLI) survives a restart and logs in on both ports.

use crate::harness::TestServer;
use crate::resp_client::{Reply, RespClient};
use crate::tools::{ToolOutput, require, run};
use std::process::Command;
use std::time::Duration;

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

fn mysql_cli(
    addr: std::net::SocketAddr,
    user: &str,
    password: Option<&str>,
    sql: &str,
) -> ToolOutput {
    let mut command = Command::new("mysql");
    command
        .arg("-h")
        .arg(addr.ip().to_string())
        .arg("-P")
        .arg(addr.port().to_string())
        .arg("-u")
        .arg(user)
        .arg("--batch")
        .arg("-e")
        .arg(sql);
    if let Some(p) = password {
        command.arg(format!("-p{p}"));
    }
    run(command, b"", Duration::from_secs(30))
}

#[test]
fn a_user_created_over_mysql_logs_in_on_both_ports_and_survives_a_restart() {
    require(
        "mysql",
        &["--version"],
        "a MySQL/MariaDB client (mariadb-client)",
    );
    let mut server = TestServer::start();
    mysql_cli(
        server.mysql_addr(),
        "root",
        None,
        "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'; GRANT ALL ON shop.* TO app",
    )
    .assert_success("CREATE USER");
    // The statements' OKs came after durable commits: a kill -9 loses nothing.
    server.kill9();
    server.restart();
    let out = mysql_cli(server.mysql_addr(), "app", Some("app-pw"), "SHOW GRANTS");
    out.assert_success("mysql as app");
    assert_eq!(
        out.stdout,
        "Grants for app@%\nGRANT USAGE ON *.* TO `app`@`%`\nGRANT ALL PRIVILEGES ON `shop`.* TO `app`@`%`\n"
    );
    let out = mysql_cli(server.mysql_addr(), "app", Some("wrong"), "SELECT 1");
    assert!(!out.status.success());
    assert!(
        out.stderr.contains(
            "ERROR 1045 (28000): Access denied for user 'app'@'127.0.0.1' (using password: YES)"
        ),
        "{}",
        out.stderr
    );
    let mut resp = RespClient::connect(server.resp_addr()).unwrap();
    let wrongpass =
        Reply::Error("WRONGPASS invalid username-password pair or user is disabled.".into());
    assert_eq!(resp.cmd(&["AUTH", "app", "wrong"]).unwrap(), wrongpass);
    assert_eq!(
        resp.cmd(&["AUTH", "app", "app-pw"]).unwrap(),
        Reply::Simple("OK".into())
    );
    assert_eq!(
        resp.cmd(&["AUTH", "app:app-pw"]).unwrap(),
        Reply::Simple("OK".into())
    );
    assert_eq!(resp.cmd(&["AUTH", "app:wrong"]).unwrap(), wrongpass);
    assert_eq!(server.stop().code(), Some(0));
}
