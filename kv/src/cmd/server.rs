//! Server commands: INFO, CONFIG (GET / SET / RESETSTAT / HELP), DBSIZE, FLUSHDB, FLUSHALL,
//! TIME. Every value reported is read from the running server, never invented; parameters we
//! do not have are absent from CONFIG GET, and CONFIG SET is refused explicitly.

use crate::args::{arg, is, lossy};
use crate::cmd::connection::REDIS_COMPAT_VERSION;
use crate::error::{KvError, KvResult};
use crate::glob::glob_match;
use crate::kv_server::{DATABASES, KvServer};
use crate::reply::Reply;
use bytes::Bytes;
use orcinus_storage::SyncPolicy;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "keyspace",
];

fn appendfsync(server: &KvServer) -> &'static str {
    match server.store.engine().config().sync {
        SyncPolicy::Always => "always",
        SyncPolicy::Everysec => "everysec",
        SyncPolicy::None => "no",
    }
}

/// Resident set size in bytes, from /proc (0 where unavailable).
fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn section(server: &KvServer, name: &str, out: &mut String) -> KvResult<()> {
    let stats = &server.stats;
    let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    let uptime = server.started.elapsed().as_secs();
    // `write!` into a String cannot fail; the results are ignored deliberately.
    match name {
        "server" => {
            let _ = write!(
                out,
                "# Server\r\nredis_version:{REDIS_COMPAT_VERSION}\r\norcinus_version:{}\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:{}\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{uptime}\r\nuptime_in_days:{}\r\n",
                env!("CARGO_PKG_VERSION"),
                std::env::consts::OS,
                std::env::consts::ARCH,
                usize::BITS,
                std::process::id(),
                server.config.tcp_port,
                uptime / 86_400,
            );
        }
        "clients" => {
            let _ = write!(
                out,
                "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:{}\r\n",
                server.client_count(),
                server.config.max_clients,
                server.blocked_clients()
            );
        }
        "memory" => {
            let _ = write!(
                out,
                "# Memory\r\nused_memory_rss:{}\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n",
                rss_bytes()
            );
        }
        "persistence" => {
            let engine = server.store.engine().stats();
            let _ = write!(
                out,
                "# Persistence\r\nloading:0\r\naof_enabled:1\r\nappendfsync:{}\r\nstorage_disk_bytes:{}\r\nstorage_syncs:{}\r\nstorage_commits:{}\r\n",
                appendfsync(server),
                engine.disk_bytes,
                engine.syncs,
                engine.commits
            );
        }
        "stats" => {
            let _ = write!(
                out,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nrejected_connections:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\nexpired_keys:{}\r\nswept_stale_members:{}\r\n",
                load(&stats.connections_received),
                load(&stats.commands_processed),
                load(&stats.rejected_connections),
                load(&stats.keyspace_hits),
                load(&stats.keyspace_misses),
                load(&stats.expired_keys),
                load(&stats.swept_members),
            );
        }
        "keyspace" => {
            out.push_str("# Keyspace\r\n");
            let now = crate::clock::now_ms();
            for db in 0..DATABASES {
                let (keys, expires) = server.store.count_keys(db, now)?;
                if keys > 0 {
                    let _ = write!(out, "db{db}:keys={keys},expires={expires},avg_ttl=0\r\n");
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// INFO [section ...].
pub fn info(server: &KvServer, args: &[Bytes]) -> KvResult<Reply> {
    let mut wanted: Vec<&str> = Vec::new();
    for raw in args.iter().skip(1) {
        let name = lossy(raw).to_ascii_lowercase();
        if matches!(name.as_str(), "all" | "default" | "everything") {
            wanted = SECTIONS.to_vec();
            break;
        }
        if let Some(known) = SECTIONS.iter().find(|s| **s == name) {
            wanted.push(known);
        }
    }
    if args.len() == 1 {
        wanted = SECTIONS.to_vec();
    }
    let mut out = String::new();
    for (i, name) in wanted.iter().enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        section(server, name, &mut out)?;
    }
    Ok(Reply::Verbatim("txt", Bytes::from(out)))
}

/// The CONFIG GET parameters and their current values.
fn config_params(server: &KvServer) -> Vec<(&'static str, String)> {
    vec![
        ("appendonly", "yes".into()),
        ("appendfsync", appendfsync(server).into()),
        ("save", String::new()),
        ("databases", DATABASES.to_string()),
        ("maxmemory", "0".into()),
        ("maxmemory-policy", "noeviction".into()),
        ("maxclients", server.config.max_clients.to_string()),
        (
            "proto-max-bulk-len",
            server.config.proto_max_bulk_len.to_string(),
        ),
        ("port", server.config.tcp_port.to_string()),
        ("timeout", "0".into()),
    ]
}

const CONFIG_HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "HELP",
    "    Print this help.",
];

/// CONFIG GET pattern... | SET | RESETSTAT | HELP.
pub fn config(server: &KvServer, args: &[Bytes]) -> KvResult<Reply> {
    let sub = arg(args, 1)?;
    if is(sub, "GET") {
        // As Redis 7.0: names match case-insensitively; a plain name (no glob characters)
        // answers under the name as the client spelled it; each parameter appears once.
        let params = config_params(server);
        let mut found: Vec<(Bytes, &String)> = Vec::new();
        for pattern in args.iter().skip(2) {
            let is_glob = pattern.iter().any(|c| matches!(c, b'*' | b'?' | b'['));
            for (name, value) in &params {
                let hit = if is_glob {
                    glob_match(&pattern.to_ascii_lowercase(), name.as_bytes())
                } else {
                    pattern.eq_ignore_ascii_case(name.as_bytes())
                };
                if hit
                    && !found
                        .iter()
                        .any(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
                {
                    let shown = if is_glob {
                        Bytes::from_static(name.as_bytes())
                    } else {
                        pattern.clone()
                    };
                    found.push((shown, value));
                }
            }
        }
        Ok(Reply::Map(
            found
                .into_iter()
                .map(|(name, value)| (Reply::Bulk(name), Reply::bulk(value)))
                .collect(),
        ))
    } else if is(sub, "SET") {
        Err(KvError::command(
            "ERR CONFIG SET is not supported: change the configuration file and restart the server",
        ))
    } else if is(sub, "RESETSTAT") {
        server.stats.reset();
        Ok(Reply::ok())
    } else if is(sub, "HELP") {
        Ok(Reply::Array(
            CONFIG_HELP
                .iter()
                .map(|l| Reply::Simple((*l).into()))
                .collect(),
        ))
    } else {
        Err(KvError::command(format!(
            "ERR unknown subcommand '{}'. Try CONFIG HELP.",
            lossy(sub)
        )))
    }
}

/// DBSIZE.
pub fn dbsize(server: &KvServer, db: u8) -> KvResult<Reply> {
    let (keys, _) = server.store.count_keys(db, crate::clock::now_ms())?;
    Ok(Reply::Integer(i64::try_from(keys).unwrap_or(i64::MAX)))
}

fn check_flush_mode(args: &[Bytes]) -> KvResult<()> {
    match args.len() {
        1 => Ok(()),
        2 if args.get(1).is_some_and(|a| is(a, "ASYNC") || is(a, "SYNC")) => Ok(()),
        _ => Err(KvError::syntax()),
    }
}

/// FLUSHDB [ASYNC|SYNC] (both run synchronously).
pub async fn flushdb(server: &KvServer, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    check_flush_mode(args)?;
    server.store.flush_db(db).await?;
    server.watches.touch_all();
    Ok(Reply::ok())
}

/// FLUSHALL [ASYNC|SYNC].
pub async fn flushall(server: &KvServer, args: &[Bytes]) -> KvResult<Reply> {
    check_flush_mode(args)?;
    for db in 0..DATABASES {
        server.store.flush_db(db).await?;
    }
    server.watches.touch_all();
    Ok(Reply::ok())
}

/// TIME: [unix seconds, microseconds].
#[must_use]
pub fn time() -> Reply {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Reply::Array(vec![
        Reply::bulk(now.as_secs().to_string()),
        Reply::bulk(now.subsec_micros().to_string()),
    ])
}
