//! redis-benchmark against the real server: its start-up probe (`CONFIG GET save` /
//! `appendonly`), inline `PING_INLINE`, and pipelined SET, GET, INCR, HSET and MSET, each of which
//! must report a positive rate while the server logs no problem. A speed target is not asserted
//! here (see bench/redis.sh); this checks the tool works end to end and the writes landed.

use crate::harness::TestServer;
use crate::resp_client::{Reply, RespClient};
use crate::tools::{logged_problems, redis_cli, require_redis_tools, run};
use std::process::Command;
use std::time::Duration;

const REQUESTS: u32 = 2000;

fn bulk(text: &str) -> Reply {
    Reply::Bulk(Some(text.as_bytes().to_vec()))
}

/// The `NAME: N requests per second` results of `redis-benchmark -q` (progress lines are
/// separated by `\r`, results end with `\n`).
fn quiet_results(stdout: &str) -> Vec<(String, f64)> {
    stdout
        .split(['\r', '\n'])
        .filter_map(|segment| {
            let (name, rest) = segment.trim().split_once(": ")?;
            let rps = rest.get(..rest.find(" requests per second")?)?;
            Some((name.to_string(), rps.parse().ok()?))
        })
        .collect()
}

#[test]
fn resp_redis_benchmark_config_probe_is_answered() {
    let server = TestServer::start();
    let mut client = RespClient::connect(server.resp_addr()).unwrap();
    // redis-benchmark pipelines these two on a side connection and needs >= 2-element arrays.
    client.send(&[b"CONFIG", b"GET", b"save"]).unwrap();
    client.send(&[b"CONFIG", b"GET", b"appendonly"]).unwrap();
    assert_eq!(
        client.read_reply().unwrap(),
        Reply::Array(Some(vec![bulk("save"), bulk("")]))
    );
    assert_eq!(
        client.read_reply().unwrap(),
        Reply::Array(Some(vec![bulk("appendonly"), bulk("yes")]))
    );
}

#[test]
fn resp_redis_benchmark_suite() {
    require_redis_tools();
    let server = TestServer::start();
    let addr = server.resp_addr();
    let mut command = Command::new("redis-benchmark");
    command
        .args(["-h", &addr.ip().to_string(), "-p", &addr.port().to_string()])
        .args(["-t", "ping_inline,set,get,incr,hset,mset"])
        .args(["-n", &REQUESTS.to_string(), "-c", "10", "-P", "16", "-q"]);
    let out = run(command, b"", Duration::from_secs(300));
    out.assert_success("redis-benchmark");
    let all = format!("{}{}", out.stdout, out.stderr);
    for bad in ["WARN", "rror", "could not"] {
        assert!(
            !all.contains(bad),
            "redis-benchmark reported {bad:?}:\n{all}"
        );
    }
    let results = quiet_results(&out.stdout);
    for test in [
        "PING_INLINE",
        "SET",
        "GET",
        "INCR",
        "HSET",
        "MSET (10 keys)",
    ] {
        let rps = results
            .iter()
            .filter(|(name, _)| name == test)
            .map(|(_, rps)| *rps)
            .next_back();
        assert!(
            rps.is_some_and(|r| r > 0.0),
            "{test}: no positive requests-per-second figure in:\n{}",
            out.stdout
        );
    }

    // Without -r every client hits one key, so the effects are exact.
    let mut client = RespClient::connect(addr).unwrap();
    assert_eq!(
        client.cmd(&["GET", "counter:__rand_int__"]).unwrap(),
        bulk(&REQUESTS.to_string()),
        "every INCR must have landed exactly once"
    );
    assert_eq!(
        client.cmd(&["STRLEN", "key:__rand_int__"]).unwrap(),
        Reply::Integer(3)
    );
    assert_eq!(
        client
            .cmd(&["HEXISTS", "myhash", "element:__rand_int__"])
            .unwrap(),
        Reply::Integer(1)
    );
    let problems = logged_problems(&server.stderr()).join("\n");
    assert!(problems.is_empty(), "server logged problems:\n{problems}");
    // redis-cli still works against the same server afterwards.
    let ping = run(redis_cli(addr, &["PING"]), b"", Duration::from_secs(10));
    assert_eq!(ping.assert_success("redis-cli PING").stdout, "PONG\n");
}
