//! AUTH and HELLO AUTH against named accounts (the server's shared account table, here a fake
//! [`Authenticator`]): the two-argument, one-argument `user:password` and HELLO forms, the
//! `default` user's loopback-only no-password access, and RESET.

use crate::harness::*;
use orcinus_kv::{Authenticator, KvConfig, KvServer, Reply, Session};
use orcinus_storage::{Engine, StorageConfig};
use parking_lot::Mutex;
use std::net::IpAddr;
use std::sync::Arc;

/// One account `alice` / `s3cret`, admitting clients from anywhere; records the addresses.
#[derive(Default)]
struct FakeAccounts {
    seen: Mutex<Vec<IpAddr>>,
}

impl Authenticator for FakeAccounts {
    fn verify(&self, user: &[u8], password: &[u8], client: IpAddr) -> bool {
        self.seen.lock().push(client);
        user == b"alice" && password == b"s3cret"
    }

    fn has_password_accounts(&self) -> bool {
        true
    }
}

struct Setup {
    server: Arc<KvServer>,
    accounts: Arc<FakeAccounts>,
    _dir: tempfile::TempDir,
}

fn setup(requirepass: Option<&str>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(StorageConfig::for_test(dir.path().join("engine"))).unwrap();
    let config = KvConfig {
        requirepass: requirepass.map(str::to_owned),
        ..KvConfig::default()
    };
    let accounts = Arc::new(FakeAccounts::default());
    let server = Arc::new(
        KvServer::open(engine, config)
            .unwrap()
            .with_authenticator(accounts.clone()),
    );
    Setup {
        server,
        accounts,
        _dir: dir,
    }
}

fn session_from(server: &KvServer, addr: &str) -> Session {
    server.new_client_session(addr.parse().unwrap(), "127.0.0.1:6379".into())
}

fn wrongpass() -> Reply {
    err("WRONGPASS invalid username-password pair or user is disabled.")
}

fn user_in_client_info(reply: &Reply) -> String {
    let Reply::Verbatim(_, text) = reply else {
        panic!("{reply:?}");
    };
    let text = String::from_utf8_lossy(text).into_owned();
    text.split_whitespace()
        .find_map(|f| f.strip_prefix("user="))
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn accounts_authenticate_in_every_form_with_requirepass() {
    let s = setup(Some("pw"));
    let remote = "10.0.0.7:5000";
    for (line, expected) in [
        ("AUTH alice s3cret", ok()),
        ("AUTH alice:s3cret", ok()),
        ("AUTH pw", ok()),
        ("AUTH default pw", ok()),
        ("AUTH default:pw", ok()),
        ("AUTH alice wrong", wrongpass()),
        ("AUTH alice:wrong", wrongpass()),
        ("AUTH bob s3cret", wrongpass()),
        ("AUTH s3cret", wrongpass()),
        ("AUTH alice", wrongpass()),
    ] {
        let mut session = session_from(&s.server, remote);
        assert!(!session.authenticated);
        assert_eq!(
            run_in(&s.server, &mut session, line).await,
            expected,
            "{line}"
        );
        assert_eq!(session.authenticated, expected == ok(), "{line}");
    }
    assert!(
        s.accounts
            .seen
            .lock()
            .iter()
            .all(|ip| *ip == "10.0.0.7".parse::<IpAddr>().unwrap())
    );
    let mut session = session_from(&s.server, remote);
    run_in(&s.server, &mut session, "AUTH alice s3cret").await;
    let info = run_in(&s.server, &mut session, "CLIENT INFO").await;
    assert_eq!(user_in_client_info(&info), "alice");
    // A failed AUTH leaves an authenticated session as it was.
    assert_eq!(
        run_in(&s.server, &mut session, "AUTH alice nope").await,
        wrongpass()
    );
    assert!(session.authenticated);
}

#[tokio::test]
async fn hello_auth_with_accounts() {
    let s = setup(Some("pw"));
    for line in ["HELLO 3 AUTH alice s3cret", "HELLO 2 AUTH alice:s3cret"] {
        let mut session = session_from(&s.server, "10.0.0.7:5000");
        let reply = run_in(&s.server, &mut session, line).await;
        assert!(matches!(reply, Reply::Map(_)), "{line}: {reply:?}");
        assert!(session.authenticated, "{line}");
    }
    let mut session = session_from(&s.server, "10.0.0.7:5000");
    assert_eq!(
        run_in(&s.server, &mut session, "HELLO 3 AUTH alice nope").await,
        wrongpass()
    );
    assert!(!session.authenticated);
}

#[tokio::test]
async fn without_requirepass_remote_clients_need_an_account() {
    let s = setup(None);
    let mut local = session_from(&s.server, "127.0.0.1:5000");
    assert!(
        local.authenticated,
        "loopback clients get the password-less default user"
    );
    assert_eq!(run_in(&s.server, &mut local, "AUTH default x").await, ok());
    let mut remote = session_from(&s.server, "[2001:db8::1]:5000");
    assert!(!remote.authenticated);
    assert_eq!(
        run_in(&s.server, &mut remote, "GET k").await,
        err("NOAUTH Authentication required.")
    );
    assert_eq!(
        run_in(&s.server, &mut remote, "AUTH default x").await,
        wrongpass()
    );
    assert_eq!(
        run_in(&s.server, &mut remote, "AUTH x").await,
        err(
            "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
        )
    );
    assert_eq!(
        run_in(&s.server, &mut remote, "AUTH alice:nope").await,
        wrongpass()
    );
    assert!(!remote.authenticated);
    assert_eq!(
        run_in(&s.server, &mut remote, "AUTH alice:s3cret").await,
        ok()
    );
    assert_eq!(run_in(&s.server, &mut remote, "GET k").await, Reply::Null);
    // RESET goes back to the default user, which a remote client cannot use.
    run_in(&s.server, &mut remote, "RESET").await;
    assert!(!remote.authenticated);
    let info = run_in(&s.server, &mut local, "CLIENT INFO").await;
    assert_eq!(user_in_client_info(&info), "default");
}
