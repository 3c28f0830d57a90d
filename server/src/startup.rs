//! Start-up steps that touch the outside world, in the order that keeps a failed start harmless:
//! bind both listeners (a port in use fails here, before the data dir is touched), refuse a
//! non-loopback bind on a new data dir (its root would have no password) before creating it,
//! open the engine (a locked data dir fails here, and storage creates nothing on a locked path),
//! load the account table and refuse a non-loopback bind while an administrator has no password
//! (before the table is initialised, so a refused start writes no account), then announce the
//! bound addresses on stdout.
//!
//! Invariant: the announcement is exactly one line per listener, `mysql listening on ADDR` then
//! `redis listening on ADDR`, with the addresses actually bound (port 0 resolved), flushed, and
//! printed only after everything that can fail at start-up has succeeded.

use crate::config::ServerSettings;
use crate::error::ServerError;
use orcinus_sql::accounts::{AccountName, AccountStore};
use orcinus_storage::{Engine, ErrorKind as StorageErrorKind, StorageConfig};
use std::io::Write;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
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

fn passwordless_admin(bind: IpAddr, accounts: &[AccountName]) -> ServerError {
    ServerError::PasswordlessAdmin {
        bind,
        accounts: accounts
            .iter()
            .map(AccountName::quoted)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Before the data dir is opened: a non-loopback bind on a data dir that does not exist yet (or
/// is empty) is refused, because its account table would start with a password-less root.
pub fn check_public_bind_before_open(server: &ServerSettings) -> Result<(), ServerError> {
    if server.bind.to_canonical().is_loopback() || !is_new_data_dir(&server.data_dir) {
        return Ok(());
    }
    Err(passwordless_admin(
        server.bind,
        &[AccountStore::initial_root().name],
    ))
}

fn is_new_data_dir(path: &Path) -> bool {
    match std::fs::read_dir(path) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Loads the account table, refuses a non-loopback `bind` while an administrator account has
/// no password (nothing is written then), and initialises the table on a new data dir.
pub async fn open_accounts(
    engine: &Engine,
    bind: IpAddr,
) -> Result<Arc<AccountStore>, ServerError> {
    let open_error = |e: orcinus_sql::SqlError| ServerError::ServiceOpen {
        protocol: "mysql",
        reason: format!("account table: {e}"),
    };
    let store = AccountStore::load(engine).map_err(open_error)?;
    if !bind.to_canonical().is_loopback() {
        let unsafe_accounts = store.passwordless_administrators();
        if !unsafe_accounts.is_empty() {
            return Err(passwordless_admin(bind, &unsafe_accounts));
        }
    }
    store.bootstrap_if_new().await.map_err(open_error)?;
    Ok(Arc::new(store))
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

    fn public(data_dir: std::path::PathBuf) -> ServerSettings {
        ServerSettings {
            bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            data_dir,
            ..loopback_port_zero()
        }
    }

    #[tokio::test]
    async fn public_bind_on_a_new_data_dir_is_refused_before_creating_it() {
        let parent = tempfile::tempdir().unwrap();
        let missing = parent.path().join("data");
        let err = check_public_bind_before_open(&public(missing.clone())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "server.bind 0.0.0.0 is not a loopback address and 'root'@'%' has no password; \
             start bound to 127.0.0.1, set one (ALTER USER ... IDENTIFIED BY), then restart"
        );
        assert!(!missing.exists());
        std::fs::create_dir(&missing).unwrap();
        assert!(check_public_bind_before_open(&public(missing.clone())).is_err());
        let loopback = ServerSettings {
            data_dir: missing,
            ..loopback_port_zero()
        };
        check_public_bind_before_open(&loopback).unwrap();
    }

    #[tokio::test]
    async fn public_bind_needs_every_administrator_to_have_a_password() {
        let dir = tempfile::tempdir().unwrap();
        let storage = StorageConfig::for_test(dir.path().to_path_buf());
        let public_ip = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
        let engine = open_engine(storage.clone()).unwrap();
        // Refused before initialising: the table stays unwritten.
        let err = open_accounts(&engine, public_ip).await.unwrap_err();
        assert!(
            matches!(err, ServerError::PasswordlessAdmin { .. }),
            "{err}"
        );
        assert!(!AccountStore::load(&engine).unwrap().is_initialised());
        // Bound to loopback, root is created; give it a password, then a public bind works.
        let store = open_accounts(&engine, IpAddr::V4(Ipv4Addr::LOCALHOST))
            .await
            .unwrap();
        let root = orcinus_sql::accounts::Invoker {
            user: "root",
            client: IpAddr::V4(Ipv4Addr::LOCALHOST),
        };
        for sql in [
            "CREATE USER ops IDENTIFIED BY ''",
            "GRANT ALL ON *.* TO ops",
            "ALTER USER root IDENTIFIED BY 'pw'",
        ] {
            orcinus_sql::accounts::execute_sql(&store, root, sql)
                .await
                .unwrap()
                .unwrap();
        }
        let err = open_accounts(&engine, public_ip).await.unwrap_err();
        assert!(
            err.to_string().contains("'ops'@'%' has no password"),
            "{err}"
        );
        orcinus_sql::accounts::execute_sql(&store, root, "ALTER USER ops IDENTIFIED BY 'o'")
            .await
            .unwrap()
            .unwrap();
        open_accounts(&engine, public_ip).await.unwrap();
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
