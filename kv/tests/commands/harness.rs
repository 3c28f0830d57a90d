//! A kv server on a temp engine plus one session, with reply helpers. `run` returns the typed
//! reply; `wire` returns it as a client of the session's protocol decodes it (see [`decoded`]),
//! for tests of protocol-dependent shapes such as scores.

use orcinus_kv::score::format_score;
use orcinus_kv::{Bytes, KvConfig, KvServer, Protocol, Reply, Session};
use orcinus_storage::{Engine, StorageConfig};
use std::sync::Arc;

pub struct Harness {
    pub session: Session,
    pub server: Arc<KvServer>,
    _dir: tempfile::TempDir,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(KvConfig::default())
    }

    pub fn with_config(config: KvConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(StorageConfig::for_test(dir.path().join("engine"))).unwrap();
        let server = Arc::new(KvServer::open(engine, config).unwrap());
        let session = server.new_session("127.0.0.1:40000".into(), "127.0.0.1:6379".into());
        Self {
            session,
            server,
            _dir: dir,
        }
    }

    /// Closes the engine and opens it again on the same directory, with a fresh session.
    /// No other clone of the server may be alive.
    pub fn reopen(self) -> Self {
        let Harness {
            session,
            server,
            _dir,
        } = self;
        let config = server.config().clone();
        drop(session);
        assert_eq!(Arc::strong_count(&server), 1, "server still shared");
        drop(server);
        let engine = Engine::open(StorageConfig::for_test(_dir.path().join("engine"))).unwrap();
        let server = Arc::new(KvServer::open(engine, config).unwrap());
        let session = server.new_session("127.0.0.1:40000".into(), "127.0.0.1:6379".into());
        Self {
            session,
            server,
            _dir,
        }
    }

    /// A second session on the same server.
    pub fn new_session(&self) -> Session {
        self.server
            .new_session("127.0.0.1:40001".into(), "127.0.0.1:6379".into())
    }

    /// Runs a whitespace-separated command.
    pub async fn run(&mut self, line: &str) -> Reply {
        let args = line
            .split_whitespace()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        self.server
            .execute(&mut self.session, args)
            .await
            .into_plain()
    }

    /// Runs a whitespace-separated command; its reply as the session's client decodes it.
    pub async fn wire(&mut self, line: &str) -> Reply {
        let reply = self.run(line).await;
        decoded(reply, self.session.protocol)
    }

    /// Runs a command given as byte arguments.
    pub async fn raw(&mut self, args: &[&[u8]]) -> Reply {
        let args = args.iter().map(|a| Bytes::copy_from_slice(a)).collect();
        self.server
            .execute(&mut self.session, args)
            .await
            .into_plain()
    }
}

pub async fn run_in(server: &KvServer, session: &mut Session, line: &str) -> Reply {
    let args = line
        .split_whitespace()
        .map(|w| Bytes::copy_from_slice(w.as_bytes()))
        .collect();
    server.execute(session, args).await.into_plain()
}

/// [`run_in`], with the reply as the session's client decodes it.
pub async fn wire_in(server: &KvServer, session: &mut Session, line: &str) -> Reply {
    let reply = run_in(server, session, line).await;
    decoded(reply, session.protocol)
}

/// `reply` as a client of `protocol` decodes it, following server/src/resp/encoder.rs. RESP2:
/// Double → bulk string in Redis's formatting, Map and Pairs → flat array, Set → array,
/// Boolean → integer, Verbatim → bulk string. RESP3: Pairs → array of 2-element arrays; the
/// other types are their own RESP3 types. Applied recursively.
pub fn decoded(reply: Reply, protocol: Protocol) -> Reply {
    let resp3 = protocol == Protocol::Resp3;
    let all = |items: Vec<Reply>| items.into_iter().map(|r| decoded(r, protocol)).collect();
    let flat = |pairs: Vec<(Reply, Reply)>| {
        pairs
            .into_iter()
            .flat_map(|(k, v)| [decoded(k, protocol), decoded(v, protocol)])
            .collect()
    };
    match reply {
        Reply::Array(items) => Reply::Array(all(items)),
        Reply::Set(items) if resp3 => Reply::Set(all(items)),
        Reply::Set(items) => Reply::Array(all(items)),
        Reply::Map(pairs) if resp3 => Reply::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (decoded(k, protocol), decoded(v, protocol)))
                .collect(),
        ),
        Reply::Map(pairs) => Reply::Array(flat(pairs)),
        Reply::Pairs(pairs) if resp3 => Reply::Array(
            pairs
                .into_iter()
                .map(|(k, v)| Reply::Array(vec![decoded(k, protocol), decoded(v, protocol)]))
                .collect(),
        ),
        Reply::Pairs(pairs) => Reply::Array(flat(pairs)),
        Reply::Double(value) if !resp3 => Reply::bulk(format_score(value)),
        Reply::Boolean(b) if !resp3 => Reply::Integer(i64::from(b)),
        Reply::Verbatim(_, text) if !resp3 => Reply::Bulk(text),
        other => other,
    }
}

pub fn ok() -> Reply {
    Reply::ok()
}

pub fn int(n: i64) -> Reply {
    Reply::Integer(n)
}

pub fn bulk(s: &str) -> Reply {
    Reply::bulk(s)
}

pub fn null() -> Reply {
    Reply::Null
}

pub fn err(text: &str) -> Reply {
    Reply::Error(text.into())
}

pub fn array(items: &[&str]) -> Reply {
    Reply::Array(items.iter().map(|s| bulk(s)).collect())
}

pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const SYNTAX: &str = "ERR syntax error";
pub const NOT_INT: &str = "ERR value is not an integer or out of range";

/// Sorted bulk strings of an array reply.
pub fn sorted(reply: Reply) -> Vec<String> {
    let Reply::Array(items) = reply else {
        panic!("not an array: {reply:?}");
    };
    let mut out: Vec<String> = items
        .into_iter()
        .map(|r| match r {
            Reply::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
            other => panic!("not bulk: {other:?}"),
        })
        .collect();
    out.sort();
    out
}
