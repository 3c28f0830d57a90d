//! A minimal packet-level MySQL client for tests that need exact bytes.

use std::net::SocketAddr;

use sha1::{Digest, Sha1};
use sha2::Sha256;
use tokio::net::TcpStream;

use crate::mysql::codec::{WireReader, put_lenenc_bytes, put_nul_terminated};
use crate::mysql::constants::capability;
use crate::mysql::packet::PacketStream;

/// Capabilities a modern client sends.
pub const CLIENT_CAPS: u32 = capability::PROTOCOL_41
    | capability::SECURE_CONNECTION
    | capability::PLUGIN_AUTH
    | capability::PLUGIN_AUTH_LENENC_CLIENT_DATA
    | capability::CONNECT_WITH_DB
    | capability::MULTI_STATEMENTS
    | capability::MULTI_RESULTS
    | capability::TRANSACTIONS
    | capability::DEPRECATE_EOF;

pub struct RawClient {
    pub stream: PacketStream<TcpStream>,
    pub nonce: Vec<u8>,
    pub handshake_status: u16,
}

pub fn native_scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    let s1 = Sha1::digest(password);
    let s2 = Sha1::digest(s1);
    let mask = Sha1::new().chain_update(nonce).chain_update(s2).finalize();
    s1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
}

pub fn sha2_scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    let s1 = Sha256::digest(password);
    let s2 = Sha256::digest(s1);
    let mask = Sha256::new()
        .chain_update(s2)
        .chain_update(nonce)
        .finalize();
    s1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
}

impl RawClient {
    /// Connects and reads the server's first packet (handshake or ERR).
    pub async fn connect(addr: SocketAddr) -> (Self, Vec<u8>) {
        let socket = TcpStream::connect(addr).await.unwrap();
        let mut stream = PacketStream::new(socket, 1 << 26);
        let first = stream.read_packet().await.unwrap();
        let mut client = Self {
            stream,
            nonce: Vec::new(),
            handshake_status: 0,
        };
        if first[0] == 10 {
            let mut r = WireReader::new(&first[1..]);
            r.nul_terminated("version").unwrap();
            r.u32("id").unwrap();
            let mut nonce = r.bytes(8, "n1").unwrap().to_vec();
            r.u8("filler").unwrap();
            r.u16("caps").unwrap();
            r.u8("charset").unwrap();
            client.handshake_status = r.u16("status").unwrap();
            r.u16("caps hi").unwrap();
            r.u8("len").unwrap();
            r.bytes(10, "reserved").unwrap();
            nonce.extend_from_slice(r.bytes(12, "n2").unwrap());
            client.nonce = nonce;
        }
        (client, first)
    }

    /// Sends a handshake response and returns the server's reply packet.
    pub async fn send_login(
        &mut self,
        caps: u32,
        user: &str,
        auth: &[u8],
        db: Option<&str>,
        plugin: &str,
    ) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(1u32 << 24).to_le_bytes());
        p.push(255);
        p.extend_from_slice(&[0; 23]);
        put_nul_terminated(&mut p, user.as_bytes());
        put_lenenc_bytes(&mut p, auth);
        if caps & capability::CONNECT_WITH_DB != 0 {
            put_nul_terminated(&mut p, db.unwrap_or_default().as_bytes());
        }
        put_nul_terminated(&mut p, plugin.as_bytes());
        self.send(&p).await;
        self.read().await
    }

    /// Connects and logs in as root (no password); panics unless the reply is OK.
    pub async fn login_root(addr: SocketAddr, caps: u32) -> Self {
        let (mut c, _) = Self::connect(addr).await;
        let reply = c
            .send_login(caps, "root", b"", None, "mysql_native_password")
            .await;
        assert_eq!(reply[0], 0, "login failed: {reply:?}");
        c
    }

    pub async fn send(&mut self, payload: &[u8]) {
        self.stream.write_packet(payload);
        self.stream.flush().await.unwrap();
    }

    pub async fn read(&mut self) -> Vec<u8> {
        self.stream.read_packet().await.unwrap()
    }

    /// Sends a command (sequence 0) and returns the first reply packet.
    pub async fn command(&mut self, payload: &[u8]) -> Vec<u8> {
        self.stream.reset_sequence();
        self.send(payload).await;
        self.read().await
    }

    pub async fn query(&mut self, sql: &str) -> Vec<u8> {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        self.command(&p).await
    }
}

/// The error code of an ERR packet.
pub fn err_code(p: &[u8]) -> u16 {
    assert_eq!(p[0], 0xff, "not an ERR packet: {p:?}");
    u16::from_le_bytes([p[1], p[2]])
}

/// The status flags of an OK packet with small affected-rows and insert-id values.
pub fn ok_status(p: &[u8]) -> u16 {
    assert!(p[0] == 0 || p[0] == 0xfe, "not an OK packet: {p:?}");
    u16::from_le_bytes([p[3], p[4]])
}
