//! Property tests: no input from the network panics a parser, framing is independent of how
//! bytes are split across reads, and arbitrary commands on one connection leave the server
//! serving others.

use std::io::Cursor;

use proptest::prelude::*;
use tokio::io::AsyncWriteExt;

use super::raw_client::{CLIENT_CAPS, RawClient};
use super::start;
use crate::mysql::MysqlSettings;
use crate::mysql::binary::{ParamType, decode_param};
use crate::mysql::codec::WireReader;
use crate::mysql::handshake::{parse_change_user, parse_handshake_response};
use crate::mysql::packet::PacketStream;
use crate::mysql::statements::StatementTable;
use orcinus_sql::session::PreparedStatement;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #[test]
    fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), caps in any::<u32>()) {
        let _ = parse_handshake_response(&bytes);
        let _ = parse_change_user(&bytes, caps);
        let mut table = StatementTable::default();
        table.insert(&PreparedStatement { id: 1, param_count: 3, columns: Vec::new() });
        let mut execute = vec![1, 0, 0, 0];
        execute.extend_from_slice(&bytes);
        let _ = table.decode_execute(&execute);
        let _ = table.send_long_data(&bytes, 100);
        let mut r = WireReader::new(&bytes);
        let _ = r.lenenc_bytes("x");
    }

    #[test]
    fn param_decoding_never_panics(code in any::<u8>(), unsigned in any::<bool>(), bytes in proptest::collection::vec(any::<u8>(), 0..20)) {
        let mut r = WireReader::new(&bytes);
        let _ = decode_param(&mut r, ParamType { code, unsigned });
    }

    #[test]
    fn framing_is_independent_of_read_boundaries(
        payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..6),
        chunk in 1usize..64,
    ) {
        let mut writer = PacketStream::new(Cursor::new(Vec::new()), u64::MAX);
        let mut bytes = Vec::new();
        for p in &payloads {
            writer.write_packet(p);
        }
        runtime().block_on(async {
            writer.flush().await.unwrap();
        });
        bytes.extend_from_slice(writer.into_inner().get_ref());
        let count = payloads.len();
        let received = runtime().block_on(async move {
            let (mut client, server) = tokio::io::duplex(chunk);
            let feeder = tokio::spawn(async move {
                for piece in bytes.chunks(chunk) {
                    client.write_all(piece).await.unwrap();
                }
            });
            let mut reader = PacketStream::new(server, u64::MAX);
            let mut got = Vec::new();
            for _ in 0..count {
                got.push(reader.read_packet().await.unwrap());
            }
            feeder.await.unwrap();
            got
        });
        prop_assert_eq!(received, payloads);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn arbitrary_commands_do_not_disturb_other_clients(
        commands in proptest::collection::vec(
            (prop::sample::select(vec![0x02u8, 0x03, 0x04, 0x0e, 0x11, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1f, 0x42]),
             proptest::collection::vec(any::<u8>(), 0..40)),
            1..8),
    ) {
        runtime().block_on(async move {
            let addr = start(MysqlSettings::default()).await;
            let mut bystander = RawClient::login_root(addr, CLIENT_CAPS).await;
            let mut fuzzed = RawClient::login_root(addr, CLIENT_CAPS).await;
            for (cmd, body) in commands {
                let mut p = vec![cmd];
                p.extend_from_slice(&body);
                fuzzed.stream.reset_sequence();
                fuzzed.stream.write_packet(&p);
                if fuzzed.stream.flush().await.is_err() {
                    break;
                }
                // Responses are not read: some commands have none, and the fuzzed
                // connection may be closed by the server; only the other clients matter.
            }
            assert_eq!(bystander.command(&[0x0e]).await[0], 0);
            let mut fresh = RawClient::login_root(addr, CLIENT_CAPS).await;
            assert_eq!(fresh.command(&[0x0e]).await[0], 0);
        });
    }
}
