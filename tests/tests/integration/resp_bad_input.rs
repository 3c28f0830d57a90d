//! Malformed and oversized requests over a real socket (the RESP rows of the limits table in the
//! reliability notes, §4.5): the offending connection gets Redis's error text and is closed, the
//! server stays up, and a client connected before keeps working.

use crate::harness::{TEST_CONFIG, TestServer};
use crate::resp_client::{Reply, RespClient};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Sends `bytes` from a separate thread (the server may close before reading them all, so a
/// failed write is expected) and returns the first reply line and whether the server then closed
/// the connection.
fn send_bad(addr: SocketAddr, bytes: Vec<u8>) -> (String, bool) {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = writer.write_all(&bytes);
    });
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .expect("an error reply before the close");
    let mut rest = Vec::new();
    // A reset also means closed: the server may close with our unread bytes in its buffer.
    let closed = match reader.read_to_end(&mut rest) {
        Ok(0) => true,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        Ok(_) => false,
    };
    let _ = feeder.join();
    (line, closed)
}

fn protocol_error(text: &str) -> String {
    format!("-ERR Protocol error: {text}\r\n")
}

/// A client connected before the bad input still works afterwards.
fn assert_still_serving(bystander: &mut RespClient, round: &str) {
    let key = format!("bystander:{round}");
    assert_eq!(
        bystander.cmd(&["SET", &key, "ok"]).unwrap(),
        Reply::Simple("OK".into()),
        "after {round}"
    );
    assert_eq!(bystander.cmd(&["GET", &key]).unwrap().text(), "ok");
    bystander.send_raw(b"PING\r\n").unwrap();
    assert_eq!(
        bystander.read_reply().unwrap(),
        Reply::Simple("PONG".into())
    );
}

#[test]
fn resp_bad_input_gets_redis_errors_and_spares_other_clients() {
    let server = TestServer::start();
    let addr = server.resp_addr();
    let mut bystander = RespClient::connect(addr).unwrap();
    let nested: Vec<u8> = b"*1\r\n".repeat(100_000);
    let inline = [vec![b'a'; 70 * 1024], b"\r\n".to_vec()].concat();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "huge multibulk",
            b"*3000000000\r\n".to_vec(),
            "invalid multibulk length",
        ),
        (
            "huge bulk",
            b"*2\r\n$2000000000\r\n".to_vec(),
            "invalid bulk length",
        ),
        ("nested arrays", nested, "expected '$', got '*'"),
        ("70 KiB inline", inline, "too big inline request"),
    ];
    for (name, bytes, expected) in cases {
        let (reply, closed) = send_bad(addr, bytes);
        assert_eq!(reply, protocol_error(expected), "{name}");
        assert!(closed, "{name}: the connection must be closed");
        assert_still_serving(&mut bystander, name);
    }
}

#[test]
fn resp_unauthenticated_clients_are_capped_when_requirepass_is_set() {
    let config = format!("{TEST_CONFIG}[resp]\nrequirepass = \"s3cret\"\n");
    let server = TestServer::builder().config(&config).start();
    let addr = server.resp_addr();
    let mut bystander = RespClient::connect(addr).unwrap();
    assert_eq!(
        bystander.cmd(&["GET", "k"]).unwrap(),
        Reply::Error("NOAUTH Authentication required.".into())
    );
    assert_eq!(
        bystander.cmd(&["AUTH", "s3cret"]).unwrap(),
        Reply::Simple("OK".into())
    );

    let (reply, closed) = send_bad(addr, b"*11\r\n".to_vec());
    assert_eq!(reply, protocol_error("unauthenticated multibulk length"));
    assert!(closed);
    assert_still_serving(&mut bystander, "unauthenticated *11");

    let (reply, closed) = send_bad(addr, b"*2\r\n$16385\r\n".to_vec());
    assert_eq!(reply, protocol_error("unauthenticated bulk length"));
    assert!(closed);
    assert_still_serving(&mut bystander, "unauthenticated $16385");

    // The same sizes are fine once authenticated.
    let big = "x".repeat(16385);
    let mut args = vec!["MSET"];
    for _ in 0..5 {
        args.extend(["k", big.as_str()]);
    }
    assert_eq!(bystander.cmd(&args).unwrap(), Reply::Simple("OK".into()));
}
