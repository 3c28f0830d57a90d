//! Crash durability: kill -9 the server while clients stream pipelined writes, restart on the same
//! data directory, and check that every acknowledged write is there (the default sync policy is
//! `always`, so an acknowledgement means the write was fdatasync'ed).

use crate::harness::TestServer;
use crate::resp_client::{Reply, RespClient};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Per key, the highest write number whose SET was acknowledged.
type Acked = Arc<Mutex<HashMap<String, usize>>>;

/// What the `n`th write of connection `conn` sets: its key and value.
type WriteFn = fn(conn: usize, n: usize) -> (String, Vec<u8>);

/// One writer connection: pipelines the SETs `write(conn, n)` in windows of `depth`, records each
/// acknowledged one in `acked`, stops at `stop` or the first I/O error (the kill).
fn writer(
    addr: std::net::SocketAddr,
    conn: usize,
    depth: usize,
    write: WriteFn,
    stop: Arc<AtomicBool>,
    acked: Acked,
) {
    let Ok(mut client) = RespClient::connect(addr) else {
        return;
    };
    let mut n = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let mut keys = Vec::with_capacity(depth);
        for i in n..n + depth {
            let (key, value) = write(conn, i);
            if client.send(&[b"SET", key.as_bytes(), &value]).is_err() {
                return;
            }
            keys.push(key);
        }
        for (i, key) in (n..).zip(keys) {
            match client.read_reply() {
                Ok(Reply::Simple(s)) if s == "OK" => {
                    acked.lock().unwrap().insert(key, i);
                }
                Ok(other) => panic!("unexpected reply to SET: {other:?}"),
                Err(_) => return,
            }
        }
        n += depth;
    }
}

/// One crash round: `conns` writer connections (numbered from `round * 100`) stream pipelined
/// SETs `depth` deep; the server is killed with SIGKILL once `wait_for_kill` returns, then
/// restarted on the same data. Returns what was acknowledged before the kill (never empty).
fn crash_round(
    server: &mut TestServer,
    round: usize,
    conns: usize,
    depth: usize,
    write: WriteFn,
    wait_for_kill: impl FnOnce(&Acked),
) -> HashMap<String, usize> {
    let acked: Acked = Arc::new(Mutex::new(HashMap::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let addr = server.resp_addr();
    let writers: Vec<_> = (0..conns)
        .map(|c| {
            let (stop, acked) = (stop.clone(), acked.clone());
            let conn = round * 100 + c;
            std::thread::spawn(move || writer(addr, conn, depth, write, stop, acked))
        })
        .collect();
    wait_for_kill(&acked);
    server.kill9();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    server.restart();
    let acked = acked.lock().unwrap().clone();
    assert!(
        !acked.is_empty(),
        "round {round}: no write was acknowledged before the kill"
    );
    acked
}

/// Small writes, each to a new key: `SET w:{conn}:{n} v{n}`.
fn small_write(conn: usize, n: usize) -> (String, Vec<u8>) {
    (format!("w:{conn}:{n}"), format!("v{n}").into_bytes())
}

#[test]
fn kill9_during_pipelined_writes_loses_no_acknowledged_write() {
    let mut server = TestServer::start();
    for round in 0..3 {
        // Kill mid-stream: once writes are being acknowledged, after a delay that differs per round.
        let acked = crash_round(&mut server, round, 8, 16, small_write, |acked| {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while acked.lock().unwrap().len() < 200 && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            std::thread::sleep(Duration::from_millis(50 + 150 * round as u64));
        });
        let mut client = RespClient::connect(server.resp_addr()).unwrap();
        let keys: Vec<&String> = acked.keys().collect();
        for chunk in keys.chunks(500) {
            let mut args: Vec<&str> = vec!["MGET"];
            args.extend(chunk.iter().map(|k| k.as_str()));
            let Reply::Array(Some(values)) = client.cmd(&args).unwrap() else {
                panic!("MGET failed")
            };
            for (k, v) in chunk.iter().zip(values) {
                assert_eq!(
                    v,
                    Reply::Bulk(Some(format!("v{}", acked[*k]).into_bytes())),
                    "round {round}: acknowledged {k} lost"
                );
            }
        }
    }
}

/// The large value written as the `n`th write of connection `conn`: a header naming both, then
/// filler derived from them (so a torn or misplaced value is detected), 5–21 KiB long.
fn large_value(conn: usize, n: usize) -> Vec<u8> {
    let mut v = format!("{conn}:{n}:").into_bytes();
    let len = 5_000 + (n * 7_919) % 16_000;
    let mut x = (conn as u64) << 32 | n as u64 | 1;
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(b'a' + (x % 26) as u8);
    }
    v
}

/// Large overwrites of 16 keys per connection, over and over (so blob files go stale and get
/// rewritten).
fn large_write(conn: usize, n: usize) -> (String, Vec<u8>) {
    (format!("big:{conn}:{}", n % 16), large_value(conn, n))
}

#[test]
fn kill9_during_large_value_overwrites_loses_no_acknowledged_write() {
    // Test config: the key metadata (string values inline) flushes every 256 KiB, so values
    // above the 4 KiB separation threshold go through blob files, compaction and blob GC.
    let mut server = TestServer::start();
    let mut recovered: HashMap<String, Vec<u8>> = HashMap::new();
    for round in 0..3 {
        let acked = crash_round(&mut server, round, 4, 8, large_write, |_| {
            std::thread::sleep(Duration::from_millis(700 + 400 * round as u64));
        });
        let mut client = RespClient::connect(server.resp_addr()).unwrap();
        for (key, &acked_n) in &acked {
            let Reply::Bulk(Some(value)) = client.cmd(&["GET", key]).unwrap() else {
                panic!("round {round}: acknowledged {key} lost");
            };
            // A later write may have become durable without its reply: accept any n at least
            // the acknowledged one, but the value must be exactly the one written as n.
            let header = String::from_utf8_lossy(&value[..value.len().min(32)]).to_string();
            let mut parts = header.split(':');
            let conn: usize = parts.next().unwrap().parse().unwrap();
            let n: usize = parts.next().unwrap().parse().unwrap();
            assert!(
                n >= acked_n,
                "round {round}: {key} went back from {acked_n} to {n}"
            );
            assert!(
                value == large_value(conn, n),
                "round {round}: {key} holds a torn value"
            );
            recovered.insert(key.clone(), value);
        }
    }
    // After a clean restart every key still holds the value recovered after its crash.
    assert!(server.stop().success());
    server.restart();
    let mut client = RespClient::connect(server.resp_addr()).unwrap();
    for (key, value) in &recovered {
        let reply = client.cmd(&["GET", key]).unwrap();
        assert!(
            reply == Reply::Bulk(Some(value.clone())),
            "{key} changed across a clean restart"
        );
    }
}
