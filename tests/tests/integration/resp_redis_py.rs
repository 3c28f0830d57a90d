//! redis-py (RESP2 and RESP3) against the real server: runs the pytest suite in `tests/clients`
//! in two phases around a kill -9 and restart on the same data dir, so the second phase can check
//! that data and TTLs written in the first survived.

use crate::harness::TestServer;
use crate::tools::{clients_dir, logged_problems, require, run};
use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

const PYTEST_TIMEOUT: Duration = Duration::from_secs(300);

fn pytest(addr: SocketAddr, marker: &str) -> Command {
    let mut command = Command::new("python3");
    command
        .current_dir(clients_dir())
        .args(["-m", "pytest", "-q", "-m", marker, "test_redis_py.py"])
        .env("ORCINUS_RESP_ADDR", addr.to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    command
}

#[test]
fn resp_redis_py() {
    require(
        "python3",
        &["-c", "import redis, pytest"],
        "python3 with the PyPI packages redis and pytest",
    );
    let mut server = TestServer::start();
    let before = run(
        pytest(server.resp_addr(), "not after_restart"),
        b"",
        PYTEST_TIMEOUT,
    );
    before.assert_success("pytest phase 1 (everything but after_restart)");
    assert!(
        before.stdout.contains(" passed") && !before.stdout.contains("skipped"),
        "phase 1 ran no test or skipped some:\n{}",
        before.stdout
    );

    let problems = logged_problems(&server.stderr()).join("\n");
    assert!(
        problems.is_empty(),
        "server logged problems in phase 1:\n{problems}"
    );

    server.kill9();
    server.restart();
    let after = run(
        pytest(server.resp_addr(), "after_restart"),
        b"",
        PYTEST_TIMEOUT,
    );
    after.assert_success("pytest phase 2 (after_restart, after kill -9 and restart)");
    assert!(
        after.stdout.lines().any(|l| l.starts_with("2 passed")),
        "phase 2 should run the after_restart test in both protocols:\n{}",
        after.stdout
    );
    let problems = logged_problems(&server.stderr()).join("\n");
    assert!(
        problems.is_empty(),
        "server logged problems in phase 2:\n{problems}"
    );
}
