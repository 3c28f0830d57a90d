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

/// Runs a client suite against `server`; it must exit 0, `completed` must hold for its stdout
/// (it ran its tests and skipped none), and the server must log no problem meanwhile.
fn run_suite(server: &TestServer, suite: Command, what: &str, completed: impl Fn(&str) -> bool) {
    let out = run(suite, b"", CLIENT_TIMEOUT);
    out.assert_success(what);
    assert!(
        completed(&out.stdout),
        "{what} ran no test, skipped some or did not finish:\n{}",
        out.stdout
    );
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
    run_suite(&server, pytest, "pytest test_mysql_drivers.py", |out| {
        out.contains(" passed") && !out.contains("skipped")
    });
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
    run_suite(&server, java, "the Connector/J check", |out| {
        out.lines().any(|l| l == "ok all")
    });
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
    run_suite(&server, go, "go test (go-sql-driver/mysql)", |out| {
        out.contains("--- PASS") && !out.contains("--- SKIP")
    });
}
