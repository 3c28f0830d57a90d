//! Start-up steps that touch the outside world, in the order that keeps a failed start harmless:
//! bind both listeners (a port in use fails here, before the data dir is touched), open the
//! engine (a locked data dir fails here, and storage creates nothing on a locked path), then
//! announce the bound addresses on stdout.
//!
//! Invariant: the announcement is exactly one line per listener, `mysql listening on ADDR` then
//! `redis listening on ADDR`, with the addresses actually bound (port 0 resolved), flushed, and
//! printed only after everything that can fail at start-up has succeeded.

use crate::config::ServerSettings;
use crate::error::ServerError;
use orcinus_storage::{Engine, ErrorKind as StorageErrorKind, StorageConfig};
use std::io::Write;
use std::net::SocketAddr;
use tokio::net::TcpListener;

/// The two bound listeners and their actual addresses.
#[derive(Debug)]
pub struct Listeners {
    /// The MySQL-protocol listener.
    pub mysql: TcpListener,
    /// Its bound address.
    pub mysql_addr: SocketAddr,
    /// The RESP listener.
    pub resp: TcpListener,
    /// Its bound address.
    pub resp_addr: SocketAddr,
}

/// Binds the MySQL listener, then the RESP listener, on `server.bind`.
pub async fn bind_listeners(server: &ServerSettings) -> Result<Listeners, ServerError> {
    let (mysql, mysql_addr) =
        bind_one("mysql", SocketAddr::new(server.bind, server.mysql_port)).await?;
    let (resp, resp_addr) =
        bind_one("redis", SocketAddr::new(server.bind, server.redis_port)).await?;
    Ok(Listeners {
        mysql,
        mysql_addr,
        resp,
        resp_addr,
    })
}

async fn bind_one(
    protocol: &'static str,
    addr: SocketAddr,
) -> Result<(TcpListener, SocketAddr), ServerError> {
    let bind_error = |source: std::io::Error| {
        if source.kind() == std::io::ErrorKind::AddrInUse {
            ServerError::PortInUse { protocol, addr }
        } else {
            ServerError::Bind {
                protocol,
                addr,
                source,
            }
        }
    };
    let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
    let bound = listener.local_addr().map_err(bind_error)?;
    Ok((listener, bound))
}

/// Opens the storage engine in `storage.path` (the data dir).
pub fn open_engine(storage: StorageConfig) -> Result<Engine, ServerError> {
    let path = storage.path.clone();
    Engine::open(storage).map_err(|source| {
        if source.kind() == StorageErrorKind::DirectoryLocked {
            ServerError::DataDirLocked { path }
        } else {
            ServerError::StorageOpen { path, source }
        }
    })
}

/// Prints the listening lines to `out` and flushes it.
pub fn announce(listeners: &Listeners, out: &mut impl Write) -> Result<(), ServerError> {
    writeln!(out, "mysql listening on {}", listeners.mysql_addr).map_err(ServerError::Stdout)?;
    writeln!(out, "redis listening on {}", listeners.resp_addr).map_err(ServerError::Stdout)?;
    out.flush().map_err(ServerError::Stdout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn loopback_port_zero() -> ServerSettings {
        ServerSettings {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            mysql_port: 0,
            redis_port: 0,
            ..ServerSettings::default()
        }
    }

    #[tokio::test]
    async fn port_zero_binds_distinct_free_ports_and_announces_them() {
        let listeners = bind_listeners(&loopback_port_zero()).await.unwrap();
        assert_ne!(listeners.mysql_addr.port(), 0);
        assert_ne!(listeners.mysql_addr, listeners.resp_addr);
        let mut out = Vec::new();
        announce(&listeners, &mut out).unwrap();
        let expected = format!(
            "mysql listening on {}\nredis listening on {}\n",
            listeners.mysql_addr, listeners.resp_addr
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[tokio::test]
    async fn port_in_use_names_the_protocol() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let settings = ServerSettings {
            redis_port: taken.local_addr().unwrap().port(),
            ..loopback_port_zero()
        };
        let err = bind_listeners(&settings).await.unwrap_err();
        assert!(
            matches!(
                err,
                ServerError::PortInUse {
                    protocol: "redis",
                    ..
                }
            ),
            "{err}"
        );
    }
}
