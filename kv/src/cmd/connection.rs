//! Connection commands: AUTH, HELLO, PING, ECHO, SELECT, CLIENT. Secrets are compared in
//! constant time; a failed AUTH leaves the session's state unchanged. AUTH and HELLO AUTH
//! accept the `default` user (`requirepass`) and every account of the shared account table
//! (through [`crate::Authenticator`]).

use crate::args::{arg, is, lossy, parse_i64_opt};
use crate::error::{KvError, KvResult};
use crate::kv_server::{DATABASES, KvServer};
use crate::reply::Reply;
use crate::session::{Protocol, Session};
use bytes::Bytes;
use std::net::IpAddr;

/// The Redis version whose semantics we implement (reported by HELLO and INFO).
pub const REDIS_COMPAT_VERSION: &str = "7.0.0";

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
const NOPASS_CONFIGURED: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";

/// Constant-time equality (length leaks, content does not).
fn secret_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Who an AUTH authenticated as.
enum AuthedUser {
    /// The `default` user (`requirepass`).
    Default,
    /// An account of the shared account table.
    Account(String),
}

/// Checks credentials; `user` is `None` for the one-argument form.
///
/// - `default` is the `requirepass` user; without `requirepass` it needs no password but
///   serves loopback clients only, so a remote client naming it gets WRONGPASS.
/// - Any other user name is an account of the shared account table, checked by the server's
///   [`crate::Authenticator`] (host patterns match the session's client address).
/// - One argument that is not `requirepass` itself but contains `:` is Orca's `user:password`
///   form for password-only clients; it is split at the first `:`.
fn check_credentials(
    server: &KvServer,
    session: &Session,
    user: Option<&[u8]>,
    pass: &[u8],
) -> KvResult<AuthedUser> {
    let required = server.config.requirepass.as_deref().map(str::as_bytes);
    let user = match user {
        Some(u) => u,
        None => {
            if required.is_some_and(|r| secret_eq(pass, r)) {
                return Ok(AuthedUser::Default);
            }
            match pass.iter().position(|&c| c == b':') {
                Some(colon) => {
                    let (u, p) = (pass.get(..colon), pass.get(colon + 1..));
                    let (Some(u), Some(p)) = (u, p) else {
                        return Err(KvError::command(WRONGPASS));
                    };
                    return check_credentials(server, session, Some(u), p);
                }
                None if required.is_none() => return Err(KvError::command(NOPASS_CONFIGURED)),
                None => return Err(KvError::command(WRONGPASS)),
            }
        }
    };
    // Loopback unless the connection said otherwise (sessions made without an address).
    let client = session
        .client_ip
        .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
    if user == b"default" {
        let ok = match required {
            Some(r) => secret_eq(pass, r),
            None => !server.requires_auth_for(session.client_ip),
        };
        return if ok {
            Ok(AuthedUser::Default)
        } else {
            Err(KvError::command(WRONGPASS))
        };
    }
    if server.authenticator.verify(user, pass, client) {
        Ok(AuthedUser::Account(lossy(user)))
    } else {
        Err(KvError::command(WRONGPASS))
    }
}

/// Marks the session authenticated as `who` (CLIENT LIST shows the user).
fn authenticated_as(session: &mut Session, who: AuthedUser) {
    session.authenticated = true;
    let name = match who {
        AuthedUser::Default => "default".to_owned(),
        AuthedUser::Account(name) => name,
    };
    session.update_entry(|e| e.user = name);
}

/// AUTH password | AUTH user password | AUTH user:password.
pub fn auth(server: &KvServer, session: &mut Session, args: &[Bytes]) -> KvResult<Reply> {
    let who = match args.len() {
        2 => check_credentials(server, session, None, arg(args, 1)?)?,
        3 => check_credentials(server, session, Some(arg(args, 1)?), arg(args, 2)?)?,
        _ => return Err(KvError::syntax()),
    };
    authenticated_as(session, who);
    Ok(Reply::ok())
}

fn valid_client_name(name: &[u8]) -> bool {
    name.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

const BAD_NAME: &str = "ERR Client names cannot contain spaces, newlines or special characters.";

/// HELLO [protover [AUTH user pass] [SETNAME name]].
pub fn hello(server: &KvServer, session: &mut Session, args: &[Bytes]) -> KvResult<Reply> {
    let mut protocol = session.protocol;
    let mut name = None;
    let mut credentials: Option<(Option<Bytes>, Bytes)> = None;
    if let Some(raw) = args.get(1) {
        protocol = match parse_i64_opt(raw) {
            Some(2) => Protocol::Resp2,
            Some(3) => Protocol::Resp3,
            Some(_) => return Err(KvError::command("NOPROTO unsupported protocol version")),
            None => {
                return Err(KvError::command(
                    "ERR Protocol version is not an integer or out of range",
                ));
            }
        };
        let mut i = 2;
        while let Some(option) = args.get(i) {
            let remaining = args.len() - i - 1;
            if is(option, "AUTH") && remaining >= 2 {
                credentials = Some((Some(arg(args, i + 1)?.clone()), arg(args, i + 2)?.clone()));
                i += 3;
            } else if is(option, "AUTH") && remaining == 1 {
                credentials = Some((None, arg(args, i + 1)?.clone()));
                i += 2;
            } else if is(option, "SETNAME") && remaining >= 1 {
                let n = arg(args, i + 1)?;
                if !valid_client_name(n) {
                    return Err(KvError::command(BAD_NAME));
                }
                name = Some(n.clone());
                i += 2;
            } else {
                return Err(KvError::command(format!(
                    "ERR Syntax error in HELLO option '{}'",
                    lossy(option)
                )));
            }
        }
    }
    if let Some((user, pass)) = &credentials {
        let who = check_credentials(server, session, user.as_deref(), pass)?;
        authenticated_as(session, who);
    }
    if !session.authenticated {
        return Err(KvError::command(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time",
        ));
    }
    if let Some(n) = name {
        session.name = (!n.is_empty()).then_some(n);
    }
    session.protocol = protocol;
    let text = |s: &str| Reply::bulk(s);
    Ok(Reply::Map(vec![
        (text("server"), text("redis")),
        (text("version"), text(REDIS_COMPAT_VERSION)),
        (text("proto"), Reply::Integer(protocol.number())),
        (
            text("id"),
            Reply::Integer(i64::try_from(session.id).unwrap_or(i64::MAX)),
        ),
        (text("mode"), text("standalone")),
        (text("role"), text("master")),
        (text("modules"), Reply::Array(vec![])),
    ]))
}

/// PING [message].
pub fn ping(_session: &Session, args: &[Bytes]) -> KvResult<Reply> {
    if args.len() > 2 {
        return Err(KvError::arity("ping"));
    }
    Ok(match args.get(1) {
        None => Reply::Simple("PONG".into()),
        Some(msg) => Reply::Bulk(msg.clone()),
    })
}

/// ECHO message.
pub fn echo(args: &[Bytes]) -> KvResult<Reply> {
    Ok(Reply::Bulk(arg(args, 1)?.clone()))
}

/// Parses a db index, with Redis's two error texts.
pub fn parse_db(raw: &[u8]) -> KvResult<u8> {
    let n = parse_i64_opt(raw).ok_or_else(KvError::not_integer)?;
    u8::try_from(n)
        .ok()
        .filter(|&db| db < DATABASES)
        .ok_or_else(|| KvError::command("ERR DB index is out of range"))
}

/// SELECT db.
pub fn select(session: &mut Session, args: &[Bytes]) -> KvResult<Reply> {
    session.db = parse_db(arg(args, 1)?)?;
    Ok(Reply::ok())
}

/// A text block: a RESP3 verbatim `txt` string, which the encoder sends as a bulk string in
/// RESP2 (as Redis does for CLIENT INFO / LIST).
fn text_block(text: String) -> Reply {
    Reply::Verbatim("txt", Bytes::from(text))
}

const CLIENT_HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "LIST [TYPE normal] [ID <id> [<id> ...]]",
    "    Return information about client connections.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "HELP",
    "    Print this help.",
];

/// CLIENT ID | GETNAME | SETNAME | INFO | LIST | SETINFO | HELP.
pub fn client(server: &KvServer, session: &mut Session, args: &[Bytes]) -> KvResult<Reply> {
    let sub = arg(args, 1)?;
    if is(sub, "ID") {
        Ok(Reply::Integer(
            i64::try_from(session.id).unwrap_or(i64::MAX),
        ))
    } else if is(sub, "GETNAME") {
        Ok(Reply::bulk_or_null(session.name.as_ref()))
    } else if is(sub, "SETNAME") {
        let name = arg(args, 2)?;
        if !valid_client_name(name) {
            return Err(KvError::command(BAD_NAME));
        }
        session.name = (!name.is_empty()).then(|| name.clone());
        Ok(Reply::ok())
    } else if is(sub, "INFO") {
        session.sync_entry();
        Ok(text_block(format!("{}\n", session.entry().describe())))
    } else if is(sub, "LIST") {
        client_list(server, session, args)
    } else if is(sub, "SETINFO") {
        let (attr, value) = (arg(args, 2)?, arg(args, 3)?);
        if !valid_client_name(value) {
            return Err(KvError::command(format!(
                "ERR {} cannot contain spaces, newlines or special characters.",
                lossy(attr).to_uppercase()
            )));
        }
        let value = lossy(value);
        if is(attr, "LIB-NAME") {
            session.update_entry(|e| e.lib_name = value);
        } else if is(attr, "LIB-VER") {
            session.update_entry(|e| e.lib_ver = value);
        } else {
            return Err(KvError::command(format!(
                "ERR Unrecognized option '{}'",
                lossy(attr)
            )));
        }
        Ok(Reply::ok())
    } else if is(sub, "HELP") {
        Ok(Reply::Array(
            CLIENT_HELP
                .iter()
                .map(|l| Reply::Simple((*l).into()))
                .collect(),
        ))
    } else {
        Err(KvError::command(format!(
            "ERR unknown subcommand '{}'. Try CLIENT HELP.",
            lossy(sub)
        )))
    }
}

fn client_list(server: &KvServer, session: &mut Session, args: &[Bytes]) -> KvResult<Reply> {
    let mut ids: Option<Vec<u64>> = None;
    // Every client here is a normal one; the other Redis types are valid and list nobody.
    let mut only_other_type = false;
    let mut i = 2;
    while let Some(option) = args.get(i) {
        if is(option, "TYPE") {
            let kind = arg(args, i + 1)?;
            if !is(kind, "normal") {
                if !["master", "replica", "slave", "pubsub"]
                    .iter()
                    .any(|t| is(kind, t))
                {
                    return Err(KvError::command(format!(
                        "ERR Unknown client type '{}'",
                        lossy(kind)
                    )));
                }
                only_other_type = true;
            }
            i += 2;
        } else if is(option, "ID") && i + 1 < args.len() {
            let mut list = Vec::new();
            for raw in args.iter().skip(i + 1) {
                let id = parse_i64_opt(raw)
                    .and_then(|n| u64::try_from(n).ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(|| KvError::command("ERR Invalid client ID"))?;
                list.push(id);
            }
            ids = Some(list);
            i = args.len();
        } else {
            return Err(KvError::syntax());
        }
    }
    session.sync_entry();
    let mut out = String::new();
    for entry in server.clients.entries() {
        if !only_other_type && ids.as_ref().is_none_or(|ids| ids.contains(&entry.id)) {
            out.push_str(&entry.describe());
            out.push('\n');
        }
    }
    Ok(text_block(out))
}
