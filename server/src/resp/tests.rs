//! Tests of the RESP codec (decoder limits and errors, split-at-any-boundary property,
//! encoder for both protocols) and of whole connections over a real socket.

use super::decoder::{DecodeLimits, INLINE_MAX, RequestDecoder, split_inline_args};
use super::encoder::encode;
use super::{RespSettings, serve};
use orcinus_kv::bytes::{Bytes, BytesMut};
use orcinus_kv::{Protocol, Reply};
use orcinus_storage::{Engine, StorageConfig};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const AUTHED: DecodeLimits = DecodeLimits {
    max_bulk_len: 512 * 1024 * 1024,
    authenticated: true,
};
const UNAUTHED: DecodeLimits = DecodeLimits {
    max_bulk_len: 512 * 1024 * 1024,
    authenticated: false,
};

fn decode_all(input: &[u8], limits: &DecodeLimits) -> Result<Vec<Vec<Bytes>>, String> {
    let mut decoder = RequestDecoder::new();
    let mut buf = BytesMut::from(input);
    let mut out = Vec::new();
    loop {
        match decoder.decode(&mut buf, limits) {
            Ok(Some(req)) => out.push(req),
            Ok(None) => return Ok(out),
            Err(e) => return Err(e.reply_text()),
        }
    }
}

fn strs(req: &[Bytes]) -> Vec<&str> {
    req.iter()
        .map(|b| std::str::from_utf8(b).unwrap())
        .collect()
}

#[test]
fn decodes_multibulk_inline_and_pipelines() {
    let input =
        b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n\r\n*0\r\nset a \"b c\\x41\" 'd'\n*1\r\n$0\r\n\r\n";
    let reqs = decode_all(input, &AUTHED).unwrap();
    assert_eq!(reqs.len(), 4);
    assert_eq!(strs(&reqs[0]), ["GET", "k"]);
    assert_eq!(strs(&reqs[1]), ["PING"]);
    assert_eq!(strs(&reqs[2]), ["set", "a", "b cA", "d"]);
    assert_eq!(strs(&reqs[3]), [""]);
}

#[test]
fn rejects_malformed_input_with_redis_errors() {
    let cases: &[(&[u8], &DecodeLimits, &str)] = &[
        (
            b"*3000000000\r\n",
            &AUTHED,
            "ERR Protocol error: invalid multibulk length",
        ),
        (
            b"*x\r\n",
            &AUTHED,
            "ERR Protocol error: invalid multibulk length",
        ),
        (
            b"*2\r\n$2000000000\r\n",
            &AUTHED,
            "ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n$-1\r\n",
            &AUTHED,
            "ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n*1\r\n",
            &AUTHED,
            "ERR Protocol error: expected '$', got '*'",
        ),
        (
            b"*11\r\n",
            &UNAUTHED,
            "ERR Protocol error: unauthenticated multibulk length",
        ),
        (
            b"*1\r\n$16385\r\n",
            &UNAUTHED,
            "ERR Protocol error: unauthenticated bulk length",
        ),
        (
            b"set a \"b\r\n",
            &AUTHED,
            "ERR Protocol error: unbalanced quotes in request",
        ),
        (
            b"*1\r\n$1\r\nab\r\n",
            &AUTHED,
            "ERR Protocol error: bulk string not terminated by CRLF",
        ),
    ];
    for (input, limits, expected) in cases {
        assert_eq!(
            decode_all(input, limits).unwrap_err(),
            *expected,
            "{input:?}"
        );
    }
    let long_inline = vec![b'a'; INLINE_MAX + 10];
    assert_eq!(
        decode_all(&long_inline, &AUTHED).unwrap_err(),
        "ERR Protocol error: too big inline request"
    );
    let mut nested = Vec::new();
    for _ in 0..100_000 {
        nested.extend_from_slice(b"*1\r\n");
    }
    assert_eq!(
        decode_all(&nested, &AUTHED).unwrap_err(),
        "ERR Protocol error: expected '$', got '*'"
    );
}

#[test]
fn bulk_cap_follows_proto_max_bulk_len_and_nothing_is_preallocated() {
    let small = DecodeLimits {
        max_bulk_len: 4,
        authenticated: true,
    };
    assert!(decode_all(b"*1\r\n$4\r\nabcd\r\n", &small).is_ok());
    assert!(decode_all(b"*1\r\n$5\r\n", &small).is_err());
    // A 512 MiB declared bulk with no payload yet: decoder waits without allocating it.
    let mut decoder = RequestDecoder::new();
    let mut buf = BytesMut::from(&b"*1\r\n$536870912\r\nab"[..]);
    assert_eq!(decoder.decode(&mut buf, &AUTHED).unwrap(), None);
    assert!(buf.capacity() < 1024 * 1024);
}

#[test]
fn inline_splitting_matches_sdssplitargs() {
    let split =
        |s: &[u8]| split_inline_args(s).map(|v| v.iter().map(|b| b.to_vec()).collect::<Vec<_>>());
    assert_eq!(split(b"  a   b "), Some(vec![b"a".to_vec(), b"b".to_vec()]));
    assert_eq!(
        split(b"\"a\\n\" 'it\\'s'"),
        Some(vec![b"a\n".to_vec(), b"it's".to_vec()])
    );
    assert_eq!(split(b"\"a\"b"), None);
    assert_eq!(split(b"'a"), None);
    assert_eq!(split(b""), Some(vec![]));
}

/// xorshift64*: a deterministic generator so failures reproduce from the printed seed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn random_request(rng: &mut XorShift, out: &mut Vec<u8>) {
    if rng.below(4) == 0 {
        let words = 1 + rng.below(4);
        for w in 0..words {
            if w > 0 {
                out.push(b' ');
            }
            for _ in 0..1 + rng.below(6) {
                out.push(b'a' + u8::try_from(rng.below(26)).unwrap());
            }
        }
        out.extend_from_slice(if rng.below(2) == 0 { b"\r\n" } else { b"\n" });
        return;
    }
    let argc = 1 + rng.below(5);
    out.extend_from_slice(format!("*{argc}\r\n").as_bytes());
    for _ in 0..argc {
        let len = rng.below(40);
        out.extend_from_slice(format!("${len}\r\n").as_bytes());
        for _ in 0..len {
            out.push(u8::try_from(rng.below(256)).unwrap());
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// Property: decoding a stream fed in random pieces yields the same requests as decoding it
/// whole (and the same error, for corrupted streams).
#[test]
fn decode_split_at_random_boundaries_equals_decode_whole() {
    for seed in 1..=300u64 {
        let mut rng = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut stream = Vec::new();
        for _ in 0..1 + rng.below(20) {
            random_request(&mut rng, &mut stream);
        }
        if rng.below(5) == 0 && !stream.is_empty() {
            let at = usize::try_from(rng.below(stream.len() as u64)).unwrap();
            stream[at] = u8::try_from(rng.below(256)).unwrap();
        }
        let whole = decode_all(&stream, &AUTHED);
        let mut decoder = RequestDecoder::new();
        let mut buf = BytesMut::new();
        let mut pieces = Vec::new();
        let mut error = None;
        let mut pos = 0;
        'feed: while pos < stream.len() {
            let take = 1 + usize::try_from(rng.below(16)).unwrap();
            let end = (pos + take).min(stream.len());
            buf.extend_from_slice(&stream[pos..end]);
            pos = end;
            loop {
                match decoder.decode(&mut buf, &AUTHED) {
                    Ok(Some(req)) => pieces.push(req),
                    Ok(None) => break,
                    Err(e) => {
                        error = Some(e.reply_text());
                        break 'feed;
                    }
                }
            }
        }
        match whole {
            Ok(reqs) => {
                assert_eq!(error, None, "seed {seed}");
                assert_eq!(pieces, reqs, "seed {seed}");
            }
            Err(e) => {
                // A corrupted stream may fail on a prefix; it must fail the same way.
                assert_eq!(error, Some(e), "seed {seed}");
            }
        }
    }
}

/// A request in one of the forms the decoder accepts or must reject: canonical, or with a
/// bare `\n`, leading zeros, a negative or zero count, many arguments, or an inline line.
fn varied_request(rng: &mut XorShift, out: &mut Vec<u8>) {
    let eol: &[u8] = if rng.below(8) == 0 { b"\n" } else { b"\r\n" };
    match rng.below(10) {
        0 => return random_request(rng, out),
        1 => {
            out.extend_from_slice(
                format!("*{}", i64::try_from(rng.below(3)).unwrap() - 1).as_bytes(),
            );
            out.extend_from_slice(eol);
            return;
        }
        _ => {}
    }
    let argc = 1 + rng.below(12);
    let zeros = if rng.below(8) == 0 { "0" } else { "" };
    out.extend_from_slice(format!("*{zeros}{argc}").as_bytes());
    out.extend_from_slice(eol);
    for _ in 0..argc {
        let len = rng.below(40);
        out.extend_from_slice(format!("${zeros}{len}").as_bytes());
        out.extend_from_slice(eol);
        for _ in 0..len {
            out.push(u8::try_from(rng.below(256)).unwrap());
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// Property: decoding a stream that is whole in the buffer (which takes the one-pass path for
/// canonical requests) and feeding it one byte at a time (which never has a whole request
/// before the incremental decoder has started it) yield the same requests and errors, under
/// each kind of limit.
#[test]
fn one_pass_and_incremental_decoding_agree() {
    let tight = DecodeLimits {
        max_bulk_len: 20,
        authenticated: true,
    };
    for seed in 1..=400u64 {
        let mut rng = XorShift(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mut stream = Vec::new();
        for _ in 0..1 + rng.below(12) {
            varied_request(&mut rng, &mut stream);
        }
        if rng.below(4) == 0 && !stream.is_empty() {
            let at = usize::try_from(rng.below(stream.len() as u64)).unwrap();
            stream[at] = u8::try_from(rng.below(256)).unwrap();
        }
        for limits in [&AUTHED, &UNAUTHED, &tight] {
            let whole = decode_all(&stream, limits);
            let mut decoder = RequestDecoder::new();
            let mut buf = BytesMut::new();
            let mut requests = Vec::new();
            let mut error = None;
            'feed: for &byte in &stream {
                buf.extend_from_slice(&[byte]);
                loop {
                    match decoder.decode(&mut buf, limits) {
                        Ok(Some(req)) => requests.push(req),
                        Ok(None) => break,
                        Err(e) => {
                            error = Some(e.reply_text());
                            break 'feed;
                        }
                    }
                }
            }
            match whole {
                Ok(reqs) => {
                    assert_eq!(error, None, "seed {seed} {limits:?}");
                    assert_eq!(requests, reqs, "seed {seed} {limits:?}");
                }
                Err(e) => assert_eq!(error, Some(e), "seed {seed} {limits:?}"),
            }
        }
    }
}

fn encoded(reply: &Reply, protocol: Protocol) -> String {
    let mut out = Vec::new();
    encode(reply, protocol, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn stored_values_encode_as_bulk_strings() {
    let record = orcinus_storage::Slice::from(&b"headervalue"[..]);
    for protocol in [Protocol::Resp2, Protocol::Resp3] {
        let stored = Reply::Stored(orcinus_kv::StoredBulk::new(record.clone(), 6));
        assert_eq!(encoded(&stored, protocol), "$5\r\nvalue\r\n");
        let past_end = Reply::Stored(orcinus_kv::StoredBulk::new(record.clone(), 99));
        assert_eq!(encoded(&past_end, protocol), "$0\r\n\r\n");
        assert_eq!(stored.into_plain(), Reply::bulk("value"));
    }
}

#[test]
fn encodes_resp2_and_resp3() {
    let map = Reply::Map(vec![(Reply::bulk("a"), Reply::Integer(1))]);
    assert_eq!(encoded(&map, Protocol::Resp2), "*2\r\n$1\r\na\r\n:1\r\n");
    assert_eq!(encoded(&map, Protocol::Resp3), "%1\r\n$1\r\na\r\n:1\r\n");
    assert_eq!(encoded(&Reply::Null, Protocol::Resp2), "$-1\r\n");
    for n in [0, 7, -42, 1_234_567_890, i64::MAX, i64::MIN] {
        assert_eq!(
            encoded(&Reply::Integer(n), Protocol::Resp2),
            format!(":{n}\r\n")
        );
    }
    assert_eq!(encoded(&Reply::bulk(""), Protocol::Resp2), "$0\r\n\r\n");
    let big = "v".repeat(70_000);
    assert_eq!(
        encoded(&Reply::bulk(&big), Protocol::Resp3),
        format!("$70000\r\n{big}\r\n")
    );
    assert_eq!(encoded(&Reply::Null, Protocol::Resp3), "_\r\n");
    assert_eq!(encoded(&Reply::NullArray, Protocol::Resp2), "*-1\r\n");
    assert_eq!(encoded(&Reply::Double(1.5), Protocol::Resp3), ",1.5\r\n");
    assert_eq!(
        encoded(&Reply::Double(f64::INFINITY), Protocol::Resp2),
        "$3\r\ninf\r\n"
    );
    assert_eq!(encoded(&Reply::Boolean(true), Protocol::Resp2), ":1\r\n");
    assert_eq!(encoded(&Reply::Boolean(false), Protocol::Resp3), "#f\r\n");
    let set = Reply::Set(vec![Reply::Simple("x".into())]);
    assert_eq!(encoded(&set, Protocol::Resp3), "~1\r\n+x\r\n");
    assert_eq!(encoded(&set, Protocol::Resp2), "*1\r\n+x\r\n");
    let pairs = Reply::Pairs(vec![(Reply::bulk("f"), Reply::bulk("v"))]);
    assert_eq!(
        encoded(&pairs, Protocol::Resp2),
        "*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    );
    assert_eq!(
        encoded(&pairs, Protocol::Resp3),
        "*1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    );
    let verbatim = Reply::Verbatim("txt", Bytes::from_static(b"hi"));
    assert_eq!(encoded(&verbatim, Protocol::Resp3), "=6\r\ntxt:hi\r\n");
    assert_eq!(encoded(&verbatim, Protocol::Resp2), "$2\r\nhi\r\n");
    assert_eq!(
        encoded(&Reply::Error("ERR a\r\nb".into()), Protocol::Resp2),
        "-ERR a  b\r\n"
    );
}

#[test]
fn doubles_use_redis_formatting_in_both_protocols() {
    let cases = [
        (1.5, "1.5"),
        (1e20, "1e+20"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (f64::NAN, "nan"),
    ];
    for (value, text) in cases {
        assert_eq!(
            encoded(&Reply::Double(value), Protocol::Resp2),
            format!("${}\r\n{text}\r\n", text.len()),
            "{value}"
        );
        assert_eq!(
            encoded(&Reply::Double(value), Protocol::Resp3),
            format!(",{text}\r\n"),
            "{value}"
        );
    }
    let pairs = Reply::Pairs(vec![(Reply::bulk("m"), Reply::Double(2.5))]);
    assert_eq!(
        encoded(&pairs, Protocol::Resp2),
        "*2\r\n$1\r\nm\r\n$3\r\n2.5\r\n"
    );
    assert_eq!(
        encoded(&pairs, Protocol::Resp3),
        "*1\r\n*2\r\n$1\r\nm\r\n,2.5\r\n"
    );
}

// ---- whole connections over a real socket ----

struct TestServer {
    addr: std::net::SocketAddr,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    dir: std::path::PathBuf,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn start(settings: RespSettings) -> TestServer {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("orcinus-resp-test-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let engine = Engine::open(StorageConfig::for_test(dir.clone())).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(serve(listener, engine, settings));
    TestServer { addr, task, dir }
}

/// Sends `request` and reads until the reply has `expected_len` bytes or the peer closes.
async fn roundtrip(stream: &mut TcpStream, request: &[u8], expected: &str) {
    stream.write_all(request).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < expected.len() {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(String::from_utf8_lossy(&got), expected);
}

async fn expect_closed(stream: &mut TcpStream) {
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
        .await
        .unwrap()
        .unwrap_or(0);
    assert_eq!(
        n,
        0,
        "expected close, got {:?}",
        String::from_utf8_lossy(&buf[..n])
    );
}

#[tokio::test]
async fn serves_pipelined_inline_and_resp3_clients() {
    let server = start(RespSettings::default()).await;
    let mut c = TcpStream::connect(server.addr).await.unwrap();
    roundtrip(&mut c, b"PING\r\n", "+PONG\r\n").await;
    roundtrip(
        &mut c,
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nGET nosuch\r\n",
        "+OK\r\n$1\r\nv\r\n$-1\r\n",
    )
    .await;
    roundtrip(
        &mut c,
        b"HELLO 3\r\n",
        "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.0.0\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n",
    )
    .await;
    roundtrip(&mut c, b"GET nosuch\r\n", "_\r\n").await;
    roundtrip(
        &mut c,
        b"FOO a b\r\n",
        "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n",
    )
    .await;
    roundtrip(&mut c, b"QUIT\r\n", "+OK\r\n").await;
    expect_closed(&mut c).await;
}

#[tokio::test]
async fn sorted_set_scores_on_the_wire_in_both_protocols() {
    let server = start(RespSettings::default()).await;
    let mut c = TcpStream::connect(server.addr).await.unwrap();
    roundtrip(&mut c, b"ZADD z 1.5 a 1e20 b\r\n", ":2\r\n").await;
    roundtrip(
        &mut c,
        b"ZRANGE z 0 -1 WITHSCORES\r\nZSCORE z b\r\nZRANK z a WITHSCORE\r\n",
        "*4\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n$5\r\n1e+20\r\n$5\r\n1e+20\r\n*2\r\n:0\r\n$3\r\n1.5\r\n",
    )
    .await;
    roundtrip(
        &mut c,
        b"HELLO 3\r\n",
        "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.0.0\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n",
    )
    .await;
    roundtrip(
        &mut c,
        b"ZRANGE z 0 -1 WITHSCORES\r\nZSCORE z b\r\nZPOPMIN z\r\n",
        "*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,1e+20\r\n,1e+20\r\n*2\r\n$1\r\na\r\n,1.5\r\n",
    )
    .await;
}

#[tokio::test]
async fn blocked_client_is_served_by_a_push_and_cancelled_by_its_disconnect() {
    let server = start(RespSettings::default()).await;
    let mut blocked = TcpStream::connect(server.addr).await.unwrap();
    let mut pusher = TcpStream::connect(server.addr).await.unwrap();
    // A push from another connection serves the blocked client; a pipelined command
    // behind the BLPOP runs after it.
    blocked.write_all(b"BLPOP q 0\r\nPING\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    roundtrip(&mut pusher, b"RPUSH q a\r\n", ":1\r\n").await;
    roundtrip(&mut blocked, b"", "*2\r\n$1\r\nq\r\n$1\r\na\r\n+PONG\r\n").await;
    // A client that disconnects while blocked leaves the queue: a later push stays.
    blocked.write_all(b"BLPOP q 0\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(blocked);
    tokio::time::sleep(Duration::from_millis(100)).await;
    roundtrip(&mut pusher, b"RPUSH q b\r\n", ":1\r\n").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    roundtrip(&mut pusher, b"LLEN q\r\n", ":1\r\n").await;
}

#[tokio::test]
async fn protocol_error_closes_only_that_client() {
    let server = start(RespSettings::default()).await;
    let mut bad = TcpStream::connect(server.addr).await.unwrap();
    let mut good = TcpStream::connect(server.addr).await.unwrap();
    roundtrip(
        &mut bad,
        b"*3000000000\r\n",
        "-ERR Protocol error: invalid multibulk length\r\n",
    )
    .await;
    expect_closed(&mut bad).await;
    roundtrip(&mut good, b"PING\r\n", "+PONG\r\n").await;
}

#[tokio::test]
async fn requirepass_gates_commands_and_caps_unauthenticated_requests() {
    let server = start(RespSettings {
        requirepass: Some("s3cret".into()),
        ..RespSettings::default()
    })
    .await;
    let mut c = TcpStream::connect(server.addr).await.unwrap();
    roundtrip(&mut c, b"GET k\r\n", "-NOAUTH Authentication required.\r\n").await;
    roundtrip(
        &mut c,
        b"AUTH wrong\r\n",
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n",
    )
    .await;
    roundtrip(&mut c, b"AUTH default:s3cret\r\n", "+OK\r\n").await;
    roundtrip(&mut c, b"GET k\r\n", "$-1\r\n").await;
    let mut unauth = TcpStream::connect(server.addr).await.unwrap();
    roundtrip(
        &mut unauth,
        b"*11\r\n",
        "-ERR Protocol error: unauthenticated multibulk length\r\n",
    )
    .await;
    expect_closed(&mut unauth).await;
}

#[tokio::test]
async fn max_clients_refuses_extra_connections() {
    let server = start(RespSettings {
        max_clients: 1,
        ..RespSettings::default()
    })
    .await;
    let mut first = TcpStream::connect(server.addr).await.unwrap();
    roundtrip(&mut first, b"PING\r\n", "+PONG\r\n").await;
    let mut second = TcpStream::connect(server.addr).await.unwrap();
    roundtrip(&mut second, b"", "-ERR max number of clients reached\r\n").await;
    expect_closed(&mut second).await;
}

#[tokio::test]
async fn client_that_stops_reading_does_not_block_others() {
    let server = start(RespSettings::default()).await;
    let mut greedy = TcpStream::connect(server.addr).await.unwrap();
    // ~8 MiB of replies that the client never reads: the server blocks on this connection's
    // writes with bounded buffers instead of queueing them all.
    let value = "x".repeat(16 * 1024);
    let set = format!(
        "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n${}\r\n{value}\r\n",
        value.len()
    );
    greedy.write_all(set.as_bytes()).await.unwrap();
    let get = b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n".repeat(512);
    let writer = tokio::spawn(async move {
        let _ = greedy.write_all(&get).await;
        greedy
    });
    let mut other = TcpStream::connect(server.addr).await.unwrap();
    roundtrip(&mut other, b"PING\r\n", "+PONG\r\n").await;
    drop(writer);
}

fn kv_server(dir: &std::path::Path) -> std::sync::Arc<orcinus_kv::KvServer> {
    let engine = Engine::open(StorageConfig::for_test(dir.to_path_buf())).unwrap();
    std::sync::Arc::new(
        orcinus_kv::KvServer::open(engine, orcinus_kv::KvConfig::default()).unwrap(),
    )
}

#[tokio::test]
async fn refuses_remote_clients_without_password_and_over_max_clients() {
    let dir = std::env::temp_dir().join(format!("orcinus-resp-refusal-{}", std::process::id()));
    let server = kv_server(&dir);
    let remote: std::net::SocketAddr = "10.1.2.3:5000".parse().unwrap();
    let local: std::net::SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let mapped: std::net::SocketAddr = "[::ffff:127.0.0.1]:5000".parse().unwrap();
    let open = RespSettings::default();
    assert_eq!(super::refusal(&server, &open, &remote), Some(super::DENIED));
    assert_eq!(super::refusal(&server, &open, &local), None);
    assert_eq!(super::refusal(&server, &open, &mapped), None);
    let locked = RespSettings {
        requirepass: Some("pw".into()),
        max_clients: 1,
        ..RespSettings::default()
    };
    assert_eq!(super::refusal(&server, &locked, &remote), None);
    let _session = server.new_session("a".into(), "b".into());
    assert_eq!(
        super::refusal(&server, &locked, &remote),
        Some(super::MAX_CLIENTS)
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client that never reads its replies: the connection stops consuming requests once its
/// (small) output path is full, instead of buffering replies without bound.
#[tokio::test]
async fn output_backpressure_stops_reading_from_a_client_that_does_not_read() {
    let dir =
        std::env::temp_dir().join(format!("orcinus-resp-backpressure-{}", std::process::id()));
    let server = kv_server(&dir);
    let (mut client, server_side) = tokio::io::duplex(64 * 1024);
    let session = server.new_session("test".into(), "test".into());
    let settings = std::sync::Arc::new(RespSettings::default());
    let conn = tokio::spawn(super::connection::run(
        server_side,
        server.clone(),
        settings,
        session,
    ));
    let value = "x".repeat(32 * 1024);
    let set = format!(
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${}\r\n{value}\r\n",
        value.len()
    );
    client.write_all(set.as_bytes()).await.unwrap();
    // 64 MiB of replies requested; the client reads none of them.
    let gets = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".repeat(2048);
    let wrote_everything = tokio::time::timeout(Duration::from_secs(3), async {
        for _ in 0..64 {
            client.write_all(&gets).await.unwrap();
        }
    })
    .await;
    assert!(
        wrote_everything.is_err(),
        "server kept reading while its replies piled up"
    );
    conn.abort();
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fake engine: replies with the request's arguments joined by spaces, after a delay that
/// varies per request, so reordering would show.
struct EchoHandler;

impl super::handler::CommandHandler for EchoHandler {
    async fn execute(&self, _session: &mut orcinus_kv::Session, args: Vec<Bytes>) -> Reply {
        let joined: Vec<u8> = args.join(&b' ');
        if joined.len().is_multiple_of(3) {
            tokio::task::yield_now().await;
        }
        Reply::Bulk(Bytes::from(joined))
    }
}

#[tokio::test]
async fn pipelined_replies_come_back_in_request_order() {
    let registry = std::sync::Arc::new(orcinus_kv::session::ClientRegistry::default());
    let session = registry.register("test".into(), "test".into(), true);
    let (client, server_side) = tokio::io::duplex(4096);
    let settings = std::sync::Arc::new(RespSettings::default());
    let conn = tokio::spawn(super::connection::run(
        server_side,
        std::sync::Arc::new(EchoHandler),
        settings,
        session,
    ));
    let mut requests = Vec::new();
    let mut expected = Vec::new();
    for i in 0..2000 {
        if i % 2 == 0 {
            requests.extend_from_slice(format!("echo {i}\r\n").as_bytes());
        } else {
            let arg = i.to_string();
            requests.extend_from_slice(
                format!("*2\r\n$4\r\necho\r\n${}\r\n{arg}\r\n", arg.len()).as_bytes(),
            );
        }
        let text = format!("echo {i}");
        expected.extend_from_slice(format!("${}\r\n{text}\r\n", text.len()).as_bytes());
    }
    // Write and read concurrently, as a pipelining client must (see the backpressure test).
    let (mut rx, mut tx) = tokio::io::split(client);
    let writer = tokio::spawn(async move { tx.write_all(&requests).await.unwrap() });
    let mut got = vec![0u8; expected.len()];
    tokio::time::timeout(Duration::from_secs(20), rx.read_exact(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&expected)
    );
    writer.await.unwrap();
    conn.abort();
}

/// An account table with one password-protected account.
struct OneAccount;

impl orcinus_kv::Authenticator for OneAccount {
    fn verify(&self, _user: &[u8], _password: &[u8], _client: std::net::IpAddr) -> bool {
        false
    }

    fn has_password_accounts(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn remote_clients_are_served_when_an_account_has_a_password() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
    let server = orcinus_kv::KvServer::open(engine, orcinus_kv::KvConfig::default())
        .unwrap()
        .with_authenticator(std::sync::Arc::new(OneAccount));
    let remote: std::net::SocketAddr = "10.1.2.3:5000".parse().unwrap();
    assert_eq!(
        super::refusal(&server, &RespSettings::default(), &remote),
        None
    );
    let session = server.new_client_session(remote, "127.0.0.1:6379".into());
    assert!(
        !session.authenticated,
        "a remote client must AUTH with an account"
    );
}

/// A pipeline of writes waits for one sync, not one per write; replies keep their order, reads
/// see the earlier writes, and MULTI/EXEC inside the pipeline still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_writes_share_one_sync_and_keep_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = kv_server(dir.path());
    let registry = std::sync::Arc::new(orcinus_kv::session::ClientRegistry::default());
    let session = registry.register("test".into(), "test".into(), true);
    let (client, server_side) = tokio::io::duplex(64 * 1024);
    let settings = std::sync::Arc::new(RespSettings::default());
    let conn = tokio::spawn(super::connection::run(
        server_side,
        server.clone(),
        settings,
        session,
    ));
    let mut requests = Vec::new();
    let mut expected = String::new();
    for i in 0..100 {
        requests.extend_from_slice(format!("SET k{i} v{i}\r\nGET k{i}\r\n").as_bytes());
        let v = format!("v{i}");
        expected.push_str(&format!("+OK\r\n${}\r\n{v}\r\n", v.len()));
    }
    requests.extend_from_slice(b"MULTI\r\nINCR n\r\nINCR n\r\nEXEC\r\nGET n\r\nBADCMD\r\n");
    expected.push_str("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n:2\r\n$1\r\n2\r\n");
    expected.push_str("-ERR unknown command 'BADCMD', with args beginning with: \r\n");
    let syncs_before = server.store().engine().stats().syncs;
    let (mut rx, mut tx) = tokio::io::split(client);
    tx.write_all(&requests).await.unwrap();
    let mut got = vec![0u8; expected.len()];
    tokio::time::timeout(Duration::from_secs(20), rx.read_exact(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&got), expected);
    let syncs = server.store().engine().stats().syncs - syncs_before;
    assert!(syncs < 20, "{syncs} syncs for one pipeline of 102 writes");
    conn.abort();
}

/// Consecutive writes of a pipeline run as one group: far fewer commits than writes, even when
/// large values make the pipeline arrive in many reads; a failing write inside the group
/// answers its own error and the others still apply; replies keep request order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_of_writes_commits_as_a_group() {
    let dir = tempfile::tempdir().unwrap();
    let server = kv_server(dir.path());
    let registry = std::sync::Arc::new(orcinus_kv::session::ClientRegistry::default());
    let session = registry.register("test".into(), "test".into(), true);
    let (client, server_side) = tokio::io::duplex(1024 * 1024);
    let settings = std::sync::Arc::new(RespSettings::default());
    let conn = tokio::spawn(super::connection::run(
        server_side,
        server.clone(),
        settings,
        session,
    ));
    let value = "x".repeat(16 * 1024);
    let mut requests = Vec::new();
    let mut expected = String::new();
    for i in 0..32 {
        requests.extend_from_slice(
            format!(
                "*3\r\n$3\r\nSET\r\n${}\r\nk{i:02}\r\n${}\r\n{value}\r\n",
                3,
                value.len()
            )
            .as_bytes(),
        );
        expected.push_str("+OK\r\n");
        if i == 10 {
            requests.extend_from_slice(b"INCR k00\r\nHSET k01 f v\r\nAPPEND k02 y\r\n");
            expected.push_str("-ERR value is not an integer or out of range\r\n");
            expected
                .push_str("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
            expected.push_str(&format!(":{}\r\n", value.len() + 1));
        }
    }
    requests.extend_from_slice(b"STRLEN k02\r\nSTRLEN k31\r\n");
    expected.push_str(&format!(":{}\r\n:{}\r\n", value.len() + 1, value.len()));
    let commits_before = server.store().engine().stats().commits;
    let (mut rx, mut tx) = tokio::io::split(client);
    tx.write_all(&requests).await.unwrap();
    let mut got = vec![0u8; expected.len()];
    tokio::time::timeout(Duration::from_secs(20), rx.read_exact(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&got), expected);
    let commits = server.store().engine().stats().commits - commits_before;
    assert!(
        commits <= 4,
        "{commits} commits for one pipeline of 33 writes"
    );
    conn.abort();
}

/// Replies that wait for a sync are written by whoever releases it (the runtime's releaser
/// task here); a client that stops reading makes those writes partial, and the connection must
/// finish each, in order, before anything after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_handed_to_the_commit_pipeline_arrive_whole_and_in_order() {
    let server = start(RespSettings::default()).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut c = socket.connect(server.addr).await.unwrap();
    let value = "v".repeat(60 * 1024);
    let set_big = format!(
        "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n${}\r\n{value}\r\n",
        value.len()
    );
    roundtrip(&mut c, set_big.as_bytes(), "+OK\r\n").await;
    let bulk = format!("${}\r\n{value}\r\n", value.len());
    let mut expected = Vec::new();
    // Batches of a write and a large read, each answered after the write's sync, sent one by
    // one while nothing is read: the socket's buffers fill up part way through.
    for round in 0..96 {
        let n = round.to_string();
        let request = format!(
            "*3\r\n$3\r\nSET\r\n$1\r\nn\r\n${}\r\n{n}\r\n*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n*2\r\n$3\r\nGET\r\n$1\r\nn\r\n",
            n.len()
        );
        c.write_all(request.as_bytes()).await.unwrap();
        expected.extend_from_slice(format!("+OK\r\n{bulk}${}\r\n{n}\r\n", n.len()).as_bytes());
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut got = vec![0u8; expected.len()];
    tokio::time::timeout(Duration::from_secs(20), c.read_exact(&mut got))
        .await
        .expect("replies arrive")
        .unwrap();
    assert!(got == expected, "replies differ");
    roundtrip(&mut c, b"PING\r\n", "+PONG\r\n").await;
}
