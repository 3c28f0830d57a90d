//! Packet-level tests: status flags, auth exchanges, limits and malformed input.

use super::raw_client::{
    CLIENT_CAPS, RawClient, err_code, native_scramble, ok_status, sha2_scramble,
};
use super::start;
use crate::mysql::MysqlSettings;
use crate::mysql::constants::{capability, column_type, status};

#[tokio::test]
async fn status_flags_follow_the_session() {
    let addr = start(MysqlSettings::default()).await;
    let (mut c, first) = RawClient::connect(addr).await;
    assert_eq!(first[0], 10);
    assert_eq!(c.handshake_status, status::AUTOCOMMIT);
    let auth = native_scramble(b"secret", &c.nonce);
    let reply = c
        .send_login(
            CLIENT_CAPS,
            "alice",
            &auth,
            Some("test"),
            "mysql_native_password",
        )
        .await;
    assert_eq!(ok_status(&reply), status::AUTOCOMMIT);
    assert_eq!(
        ok_status(&c.query("BEGIN").await),
        status::AUTOCOMMIT | status::IN_TRANS
    );
    assert_eq!(
        ok_status(&c.query("SET autocommit=0").await),
        status::IN_TRANS
    );
    assert_eq!(ok_status(&c.query("COMMIT").await), 0);
}

#[tokio::test]
async fn unsupported_plugin_gets_auth_switch_to_caching_sha2() {
    let addr = start(MysqlSettings::default()).await;
    let (mut c, _) = RawClient::connect(addr).await;
    let reply = c
        .send_login(CLIENT_CAPS, "alice", b"junk", None, "sha256_password")
        .await;
    assert_eq!(reply[0], 0xfe);
    assert!(reply.starts_with(b"\xfecaching_sha2_password\0"));
    assert_eq!(&reply[23..43], c.nonce.as_slice());
    let scramble = sha2_scramble(b"secret", &c.nonce);
    c.send(&scramble).await;
    assert_eq!(c.read().await, vec![0x01, 0x03]);
    assert_eq!(c.read().await[0], 0);
}

#[tokio::test]
async fn wrong_native_password_is_denied() {
    let addr = start(MysqlSettings::default()).await;
    let (mut c, _) = RawClient::connect(addr).await;
    let auth = native_scramble(b"nope", &c.nonce);
    let reply = c
        .send_login(CLIENT_CAPS, "alice", &auth, None, "mysql_native_password")
        .await;
    assert_eq!(err_code(&reply), 1045);
}

#[tokio::test]
async fn garbage_handshake_gets_bad_handshake() {
    let addr = start(MysqlSettings::default()).await;
    let (mut c, _) = RawClient::connect(addr).await;
    c.send(&[1, 2, 3]).await;
    assert_eq!(err_code(&c.read().await), 1043);
}

#[tokio::test]
async fn unknown_and_malformed_commands_keep_the_connection() {
    let addr = start(MysqlSettings::default()).await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS).await;
    assert_eq!(err_code(&c.command(&[0x42]).await), 1047);
    assert_eq!(err_code(&c.command(&[0x17, 1]).await), 1835);
    // Malformed commands that have no response are dropped without one: the next packet
    // the client reads is the answer to its PING.
    for silent in [&[0x19][..], &[0x18, 1][..]] {
        c.stream.reset_sequence();
        c.send(silent).await;
    }
    assert_eq!(c.command(&[0x0e]).await[0], 0);
    // Prepare a one-parameter statement, then execute it without parameter data.
    let prep = c.command(b"\x16ECHO ?").await;
    assert_eq!(prep[0], 0);
    let id = prep[1];
    for _ in 0..1 {
        c.read().await; // parameter definition (DEPRECATE_EOF: no EOF)
        c.read().await; // column definition
    }
    assert_eq!(
        err_code(&c.command(&[0x17, id, 0, 0, 0, 0, 1, 0, 0, 0]).await),
        1835
    );
    assert_eq!(
        err_code(&c.command(&[0x17, 99, 0, 0, 0, 0, 1, 0, 0, 0]).await),
        1243
    );
    assert_eq!(c.command(&[0x0e]).await[0], 0);
}

#[tokio::test]
async fn parameter_types_are_kept_between_executes() {
    let addr = start(MysqlSettings::default()).await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS).await;
    let prep = c.command(b"\x16ECHO ?").await;
    let id = prep[1];
    c.read().await;
    c.read().await;
    let with_types = [
        0x17,
        id,
        0,
        0,
        0,
        0,
        1,
        0,
        0,
        0,
        0,
        1,
        column_type::LONG,
        0,
        7,
        0,
        0,
        0,
    ];
    assert_eq!(c.command(&with_types).await, vec![1]);
    c.read().await; // column definition
    assert_eq!(c.read().await, vec![0, 0, 7, 0, 0, 0, 0, 0, 0, 0]);
    c.read().await; // end
    let without_types = [0x17, id, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 9, 0, 0, 0];
    assert_eq!(c.command(&without_types).await, vec![1]);
    c.read().await;
    assert_eq!(c.read().await, vec![0, 0, 9, 0, 0, 0, 0, 0, 0, 0]);
}

#[tokio::test]
async fn oversized_packet_is_refused_and_the_connection_closed() {
    let addr = start(MysqlSettings {
        max_allowed_packet: 1024,
        ..MysqlSettings::default()
    })
    .await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS).await;
    let reply = c.query(&"x".repeat(2000)).await;
    assert_eq!(err_code(&reply), 1153);
    assert!(c.stream.read_packet().await.is_err());
}

#[tokio::test]
async fn too_many_connections() {
    let addr = start(MysqlSettings {
        max_connections: 1,
        ..MysqlSettings::default()
    })
    .await;
    let mut first = RawClient::login_root(addr, CLIENT_CAPS).await;
    let (_, reply) = RawClient::connect(addr).await;
    assert_eq!(err_code(&reply), 1040);
    assert!(String::from_utf8_lossy(&reply).contains("Too many connections"));
    assert_eq!(first.command(&[0x0e]).await[0], 0);
}

#[tokio::test]
async fn statistics_field_list_and_set_option() {
    let addr = start(MysqlSettings::default()).await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS).await;
    let stats = c.command(&[0x09]).await;
    assert!(
        stats.starts_with(b"Uptime: "),
        "{}",
        String::from_utf8_lossy(&stats)
    );
    assert!(String::from_utf8_lossy(&stats).contains("Threads: 1"));
    let first = c.command(b"\x04t\0").await;
    assert_eq!(&first[..4], b"\x03def");
    assert_eq!(first.last(), Some(&0xfb));
    for _ in 0..4 {
        c.read().await;
    }
    assert_eq!(c.read().await[0], 0xfe);
    assert_eq!(err_code(&c.command(b"\x04nope\0").await), 1146);
    assert_eq!(c.command(&[0x1b, 1, 0]).await[0], 0xfe);
    assert_eq!(err_code(&c.query("SELECT 1;SELECT 1").await), 1064);
    assert_eq!(c.command(&[0x1b, 0, 0]).await[0], 0xfe);
    assert_eq!(c.query("SELECT 1;SELECT 1").await, vec![1]);
}

#[tokio::test]
async fn eof_framing_without_deprecate_eof() {
    let addr = start(MysqlSettings::default()).await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS & !capability::DEPRECATE_EOF).await;
    assert_eq!(c.query("SELECT 1").await, vec![1]);
    c.read().await; // column definition
    assert_eq!(c.read().await, vec![0xfe, 0, 0, 2, 0]);
    assert_eq!(c.read().await, vec![1, b'1']);
    assert_eq!(c.read().await, vec![0xfe, 0, 0, 2, 0]);
}

#[tokio::test]
async fn multi_results_carry_more_results_flag() {
    let addr = start(MysqlSettings::default()).await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS).await;
    let first = c.query("BEGIN;COMMIT").await;
    assert_eq!(
        ok_status(&first),
        status::AUTOCOMMIT | status::IN_TRANS | status::MORE_RESULTS_EXISTS
    );
    assert_eq!(ok_status(&c.read().await), status::AUTOCOMMIT);
}

#[tokio::test]
async fn ok_packet_layout() {
    let addr = start(MysqlSettings::default()).await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS).await;
    let ok = c.query("INSERT INTO t VALUES (3), (4)").await;
    let mut expected = vec![0, 2, 42, 2, 0, 0, 0, 38];
    expected.extend_from_slice(b"Records: 2  Duplicates: 0  Warnings: 0");
    assert_eq!(ok, expected);
}

#[tokio::test]
async fn idle_connections_are_closed_after_wait_timeout() {
    let addr = start(MysqlSettings {
        wait_timeout_secs: 1,
        ..MysqlSettings::default()
    })
    .await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS).await;
    let started = std::time::Instant::now();
    // The server sends the error unprompted, as the first packet of an exchange (sequence 0).
    c.stream.reset_sequence();
    let reply = c.stream.read_packet().await.unwrap();
    assert_eq!(err_code(&reply), 4031);
    assert!(started.elapsed() >= std::time::Duration::from_millis(900));
    assert!(c.stream.read_packet().await.is_err());
}

#[tokio::test]
async fn long_data_is_sent_as_the_parameter_value() {
    let addr = start(MysqlSettings::default()).await;
    let mut c = RawClient::login_root(addr, CLIENT_CAPS).await;
    let prep = c.command(b"\x16ECHO ?").await;
    let id = prep[1];
    c.read().await;
    c.read().await;
    for chunk in [&b"hello "[..], &b"world"[..]] {
        let mut p = vec![0x18, id, 0, 0, 0, 0, 0];
        p.extend_from_slice(chunk);
        c.stream.reset_sequence();
        c.send(&p).await;
    }
    let execute = [0x17, id, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, column_type::BLOB, 0];
    assert_eq!(c.command(&execute).await, vec![1]);
    c.read().await;
    assert_eq!(c.read().await, b"\x00\x00\x0bhello world".to_vec());
    c.read().await;
    // COM_STMT_RESET of an unknown statement is an error; of a known one, OK.
    assert_eq!(err_code(&c.command(&[0x1a, 99, 0, 0, 0]).await), 1243);
    assert_eq!(c.command(&[0x1a, id, 0, 0, 0]).await[0], 0);
}

#[tokio::test]
async fn a_stalled_packet_is_dropped_after_net_read_timeout() {
    use tokio::io::AsyncWriteExt;
    let settings = MysqlSettings {
        net_read_timeout_secs: 1,
        ..MysqlSettings::default()
    };
    let addr = start(settings).await;
    let stalled = RawClient::login_root(addr, CLIENT_CAPS).await;
    // Half a header, then nothing: the server gives up after the read timeout.
    let mut socket = stalled.stream.into_inner();
    socket.write_all(&[5, 0]).await.unwrap();
    let started = std::time::Instant::now();
    let mut buf = [0u8; 16];
    let n = tokio::io::AsyncReadExt::read(&mut socket, &mut buf)
        .await
        .unwrap_or(0);
    assert_eq!(n, 0, "expected the server to close the connection");
    assert!(started.elapsed() >= std::time::Duration::from_millis(900));
    let mut other = RawClient::login_root(addr, CLIENT_CAPS).await;
    assert_eq!(other.command(&[0x0e]).await[0], 0);
}

#[tokio::test]
async fn invalid_settings_are_refused() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let settings = MysqlSettings {
        net_read_timeout_secs: 0,
        ..MysqlSettings::default()
    };
    let engine = std::sync::Arc::new(super::fake_engine::FakeEngine);
    let e = crate::mysql::serve(listener, engine, settings)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(MysqlSettings::default().validate().is_ok());
}
