//! COMMAND, COMMAND COUNT / INFO / DOCS / LIST / HELP, answered from the command table.

use crate::args::{arg, is, lossy};
use crate::command_table::{COMMANDS, CommandSpec, Flag, SubcommandSpec, lookup};
use crate::error::{KvError, KvResult};
use crate::reply::Reply;
use bytes::Bytes;

fn simple_set(items: impl IntoIterator<Item = String>) -> Reply {
    Reply::Set(
        items
            .into_iter()
            .map(|item| Reply::Simple(item.into()))
            .collect(),
    )
}

/// The ACL category of a command's data type or role, as Redis names it (`None` for server
/// commands that have none, and for containers whose subcommands carry their own).
fn type_category(name: &str, group: &str) -> Option<&'static str> {
    Some(match group {
        "generic" => "@keyspace",
        "string" => "@string",
        "hash" => "@hash",
        "list" => "@list",
        "set" => "@set",
        "sorted-set" => "@sortedset",
        "bitmap" => "@bitmap",
        "transactions" => "@transaction",
        "connection" if name != "client" => "@connection",
        "server" => match name {
            "dbsize" | "flushdb" | "flushall" => "@keyspace",
            "command" => "@connection",
            _ => return None,
        },
        _ => return None,
    })
}

/// Commands Redis puts in `@dangerous` besides the admin ones.
const DANGEROUS: &[&str] = &["keys", "restore", "info", "flushdb", "flushall"];

/// A command's ACL categories (`name` is the command's, `group` its COMMAND DOCS group).
fn categories(name: &str, group: &str, flags: &[Flag]) -> Reply {
    let mut cats: Vec<String> = type_category(name, group)
        .map(String::from)
        .into_iter()
        .collect();
    if flags.contains(&Flag::Write) {
        cats.push("@write".into());
    } else if flags.contains(&Flag::Readonly) {
        cats.push("@read".into());
    }
    cats.push(
        if flags.contains(&Flag::Fast) {
            "@fast"
        } else {
            "@slow"
        }
        .into(),
    );
    if flags.contains(&Flag::Blocking) {
        cats.push("@blocking".into());
    }
    if flags.contains(&Flag::Admin) {
        cats.push("@admin".into());
    }
    if flags.contains(&Flag::Admin) || DANGEROUS.contains(&name) {
        cats.push("@dangerous".into());
    }
    simple_set(cats)
}

fn flag_set(flags: &[Flag]) -> Reply {
    simple_set(flags.iter().map(|f| f.name().to_string()))
}

fn sub_info(parent: &CommandSpec, sub: &SubcommandSpec) -> Reply {
    Reply::Array(vec![
        Reply::bulk(format!("{}|{}", parent.name, sub.name)),
        Reply::Integer(i64::from(sub.arity)),
        flag_set(sub.flags),
        Reply::Integer(0),
        Reply::Integer(0),
        Reply::Integer(0),
        categories(parent.name, parent.group, sub.flags),
        Reply::Set(vec![]),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
    ])
}

fn key_specs(spec: &CommandSpec) -> Reply {
    if spec.first_key == 0 {
        return Reply::Array(vec![]);
    }
    let text = |s: &str| Reply::bulk(s);
    let flags = if spec.has(Flag::Write) { "RW" } else { "RO" };
    let last = if spec.last_key < 0 {
        spec.last_key
    } else {
        spec.last_key - spec.first_key
    };
    Reply::Array(vec![Reply::Map(vec![
        (text("flags"), simple_set([flags.to_string()])),
        (
            text("begin_search"),
            Reply::Map(vec![
                (text("type"), text("index")),
                (
                    text("spec"),
                    Reply::Map(vec![(text("index"), Reply::Integer(spec.first_key.into()))]),
                ),
            ]),
        ),
        (
            text("find_keys"),
            Reply::Map(vec![
                (text("type"), text("range")),
                (
                    text("spec"),
                    Reply::Map(vec![
                        (text("lastkey"), Reply::Integer(last.into())),
                        (text("keystep"), Reply::Integer(spec.step.into())),
                        (text("limit"), Reply::Integer(0)),
                    ]),
                ),
            ]),
        ),
    ])])
}

/// The COMMAND INFO entry of one command.
#[must_use]
pub fn command_info(spec: &CommandSpec) -> Reply {
    Reply::Array(vec![
        Reply::bulk(spec.name),
        Reply::Integer(i64::from(spec.arity)),
        flag_set(spec.flags),
        Reply::Integer(spec.first_key.into()),
        Reply::Integer(spec.last_key.into()),
        Reply::Integer(spec.step.into()),
        categories(spec.name, spec.group, spec.flags),
        Reply::Set(vec![]),
        key_specs(spec),
        Reply::Array(spec.subcommands.iter().map(|s| sub_info(spec, s)).collect()),
    ])
}

fn doc_map(summary: &str, since: &str, group: &str) -> Vec<(Reply, Reply)> {
    vec![
        (Reply::bulk("summary"), Reply::bulk(summary)),
        (Reply::bulk("since"), Reply::bulk(since)),
        (Reply::bulk("group"), Reply::bulk(group)),
    ]
}

fn command_docs(spec: &CommandSpec) -> Reply {
    let mut doc = doc_map(spec.summary, spec.since, spec.group);
    if !spec.subcommands.is_empty() {
        let subs = spec
            .subcommands
            .iter()
            .map(|s| {
                (
                    Reply::bulk(format!("{}|{}", spec.name, s.name)),
                    Reply::Map(doc_map(s.summary, spec.since, spec.group)),
                )
            })
            .collect();
        doc.push((Reply::bulk("subcommands"), Reply::Map(subs)));
    }
    Reply::Map(doc)
}

const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all commands.",
    "COUNT",
    "    Return the total number of commands in this server.",
    "LIST",
    "    Return a list of all commands in this server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple commands.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple commands.",
    "HELP",
    "    Print this help.",
];

/// COMMAND [COUNT | INFO names… | DOCS names… | LIST | HELP].
pub fn command(args: &[Bytes]) -> KvResult<Reply> {
    let Some(sub) = args.get(1) else {
        return Ok(Reply::Array(COMMANDS.iter().map(command_info).collect()));
    };
    let names = args.get(2..).unwrap_or_default();
    if is(sub, "COUNT") {
        Ok(Reply::Integer(i64::try_from(COMMANDS.len()).unwrap_or(0)))
    } else if is(sub, "LIST") {
        if !names.is_empty() {
            return Err(KvError::command(
                "ERR COMMAND LIST FILTERBY is not supported",
            ));
        }
        Ok(Reply::Array(
            COMMANDS.iter().map(|c| Reply::bulk(c.name)).collect(),
        ))
    } else if is(sub, "INFO") {
        if names.is_empty() {
            return Ok(Reply::Array(COMMANDS.iter().map(command_info).collect()));
        }
        Ok(Reply::Array(
            names
                .iter()
                .map(|n| lookup(n).map_or(Reply::Null, command_info))
                .collect(),
        ))
    } else if is(sub, "DOCS") {
        let specs: Vec<&CommandSpec> = if names.is_empty() {
            COMMANDS.iter().collect()
        } else {
            names.iter().filter_map(|n| lookup(n)).collect()
        };
        Ok(Reply::Map(
            specs
                .into_iter()
                .map(|s| (Reply::bulk(s.name), command_docs(s)))
                .collect(),
        ))
    } else if is(sub, "HELP") {
        Ok(Reply::Array(
            COMMAND_HELP
                .iter()
                .map(|l| Reply::Simple((*l).into()))
                .collect(),
        ))
    } else {
        let _ = arg(args, 1)?;
        Err(KvError::command(format!(
            "ERR unknown subcommand '{}'. Try COMMAND HELP.",
            lossy(sub)
        )))
    }
}
