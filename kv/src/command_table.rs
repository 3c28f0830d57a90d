//! The command table, as data: one [`CommandSpec`] per command (name, arity, flags, key
//! positions, group, summary, subcommands). The dispatcher checks arity and auth from it, and
//! COMMAND / COMMAND COUNT / COMMAND INFO / COMMAND DOCS answer from it, so the two can never
//! disagree. Arity follows Redis: `n` = exactly n arguments including the name, `-n` = at least n.

/// Which handler runs a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
#[rustfmt::skip]
pub enum CommandId {
    // connection
    Auth, Hello, Ping, Echo, Quit, Reset, Select, Client,
    // server
    Info, Config, Dbsize, Flushdb, Flushall, Time, Command,
    // strings
    Get, Set, Setnx, Setex, Psetex, Getset, Getdel, Getex, Mget, Mset, Msetnx, Append, Strlen,
    Getrange, Setrange, Incr, Decr, Incrby, Decrby, Incrbyfloat,
    // generic
    Del, Unlink, Exists, Type, Keys, Scan, Randomkey, Rename, Renamenx, Expire, Pexpire,
    Expireat, Pexpireat, Ttl, Pttl, Expiretime, Pexpiretime, Persist, Copy,
    // hashes
    Hset, Hget, Hdel, Hgetall, Hlen, Hexists, Hkeys, Hvals, Hmget, Hmset, Hsetnx, Hincrby,
    Hincrbyfloat, Hstrlen, Hscan,
    // transactions
    Multi, Exec, Discard, Watch, Unwatch,
    // lists
    Lpush, Rpush, Lpushx, Rpushx, Lpop, Rpop, Llen, Lrange, Lindex, Lset, Linsert, Lrem, Ltrim,
    Lpos, Lmove, Rpoplpush, Lmpop, Blpop, Brpop, Blmove, Brpoplpush, Blmpop,
    // hash field expiry
    Hexpire, Hpexpire, Hexpireat, Hpexpireat, Httl, Hpttl, Hexpiretime, Hpexpiretime, Hpersist,
    Hrandfield,
    // sets
    Sadd, Srem, Smembers, Sismember, Smismember, Scard, Spop, Srandmember, Smove, Sinter,
    Sunion, Sdiff, Sinterstore, Sunionstore, Sdiffstore, Sintercard, Sscan,
    // sorted sets
    Zadd, Zincrby, Zrem, Zcard, Zscore, Zmscore, Zrank, Zrevrank, Zrange, Zrevrange,
    Zrangebyscore, Zrevrangebyscore, Zrangebylex, Zrevrangebylex, Zcount, Zlexcount, Zpopmin,
    Zpopmax, Zremrangebyrank, Zremrangebyscore, Zremrangebylex, Zunionstore, Zinterstore, Zscan,
    // bitmaps
    Setbit, Getbit, Bitcount, Bitpos, Bitop,
    // more sorted-set commands
    Zunion, Zinter, Zdiff, Zdiffstore, Zrandmember, Zrangestore,
    // serialization (generic)
    Dump, Restore,
}

/// Command flags (their COMMAND INFO names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// Modifies data.
    Write,
    /// Only reads data.
    Readonly,
    /// May grow memory / disk use.
    DenyOom,
    /// Administrative.
    Admin,
    /// O(1) or O(log N).
    Fast,
    /// Allowed before authentication.
    NoAuth,
    /// Allowed while loading.
    Loading,
    /// Allowed on a stale replica.
    Stale,
    /// Not allowed inside MULTI (executes immediately).
    NoMulti,
    /// Not allowed in scripts.
    NoScript,
    /// May block the client (BLPOP …).
    Blocking,
    /// Allowed while a script or module call is busy.
    AllowBusy,
    /// Key positions depend on the arguments (numkeys forms); first/last/step are 0.
    MovableKeys,
    /// Not logged to the slow log itself (EXEC: its commands are).
    SkipSlowlog,
}

impl Flag {
    /// The name COMMAND INFO reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Readonly => "readonly",
            Self::DenyOom => "denyoom",
            Self::Admin => "admin",
            Self::Fast => "fast",
            Self::NoAuth => "no_auth",
            Self::Loading => "loading",
            Self::Stale => "stale",
            Self::NoMulti => "no_multi",
            Self::NoScript => "noscript",
            Self::Blocking => "blocking",
            Self::AllowBusy => "allow_busy",
            Self::MovableKeys => "movablekeys",
            Self::SkipSlowlog => "skip_slowlog",
        }
    }
}

/// A subcommand (CLIENT SETNAME, CONFIG GET …).
#[derive(Debug)]
pub struct SubcommandSpec {
    /// Lowercase subcommand name.
    pub name: &'static str,
    /// Arity counting the command and the subcommand.
    pub arity: i32,
    /// Flags.
    pub flags: &'static [Flag],
    /// One-line summary (COMMAND DOCS).
    pub summary: &'static str,
}

/// One command.
#[derive(Debug)]
pub struct CommandSpec {
    /// Lowercase name.
    pub name: &'static str,
    /// Handler.
    pub id: CommandId,
    /// Arity (see module docs).
    pub arity: i32,
    /// Flags.
    pub flags: &'static [Flag],
    /// First key argument (0 = none).
    pub first_key: i32,
    /// Last key argument (-1 = last argument).
    pub last_key: i32,
    /// Step between keys.
    pub step: i32,
    /// Group (COMMAND DOCS): string, generic, connection, server, hash, transactions.
    pub group: &'static str,
    /// Redis version that introduced the command.
    pub since: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Subcommands, if this is a container command.
    pub subcommands: &'static [SubcommandSpec],
    /// `flags` as a bit set ([`flag_mask`]), so [`CommandSpec::has`] is one test.
    flag_bits: u32,
}

/// The bit set of `flags`: bit `f as u32` for each flag `f`.
const fn flag_mask(flags: &[Flag]) -> u32 {
    let mut mask = 0;
    let mut rest = flags;
    while let [flag, tail @ ..] = rest {
        mask |= 1 << *flag as u32;
        rest = tail;
    }
    mask
}

impl CommandSpec {
    /// True if the command has `flag`.
    #[must_use]
    pub fn has(&self, flag: Flag) -> bool {
        self.flag_bits & (1 << flag as u32) != 0
    }

    /// The subcommand named `name` (case-insensitive).
    #[must_use]
    pub fn subcommand(&self, name: &[u8]) -> Option<&'static SubcommandSpec> {
        self.subcommands
            .iter()
            .find(|s| s.name.as_bytes().eq_ignore_ascii_case(name))
    }
}

/// True if `arity` accepts `argc` arguments.
#[must_use]
pub fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = i64::try_from(argc).unwrap_or(i64::MAX);
    let arity = i64::from(arity);
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

use CommandId as C;
use Flag::{
    Admin as A, AllowBusy as Y, Blocking as B, DenyOom as D, Fast as F, Loading as L,
    MovableKeys as M, NoAuth as N, NoScript as S, Readonly as R, SkipSlowlog as G, Stale as T,
    Write as W,
};

macro_rules! cmd {
    ($name:literal, $id:expr, $arity:expr, [$($flag:expr),*], $first:expr, $last:expr, $step:expr,
     $group:literal, $since:literal, $summary:literal) => {
        cmd!($name, $id, $arity, [$($flag),*], $first, $last, $step, $group, $since, $summary, &[])
    };
    ($name:literal, $id:expr, $arity:expr, [$($flag:expr),*], $first:expr, $last:expr, $step:expr,
     $group:literal, $since:literal, $summary:literal, $subs:expr) => {
        CommandSpec {
            name: $name, id: $id, arity: $arity, flags: &[$($flag),*], first_key: $first,
            last_key: $last, step: $step, group: $group, since: $since, summary: $summary,
            subcommands: $subs, flag_bits: flag_mask(&[$($flag),*]),
        }
    };
}

macro_rules! sub {
    ($name:literal, $arity:expr, [$($flag:expr),*], $summary:literal) => {
        SubcommandSpec { name: $name, arity: $arity, flags: &[$($flag),*], summary: $summary }
    };
}

const CLIENT_SUBS: &[SubcommandSpec] = &[
    sub!(
        "id",
        2,
        [S, L, T],
        "Returns the unique client ID of the connection."
    ),
    sub!(
        "getname",
        2,
        [S, L, T],
        "Returns the name of the connection."
    ),
    sub!("setname", 3, [S, L, T], "Sets the connection name."),
    sub!(
        "info",
        2,
        [S, L, T],
        "Returns information about the connection."
    ),
    sub!("list", -2, [A, S, L, T], "Lists open connections."),
    sub!(
        "setinfo",
        4,
        [S, L, T],
        "Sets information specific to the client or connection."
    ),
    sub!(
        "help",
        2,
        [L, T],
        "Returns helpful text about the different subcommands."
    ),
];

const CONFIG_SUBS: &[SubcommandSpec] = &[
    sub!(
        "get",
        -3,
        [A, S, L, T],
        "Returns the effective values of configuration parameters."
    ),
    sub!(
        "set",
        -4,
        [A, S, L, T],
        "Sets configuration parameters in-flight (unsupported)."
    ),
    sub!(
        "resetstat",
        2,
        [A, S, L, T],
        "Resets the server's statistics."
    ),
    sub!(
        "help",
        2,
        [L, T],
        "Returns helpful text about the different subcommands."
    ),
];

const COMMAND_SUBS: &[SubcommandSpec] = &[
    sub!("count", 2, [L, T], "Returns a count of commands."),
    sub!(
        "info",
        -2,
        [L, T],
        "Returns information about one, multiple or all commands."
    ),
    sub!(
        "docs",
        -2,
        [L, T],
        "Returns documentary information about one, multiple or all commands."
    ),
    sub!("list", -2, [L, T], "Returns a list of command names."),
    sub!(
        "help",
        2,
        [L, T],
        "Returns helpful text about the different subcommands."
    ),
];

/// Every command the server knows.
#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    cmd!("auth", C::Auth, -2, [S, L, T, F, N, Y], 0, 0, 0, "connection", "1.0.0", "Authenticates the connection."),
    cmd!("hello", C::Hello, -1, [S, L, T, F, N, Y], 0, 0, 0, "connection", "6.0.0", "Handshakes with the server."),
    cmd!("ping", C::Ping, -1, [F], 0, 0, 0, "connection", "1.0.0", "Returns the server's liveliness response."),
    cmd!("echo", C::Echo, 2, [F, L, T], 0, 0, 0, "connection", "1.0.0", "Returns the given string."),
    cmd!("quit", C::Quit, -1, [S, L, T, F, N, Y], 0, 0, 0, "connection", "1.0.0", "Closes the connection."),
    cmd!("reset", C::Reset, 1, [S, L, T, F, N, Y], 0, 0, 0, "connection", "6.2.0", "Resets the connection."),
    cmd!("select", C::Select, 2, [L, T, F], 0, 0, 0, "connection", "1.0.0", "Changes the selected database."),
    cmd!("client", C::Client, -2, [], 0, 0, 0, "connection", "2.4.0", "A container for client connection commands.", CLIENT_SUBS),
    cmd!("info", C::Info, -1, [L, T], 0, 0, 0, "server", "1.0.0", "Returns information and statistics about the server."),
    cmd!("config", C::Config, -2, [], 0, 0, 0, "server", "2.0.0", "A container for server configuration commands.", CONFIG_SUBS),
    cmd!("dbsize", C::Dbsize, 1, [R, F], 0, 0, 0, "server", "1.0.0", "Returns the number of keys in the database."),
    cmd!("flushdb", C::Flushdb, -1, [W], 0, 0, 0, "server", "1.0.0", "Removes all keys from the current database."),
    cmd!("flushall", C::Flushall, -1, [W], 0, 0, 0, "server", "1.0.0", "Removes all keys from all databases."),
    cmd!("time", C::Time, 1, [L, T, F], 0, 0, 0, "server", "2.6.0", "Returns the server time."),
    cmd!("command", C::Command, -1, [L, T], 0, 0, 0, "server", "2.8.13", "Returns detailed information about all commands.", COMMAND_SUBS),
    cmd!("get", C::Get, 2, [R, F], 1, 1, 1, "string", "1.0.0", "Returns the string value of a key."),
    cmd!("set", C::Set, -3, [W, D], 1, 1, 1, "string", "1.0.0", "Sets the string value of a key, ignoring its type."),
    cmd!("setnx", C::Setnx, 3, [W, D, F], 1, 1, 1, "string", "1.0.0", "Set the string value of a key only when the key doesn't exist."),
    cmd!("setex", C::Setex, 4, [W, D], 1, 1, 1, "string", "2.0.0", "Sets the string value and expiration time of a key."),
    cmd!("psetex", C::Psetex, 4, [W, D], 1, 1, 1, "string", "2.6.0", "Sets both string value and expiration time in milliseconds of a key."),
    cmd!("getset", C::Getset, 3, [W, D, F], 1, 1, 1, "string", "1.0.0", "Returns the previous string value of a key after setting it to a new value."),
    cmd!("getdel", C::Getdel, 2, [W, F], 1, 1, 1, "string", "6.2.0", "Returns the string value of a key after deleting the key."),
    cmd!("getex", C::Getex, -2, [W, F], 1, 1, 1, "string", "6.2.0", "Returns the string value of a key after setting its expiration time."),
    cmd!("mget", C::Mget, -2, [R, F], 1, -1, 1, "string", "1.0.0", "Atomically returns the string values of one or more keys."),
    cmd!("mset", C::Mset, -3, [W, D], 1, -1, 2, "string", "1.0.1", "Atomically creates or modifies the string values of one or more keys."),
    cmd!("msetnx", C::Msetnx, -3, [W, D], 1, -1, 2, "string", "1.0.1", "Atomically modifies the string values of one or more keys only when all keys don't exist."),
    cmd!("append", C::Append, 3, [W, D, F], 1, 1, 1, "string", "2.0.0", "Appends a string to the value of a key. Creates the key if it doesn't exist."),
    cmd!("strlen", C::Strlen, 2, [R, F], 1, 1, 1, "string", "2.2.0", "Returns the length of a string value."),
    cmd!("getrange", C::Getrange, 4, [R], 1, 1, 1, "string", "2.4.0", "Returns a substring of the string stored at a key."),
    cmd!("setrange", C::Setrange, 4, [W, D], 1, 1, 1, "string", "2.2.0", "Overwrites a part of a string value with another by an offset."),
    cmd!("incr", C::Incr, 2, [W, D, F], 1, 1, 1, "string", "1.0.0", "Increments the integer value of a key by one."),
    cmd!("decr", C::Decr, 2, [W, D, F], 1, 1, 1, "string", "1.0.0", "Decrements the integer value of a key by one."),
    cmd!("incrby", C::Incrby, 3, [W, D, F], 1, 1, 1, "string", "1.0.0", "Increments the integer value of a key by a number."),
    cmd!("decrby", C::Decrby, 3, [W, D, F], 1, 1, 1, "string", "1.0.0", "Decrements a number from the integer value of a key."),
    cmd!("incrbyfloat", C::Incrbyfloat, 3, [W, D, F], 1, 1, 1, "string", "2.6.0", "Increment the floating point value of a key by a number."),
    cmd!("del", C::Del, -2, [W], 1, -1, 1, "generic", "1.0.0", "Deletes one or more keys."),
    cmd!("unlink", C::Unlink, -2, [W, F], 1, -1, 1, "generic", "4.0.0", "Asynchronously deletes one or more keys."),
    cmd!("exists", C::Exists, -2, [R, F], 1, -1, 1, "generic", "1.0.0", "Determines whether one or more keys exist."),
    cmd!("type", C::Type, 2, [R, F], 1, 1, 1, "generic", "1.0.0", "Determines the type of value stored at a key."),
    cmd!("keys", C::Keys, 2, [R], 0, 0, 0, "generic", "1.0.0", "Returns all key names that match a pattern."),
    cmd!("scan", C::Scan, -2, [R], 0, 0, 0, "generic", "2.8.0", "Iterates over the key names in the database."),
    cmd!("randomkey", C::Randomkey, 1, [R], 0, 0, 0, "generic", "1.0.0", "Returns a random key name from the database."),
    cmd!("rename", C::Rename, 3, [W], 1, 2, 1, "generic", "1.0.0", "Renames a key and overwrites the destination."),
    cmd!("renamenx", C::Renamenx, 3, [W, F], 1, 2, 1, "generic", "1.0.0", "Renames a key only when the target key name doesn't exist."),
    cmd!("expire", C::Expire, -3, [W, F], 1, 1, 1, "generic", "1.0.0", "Sets the expiration time of a key in seconds."),
    cmd!("pexpire", C::Pexpire, -3, [W, F], 1, 1, 1, "generic", "2.6.0", "Sets the expiration time of a key in milliseconds."),
    cmd!("expireat", C::Expireat, -3, [W, F], 1, 1, 1, "generic", "1.2.0", "Sets the expiration time of a key to a Unix timestamp."),
    cmd!("pexpireat", C::Pexpireat, -3, [W, F], 1, 1, 1, "generic", "2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp."),
    cmd!("ttl", C::Ttl, 2, [R, F], 1, 1, 1, "generic", "1.0.0", "Returns the expiration time in seconds of a key."),
    cmd!("pttl", C::Pttl, 2, [R, F], 1, 1, 1, "generic", "2.6.0", "Returns the expiration time in milliseconds of a key."),
    cmd!("expiretime", C::Expiretime, 2, [R, F], 1, 1, 1, "generic", "7.0.0", "Returns the expiration time of a key as a Unix timestamp."),
    cmd!("pexpiretime", C::Pexpiretime, 2, [R, F], 1, 1, 1, "generic", "7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp."),
    cmd!("persist", C::Persist, 2, [W, F], 1, 1, 1, "generic", "2.2.0", "Removes the expiration time of a key."),
    cmd!("copy", C::Copy, -3, [W, D], 1, 2, 1, "generic", "6.2.0", "Copies the value of a key to a new key."),
    cmd!("hset", C::Hset, -4, [W, D, F], 1, 1, 1, "hash", "2.0.0", "Creates or modifies the value of a field in a hash."),
    cmd!("hget", C::Hget, 3, [R, F], 1, 1, 1, "hash", "2.0.0", "Returns the value of a field in a hash."),
    cmd!("hdel", C::Hdel, -3, [W, F], 1, 1, 1, "hash", "2.0.0", "Deletes one or more fields and their values from a hash."),
    cmd!("hgetall", C::Hgetall, 2, [R], 1, 1, 1, "hash", "2.0.0", "Returns all fields and values in a hash."),
    cmd!("hlen", C::Hlen, 2, [R, F], 1, 1, 1, "hash", "2.0.0", "Returns the number of fields in a hash."),
    cmd!("hexists", C::Hexists, 3, [R, F], 1, 1, 1, "hash", "2.0.0", "Determines whether a field exists in a hash."),
    cmd!("hkeys", C::Hkeys, 2, [R], 1, 1, 1, "hash", "2.0.0", "Returns all fields in a hash."),
    cmd!("hvals", C::Hvals, 2, [R], 1, 1, 1, "hash", "2.0.0", "Returns all values in a hash."),
    cmd!("hmget", C::Hmget, -3, [R, F], 1, 1, 1, "hash", "2.0.0", "Returns the values of all fields in a hash."),
    cmd!("hmset", C::Hmset, -4, [W, D, F], 1, 1, 1, "hash", "2.0.0", "Sets the values of multiple fields."),
    cmd!("hsetnx", C::Hsetnx, 4, [W, D, F], 1, 1, 1, "hash", "2.0.0", "Sets the value of a field in a hash only when the field doesn't exist."),
    cmd!("hincrby", C::Hincrby, 4, [W, D, F], 1, 1, 1, "hash", "2.0.0", "Increments the integer value of a field in a hash by a number."),
    cmd!("hincrbyfloat", C::Hincrbyfloat, 4, [W, D, F], 1, 1, 1, "hash", "2.6.0", "Increments the floating point value of a field by a number."),
    cmd!("hstrlen", C::Hstrlen, 3, [R, F], 1, 1, 1, "hash", "3.2.0", "Returns the length of the value of a field."),
    cmd!("hscan", C::Hscan, -3, [R], 1, 1, 1, "hash", "2.8.0", "Iterates over fields and values of a hash."),
    cmd!("multi", C::Multi, 1, [S, L, T, F, Y], 0, 0, 0, "transactions", "1.2.0", "Starts a transaction."),
    cmd!("exec", C::Exec, 1, [S, L, T, G], 0, 0, 0, "transactions", "1.2.0", "Executes all commands in a transaction."),
    cmd!("discard", C::Discard, 1, [S, L, T, F, Y], 0, 0, 0, "transactions", "2.0.0", "Discards a transaction."),
    cmd!("watch", C::Watch, -2, [S, L, T, F, Y], 1, -1, 1, "transactions", "2.2.0", "Monitors changes to keys to determine the execution of a transaction."),
    cmd!("unwatch", C::Unwatch, 1, [S, L, T, F, Y], 0, 0, 0, "transactions", "2.2.0", "Forgets about watched keys of a transaction."),
    cmd!("lpush", C::Lpush, -3, [W, D, F], 1, 1, 1, "list", "1.0.0", "Prepends one or more elements to a list. Creates the key if it doesn't exist."),
    cmd!("rpush", C::Rpush, -3, [W, D, F], 1, 1, 1, "list", "1.0.0", "Appends one or more elements to a list. Creates the key if it doesn't exist."),
    cmd!("lpushx", C::Lpushx, -3, [W, D, F], 1, 1, 1, "list", "2.2.0", "Prepends one or more elements to a list only when the list exists."),
    cmd!("rpushx", C::Rpushx, -3, [W, D, F], 1, 1, 1, "list", "2.2.0", "Appends an element to a list only when the list exists."),
    cmd!("lpop", C::Lpop, -2, [W, F], 1, 1, 1, "list", "1.0.0", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped."),
    cmd!("rpop", C::Rpop, -2, [W, F], 1, 1, 1, "list", "1.0.0", "Returns and removes the last elements of a list. Deletes the list if the last element was popped."),
    cmd!("llen", C::Llen, 2, [R, F], 1, 1, 1, "list", "1.0.0", "Returns the length of a list."),
    cmd!("lrange", C::Lrange, 4, [R], 1, 1, 1, "list", "1.0.0", "Returns a range of elements from a list."),
    cmd!("lindex", C::Lindex, 3, [R], 1, 1, 1, "list", "1.0.0", "Returns an element from a list by its index."),
    cmd!("lset", C::Lset, 4, [W, D], 1, 1, 1, "list", "1.0.0", "Sets the value of an element in a list by its index."),
    cmd!("linsert", C::Linsert, 5, [W, D], 1, 1, 1, "list", "2.2.0", "Inserts an element before or after another element in a list."),
    cmd!("lrem", C::Lrem, 4, [W], 1, 1, 1, "list", "1.0.0", "Removes elements from a list. Deletes the list if the last element was removed."),
    cmd!("ltrim", C::Ltrim, 4, [W], 1, 1, 1, "list", "1.0.0", "Removes elements from both ends a list. Deletes the list if all elements were trimmed."),
    cmd!("lpos", C::Lpos, -3, [R], 1, 1, 1, "list", "6.0.6", "Returns the index of matching elements in a list."),
    cmd!("lmove", C::Lmove, 5, [W, D], 1, 2, 1, "list", "6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved."),
    cmd!("rpoplpush", C::Rpoplpush, 3, [W, D], 1, 2, 1, "list", "1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped."),
    cmd!("lmpop", C::Lmpop, -4, [W, M], 0, 0, 0, "list", "7.0.0", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped."),
    cmd!("blpop", C::Blpop, -3, [W, B, S], 1, -2, 1, "list", "2.0.0", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
    cmd!("brpop", C::Brpop, -3, [W, B, S], 1, -2, 1, "list", "2.0.0", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
    cmd!("blmove", C::Blmove, 6, [W, D, B, S], 1, 2, 1, "list", "6.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved."),
    cmd!("brpoplpush", C::Brpoplpush, 4, [W, D, B, S], 1, 2, 1, "list", "2.2.0", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped."),
    cmd!("hexpire", C::Hexpire, -6, [W, F], 1, 1, 1, "hash", "7.4.0", "Set expiry for hash field using relative time to expire (seconds)"),
    cmd!("hpexpire", C::Hpexpire, -6, [W, F], 1, 1, 1, "hash", "7.4.0", "Set expiry for hash field using relative time to expire (milliseconds)"),
    cmd!("hexpireat", C::Hexpireat, -6, [W, F], 1, 1, 1, "hash", "7.4.0", "Set expiry for hash field using an absolute Unix timestamp (seconds)"),
    cmd!("hpexpireat", C::Hpexpireat, -6, [W, F], 1, 1, 1, "hash", "7.4.0", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)"),
    cmd!("httl", C::Httl, -5, [R, F], 1, 1, 1, "hash", "7.4.0", "Returns the TTL in seconds of a hash field."),
    cmd!("hpttl", C::Hpttl, -5, [R, F], 1, 1, 1, "hash", "7.4.0", "Returns the TTL in milliseconds of a hash field."),
    cmd!("hexpiretime", C::Hexpiretime, -5, [R, F], 1, 1, 1, "hash", "7.4.0", "Returns the expiration time of a hash field as a Unix timestamp, in seconds."),
    cmd!("hpexpiretime", C::Hpexpiretime, -5, [R, F], 1, 1, 1, "hash", "7.4.0", "Returns the expiration time of a hash field as a Unix timestamp, in msec."),
    cmd!("hpersist", C::Hpersist, -5, [W, F], 1, 1, 1, "hash", "7.4.0", "Removes the expiration time for each specified field"),
    cmd!("hrandfield", C::Hrandfield, -2, [R], 1, 1, 1, "hash", "6.2.0", "Returns one or more random fields from a hash."),
    cmd!("blmpop", C::Blmpop, -5, [W, B, M], 0, 0, 0, "list", "7.0.0", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
    cmd!("sadd", C::Sadd, -3, [W, D, F], 1, 1, 1, "set", "1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist."),
    cmd!("srem", C::Srem, -3, [W, F], 1, 1, 1, "set", "1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed."),
    cmd!("smembers", C::Smembers, 2, [R], 1, 1, 1, "set", "1.0.0", "Returns all members of a set."),
    cmd!("sismember", C::Sismember, 3, [R, F], 1, 1, 1, "set", "1.0.0", "Determines whether a member belongs to a set."),
    cmd!("smismember", C::Smismember, -3, [R, F], 1, 1, 1, "set", "6.2.0", "Determines whether multiple members belong to a set."),
    cmd!("scard", C::Scard, 2, [R, F], 1, 1, 1, "set", "1.0.0", "Returns the number of members in a set."),
    cmd!("spop", C::Spop, -2, [W, F], 1, 1, 1, "set", "1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped."),
    cmd!("srandmember", C::Srandmember, -2, [R], 1, 1, 1, "set", "1.0.0", "Get one or multiple random members from a set."),
    cmd!("smove", C::Smove, 4, [W, F], 1, 2, 1, "set", "1.0.0", "Moves a member from one set to another."),
    cmd!("sinter", C::Sinter, -2, [R], 1, -1, 1, "set", "1.0.0", "Returns the intersect of multiple sets."),
    cmd!("sunion", C::Sunion, -2, [R], 1, -1, 1, "set", "1.0.0", "Returns the union of multiple sets."),
    cmd!("sdiff", C::Sdiff, -2, [R], 1, -1, 1, "set", "1.0.0", "Returns the difference of multiple sets."),
    cmd!("sinterstore", C::Sinterstore, -3, [W, D], 1, -1, 1, "set", "1.0.0", "Stores the intersect of multiple sets in a key."),
    cmd!("sunionstore", C::Sunionstore, -3, [W, D], 1, -1, 1, "set", "1.0.0", "Stores the union of multiple sets in a key."),
    cmd!("sdiffstore", C::Sdiffstore, -3, [W, D], 1, -1, 1, "set", "1.0.0", "Stores the difference of multiple sets in a key."),
    cmd!("sintercard", C::Sintercard, -3, [R, M], 0, 0, 0, "set", "7.0.0", "Returns the number of members of the intersect of multiple sets."),
    cmd!("sscan", C::Sscan, -3, [R], 1, 1, 1, "set", "2.6.0", "Iterates over members of a set."),
    cmd!("zadd", C::Zadd, -4, [W, D, F], 1, 1, 1, "sorted-set", "1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist."),
    cmd!("zincrby", C::Zincrby, 4, [W, D, F], 1, 1, 1, "sorted-set", "1.2.0", "Increments the score of a member in a sorted set."),
    cmd!("zrem", C::Zrem, -3, [W, F], 1, 1, 1, "sorted-set", "1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed."),
    cmd!("zcard", C::Zcard, 2, [R, F], 1, 1, 1, "sorted-set", "1.2.0", "Returns the number of members in a sorted set."),
    cmd!("zscore", C::Zscore, 3, [R, F], 1, 1, 1, "sorted-set", "1.2.0", "Returns the score of a member in a sorted set."),
    cmd!("zmscore", C::Zmscore, -3, [R, F], 1, 1, 1, "sorted-set", "6.2.0", "Returns the score of one or more members in a sorted set."),
    cmd!("zrank", C::Zrank, -3, [R, F], 1, 1, 1, "sorted-set", "2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores."),
    cmd!("zrevrank", C::Zrevrank, -3, [R, F], 1, 1, 1, "sorted-set", "2.0.0", "Returns the index of a member in a sorted set ordered by descending scores."),
    cmd!("zrange", C::Zrange, -4, [R], 1, 1, 1, "sorted-set", "1.2.0", "Returns members in a sorted set within a range of indexes."),
    cmd!("zrevrange", C::Zrevrange, -4, [R], 1, 1, 1, "sorted-set", "1.2.0", "Returns members in a sorted set within a range of indexes in reverse order."),
    cmd!("zrangebyscore", C::Zrangebyscore, -4, [R], 1, 1, 1, "sorted-set", "1.0.5", "Returns members in a sorted set within a range of scores."),
    cmd!("zrevrangebyscore", C::Zrevrangebyscore, -4, [R], 1, 1, 1, "sorted-set", "2.2.0", "Returns members in a sorted set within a range of scores in reverse order."),
    cmd!("zrangebylex", C::Zrangebylex, -4, [R], 1, 1, 1, "sorted-set", "2.8.9", "Returns members in a sorted set within a lexicographical range."),
    cmd!("zrevrangebylex", C::Zrevrangebylex, -4, [R], 1, 1, 1, "sorted-set", "2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order."),
    cmd!("zcount", C::Zcount, 4, [R, F], 1, 1, 1, "sorted-set", "2.0.0", "Returns the count of members in a sorted set that have scores within a range."),
    cmd!("zlexcount", C::Zlexcount, 4, [R, F], 1, 1, 1, "sorted-set", "2.8.9", "Returns the number of members in a sorted set within a lexicographical range."),
    cmd!("zpopmin", C::Zpopmin, -2, [W, F], 1, 1, 1, "sorted-set", "5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."),
    cmd!("zpopmax", C::Zpopmax, -2, [W, F], 1, 1, 1, "sorted-set", "5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."),
    cmd!("zremrangebyrank", C::Zremrangebyrank, 4, [W], 1, 1, 1, "sorted-set", "2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed."),
    cmd!("zremrangebyscore", C::Zremrangebyscore, 4, [W], 1, 1, 1, "sorted-set", "1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed."),
    cmd!("zremrangebylex", C::Zremrangebylex, 4, [W], 1, 1, 1, "sorted-set", "2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed."),
    cmd!("zunionstore", C::Zunionstore, -4, [W, D, M], 1, 1, 1, "sorted-set", "2.0.0", "Stores the union of multiple sorted sets in a key."),
    cmd!("zinterstore", C::Zinterstore, -4, [W, D, M], 1, 1, 1, "sorted-set", "2.0.0", "Stores the intersect of multiple sorted sets in a key."),
    cmd!("zscan", C::Zscan, -3, [R], 1, 1, 1, "sorted-set", "2.8.0", "Iterates over members and scores of a sorted set."),
    cmd!("setbit", C::Setbit, 4, [W, D], 1, 1, 1, "bitmap", "2.2.0", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist."),
    cmd!("getbit", C::Getbit, 3, [R, F], 1, 1, 1, "bitmap", "2.2.0", "Returns a bit value by offset."),
    cmd!("bitcount", C::Bitcount, -2, [R], 1, 1, 1, "bitmap", "2.6.0", "Counts the number of set bits (population counting) in a string."),
    cmd!("bitpos", C::Bitpos, -3, [R], 1, 1, 1, "bitmap", "2.8.7", "Finds the first set (1) or clear (0) bit in a string."),
    cmd!("bitop", C::Bitop, -4, [W, D], 2, -1, 1, "bitmap", "2.6.0", "Performs bitwise operations on multiple strings, and stores the result."),
    cmd!("zunion", C::Zunion, -3, [R, M], 0, 0, 0, "sorted-set", "6.2.0", "Returns the union of multiple sorted sets."),
    cmd!("zinter", C::Zinter, -3, [R, M], 0, 0, 0, "sorted-set", "6.2.0", "Returns the intersect of multiple sorted sets."),
    cmd!("zdiff", C::Zdiff, -3, [R, M], 0, 0, 0, "sorted-set", "6.2.0", "Returns the difference between multiple sorted sets."),
    cmd!("zdiffstore", C::Zdiffstore, -4, [W, D, M], 1, 1, 1, "sorted-set", "6.2.0", "Stores the difference of multiple sorted sets in a key."),
    cmd!("zrandmember", C::Zrandmember, -2, [R], 1, 1, 1, "sorted-set", "6.2.0", "Returns one or more random members from a sorted set."),
    cmd!("zrangestore", C::Zrangestore, -5, [W, D], 1, 2, 1, "sorted-set", "6.2.0", "Stores a range of members from sorted set in a key."),
    cmd!("dump", C::Dump, 2, [R], 1, 1, 1, "generic", "2.6.0", "Returns a serialized representation of the value stored at a key."),
    cmd!("restore", C::Restore, -4, [W, D], 1, 1, 1, "generic", "2.6.0", "Creates a key from the serialized representation of a value."),
];

/// True if `args` names a command that may block its client (BLPOP …): the connection then
/// watches the socket while the command runs, to cancel the wait if the client goes away.
#[must_use]
pub fn may_block(args: &[bytes::Bytes]) -> bool {
    args.first()
        .and_then(|name| lookup(name))
        .is_some_and(|spec| spec.has(Flag::Blocking))
}

/// Longest name [`lookup`] can find (longer names are unknown commands).
const LONGEST_NAME: usize = 32;

/// FNV-1a over the ASCII-lowercased name: command names are short and the table is fixed, so a
/// keyed hash buys nothing here (a name that is not in the table only misses), and hashing the
/// lowercased bytes as they are read means the name is never copied.
fn name_hash(name: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name {
        h = (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The table indexed by name: open addressing with linear probing, at most half full, so
/// every probe sequence ends at an empty slot.
struct NameIndex {
    slots: Vec<Option<&'static CommandSpec>>,
    mask: usize,
}

impl NameIndex {
    fn build() -> Self {
        let size = (COMMANDS.len() * 2).next_power_of_two();
        let mask = size - 1;
        let mut slots = vec![None; size];
        for spec in COMMANDS {
            let mut i = usize::try_from(name_hash(spec.name.as_bytes())).unwrap_or_default() & mask;
            while let Some(Some(_)) = slots.get(i) {
                i = (i + 1) & mask;
            }
            if let Some(slot) = slots.get_mut(i) {
                *slot = Some(spec);
            }
        }
        Self { slots, mask }
    }
}

/// Built on first use.
static BY_NAME: std::sync::LazyLock<NameIndex> = std::sync::LazyLock::new(NameIndex::build);

/// Looks a command up by name (case-insensitive): one hash of the name and, usually, one
/// comparison; no copy, no allocation.
#[must_use]
pub fn lookup(name: &[u8]) -> Option<&'static CommandSpec> {
    if name.len() > LONGEST_NAME {
        return None;
    }
    let index = &*BY_NAME;
    let mut i = usize::try_from(name_hash(name)).unwrap_or_default() & index.mask;
    // At most half the slots are full: the probe meets an empty slot (`None`) or the name.
    loop {
        let spec = (*index.slots.get(i)?)?;
        if spec.name.as_bytes().eq_ignore_ascii_case(name) {
            return Some(spec);
        }
        i = (i + 1) & index.mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_lowercase_and_found() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
        for c in COMMANDS {
            assert_eq!(c.name, c.name.to_ascii_lowercase());
            assert!(
                c.name.len() <= LONGEST_NAME,
                "{} is too long for lookup",
                c.name
            );
            assert!(std::ptr::eq(
                lookup(c.name.to_uppercase().as_bytes()).unwrap(),
                c
            ));
            assert!(c.arity != 0);
        }
        assert!(lookup(b"nosuch").is_none());
        for near_miss in [&b""[..], b"ge", b"gett", b"get\0", b"g\xc5t", &[b'a'; 40]] {
            assert!(lookup(near_miss).is_none(), "{near_miss:?}");
        }
        assert_eq!(lookup(b"GeT").map(|c| c.id), Some(CommandId::Get));
    }

    #[test]
    fn flag_bits_match_the_flag_lists() {
        let all = [
            Flag::Write,
            Flag::Readonly,
            Flag::DenyOom,
            Flag::Admin,
            Flag::Fast,
            Flag::NoAuth,
            Flag::Loading,
            Flag::Stale,
            Flag::NoMulti,
            Flag::NoScript,
            Flag::Blocking,
            Flag::AllowBusy,
            Flag::MovableKeys,
            Flag::SkipSlowlog,
        ];
        for c in COMMANDS {
            for flag in all {
                assert_eq!(c.has(flag), c.flags.contains(&flag), "{} {flag:?}", c.name);
            }
        }
    }

    #[test]
    fn arity_rules() {
        assert!(arity_ok(2, 2));
        assert!(!arity_ok(2, 3));
        assert!(arity_ok(-3, 3));
        assert!(arity_ok(-3, 9));
        assert!(!arity_ok(-3, 2));
    }
}
