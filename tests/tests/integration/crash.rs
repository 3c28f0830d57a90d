//! Crash durability: kill -9 the server while clients stream pipelined writes, restart on the same
//! data directory, and check that every acknowledged write is there (the default sync policy is
//! `always`, so an acknowledgement means the write was fdatasync'ed).

use crate::harness::TestServer;
use crate::resp_client::{Reply, RespClient};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One writer connection: pipelines `SET w:{conn}:{n} v{n}` in windows of `depth`, records each
/// acknowledged n, stops at the first I/O error (the kill).
fn writer(
    addr: std::net::SocketAddr,
    conn: usize,
    depth: usize,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<HashMap<String, String>>>,
) {
    let Ok(mut client) = RespClient::connect(addr) else {
        return;
    };
    let mut n = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let batch: Vec<(String, String)> = (n..n + depth)
            .map(|i| (format!("w:{conn}:{i}"), format!("v{i}")))
            .collect();
        for (k, v) in &batch {
            if client.send(&[b"SET", k.as_bytes(), v.as_bytes()]).is_err() {
                return;
            }
        }
        for (k, v) in batch {
            match client.read_reply() {
                Ok(Reply::Simple(s)) if s == "OK" => {
                    acked.lock().unwrap().insert(k, v);
                }
                Ok(other) => panic!("unexpected reply to SET: {other:?}"),
                Err(_) => return,
            }
        }
        n += depth;
    }
}

#[test]
fn kill9_during_pipelined_writes_loses_no_acknowledged_write() {
    let mut server = TestServer::start();
    for round in 0..3 {
        let acked = Arc::new(Mutex::new(HashMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let addr = server.resp_addr();
        let writers: Vec<_> = (0..8)
            .map(|c| {
                let (stop, acked) = (stop.clone(), acked.clone());
                std::thread::spawn(move || writer(addr, round * 100 + c, 16, stop, acked))
            })
            .collect();
        // Kill mid-stream: once writes are being acknowledged, after a delay that differs per round.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while acked.lock().unwrap().len() < 200 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(50 + 150 * round as u64));
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
                    Reply::Bulk(Some(acked[*k].clone().into_bytes())),
                    "round {round}: acknowledged {k} lost"
                );
            }
        }
    }
}
