//! MySQL drivers against the real server: PyMySQL and mysql-connector-python (pytest suite
//! `tests/clients/test_mysql_drivers.py`), Connector/J (`tests/clients/java/ConnectorJCheck.java`,
//! a single-file program) and go-sql-driver/mysql (`tests/clients/go`). Each connects as root,
//! runs plain and prepared statements and transactions, and checks error numbers.
//!
//! Invariant: a missing driver or runtime FAILS the test naming what to install (`.ci/run`
//! installs them all); nothing is skipped silently.

use crate::harness::TestServer;
use crate::tools::{clients_dir, logged_problems, require, run};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// Connector/J version `.ci/run` fetches into the local Maven repository.
const CONNECTOR_J_VERSION: &str = "9.5.0";
const CLIENT_TIMEOUT: Duration = Duration::from_secs(600);

fn assert_quiet_server(server: &TestServer, what: &str) {
    let problems = logged_problems(&server.stderr()).join("\n");
    assert!(
        problems.is_empty(),
        "server logged problems during {what}:\n{problems}"
    );
}

#[test]
fn mysql_python_drivers() {
    require(
        "python3",
        &["-c", "import pymysql, mysql.connector, pytest"],
        "python3 with the PyPI packages PyMySQL, mysql-connector-python and pytest",
    );
    let server = TestServer::start();
    let mut pytest = Command::new("python3");
    pytest
        .current_dir(clients_dir())
        .args(["-m", "pytest", "-q", "test_mysql_drivers.py"])
        .env("ORCINUS_MYSQL_ADDR", server.mysql_addr().to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let out = run(pytest, b"", CLIENT_TIMEOUT);
    out.assert_success("pytest test_mysql_drivers.py");
    assert!(
        out.stdout.contains(" passed") && !out.stdout.contains("skipped"),
        "the driver suite ran no test or skipped some:\n{}",
        out.stdout
    );
    assert_quiet_server(&server, "the Python driver suite");
}

/// The Connector/J jar: `ORCINUS_CONNECTOR_J_JAR`, else where `mvn dependency:get` puts it.
fn connector_j_jar() -> PathBuf {
    if let Some(jar) = std::env::var_os("ORCINUS_CONNECTOR_J_JAR") {
        return PathBuf::from(jar);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    home.join(".m2/repository/com/mysql/mysql-connector-j")
        .join(CONNECTOR_J_VERSION)
        .join(format!("mysql-connector-j-{CONNECTOR_J_VERSION}.jar"))
}

#[test]
fn mysql_connector_j() {
    require("java", &["-version"], "a JDK (Debian default-jdk-headless)");
    let jar = connector_j_jar();
    assert!(
        jar.is_file(),
        "{} is missing: run `mvn dependency:get -Dartifact=com.mysql:mysql-connector-j:{CONNECTOR_J_VERSION}` \
         (bash .ci/run does)",
        jar.display()
    );
    let server = TestServer::start();
    let mut java = Command::new("java");
    java.current_dir(clients_dir().join("java"))
        .arg("-cp")
        .arg(&jar)
        .arg("ConnectorJCheck.java")
        .arg(server.mysql_addr().to_string());
    let out = run(java, b"", CLIENT_TIMEOUT);
    out.assert_success("Connector/J check");
    assert!(
        out.stdout.lines().any(|l| l == "ok all"),
        "the Connector/J check did not finish:\n{}",
        out.stdout
    );
    assert_quiet_server(&server, "the Connector/J check");
}

#[test]
fn mysql_go_driver() {
    require(
        "go",
        &["version"],
        "Go (https://go.dev/dl or Debian golang-go)",
    );
    let server = TestServer::start();
    let mut go = Command::new("go");
    go.current_dir(clients_dir().join("go"))
        .args(["test", "-count=1", "-v", "./..."])
        .env("ORCINUS_MYSQL_ADDR", server.mysql_addr().to_string());
    let out = run(go, b"", CLIENT_TIMEOUT);
    out.assert_success("go test (go-sql-driver/mysql)");
    assert!(
        out.stdout.contains("--- PASS") && !out.stdout.contains("--- SKIP"),
        "the Go suite ran no test or skipped some:\n{}",
        out.stdout
    );
    assert_quiet_server(&server, "the Go driver suite");
}
