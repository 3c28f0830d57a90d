//! Connection commands: PING/ECHO/QUIT, unknown-command and arity errors, AUTH (all forms, with
//! and without requirepass), HELLO, CLIENT subcommands, RESET.

use crate::harness::*;
use orcinus_kv::{KvConfig, Protocol, Reply};

fn with_password() -> Harness {
    Harness::with_config(KvConfig {
        requirepass: Some("pw".into()),
        ..KvConfig::default()
    })
}

#[tokio::test]
async fn ping_echo_unknown_and_arity() {
    let mut h = Harness::new();
    assert_eq!(h.run("PING").await, Reply::Simple("PONG".into()));
    assert_eq!(h.run("PING hi").await, bulk("hi"));
    assert_eq!(
        h.run("PING a b").await,
        err("ERR wrong number of arguments for 'ping' command")
    );
    assert_eq!(h.run("ECHO x").await, bulk("x"));
    assert_eq!(
        h.run("ECHO").await,
        err("ERR wrong number of arguments for 'echo' command")
    );
    assert_eq!(
        h.run("get").await,
        err("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        h.run("nosuch a b").await,
        err("ERR unknown command 'nosuch', with args beginning with: 'a' 'b' ")
    );
    assert_eq!(
        h.run("nosuch").await,
        err("ERR unknown command 'nosuch', with args beginning with: ")
    );
    assert_eq!(h.run("QUIT").await, ok());
    assert!(h.session.closing);
}

#[tokio::test]
async fn auth_with_requirepass() {
    let mut h = with_password();
    assert!(!h.session.authenticated);
    assert_eq!(h.run("GET k").await, err("NOAUTH Authentication required."));
    assert_eq!(h.run("PING").await, err("NOAUTH Authentication required."));
    let wrongpass = err("WRONGPASS invalid username-password pair or user is disabled.");
    assert_eq!(h.run("AUTH nope").await, wrongpass);
    assert_eq!(h.run("AUTH other pw").await, wrongpass);
    assert_eq!(h.run("AUTH default:nope").await, wrongpass);
    assert_eq!(h.run("AUTH a b c").await, err(SYNTAX));
    assert!(!h.session.authenticated);
    assert_eq!(h.run("AUTH pw").await, ok());
    assert_eq!(h.run("GET k").await, null());
    let mut s2 = h.new_session();
    assert_eq!(run_in(&h.server, &mut s2, "AUTH default pw").await, ok());
    let mut s3 = h.new_session();
    assert_eq!(run_in(&h.server, &mut s3, "AUTH default:pw").await, ok());
}

#[tokio::test]
async fn auth_without_password() {
    let mut h = Harness::new();
    assert!(h.session.authenticated);
    assert_eq!(
        h.run("AUTH x").await,
        err(
            "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
        )
    );
    assert_eq!(h.run("AUTH default anything").await, ok());
    assert_eq!(
        h.run("AUTH bob x").await,
        err("WRONGPASS invalid username-password pair or user is disabled.")
    );
}

#[tokio::test]
async fn hello_switches_protocol_and_authenticates() {
    let mut h = with_password();
    let noauth = h.run("HELLO 3").await;
    assert!(matches!(&noauth, Reply::Error(t) if t.starts_with("NOAUTH HELLO must be called")));
    assert_eq!(h.session.protocol, Protocol::Resp2);
    assert_eq!(
        h.run("HELLO 4").await,
        err("NOPROTO unsupported protocol version")
    );
    assert_eq!(
        h.run("HELLO x").await,
        err("ERR Protocol version is not an integer or out of range")
    );
    assert_eq!(
        h.run("HELLO 3 FOO").await,
        err("ERR Syntax error in HELLO option 'FOO'")
    );
    let Reply::Map(fields) = h.run("HELLO 3 AUTH default pw SETNAME app").await else {
        panic!("expected map")
    };
    assert!(fields.contains(&(bulk("proto"), int(3))));
    assert_eq!(h.session.protocol, Protocol::Resp3);
    assert_eq!(h.run("CLIENT GETNAME").await, bulk("app"));
    assert!(matches!(h.run("HELLO 2").await, Reply::Map(_)));
    assert_eq!(h.session.protocol, Protocol::Resp2);
    let mut s2 = h.new_session();
    assert!(matches!(
        run_in(&h.server, &mut s2, "HELLO 3 AUTH default:pw").await,
        Reply::Map(_)
    ));
    assert!(s2.authenticated);
}

#[tokio::test]
async fn client_subcommands() {
    let mut h = Harness::new();
    let Reply::Integer(id) = h.run("CLIENT ID").await else {
        panic!()
    };
    assert!(id > 0);
    assert_eq!(h.run("CLIENT GETNAME").await, null());
    assert_eq!(h.run("CLIENT SETNAME worker-1").await, ok());
    assert_eq!(h.run("CLIENT GETNAME").await, bulk("worker-1"));
    assert_eq!(
        h.raw(&[b"CLIENT", b"SETNAME", b"bad name"]).await,
        err("ERR Client names cannot contain spaces, newlines or special characters.")
    );
    assert_eq!(h.run("CLIENT SETINFO LIB-NAME redis-py").await, ok());
    assert_eq!(h.run("CLIENT SETINFO LIB-VER 5.0").await, ok());
    assert_eq!(
        h.run("CLIENT SETINFO FOO x").await,
        err("ERR Unrecognized option 'FOO'")
    );
    let Reply::Bulk(info) = h.wire("CLIENT INFO").await else {
        panic!()
    };
    let info = String::from_utf8(info.to_vec()).unwrap();
    assert!(info.contains(&format!("id={id} ")), "{info}");
    assert!(info.contains("name=worker-1 "), "{info}");
    assert!(info.contains("lib-name=redis-py "), "{info}");
    let _other = h.new_session();
    let Reply::Bulk(list) = h.wire("CLIENT LIST").await else {
        panic!()
    };
    assert_eq!(String::from_utf8(list.to_vec()).unwrap().lines().count(), 2);
    let Reply::Bulk(list) = h.wire(&format!("CLIENT LIST ID {id}")).await else {
        panic!()
    };
    assert_eq!(String::from_utf8(list.to_vec()).unwrap().lines().count(), 1);
    assert_eq!(h.run("CLIENT LIST BOGUS").await, err(SYNTAX));
    assert!(matches!(h.run("CLIENT HELP").await, Reply::Array(_)));
    assert_eq!(
        h.run("CLIENT KILL x").await,
        err("ERR unknown subcommand 'KILL'. Try CLIENT HELP.")
    );
    assert_eq!(
        h.run("CLIENT SETNAME").await,
        err("ERR wrong number of arguments for 'client|setname' command")
    );
    h.run("HELLO 3").await;
    assert!(matches!(
        h.run("CLIENT INFO").await,
        Reply::Verbatim("txt", _)
    ));
}

#[tokio::test]
async fn reset_restores_defaults() {
    let mut h = Harness::new();
    h.run("SELECT 3").await;
    h.run("HELLO 3").await;
    h.run("MULTI").await;
    assert_eq!(h.run("RESET").await, Reply::Simple("RESET".into()));
    assert_eq!(h.session.db, 0);
    assert_eq!(h.session.protocol, Protocol::Resp2);
    assert!(h.session.multi.is_none());
}
