//! redis-cli against the real server: piped commands, `-x` with a 1 MiB value from stdin,
//! `--scan --pattern`, RESP3 (`-3`), error replies, and the interactive prompt driven through tmux
//! as a person would type.

use crate::harness::TestServer;
use crate::resp_client::{Reply, RespClient};
use crate::tools::{ToolOutput, redis_cli, require, require_redis_tools, run};
use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

const CLI_TIMEOUT: Duration = Duration::from_secs(30);

fn cli(addr: SocketAddr, args: &[&str], stdin: &[u8]) -> ToolOutput {
    let out = run(redis_cli(addr, args), stdin, CLI_TIMEOUT);
    out.assert_success(&format!("redis-cli {}", args.join(" ")));
    out
}

#[test]
fn resp_redis_cli_piped_commands() {
    require_redis_tools();
    let server = TestServer::start();
    let script = "SET a 1\nGET a\nINCR a\nHSET h f v\nHGETALL h\nGET missing\nNOSUCH x\nGET a\n";
    let out = cli(server.resp_addr(), &[], script.as_bytes());
    // Piped (non-TTY) output is raw: one line per string, a blank line for nil, and (as with
    // Redis 7) an error line followed by a blank line.
    let expected = "OK\n1\n2\n1\nf\nv\n\n\
                    ERR unknown command 'NOSUCH', with args beginning with: 'x' \n\n2\n";
    assert_eq!(out.stdout, expected, "stderr:\n{}", out.stderr);
}

#[test]
fn resp_redis_cli_sends_a_1mib_value_from_stdin() {
    require_redis_tools();
    let server = TestServer::start();
    // 1 MiB of printable bytes with no trailing newline, so `-x` must pass it through unchanged.
    let value: Vec<u8> = (0..1024 * 1024)
        .map(|i: u32| b'a' + (i * 7 % 26) as u8)
        .collect();
    let out = cli(server.resp_addr(), &["-x", "SET", "big"], &value);
    assert_eq!(out.stdout, "OK\n");
    let mut client = RespClient::connect(server.resp_addr()).unwrap();
    assert_eq!(
        client.cmd(&["STRLEN", "big"]).unwrap(),
        Reply::Integer(1024 * 1024)
    );
    assert_eq!(
        client.cmd(&["GET", "big"]).unwrap(),
        Reply::Bulk(Some(value))
    );
}

#[test]
fn resp_redis_cli_scan_with_pattern() {
    require_redis_tools();
    let server = TestServer::start();
    let mut client = RespClient::connect(server.resp_addr()).unwrap();
    let mut mset = vec!["MSET".to_string()];
    for i in 0..300 {
        mset.extend([
            format!("user:{i}"),
            "x".into(),
            format!("other:{i}"),
            "y".into(),
        ]);
    }
    let args: Vec<&str> = mset.iter().map(String::as_str).collect();
    assert_eq!(client.cmd(&args).unwrap(), Reply::Simple("OK".into()));
    let out = cli(server.resp_addr(), &["--scan", "--pattern", "user:*"], b"");
    let mut found: Vec<&str> = out.stdout.lines().collect();
    found.sort_unstable();
    let mut expected: Vec<String> = (0..300).map(|i| format!("user:{i}")).collect();
    expected.sort_unstable();
    assert_eq!(found, expected);
}

#[test]
fn resp_redis_cli_resp3_and_error_replies() {
    require_redis_tools();
    let server = TestServer::start();
    let addr = server.resp_addr();
    cli(addr, &["HSET", "h", "f", "v"], b"");
    // RESP2 shows an array, RESP3 (-3) a map: the server must have switched protocols.
    let resp2 = cli(addr, &["--no-raw", "HGETALL", "h"], b"");
    assert_eq!(resp2.stdout, "1) \"f\"\n2) \"v\"\n");
    let resp3 = cli(addr, &["-3", "--no-raw", "HGETALL", "h"], b"");
    assert_eq!(resp3.stdout, "1# \"f\" => \"v\"\n");
    let hello = cli(addr, &["-3", "--no-raw", "HELLO", "3"], b"");
    assert!(
        hello.stdout.contains("\"proto\" => (integer) 3"),
        "{}",
        hello.stdout
    );
    let ttl = cli(addr, &["-3", "--no-raw", "TTL", "h"], b"");
    assert_eq!(ttl.stdout, "(integer) -1\n");

    let error = cli(addr, &["--no-raw", "INCR", "h"], b"");
    assert_eq!(
        error.stdout,
        "(error) WRONGTYPE Operation against a key holding the wrong kind of value\n"
    );
    let arity = cli(addr, &["--no-raw", "GET"], b"");
    assert_eq!(
        arity.stdout,
        "(error) ERR wrong number of arguments for 'get' command\n"
    );
}

/// A tmux server on a private socket, killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .args(["-L", &self.socket])
            .env("TERM", "xterm-256color");
        command
    }

    fn tmux(&self, args: &[&str]) -> String {
        let mut command = self.command();
        command.args(args);
        let out = run(command, b"", CLI_TIMEOUT);
        out.assert_success(&format!("tmux {}", args.join(" ")));
        out.stdout
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "cli"])
    }

    /// Types `line` and Enter, then waits until the screen shows `expected` once more than
    /// before.
    fn type_line(&self, line: &str, expected: &str) {
        let seen = self.screen().matches(expected).count();
        self.tmux(&["send-keys", "-t", "cli", "-l", line]);
        self.tmux(&["send-keys", "-t", "cli", "Enter"]);
        self.wait_for(expected, seen + 1);
    }

    /// Waits until the screen shows `expected` at least `times` times.
    fn wait_for(&self, expected: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let screen = self.screen();
            if screen.matches(expected).count() >= times {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the redis-cli screen never showed {expected:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

#[test]
fn resp_redis_cli_interactive_session() {
    require_redis_tools();
    require("tmux", &["-V"], "the Debian package tmux");
    let server = TestServer::start();
    let addr = server.resp_addr();
    let tmux = Tmux {
        socket: format!("orcinus-test-{}", std::process::id()),
    };
    let shell = format!("redis-cli -h {} -p {}", addr.ip(), addr.port());
    tmux.tmux(&[
        "new-session",
        "-d",
        "-s",
        "cli",
        "-x",
        "150",
        "-y",
        "40",
        &shell,
    ]);
    let prompt = format!("{addr}>");
    tmux.wait_for(&prompt, 1);
    tmux.type_line("SET greeting hello", "OK");
    tmux.type_line("GET greeting", "\"hello\"");
    tmux.type_line("HSET h f v", "(integer) 1");
    tmux.type_line("HGETALL h", "2) \"v\"");
    tmux.type_line("NOSUCH arg", "(error) ERR unknown command 'NOSUCH'");
    tmux.type_line("TTL greeting", "(integer) -1");
    tmux.type_line("HELLO 3", "proto");
    tmux.type_line("HGETALL h", "1# \"f\" => \"v\"");
    let screen = tmux.screen();
    assert!(
        !screen.contains("Could not connect") && !screen.contains("Error:"),
        "{screen}"
    );
}
