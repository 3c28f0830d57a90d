//! RESP conversation scripts (sqllogictest for the Redis port): every `tests/resp/*.txt` file
//! is run over real TCP connections against the real server, under RESP2 and under RESP3.
//!
//! - `ORCINUS_RESP_ADDR=host:port` runs the files against another server instead (real Redis,
//!   to check that the expected replies are Redis's): e.g.
//!   `redis-server --port 16379 --save '' --appendonly no --enable-debug-command yes`.
//!   Files marked `#! since X.Y` are skipped when that server's `redis_version` is older.
//! - `ORCINUS_RESP_COMPLETE=1` (with `ORCINUS_RESP_ADDR`) rewrites each file's expected replies
//!   from the reference server's answers, keeping wildcards, ranges and `sorted` markers that
//!   still match; review the diff before committing it.
//! - `ORCINUS_RESP_FILTER=substring` runs only the files whose name contains it.
//!
//! Every file starts on a fresh set of connections after `FLUSHALL`. The format, one step per
//! line (blank lines and `# comments` are skipped):
//!
//! ```text
//! #! resp2 | #! resp3     the file runs under that protocol only (default: both)
//! #! since 7.4            needs Redis 7.4 (skipped against an older reference; the expected
//!                         replies then come from the Redis documentation)
//! #! requirepass PW       runs against a server that requires password PW (Orcinus: a server
//!                         of its own started with it; a reference: CONFIG SET requirepass for
//!                         the file's duration); such a file is `#! resp2`
//! > SET k "a b"           send on connection `main` and read the reply; args split as redis-cli
//! b> BLPOP q 0            the same on connection `b` (opened on first use; under RESP3 every
//!                         connection first sends HELLO 3)
//! b>> BLPOP q 0           send only …
//! b<                      … and read that reply later (a blocked client served by another)
//! sleep 150               pause, in milliseconds
//! restart                 kill -9 the server and restart it on its data dir, then reopen
//!                         every connection (against a reference: DEBUG RELOAD)
//! ```
//!
//! Each `>` or `<` step is followed by the expected reply on one line, then optionally by
//! `resp2: …` (RESP2's reply where it is not the projection below) and `orcinus: …` (a
//! deliberate difference from Redis, with a comment saying why). A QUIT step also checks that
//! the server closes the connection; the next step on that name reconnects. Replies:
//!
//! ```text
//! +OK  +"two words"      simple string          -ERR text to end of line    error
//! "bulk\r\n\x00"         bulk string            -"ERR …"                    error inside […]
//! 42  -1  10..20         integer, inclusive range
//! nil                    null bulk ($-1; _ in RESP3)   nilarray   null array (*-1; _ in RESP3)
//! ,1.5                   double (RESP2: bulk "1.5")    #t #f      boolean (RESP2: 1 / 0)
//! [a, b]                 array                  ~[a, b]       set (RESP2: array)
//! {k: v, k2: v2}         map (RESP2: flat array k, v, k2, v2)
//! =txt"…"                verbatim string (RESP2: bulk)          (123   big number
//! sorted[…] sorted~[…] sorted{…}   the same, in any order
//! *                      any one reply          glob"id=* name=?"     string matching the glob
//! ?  sorted?             not written yet: fails; completion fills it in
//! ```
//!
//! Items are separated by `, ` (a comma directly before a digit starts a double).

mod expect;
mod script;
mod wire;

use crate::harness::{TEST_CONFIG, TestServer};
use expect::{Proto, complete, exact, matches, show};
use script::{Action, Script, Step};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wire::{Connection, Value};

/// Where the files run.
enum Target {
    Orcinus(TestServer),
    Reference(SocketAddr),
}

impl Target {
    fn addr(&self) -> SocketAddr {
        match self {
            Self::Orcinus(server) => server.resp_addr(),
            Self::Reference(addr) => *addr,
        }
    }

    fn is_orcinus(&self) -> bool {
        matches!(self, Self::Orcinus(_))
    }
}

/// One open connection and the commands sent on it whose replies are still unread.
struct Conn {
    wire: Connection,
    /// The protocol its replies use (the run's, until a HELLO on it switches).
    proto: Proto,
    /// The commands sent whose replies are unread, and whether each is a HELLO to `Proto`.
    unread: VecDeque<(String, Option<Proto>)>,
}

/// The protocol a successful `HELLO n` switches to.
fn hello_proto(args: &[Vec<u8>]) -> Option<Proto> {
    match args {
        [name, version, ..] if name.eq_ignore_ascii_case(b"HELLO") => match version.as_slice() {
            b"2" => Some(Proto::Resp2),
            b"3" => Some(Proto::Resp3),
            _ => None,
        },
        _ => None,
    }
}

/// The reply of every reading step and the protocol it came in, by step index (for completion).
type Replies = HashMap<usize, (Value, Proto)>;

/// A file's run under one protocol.
struct Run<'a> {
    target: &'a mut Target,
    proto: Proto,
    file: String,
    conns: HashMap<String, Conn>,
    failures: Vec<String>,
    replies: Replies,
}

fn proto_name(proto: Proto) -> &'static str {
    match proto {
        Proto::Resp2 => "RESP2",
        Proto::Resp3 => "RESP3",
    }
}

fn open(addr: SocketAddr, proto: Proto) -> Result<Connection, String> {
    let mut wire = Connection::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
    if proto == Proto::Resp3 {
        match wire.call(&["HELLO", "3"]) {
            Ok(Value::Map(_)) => {}
            other => return Err(format!("HELLO 3 failed: {other:?}")),
        }
    }
    Ok(wire)
}

impl Run<'_> {
    fn fail(&mut self, step: &Step, what: String) {
        self.failures.push(format!(
            "{}:{} [{}] {}\n    {what}",
            self.file,
            step.line,
            proto_name(self.proto),
            step.text
        ));
    }

    fn conn(&mut self, name: &str) -> Result<&mut Conn, String> {
        if !self.conns.contains_key(name) {
            let wire = open(self.target.addr(), self.proto)?;
            self.conns.insert(
                name.to_string(),
                Conn {
                    wire,
                    proto: self.proto,
                    unread: VecDeque::new(),
                },
            );
        }
        self.conns
            .get_mut(name)
            .ok_or_else(|| "connection vanished".to_string())
    }

    fn restart(&mut self) -> Result<(), String> {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        self.conns.clear();
        match self.target {
            Target::Orcinus(server) => {
                server.kill9();
                server.restart();
            }
            Target::Reference(addr) => {
                let mut admin = open(*addr, Proto::Resp2)?;
                let reply = admin
                    .call(&["DEBUG", "RELOAD"])
                    .map_err(|e| e.to_string())?;
                if reply != Value::Simple("OK".into()) {
                    return Err(format!("DEBUG RELOAD: {reply:?}"));
                }
            }
        }
        for name in names {
            self.conn(&name)?;
        }
        Ok(())
    }

    /// Runs one step; returns the reply of a reading step and the protocol it came in.
    fn act(&mut self, step: &Step) -> Result<Option<(Value, Proto)>, String> {
        match &step.action {
            Action::Sleep(ms) => {
                std::thread::sleep(Duration::from_millis(*ms));
                Ok(None)
            }
            Action::Restart => self.restart().map(|()| None),
            Action::Send { conn, args, read } => {
                let c = self.conn(conn)?;
                c.wire.send(args).map_err(|e| format!("send: {e}"))?;
                c.unread.push_back((step.text.clone(), hello_proto(args)));
                if *read {
                    self.recv(
                        conn,
                        args.first()
                            .is_some_and(|a| a.eq_ignore_ascii_case(b"QUIT")),
                    )
                    .map(Some)
                } else {
                    Ok(None)
                }
            }
            Action::Recv { conn } => self.recv(conn, false).map(Some),
        }
    }

    fn recv(&mut self, name: &str, quit: bool) -> Result<(Value, Proto), String> {
        let c = self.conn(name)?;
        let (sent, hello) = c
            .unread
            .pop_front()
            .ok_or("no reply is pending on this connection")?;
        let value = c
            .wire
            .read()
            .map_err(|e| format!("reading the reply to {sent:?}: {e}"))?;
        // A successful HELLO answers in the protocol it switches to.
        if let Some(new) = hello
            && !matches!(value, Value::Error(_))
        {
            c.proto = new;
        }
        let proto = c.proto;
        if quit {
            let closed = c.wire.is_closed();
            self.conns.remove(name);
            if !closed {
                return Err("the server did not close the connection after QUIT".into());
            }
        }
        Ok((value, proto))
    }

    fn run(&mut self, script: &Script) {
        for (index, step) in script.steps.iter().enumerate() {
            match self.act(step) {
                Err(e) => {
                    self.fail(step, e);
                    if matches!(step.action, Action::Restart) {
                        return;
                    }
                    // The connection's state is unknown now; the next step reopens it.
                    if let Action::Send { conn, .. } | Action::Recv { conn } = &step.action {
                        self.conns.remove(conn);
                    }
                }
                Ok(None) => {}
                Ok(Some((value, proto))) => {
                    let expected = step.expect.pick(self.proto, self.target.is_orcinus());
                    if let Some(exp) = expected
                        && !matches(exp, &value, proto)
                    {
                        let what = format!(
                            "expected {}\n         got {}",
                            show(exp, true),
                            show(&exact(&value), true)
                        );
                        self.fail(step, what);
                    }
                    self.replies.insert(index, (value, proto));
                }
            }
        }
    }
}

/// A RESP2 connection, authenticated with `password` if there is one.
fn admin(addr: SocketAddr, password: Option<&str>) -> Result<Connection, String> {
    let mut admin = open(addr, Proto::Resp2)?;
    if let Some(password) = password {
        match admin.call(&["AUTH", password]) {
            Ok(Value::Simple(ok)) if ok == "OK" => {}
            other => return Err(format!("AUTH failed: {other:?}")),
        }
    }
    Ok(admin)
}

fn flushall(addr: SocketAddr, password: Option<&str>) -> Result<(), String> {
    let mut admin = admin(addr, password)?;
    match admin.call(&["FLUSHALL"]) {
        Ok(Value::Simple(ok)) if ok == "OK" => Ok(()),
        other => Err(format!("FLUSHALL failed: {other:?}")),
    }
}

/// The reference server's `redis_version` as (major, minor).
fn reference_version(addr: SocketAddr) -> Option<(u32, u32)> {
    let mut admin = open(addr, Proto::Resp2).ok()?;
    let Ok(Value::Bulk(info)) = admin.call(&["INFO", "server"]) else {
        return None;
    };
    let info = String::from_utf8_lossy(&info).into_owned();
    let version = info
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))?;
    let mut parts = version.trim().split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn script_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("resp");
    let filter = std::env::var("ORCINUS_RESP_FILTER").unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(&filter))
        })
        .collect();
    files.sort();
    files
}

/// Rewrites `path`'s expectation lines from the replies of its runs (by protocol).
///
/// A reply that came in another protocol than its run's (after a HELLO) is completed from the
/// RESP3 run only; check such lines by hand.
fn rewrite(path: &Path, script: &Script, runs: &[(Proto, Replies)]) {
    let reply = |proto: Proto, i: usize| {
        runs.iter()
            .find(|(p, _)| *p == proto)
            .and_then(|(_, r)| r.get(&i))
            .filter(|(_, came_in)| *came_in == proto)
            .map(|(value, _)| value)
    };
    let mut replace: HashMap<usize, Vec<String>> = HashMap::new();
    let mut drop: Vec<usize> = Vec::new();
    for (i, step) in script.steps.iter().enumerate() {
        let Some(main) = &step.expect.main else {
            continue;
        };
        let (v3, v2) = (reply(Proto::Resp3, i), reply(Proto::Resp2, i));
        let (primary, proto, resp2) = match (v3, v2) {
            (Some(v3), v2) => (v3, Proto::Resp3, v2),
            (None, Some(v2)) => (v2, Proto::Resp2, None),
            (None, None) => continue,
        };
        let old_resp2 = step.expect.resp2.as_ref();
        let new = complete(Some(&main.exp), primary, resp2, proto);
        let mut lines = vec![show(&new, true)];
        if let Some(v2) = resp2
            && !matches(&new, v2, Proto::Resp2)
        {
            let kept = old_resp2
                .map(|l| &l.exp)
                .filter(|e| matches(e, v2, Proto::Resp2));
            let exp = kept
                .cloned()
                .unwrap_or_else(|| complete(None, v2, None, Proto::Resp2));
            lines.push(format!("resp2: {}", show(&exp, true)));
        }
        if new == main.exp && lines.len() == 1 + usize::from(old_resp2.is_some()) {
            continue;
        }
        replace.insert(main.index, lines);
        drop.extend(old_resp2.map(|l| l.index));
    }
    if replace.is_empty() {
        return;
    }
    let mut out = String::new();
    for (i, line) in script.lines.iter().enumerate() {
        if drop.contains(&i) {
            continue;
        }
        match replace.get(&i) {
            Some(new) => new.iter().for_each(|l| {
                out.push_str(l);
                out.push('\n');
            }),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    std::fs::write(path, out).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

#[test]
fn resp_scripts() {
    let reference = std::env::var("ORCINUS_RESP_ADDR").ok().map(|a| {
        a.parse::<SocketAddr>()
            .unwrap_or_else(|e| panic!("ORCINUS_RESP_ADDR={a}: {e}"))
    });
    let completing = std::env::var_os("ORCINUS_RESP_COMPLETE").is_some();
    assert!(
        !completing || reference.is_some(),
        "ORCINUS_RESP_COMPLETE takes its answers from a reference: set ORCINUS_RESP_ADDR too"
    );
    let mut target = match reference {
        Some(addr) => Target::Reference(addr),
        None => Target::Orcinus(TestServer::start()),
    };
    let version = reference.and_then(reference_version);
    let files = script_files();
    assert!(
        !files.is_empty(),
        "no tests/resp/*.txt file matches the filter"
    );
    let mut failures = Vec::new();
    let (mut steps, mut skipped) = (0usize, Vec::new());
    for path in &files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {name}: {e}"));
        let script = script::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let (Some(since), Some(have)) = (script.since, version)
            && have < since
        {
            skipped.push(name);
            continue;
        }
        let password = script.requirepass.as_deref();
        // A password-protected file gets a server of its own (Orcinus) or sets the password on
        // the reference for its duration.
        let mut own_server = match (password, &target) {
            (Some(pw), Target::Orcinus(_)) => Some(Target::Orcinus(
                TestServer::builder()
                    .config(&format!("{TEST_CONFIG}[resp]\nrequirepass = \"{pw}\"\n"))
                    .start(),
            )),
            (Some(pw), Target::Reference(addr)) => {
                let set = admin(*addr, None).and_then(|mut c| {
                    c.call(&["CONFIG", "SET", "requirepass", pw])
                        .map_err(|e| e.to_string())
                });
                if let Err(e) = set {
                    failures.push(format!("{name}: CONFIG SET requirepass: {e}"));
                }
                None
            }
            (None, _) => None,
        };
        let mut runs = Vec::new();
        for &proto in &script.protocols {
            let server = own_server.as_mut().unwrap_or(&mut target);
            if let Err(e) = flushall(server.addr(), password) {
                failures.push(format!("{name}: {e}"));
                continue;
            }
            let mut run = Run {
                target: server,
                proto,
                file: name.clone(),
                conns: HashMap::new(),
                failures: Vec::new(),
                replies: HashMap::new(),
            };
            run.run(&script);
            steps += run.replies.len();
            failures.append(&mut run.failures);
            runs.push((proto, run.replies));
        }
        if let (Some(pw), Target::Reference(addr)) = (password, &target) {
            let reset = admin(*addr, Some(pw)).and_then(|mut c| {
                c.call(&["CONFIG", "SET", "requirepass", ""])
                    .map_err(|e| e.to_string())
            });
            if let Err(e) = reset {
                failures.push(format!("{name}: resetting requirepass: {e}"));
            }
        }
        if completing {
            rewrite(path, &script, &runs);
        }
    }
    eprintln!(
        "resp scripts: {} files, {steps} replies checked; skipped (reference too old): {skipped:?}",
        files.len()
    );
    if completing {
        return;
    }
    assert!(
        failures.is_empty(),
        "{} step(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
