//! Running external client tools (redis-cli, redis-benchmark, python3 drivers, java, go, tmux) from the
//! real-client tests: every run has a timeout, captures stdout and stderr, and can feed stdin.
//!
//! Invariant: a missing tool FAILS the test with the package to install (`.ci/run` installs them
//! all); no test skips silently.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a finished tool run left behind.
#[derive(Debug)]
pub struct ToolOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl ToolOutput {
    /// Panics with the tool's output unless it exited 0.
    pub fn assert_success(&self, what: &str) -> &Self {
        assert!(
            self.status.success(),
            "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Fails the test unless `program` runs (`program probe…` exits 0), naming what to install.
pub fn require(program: &str, probe: &[&str], install: &str) {
    let found = Command::new(program)
        .args(probe)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "`{program} {}` does not run: install {install} (bash .ci/run installs every tool the \
         tests need)",
        probe.join(" ")
    );
}

/// Fails the test unless redis-cli and redis-benchmark are installed.
pub fn require_redis_tools() {
    require(
        "redis-cli",
        &["--version"],
        "the Debian package redis-tools",
    );
    require(
        "redis-benchmark",
        &["--version"],
        "the Debian package redis-tools",
    );
}

/// Runs `command` to completion with `stdin` as its input; panics after `timeout`.
pub fn run(mut command: Command, stdin: &[u8], timeout: Duration) -> ToolOutput {
    let description = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {description}: {e}"));
    let mut input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let stdout = reader(child.stdout.take().expect("piped stdout"));
    let stderr = reader(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll child") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{description} did not finish within {timeout:?}; stdout:\n{}\nstderr:\n{}",
                stdout.join().unwrap_or_default(),
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = feeder.join();
    ToolOutput {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

fn reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// `redis-cli -h HOST -p PORT` followed by `args`.
pub fn redis_cli(addr: std::net::SocketAddr, args: &[&str]) -> Command {
    let mut command = Command::new("redis-cli");
    command
        .arg("-h")
        .arg(addr.ip().to_string())
        .arg("-p")
        .arg(addr.port().to_string())
        .args(args);
    command
}

/// The folder of the Python client tests (`tests/clients`).
pub fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients")
}

/// Server log lines at WARN or ERROR level (the tracing format prints the level as a word).
pub fn logged_problems(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR ") || l.contains("panicked"))
        .collect()
}
