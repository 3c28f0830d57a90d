//! The test-server harness: starts the real `orcinus` binary on port 0 with its own temporary
//! data dir, reads the two printed listening lines, waits until both ports accept TCP, and can
//! SIGKILL, SIGTERM and restart it on the same data dir.
//!
//! Invariants:
//! - Every server gets `--config <file> --mysql-port 0 --redis-port 0 --data-dir <dir>` first;
//!   arguments given with [`TestServerBuilder::arg`] come after and so win (the CLI keeps the last
//!   value of a repeated flag).
//! - Start-up waits at most [`START_TIMEOUT`]; if the process exits first the failure carries its
//!   captured stderr. Dropping a [`TestServer`] SIGKILLs the process and then removes its
//!   temporary directory.
//! - stdout and stderr are drained by threads for the life of the process, so it never blocks on
//!   a full pipe; stderr is kept for [`TestServer::stderr`] and printed if a test panics.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// How long a server may take to print its listening lines and accept connections.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server may take to exit after a signal, or a failing start to exit.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the harness's own `cargo build -p orcinus` may take (a cold build on 2 cores).
const BUILD_TIMEOUT: Duration = Duration::from_secs(900);

/// Settings for test servers unless a test gives its own: the defaults with tiny engine caches,
/// like `Config::for_test`, so memtable flushes and compactions happen in tests.
pub const TEST_CONFIG: &str = "\
[server]
log_level = \"info\"
[storage]
cache_size_bytes = 1048576
memtable_bytes = 262144
large_value_memtable_bytes = 262144
point_cache_bytes = 65536
lock_wait_timeout_ms = 2000
";

/// The `orcinus` executable, freshly built.
///
/// `ORCINUS_BIN` overrides. Otherwise cargo does not build another package's binary for this
/// test crate (`CARGO_BIN_EXE_*` exists only inside the bin's own package), so the first call
/// runs `cargo build -p orcinus` into the target dir this test binary lives in — a no-op when
/// the binary is fresh, as after `cargo build --workspace --all-targets`.
pub fn orcinus_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(path) = std::env::var_os("ORCINUS_BIN") {
            return PathBuf::from(path);
        }
        let test_exe = std::env::current_exe().expect("path of the test binary");
        // <target>/<profile>/deps/<test-binary>
        let profile_dir = test_exe
            .parent()
            .and_then(Path::parent)
            .expect("test binary lives in <target>/<profile>/deps");
        let binary = profile_dir.join("orcinus");
        build_orcinus(profile_dir);
        assert!(
            binary.is_file(),
            "{} not found; build it with `cargo build -p orcinus`",
            binary.display()
        );
        binary
    })
}

fn build_orcinus(profile_dir: &Path) {
    let Some(target_dir) = profile_dir.parent() else {
        return;
    };
    if !target_dir.join("CACHEDIR.TAG").is_file() {
        // Cross-compiled layout (<target>/<triple>/<profile>): rely on an existing binary.
        return;
    }
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => return,
    };
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives in the workspace");
    let mut build = Command::new(env!("CARGO"))
        .current_dir(workspace)
        .args(["build", "--quiet", "-p", "orcinus", "--bin", "orcinus"])
        .args(["--profile", profile])
        .arg("--target-dir")
        .arg(target_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cargo build -p orcinus");
    let stderr = drain_to_buffer(build.stderr.take().expect("piped stderr"));
    let Some(status) = wait_with_timeout(&mut build, BUILD_TIMEOUT) else {
        let _ = build.kill();
        let _ = build.wait();
        panic!(
            "cargo build -p orcinus took over {BUILD_TIMEOUT:?} (a held build lock?); \
             build it first or set ORCINUS_BIN:\n{}",
            stderr.join()
        )
    };
    assert!(
        status.success(),
        "cargo build -p orcinus failed:\n{}",
        stderr.join()
    );
}

/// What a process that ran to completion left behind.
#[derive(Debug)]
pub struct ExitOutput {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it printed to stdout.
    pub stdout: String,
    /// Everything it printed to stderr.
    pub stderr: String,
}

impl ExitOutput {
    /// The non-empty stderr lines.
    pub fn stderr_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect()
    }
}

/// Runs `orcinus` with exactly `args` (no harness defaults) until it exits.
pub fn run_orcinus<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> ExitOutput {
    let mut command = Command::new(orcinus_binary());
    command.args(args);
    run_to_exit(command)
}

fn run_to_exit(mut command: Command) -> ExitOutput {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn orcinus");
    let stdout = drain_to_buffer(child.stdout.take().expect("piped stdout"));
    let stderr = drain_to_buffer(child.stderr.take().expect("piped stderr"));
    let Some(status) = wait_with_timeout(&mut child, EXIT_TIMEOUT) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "orcinus did not exit within {EXIT_TIMEOUT:?}; stderr:\n{}",
            stderr.join()
        )
    };
    ExitOutput {
        status,
        stdout: stdout.join(),
        stderr: stderr.join(),
    }
}

/// A background thread reading a pipe to its end into a shared buffer.
struct DrainedPipe {
    buffer: Arc<Mutex<Vec<u8>>>,
    thread: Option<JoinHandle<()>>,
}

impl DrainedPipe {
    /// What was read so far.
    fn snapshot(&self) -> String {
        String::from_utf8_lossy(&self.buffer.lock().expect("pipe buffer")).into_owned()
    }

    /// Waits for the pipe's end (the process has exited) and returns everything read.
    fn join(mut self) -> String {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.snapshot()
    }
}

fn drain_to_buffer(mut pipe: impl Read + Send + 'static) -> DrainedPipe {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buffer);
    let thread = std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            sink.lock()
                .expect("pipe buffer")
                .extend_from_slice(&chunk[..n]);
        }
    });
    DrainedPipe {
        buffer,
        thread: Some(thread),
    }
}

/// Sends stdout lines to a channel; the channel disconnects at end of file.
fn stdout_lines(pipe: impl Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                // Nobody listens any more; keep draining so the server never blocks.
                continue;
            }
        }
    });
    receiver
}

fn wait_with_timeout(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("poll orcinus") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Configures a [`TestServer`] before starting it.
#[derive(Debug, Default)]
pub struct TestServerBuilder {
    config: Option<String>,
    args: Vec<OsString>,
    data_dir: Option<PathBuf>,
}

impl TestServerBuilder {
    /// Uses `toml` as the config file instead of [`TEST_CONFIG`].
    pub fn config(mut self, toml: &str) -> Self {
        self.config = Some(toml.to_string());
        self
    }

    /// Appends a command-line argument (after the harness defaults, so it wins).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Uses an existing data dir (e.g. another server's) instead of a fresh temporary one.
    pub fn data_dir(mut self, dir: &Path) -> Self {
        self.data_dir = Some(dir.to_path_buf());
        self
    }

    /// Starts the server; panics with the captured stderr if it does not come up.
    pub fn start(self) -> TestServer {
        self.try_start().unwrap_or_else(|err| panic!("{err}"))
    }

    /// Starts the server; the error names what happened and carries the captured stderr.
    pub fn try_start(self) -> Result<TestServer, String> {
        let (temp, launch) = self.prepare();
        let process = launch.spawn()?;
        Ok(TestServer {
            process: Some(process),
            launch,
            _temp: temp,
        })
    }

    /// Runs the server with the harness defaults and expects it to exit by itself (a failing
    /// start); panics if it is still running after [`EXIT_TIMEOUT`].
    pub fn run_to_exit(self) -> ExitOutput {
        let (_temp, launch) = self.prepare();
        run_to_exit(launch.command())
    }

    fn prepare(self) -> (TempDir, Launch) {
        let temp = tempfile::Builder::new()
            .prefix("orcinus-test-")
            .tempdir()
            .expect("create temp dir");
        let config_file = temp.path().join("orcinus.toml");
        let config = self.config.as_deref().unwrap_or(TEST_CONFIG);
        std::fs::write(&config_file, config).expect("write config file");
        let data_dir = self.data_dir.unwrap_or_else(|| temp.path().join("data"));
        let mut args: Vec<OsString> = vec!["--config".into(), config_file.into_os_string()];
        args.extend(["--mysql-port", "0", "--redis-port", "0"].map(OsString::from));
        args.push("--data-dir".into());
        args.push(data_dir.clone().into_os_string());
        args.extend(self.args);
        (temp, Launch { args, data_dir })
    }
}

/// How to (re)start the process.
#[derive(Debug)]
struct Launch {
    args: Vec<OsString>,
    data_dir: PathBuf,
}

/// A live `orcinus` process and what it printed.
struct RunningProcess {
    child: Child,
    mysql_addr: SocketAddr,
    resp_addr: SocketAddr,
    stderr: DrainedPipe,
}

impl Launch {
    fn command(&self) -> Command {
        let mut command = Command::new(orcinus_binary());
        command.args(&self.args);
        command
    }

    fn spawn(&self) -> Result<RunningProcess, String> {
        let mut child = self
            .command()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot spawn {}: {e}", orcinus_binary().display()))?;
        let lines = stdout_lines(child.stdout.take().expect("piped stdout"));
        let stderr = drain_to_buffer(child.stderr.take().expect("piped stderr"));
        match read_listening_lines(&lines) {
            Ok((mysql_addr, resp_addr)) => {
                wait_until_accepting(&[mysql_addr, resp_addr]).map_err(|e| {
                    let _ = child.kill();
                    let _ = child.wait();
                    format!("{e}; stderr:\n{}", stderr.snapshot())
                })?;
                Ok(RunningProcess {
                    child,
                    mysql_addr,
                    resp_addr,
                    stderr,
                })
            }
            Err(problem) => {
                let status = match wait_with_timeout(&mut child, Duration::from_secs(2)) {
                    Some(status) => status.to_string(),
                    None => {
                        let _ = child.kill();
                        let _ = child.wait();
                        "still running, killed".to_string()
                    }
                };
                Err(format!(
                    "orcinus did not start: {problem} ({status}); stderr:\n{}",
                    stderr.join()
                ))
            }
        }
    }
}

/// Reads `mysql listening on ADDR` and `redis listening on ADDR` from stdout.
fn read_listening_lines(lines: &Receiver<String>) -> Result<(SocketAddr, SocketAddr), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    let (mut mysql, mut resp) = (None, None);
    while mysql.is_none() || resp.is_none() {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let line = match lines.recv_timeout(remaining) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!("no listening lines within {START_TIMEOUT:?}"));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err("stdout closed before both listening lines".into());
            }
        };
        let parse = |rest: &str| {
            rest.parse::<SocketAddr>()
                .map_err(|e| format!("bad address in {line:?}: {e}"))
        };
        if let Some(rest) = line.strip_prefix("mysql listening on ") {
            mysql = Some(parse(rest)?);
        } else if let Some(rest) = line.strip_prefix("redis listening on ") {
            resp = Some(parse(rest)?);
        } else {
            return Err(format!("unexpected stdout line {line:?}"));
        }
    }
    match (mysql, resp) {
        (Some(mysql), Some(resp)) => Ok((mysql, resp)),
        _ => Err("listening lines incomplete".into()),
    }
}

fn wait_until_accepting(addrs: &[SocketAddr]) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    for addr in addrs {
        while let Err(e) = TcpStream::connect_timeout(addr, Duration::from_millis(500)) {
            if Instant::now() >= deadline {
                return Err(format!("{addr} does not accept connections: {e}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Ok(())
}

/// A running `orcinus` server owned by a test.
pub struct TestServer {
    process: Option<RunningProcess>,
    launch: Launch,
    _temp: TempDir,
}

impl TestServer {
    /// Starts a server with the defaults; panics with its stderr if it does not come up.
    pub fn start() -> Self {
        Self::builder().start()
    }

    /// A builder for a server with its own config or arguments.
    pub fn builder() -> TestServerBuilder {
        TestServerBuilder::default()
    }

    fn running(&self) -> &RunningProcess {
        self.process
            .as_ref()
            .expect("the server is not running (killed or stopped)")
    }

    /// Address of the MySQL-protocol listener.
    pub fn mysql_addr(&self) -> SocketAddr {
        self.running().mysql_addr
    }

    /// Address of the RESP listener.
    pub fn resp_addr(&self) -> SocketAddr {
        self.running().resp_addr
    }

    /// The server's data directory.
    pub fn data_dir(&self) -> &Path {
        &self.launch.data_dir
    }

    /// Everything the current process printed to stderr so far.
    pub fn stderr(&self) -> String {
        self.process
            .as_ref()
            .map(|p| p.stderr.snapshot())
            .unwrap_or_default()
    }

    /// Sends SIGKILL and waits for the process to exit.
    pub fn kill9(&mut self) {
        let mut process = self
            .process
            .take()
            .expect("kill9 on a server that is not running");
        process.child.kill().expect("SIGKILL orcinus");
        process.child.wait().expect("wait for orcinus");
    }

    /// Starts the server again on the same data dir and config (port 0 again, new addresses).
    pub fn restart(&mut self) {
        assert!(
            self.process.is_none(),
            "restart() needs the server stopped first (kill9 or stop)"
        );
        self.process = Some(self.launch.spawn().unwrap_or_else(|err| panic!("{err}")));
    }

    /// Sends SIGTERM and waits for the process to exit.
    pub fn stop(&mut self) -> ExitStatus {
        self.stop_with_signal("TERM")
    }

    /// Sends the named signal (`TERM`, `INT` …) and waits for the process to exit.
    pub fn stop_with_signal(&mut self, signal: &str) -> ExitStatus {
        let mut process = self
            .process
            .take()
            .expect("stop on a server that is not running");
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(process.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -{signal} failed");
        wait_with_timeout(&mut process.child, EXIT_TIMEOUT).unwrap_or_else(|| {
            let _ = process.child.kill();
            let _ = process.child.wait();
            panic!(
                "orcinus did not exit within {EXIT_TIMEOUT:?} of SIG{signal}; stderr:\n{}",
                process.stderr.snapshot()
            )
        })
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = process.child.kill();
            let _ = process.child.wait();
            if std::thread::panicking() {
                eprintln!("orcinus stderr:\n{}", process.stderr.snapshot());
            }
        }
    }
}
