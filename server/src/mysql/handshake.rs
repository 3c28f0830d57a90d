//! Connection phase: the v10 initial handshake, the client's HandshakeResponse41 and
//! COM_CHANGE_USER, and the authentication exchange (AuthSwitchRequest, caching_sha2 fast auth).
//!
//! Invariants: every connection gets its own 20-byte nonce from a CSPRNG; only clients with
//! CLIENT_PROTOCOL_41 are served; the effective capabilities are the intersection of client
//! and server; an account without a password is admitted only from a loopback peer; every
//! failure is ER_ACCESS_DENIED_ERROR (1045) without saying whether the user exists.

use std::net::IpAddr;

use orcinus_sql::session::{Credentials, SqlEngine, SqlError};
use rand::Rng;
use tokio::io::{AsyncRead, AsyncWrite};

use super::auth::{AuthPlugin, verify};
use super::codec::{WireReader, put_nul_terminated};
use super::constants::{SERVER_CAPABILITIES, SERVER_COLLATION, SERVER_VERSION, capability};
use super::error::{ErrPacket, ProtocolError};
use super::packet::PacketStream;

/// Length of the authentication nonce.
pub const NONCE_LEN: usize = 20;

/// A per-connection random nonce of printable bytes other than `$` (old clients treat it as a
/// C string; MySQL avoids the same bytes).
#[must_use]
pub fn new_nonce() -> [u8; NONCE_LEN] {
    let mut rng = rand::rng();
    let mut nonce = [0u8; NONCE_LEN];
    for b in &mut nonce {
        let mut c = rng.random_range(0x21u8..0x7f);
        if c == b'$' {
            c = b'%';
        }
        *b = c;
    }
    nonce
}

/// The initial handshake packet (protocol version 10).
#[must_use]
pub fn initial_handshake(connection_id: u32, nonce: &[u8; NONCE_LEN], status: u16) -> Vec<u8> {
    let (head, tail) = nonce.split_at(8);
    let caps = SERVER_CAPABILITIES.to_le_bytes();
    let mut p = Vec::with_capacity(128);
    p.push(10);
    put_nul_terminated(&mut p, SERVER_VERSION.as_bytes());
    p.extend_from_slice(&connection_id.to_le_bytes());
    p.extend_from_slice(head);
    p.push(0);
    p.extend(caps.iter().take(2));
    p.push(SERVER_COLLATION);
    p.extend_from_slice(&status.to_le_bytes());
    p.extend(caps.iter().skip(2));
    p.push((NONCE_LEN + 1) as u8);
    p.extend_from_slice(&[0u8; 10]);
    put_nul_terminated(&mut p, tail);
    put_nul_terminated(&mut p, AuthPlugin::CachingSha2.name().as_bytes());
    p
}

/// What the client sent in its handshake response (or COM_CHANGE_USER).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientLogin {
    /// Effective capabilities (client ∩ server).
    pub capabilities: u32,
    /// User name.
    pub user: String,
    /// Authentication response of the client's plugin.
    pub auth_response: Vec<u8>,
    /// Database to select, if any.
    pub database: Option<String>,
    /// The client's plugin name, if it sent one.
    pub plugin: Option<Vec<u8>>,
}

fn utf8(bytes: &[u8], what: &'static str) -> Result<String, ProtocolError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtocolError::Malformed(what))
}

/// Parses HandshakeResponse41.
pub fn parse_handshake_response(payload: &[u8]) -> Result<ClientLogin, ProtocolError> {
    let mut r = WireReader::new(payload);
    let client_caps = r.u32("capability flags")?;
    if client_caps & capability::PROTOCOL_41 == 0 {
        return Err(ProtocolError::Malformed("client lacks CLIENT_PROTOCOL_41"));
    }
    if client_caps & capability::SSL != 0 {
        return Err(ProtocolError::Malformed("SSL requested but not offered"));
    }
    let capabilities = client_caps & SERVER_CAPABILITIES;
    r.u32("max packet size")?;
    r.u8("character set")?;
    r.bytes(23, "filler")?;
    let user = utf8(r.nul_terminated("user name")?, "user name")?;
    let auth_response = if capabilities & capability::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        r.lenenc_bytes("auth response")?
    } else if capabilities & capability::SECURE_CONNECTION != 0 {
        let n = r.u8("auth response length")?;
        r.bytes(usize::from(n), "auth response")?
    } else {
        r.nul_terminated("auth response")?
    }
    .to_vec();
    let database = if capabilities & capability::CONNECT_WITH_DB != 0 && r.remaining() > 0 {
        Some(utf8(r.nul_terminated_or_rest(), "database")?).filter(|d| !d.is_empty())
    } else {
        None
    };
    let plugin = (capabilities & capability::PLUGIN_AUTH != 0 && r.remaining() > 0)
        .then(|| r.nul_terminated_or_rest().to_vec());
    Ok(ClientLogin {
        capabilities,
        user,
        auth_response,
        database,
        plugin,
    })
}

/// Parses the body of COM_CHANGE_USER (after the command byte), given the connection's
/// capabilities.
pub fn parse_change_user(body: &[u8], capabilities: u32) -> Result<ClientLogin, ProtocolError> {
    let mut r = WireReader::new(body);
    let user = utf8(r.nul_terminated("user name")?, "user name")?;
    let auth_response = if capabilities & capability::SECURE_CONNECTION != 0 {
        let n = r.u8("auth response length")?;
        r.bytes(usize::from(n), "auth response")?
    } else {
        r.nul_terminated("auth response")?
    }
    .to_vec();
    let database = Some(utf8(r.nul_terminated_or_rest(), "database")?).filter(|d| !d.is_empty());
    if r.remaining() >= 2 {
        r.u16("character set")?;
    }
    let plugin = (capabilities & capability::PLUGIN_AUTH != 0 && r.remaining() > 0)
        .then(|| r.nul_terminated_or_rest().to_vec());
    Ok(ClientLogin {
        capabilities,
        user,
        auth_response,
        database,
        plugin,
    })
}

/// Runs the authentication exchange after a login packet. Returns `Ok(Err(packet))` when the
/// login is refused (the caller sends the packet), `Err` on protocol failure.
pub async fn authenticate<E: SqlEngine, S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut PacketStream<S>,
    engine: &E,
    login: &mut ClientLogin,
    nonce: &[u8; NONCE_LEN],
    peer: IpAddr,
) -> Result<Result<(), ErrPacket>, ProtocolError> {
    let requested = match &login.plugin {
        Some(name) => AuthPlugin::from_name(name),
        None => Some(AuthPlugin::Native),
    };
    let plugin = match requested {
        Some(p) => p,
        None => {
            let switch_to = AuthPlugin::CachingSha2;
            let mut p = vec![0xfe];
            put_nul_terminated(&mut p, switch_to.name().as_bytes());
            put_nul_terminated(&mut p, nonce);
            stream.write_packet(&p);
            stream.flush().await?;
            login.auth_response = stream.read_packet().await?;
            switch_to
        }
    };
    let denied = |login: &ClientLogin| {
        Ok(Err(ErrPacket::from_sql(&SqlError::AccessDenied {
            user: login.user.clone(),
            host: peer.to_string(),
            using_password: !login.auth_response.is_empty(),
        })))
    };
    let account = match engine.lookup_account_from(&login.user, peer).await {
        Ok(Some(a)) => a,
        Ok(None) => {
            // Do the same hashing work as for a real account, so response time does not
            // reveal whether the user exists.
            let dummy = Credentials::from_password(nonce);
            let _ = verify(plugin, &dummy, nonce, &login.auth_response);
            return denied(login);
        }
        Err(e) => return Ok(Err(ErrPacket::from_sql(&e))),
    };
    let no_password = account.credentials == Credentials::NoPassword;
    if no_password && !peer.is_loopback() {
        return denied(login);
    }
    if !verify(plugin, &account.credentials, nonce, &login.auth_response) {
        return denied(login);
    }
    if plugin == AuthPlugin::CachingSha2 && !no_password {
        // AuthMoreData: fast_auth_success; the OK follows.
        stream.write_packet(&[0x01, 0x03]);
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::codec::put_lenenc_bytes;

    fn response(caps: u32, user: &str, auth: &[u8], db: Option<&str>, plugin: &str) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(1u32 << 24).to_le_bytes());
        p.push(255);
        p.extend_from_slice(&[0; 23]);
        put_nul_terminated(&mut p, user.as_bytes());
        put_lenenc_bytes(&mut p, auth);
        if let Some(db) = db {
            put_nul_terminated(&mut p, db.as_bytes());
        }
        put_nul_terminated(&mut p, plugin.as_bytes());
        p
    }

    #[test]
    fn handshake_carries_version_nonce_and_plugin() {
        let nonce = new_nonce();
        assert!(nonce.iter().all(|&b| b != 0 && b != b'$'));
        let p = initial_handshake(42, &nonce, 2);
        assert_eq!(p[0], 10);
        assert!(
            p.windows(SERVER_VERSION.len())
                .any(|w| w == SERVER_VERSION.as_bytes())
        );
        assert!(p.ends_with(b"caching_sha2_password\0"));
        assert_ne!(new_nonce(), nonce);
    }

    #[test]
    fn parses_response_with_db_and_plugin() {
        let caps = capability::PROTOCOL_41
            | capability::PLUGIN_AUTH
            | capability::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | capability::SECURE_CONNECTION
            | capability::CONNECT_WITH_DB;
        let login = parse_handshake_response(&response(
            caps,
            "sbtest",
            b"xyz",
            Some("sbtest"),
            "mysql_native_password",
        ))
        .unwrap();
        assert_eq!(login.user, "sbtest");
        assert_eq!(login.auth_response, b"xyz");
        assert_eq!(login.database.as_deref(), Some("sbtest"));
        assert_eq!(login.plugin.as_deref(), Some(&b"mysql_native_password"[..]));
    }

    #[test]
    fn truncated_responses_are_malformed_not_panics() {
        let caps = capability::PROTOCOL_41
            | capability::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | capability::SECURE_CONNECTION;
        let full = response(caps, "root", &[7; 20], None, "x");
        for cut in 0..full.len() - 2 {
            let _ = parse_handshake_response(&full[..cut]);
        }
        assert!(parse_handshake_response(&full[..10]).is_err());
        assert!(parse_handshake_response(&[0; 32]).is_err());
    }
}
