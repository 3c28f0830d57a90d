//! The dispatcher: looks the command up in the table, checks arity and authentication once,
//! queues inside MULTI, and runs the handler. Data commands run in one [`KvTxn`]; a handler
//! error rolls it back, so nothing is ever half-applied. Errors become replies here and only
//! here ([`KvError::to_reply_text`]). A connection looks each request up once
//! ([`KvServer::route`]) and hands the result to [`KvServer::execute_resolved`].
//!
//! A GET outside MULTI reads the latest committed record directly (no transaction, no
//! snapshot): one read is consistent by itself, and a commit is applied before its reply is
//! sent, so the read sees every write acknowledged to any client and every earlier write of
//! its own connection (a pipeline's pending write group runs before the GET).
//!
//! Durability: [`KvServer::execute`] returns a reply only once the command's commit is durable.
//! [`KvServer::execute_deferred`] applies the commit and hands back its [`DurabilityTicket`]
//! with the reply instead; the caller must not send that reply (or any later one) before the
//! ticket resolves. Tickets resolve in commit order, so a connection that runs a pipeline keeps
//! only the ticket of its last write. Commands that wait inside (blocking pops, FLUSHDB, the
//! sweeper) still commit durably before they return.

use crate::cmd;
use crate::command_table::{CommandId as C, CommandSpec, Flag, arity_ok, lookup};
use crate::error::{KvError, KvResult};
use crate::kv_server::{KvServer, Stats};
use crate::reply::Reply;
use crate::session::{MultiState, Session};
use crate::store::KvTxn;
use bytes::Bytes;
use orcinus_storage::DurabilityTicket;

/// A reply and, if the command committed writes, the ticket for their durability.
type Deferred = (Reply, Option<DurabilityTicket>);

/// Longest argument text quoted in an unknown-command error (as Redis).
const UNKNOWN_ARGS_QUOTE: usize = 128;

fn unknown_command(args: &[Bytes]) -> String {
    let name = args
        .first()
        .map(|a| String::from_utf8_lossy(a))
        .unwrap_or_default();
    let mut quoted = String::new();
    for a in args.iter().skip(1) {
        if quoted.len() >= UNKNOWN_ARGS_QUOTE {
            break;
        }
        let room = UNKNOWN_ARGS_QUOTE - quoted.len();
        let text = String::from_utf8_lossy(a);
        let cut: String = text.chars().take(room).collect();
        quoted.push_str(&format!("'{cut}' "));
    }
    let name: String = name.chars().take(UNKNOWN_ARGS_QUOTE).collect();
    format!("ERR unknown command '{name}', with args beginning with: {quoted}")
}

/// Resolves the spec and checks arity (of the command and of its subcommand).
pub(crate) fn resolve(args: &[Bytes]) -> Result<&'static CommandSpec, String> {
    let name = args.first().map(Bytes::as_ref).unwrap_or_default();
    let spec = lookup(name).ok_or_else(|| unknown_command(args))?;
    if !arity_ok(spec.arity, args.len()) {
        return Err(KvError::arity(spec.name).to_reply_text());
    }
    if let Some(sub) = args.get(1).and_then(|name| spec.subcommand(name))
        && !arity_ok(sub.arity, args.len())
    {
        return Err(KvError::arity(&format!("{}|{}", spec.name, sub.name)).to_reply_text());
    }
    Ok(spec)
}

/// How a connection runs a request ([`KvServer::route`]).
#[derive(Debug)]
pub enum Route {
    /// A plain data write: may be held back and run with its neighbours as one write group
    /// ([`KvServer::execute_routed_write_group`], which takes the command looked up here).
    WriteGroup(GroupMember),
    /// May block (BLPOP …): run with [`KvServer::execute`] while the socket is watched.
    MayBlock,
    /// Run now with [`KvServer::execute_resolved`].
    Now(Resolved),
}

/// The command of a request that [`KvServer::route`] found may join a write group, so the
/// group does not look it up again.
#[derive(Debug, Clone, Copy)]
pub struct GroupMember(pub(crate) &'static CommandSpec);

/// A request's command, looked up once ([`Resolved::lookup`], [`KvServer::route`]) and handed
/// to [`KvServer::execute_resolved`]: the spec, or the error reply for an unknown command or a
/// wrong number of arguments.
#[derive(Debug)]
pub struct Resolved(Result<&'static CommandSpec, String>);

impl Resolved {
    /// Looks up `args[0]` and checks the arity.
    #[must_use]
    pub fn lookup(args: &[Bytes]) -> Self {
        Self(resolve(args))
    }
}

/// True when the request names EXEC.
fn is_exec(args: &[Bytes]) -> bool {
    args.first()
        .is_some_and(|name| name.eq_ignore_ascii_case(b"exec"))
}

/// True for commands that run inside a data transaction.
pub(crate) fn is_data_command(spec: &CommandSpec) -> bool {
    (spec.has(Flag::Write) || spec.has(Flag::Readonly))
        && !matches!(spec.id, C::Flushdb | C::Flushall | C::Dbsize)
}

impl KvServer {
    /// Executes one request (`args[0]` is the command name) for `session`; returns once its
    /// effects are durable.
    pub async fn execute(&self, session: &mut Session, args: Vec<Bytes>) -> Reply {
        let deferred = self.execute_deferred(session, args).await;
        session.publish_activity();
        match deferred {
            (reply, None) => reply,
            (reply, Some(ticket)) => match ticket.wait().await {
                Ok(()) => reply,
                Err(e) => Reply::Error(KvError::from(e).to_reply_text()),
            },
        }
    }

    /// Executes one request like [`KvServer::execute`] but does not wait for its commit to
    /// become durable: the reply comes with the commit's ticket, and must not be sent before
    /// the ticket resolves `Ok` (on `Err`, nothing of it may be acknowledged).
    pub async fn execute_deferred(&self, session: &mut Session, args: Vec<Bytes>) -> Deferred {
        self.execute_resolved(session, Resolved::lookup(&args), args)
            .await
    }

    /// Decides how a connection runs `args`, with the one command-table lookup of the
    /// request: [`Route::Now`] carries it to [`KvServer::execute_resolved`].
    #[must_use]
    pub fn route(&self, session: &Session, args: &[Bytes]) -> Route {
        let resolved = Resolved::lookup(args);
        match resolved.0 {
            Ok(spec)
                if session.authenticated
                    && session.multi.is_none()
                    && crate::write_group::groupable(spec) =>
            {
                Route::WriteGroup(GroupMember(spec))
            }
            Ok(spec) if spec.has(Flag::Blocking) => Route::MayBlock,
            _ => Route::Now(resolved),
        }
    }

    /// [`KvServer::execute_deferred`] for a request already looked up (`resolved` must come
    /// from `args`).
    pub async fn execute_resolved(
        &self,
        session: &mut Session,
        resolved: Resolved,
        args: Vec<Bytes>,
    ) -> Deferred {
        let spec = match resolved.0 {
            Ok(spec) => spec,
            Err(text) if is_exec(&args) => {
                // As Redis: a rejected EXEC discards the transaction (and its WATCHes) and says
                // why, in or out of MULTI.
                session.multi = None;
                self.watches.unwatch(&std::mem::take(&mut session.watched));
                session.sync_entry();
                let why = text.strip_prefix("ERR ").unwrap_or(&text);
                return (
                    Reply::Error(format!("EXECABORT Transaction discarded because of: {why}")),
                    None,
                );
            }
            Err(text) => {
                if let Some(multi) = session.multi.as_mut() {
                    multi.dirty = true;
                }
                return (Reply::Error(text), None);
            }
        };
        if !session.authenticated && !spec.has(Flag::NoAuth) {
            return (Reply::error("NOAUTH Authentication required."), None);
        }
        self.note_command(session, spec, &args);
        if session.multi.is_some()
            && !matches!(
                spec.id,
                C::Exec | C::Discard | C::Multi | C::Watch | C::Quit | C::Reset
            )
        {
            if let Some(multi) = session.multi.as_mut() {
                multi.queued.push(args);
            }
            session.sync_entry();
            return (Reply::Simple("QUEUED".into()), None);
        }
        let now = |reply: KvResult<Reply>| reply.map(|r| (r, None));
        let result = match spec.id {
            C::Multi => now(self.multi(session)),
            // Boxed, as every rare command with a future: this future is created per request.
            C::Exec => Box::pin(self.exec(session)).await,
            C::Discard => now(self.discard(session)),
            C::Watch => now(Box::pin(self.watch(session, &args)).await),
            C::Unwatch => {
                self.watches.unwatch(&std::mem::take(&mut session.watched));
                Ok((Reply::ok(), None))
            }
            _ => self.run(session, spec, &args).await,
        };
        // Data commands run in a transaction and change no session state (db, protocol, name,
        // MULTI); everything else may.
        if !is_data_command(spec) {
            session.sync_entry();
        }
        result.unwrap_or_else(|e| (Reply::Error(e.to_reply_text()), None))
    }

    /// Counts a command about to run and records it as the session's last one. A data
    /// command that does not block reaches the registry entry (CLIENT LIST) when the session
    /// next publishes ([`Session::publish_activity`]: before the connection writes its replies,
    /// and before any other command runs), so a pipeline costs one entry update, not one per
    /// command.
    pub(crate) fn note_command(
        &self,
        session: &mut Session,
        spec: &'static CommandSpec,
        args: &[Bytes],
    ) {
        Stats::bump(&self.stats.commands_processed);
        if is_data_command(spec) && !spec.has(Flag::Blocking) {
            session.defer_activity(spec.name);
            return;
        }
        session.forget_deferred_activity();
        session.update_entry(|e| {
            e.last_active = std::time::Instant::now();
            // Rewritten in place: no allocation per command once the name fits.
            e.last_cmd.clear();
            e.last_cmd.push_str(spec.name);
            if let (false, Some(sub)) = (spec.subcommands.is_empty(), args.get(1)) {
                e.last_cmd.push('|');
                e.last_cmd
                    .push_str(&String::from_utf8_lossy(sub).to_lowercase());
            }
        });
    }

    /// Runs a resolved, non-transaction-control command.
    async fn run(
        &self,
        session: &mut Session,
        spec: &'static CommandSpec,
        args: &[Bytes],
    ) -> KvResult<(Reply, Option<DurabilityTicket>)> {
        if !is_data_command(spec) {
            return Ok((self.run_immediate(session, spec, args).await?, None));
        }
        if spec.has(Flag::Blocking) {
            let reply = Box::pin(self.run_blocking(session, spec.id, args)).await?;
            return Ok((reply, None));
        }
        if spec.id == C::Get {
            // One read: the latest committed record, without a transaction and its snapshot.
            return Ok((cmd::strings::get_latest(self, session.db, args)?, None));
        }
        let mut tx = self.store.begin(crate::clock::now_ms());
        let reply = self.run_data(&mut tx, session.db, spec.id, args).await?;
        let ticket = self.commit_deferred(tx)?;
        Ok((reply, ticket))
    }

    /// Commits `tx`; returns once it is durable.
    pub(crate) async fn commit(&self, tx: KvTxn<'_>) -> KvResult<()> {
        match self.commit_deferred(tx)? {
            Some(ticket) => Ok(ticket.wait().await?),
            None => Ok(()),
        }
    }

    /// Applies `tx` and returns the ticket for its durability (`None` if it wrote nothing).
    ///
    /// Clients blocked on the written keys are woken as soon as the commit is applied, before
    /// it is durable: a woken client pops in a transaction of its own that commits later in
    /// journal order, so its reply (sent only once that commit is durable) implies this commit
    /// is durable too.
    pub(crate) fn commit_deferred(&self, tx: KvTxn<'_>) -> KvResult<Option<DurabilityTicket>> {
        if tx.is_read_only() {
            // Nothing to make durable; this releases the read locks.
            let _nothing_to_wait_for = tx.commit_deferred()?;
            return Ok(None);
        }
        // Before commit, while the locks are held: see watch.rs.
        self.watches.touch(tx.locked_keys());
        let signalled: Vec<(u8, Vec<u8>)> = if self.blocking.has_waiters() {
            tx.locked_keys().map(|(db, k)| (db, k.to_vec())).collect()
        } else {
            Vec::new()
        };
        let ticket = tx.commit_deferred()?;
        self.blocking
            .signal(signalled.iter().map(|(db, k)| (*db, k.as_slice())));
        Ok(Some(ticket))
    }

    /// Commands that touch only session or server state (or manage their own storage access).
    async fn run_immediate(
        &self,
        session: &mut Session,
        spec: &'static CommandSpec,
        args: &[Bytes],
    ) -> KvResult<Reply> {
        match spec.id {
            C::Auth => cmd::connection::auth(self, session, args),
            C::Hello => cmd::connection::hello(self, session, args),
            C::Ping => cmd::connection::ping(session, args),
            C::Echo => cmd::connection::echo(args),
            C::Quit => {
                session.closing = true;
                Ok(Reply::ok())
            }
            C::Reset => Ok(self.reset(session)),
            C::Select => cmd::connection::select(session, args),
            C::Client => cmd::connection::client(self, session, args),
            C::Info => cmd::server::info(self, args),
            C::Config => cmd::server::config(self, args),
            C::Dbsize => cmd::server::dbsize(self, session.db),
            C::Flushdb => Box::pin(cmd::server::flushdb(self, session.db, args)).await,
            C::Flushall => Box::pin(cmd::server::flushall(self, args)).await,
            C::Time => Ok(cmd::server::time()),
            C::Command => cmd::introspection::command(args),
            _ => Err(KvError::command(format!(
                "ERR internal error: '{}' has no handler",
                spec.name
            ))),
        }
    }

    /// Data commands: run inside `tx` against `db`. Replies are protocol-neutral typed
    /// values; the connection encodes them for the session's protocol.
    ///
    /// The common commands run here without a future of their own; the rest run boxed
    /// ([`KvServer::run_data_boxed`]), so this future — created for every command of a write
    /// group — stays a few words, instead of the size of the largest handler's future (it
    /// was copied on every call).
    pub(crate) async fn run_data(
        &self,
        tx: &mut KvTxn<'_>,
        db: u8,
        id: C,
        args: &[Bytes],
    ) -> KvResult<Reply> {
        let now = match id {
            C::Get => Some(cmd::strings::get(self, tx, db, args)),
            C::Set => cmd::strings::try_plain_set(tx, db, args),
            _ => None,
        };
        match now {
            Some(reply) => reply,
            None => Box::pin(self.run_data_boxed(tx, db, id, args)).await,
        }
    }

    /// [`KvServer::run_data`] for every data command.
    async fn run_data_boxed(
        &self,
        tx: &mut KvTxn<'_>,
        db: u8,
        id: C,
        args: &[Bytes],
    ) -> KvResult<Reply> {
        use cmd::{generic as g, hash_ttl as ht, hashes as h, lists as l, strings as s};
        use cmd::{set_algebra as sa, sets as st};
        use cmd::{zset_range_args as zra, zset_ranges as zr, zset_store as zst, zsets as z};
        use orcinus_storage::Direction::{Forward, Reverse};
        let max = self.config.proto_max_bulk_len;
        match id {
            C::Get => s::get(self, tx, db, args),
            C::Set => s::set(tx, db, args).await,
            C::Setnx => s::setnx(tx, db, args).await,
            C::Setex => s::setex(tx, db, args, 1000, "setex").await,
            C::Psetex => s::setex(tx, db, args, 1, "psetex").await,
            C::Getset => s::getset(tx, db, args).await,
            C::Getdel => s::getdel(tx, db, args).await,
            C::Getex => s::getex(tx, db, args).await,
            C::Mget => s::mget(tx, db, args),
            C::Mset => s::mset(tx, db, args, false).await,
            C::Msetnx => s::mset(tx, db, args, true).await,
            C::Append => s::append(tx, db, args, max).await,
            C::Strlen => s::strlen(tx, db, args),
            C::Getrange => s::getrange(tx, db, args),
            C::Setrange => s::setrange(tx, db, args, max).await,
            C::Incr => s::incr_by(tx, db, args, Some(1)).await,
            C::Decr => s::incr_by(tx, db, args, Some(-1)).await,
            C::Incrby => s::incr_by(tx, db, args, None).await,
            C::Decrby => s::decr_by(tx, db, args).await,
            C::Incrbyfloat => s::incr_by_float(tx, db, args).await,
            C::Del | C::Unlink => g::del(tx, db, args).await,
            C::Exists => g::exists(tx, db, args),
            C::Type => g::key_type(tx, db, args),
            C::Keys => g::keys(tx, db, args),
            C::Scan => g::scan(self, tx, db, args),
            C::Randomkey => g::randomkey(tx, db),
            C::Rename => g::rename(tx, db, args, false).await,
            C::Renamenx => g::rename(tx, db, args, true).await,
            C::Expire => g::expire(tx, db, args, g::ExpireUnit::RelativeSeconds).await,
            C::Pexpire => g::expire(tx, db, args, g::ExpireUnit::RelativeMillis).await,
            C::Expireat => g::expire(tx, db, args, g::ExpireUnit::AbsoluteSeconds).await,
            C::Pexpireat => g::expire(tx, db, args, g::ExpireUnit::AbsoluteMillis).await,
            C::Ttl => g::ttl(tx, db, args, g::TtlForm::RelativeSeconds),
            C::Pttl => g::ttl(tx, db, args, g::TtlForm::RelativeMillis),
            C::Expiretime => g::ttl(tx, db, args, g::TtlForm::AbsoluteSeconds),
            C::Pexpiretime => g::ttl(tx, db, args, g::TtlForm::AbsoluteMillis),
            C::Persist => g::persist(tx, db, args).await,
            C::Copy => g::copy(tx, db, args).await,
            C::Hset => h::hset(tx, db, args, h::HsetReply::Added).await,
            C::Hmset => h::hset(tx, db, args, h::HsetReply::Ok).await,
            C::Hsetnx => h::hsetnx(tx, db, args).await,
            C::Hget => h::hget(tx, db, args),
            C::Hmget => h::hmget(tx, db, args),
            C::Hdel => h::hdel(tx, db, args).await,
            C::Hgetall => h::hgetall(tx, db, args, h::HashPart::Both),
            C::Hkeys => h::hgetall(tx, db, args, h::HashPart::Fields),
            C::Hvals => h::hgetall(tx, db, args, h::HashPart::Values),
            C::Hlen => h::hlen(tx, db, args),
            C::Hexists => h::hexists(tx, db, args),
            C::Hstrlen => h::hstrlen(tx, db, args),
            C::Hincrby => h::hincrby(tx, db, args).await,
            C::Hincrbyfloat => h::hincrbyfloat(tx, db, args).await,
            C::Hscan => h::hscan(self, tx, db, args),
            C::Lpush => l::push_cmd(tx, db, args, l::End::Left, false).await,
            C::Rpush => l::push_cmd(tx, db, args, l::End::Right, false).await,
            C::Lpushx => l::push_cmd(tx, db, args, l::End::Left, true).await,
            C::Rpushx => l::push_cmd(tx, db, args, l::End::Right, true).await,
            C::Lpop => l::pop_cmd(tx, db, args, l::End::Left).await,
            C::Rpop => l::pop_cmd(tx, db, args, l::End::Right).await,
            C::Llen => l::llen(tx, db, args),
            C::Lrange => l::lrange(tx, db, args),
            C::Lindex => l::lindex(tx, db, args),
            C::Lset => l::lset(tx, db, args).await,
            C::Ltrim => l::ltrim(tx, db, args).await,
            C::Lmove => cmd::list_move::lmove(tx, db, args).await,
            C::Rpoplpush => cmd::list_move::rpoplpush(tx, db, args).await,
            C::Lmpop => cmd::list_move::lmpop(tx, db, args).await,
            C::Lpos => cmd::list_edit::lpos(tx, db, args),
            C::Linsert => cmd::list_edit::linsert(tx, db, args).await,
            C::Lrem => cmd::list_edit::lrem(tx, db, args).await,
            C::Hexpire => {
                ht::hexpire(tx, db, args, g::ExpireUnit::RelativeSeconds, "hexpire").await
            }
            C::Hpexpire => {
                ht::hexpire(tx, db, args, g::ExpireUnit::RelativeMillis, "hpexpire").await
            }
            C::Hexpireat => {
                ht::hexpire(tx, db, args, g::ExpireUnit::AbsoluteSeconds, "hexpireat").await
            }
            C::Hpexpireat => {
                ht::hexpire(tx, db, args, g::ExpireUnit::AbsoluteMillis, "hpexpireat").await
            }
            C::Httl => ht::httl(tx, db, args, ht::FieldTtlForm::RelativeSeconds),
            C::Hpttl => ht::httl(tx, db, args, ht::FieldTtlForm::RelativeMillis),
            C::Hexpiretime => ht::httl(tx, db, args, ht::FieldTtlForm::AbsoluteSeconds),
            C::Hpexpiretime => ht::httl(tx, db, args, ht::FieldTtlForm::AbsoluteMillis),
            C::Hpersist => ht::hpersist(tx, db, args).await,
            C::Hrandfield => ht::hrandfield(tx, db, args),
            C::Blpop | C::Brpop | C::Blmove | C::Brpoplpush | C::Blmpop => {
                cmd::list_blocking::without_blocking(tx, db, id, args).await
            }
            C::Sadd => st::sadd(tx, db, args).await,
            C::Srem => st::srem(tx, db, args).await,
            C::Smembers => st::smembers(tx, db, args),
            C::Sismember => st::sismember(tx, db, args),
            C::Smismember => st::smismember(tx, db, args),
            C::Scard => st::scard(tx, db, args),
            C::Spop => st::spop(tx, db, args).await,
            C::Srandmember => st::srandmember(tx, db, args),
            C::Sscan => st::sscan(self, tx, db, args),
            C::Smove => sa::smove(tx, db, args).await,
            C::Sinter => sa::set_op(tx, db, args, sa::SetOp::Inter),
            C::Sunion => sa::set_op(tx, db, args, sa::SetOp::Union),
            C::Sdiff => sa::set_op(tx, db, args, sa::SetOp::Diff),
            C::Sinterstore => sa::set_op_store(tx, db, args, sa::SetOp::Inter).await,
            C::Sunionstore => sa::set_op_store(tx, db, args, sa::SetOp::Union).await,
            C::Sdiffstore => sa::set_op_store(tx, db, args, sa::SetOp::Diff).await,
            C::Sintercard => sa::sintercard(tx, db, args),
            C::Zadd => z::zadd(tx, db, args).await,
            C::Zincrby => z::zincrby(tx, db, args).await,
            C::Zrem => z::zrem(tx, db, args).await,
            C::Zcard => z::zcard(tx, db, args),
            C::Zscore => z::zscore(tx, db, args),
            C::Zmscore => z::zmscore(tx, db, args),
            C::Zpopmin => z::zpop(tx, db, args, Forward).await,
            C::Zpopmax => z::zpop(tx, db, args, Reverse).await,
            C::Zscan => z::zscan(self, tx, db, args),
            C::Zrank => zr::zrank(tx, db, args, false),
            C::Zrevrank => zr::zrank(tx, db, args, true),
            C::Zrange => zr::zrange(tx, db, args, zra::RangeCommand::Zrange),
            C::Zrevrange => zr::zrange(tx, db, args, zra::RangeCommand::Zrevrange),
            C::Zrangebyscore => zr::zrange(tx, db, args, zra::RangeCommand::Zrangebyscore),
            C::Zrevrangebyscore => zr::zrange(tx, db, args, zra::RangeCommand::Zrevrangebyscore),
            C::Zrangebylex => zr::zrange(tx, db, args, zra::RangeCommand::Zrangebylex),
            C::Zrevrangebylex => zr::zrange(tx, db, args, zra::RangeCommand::Zrevrangebylex),
            C::Zcount => zr::zcount(tx, db, args, false),
            C::Zlexcount => zr::zcount(tx, db, args, true),
            C::Zremrangebyrank => zr::zremrange(tx, db, args, zr::RemoveBy::Rank).await,
            C::Zremrangebyscore => zr::zremrange(tx, db, args, zr::RemoveBy::Score).await,
            C::Zremrangebylex => zr::zremrange(tx, db, args, zr::RemoveBy::Lex).await,
            C::Zunionstore => zst::zset_op(tx, db, args, zst::ZsetOp::Union, true).await,
            C::Zinterstore => zst::zset_op(tx, db, args, zst::ZsetOp::Inter, true).await,
            C::Setbit => cmd::bitmaps::setbit(tx, db, args, max).await,
            C::Getbit => cmd::bitmaps::getbit(tx, db, args, max),
            C::Bitcount => cmd::bitmaps::bitcount(tx, db, args),
            C::Bitpos => cmd::bitmaps::bitpos(tx, db, args),
            C::Bitop => cmd::bitmaps::bitop(tx, db, args).await,
            C::Zunion => zst::zset_op(tx, db, args, zst::ZsetOp::Union, false).await,
            C::Zinter => zst::zset_op(tx, db, args, zst::ZsetOp::Inter, false).await,
            C::Zdiff => zst::zset_op(tx, db, args, zst::ZsetOp::Diff, false).await,
            C::Zdiffstore => zst::zset_op(tx, db, args, zst::ZsetOp::Diff, true).await,
            C::Zrandmember => z::zrandmember(tx, db, args),
            C::Zrangestore => zst::zrangestore(tx, db, args).await,
            C::Dump => cmd::dump_restore::dump(tx, db, args),
            C::Restore => cmd::dump_restore::restore(tx, db, args, max).await,
            other => Err(KvError::command(format!(
                "ERR internal error: {other:?} is not a data command"
            ))),
        }
    }

    fn multi(&self, session: &mut Session) -> KvResult<Reply> {
        if session.multi.is_some() {
            return Err(KvError::command("ERR MULTI calls can not be nested"));
        }
        session.multi = Some(MultiState::default());
        Ok(Reply::ok())
    }

    fn discard(&self, session: &mut Session) -> KvResult<Reply> {
        if session.multi.take().is_none() {
            return Err(KvError::command("ERR DISCARD without MULTI"));
        }
        self.watches.unwatch(&std::mem::take(&mut session.watched));
        Ok(Reply::ok())
    }

    async fn watch(&self, session: &mut Session, args: &[Bytes]) -> KvResult<Reply> {
        if session.multi.is_some() {
            return Err(KvError::command("ERR WATCH inside MULTI is not allowed"));
        }
        for key in args.iter().skip(1) {
            let epoch = self.watches.watch(session.db, key.clone());
            session.watched.push((session.db, key.clone(), epoch));
        }
        Ok(Reply::ok())
    }

    /// EXEC: all queued data commands run in ONE transaction and one commit.
    async fn exec(&self, session: &mut Session) -> KvResult<Deferred> {
        let Some(multi) = session.multi.take() else {
            return Err(KvError::command("ERR EXEC without MULTI"));
        };
        let watched = std::mem::take(&mut session.watched);
        if multi.dirty {
            self.watches.unwatch(&watched);
            return Err(KvError::command(
                "EXECABORT Transaction discarded because of previous errors.",
            ));
        }
        let mut tx = self.store.begin(crate::clock::now_ms());
        let result = self
            .exec_queued(session, &mut tx, &watched, multi.queued)
            .await;
        self.watches.unwatch(&watched);
        let replies = match result? {
            Some(replies) => replies,
            None => return Ok((Reply::NullArray, None)),
        };
        let ticket = self.commit_deferred(tx)?;
        Ok((Reply::Array(replies), ticket))
    }

    async fn exec_queued(
        &self,
        session: &mut Session,
        tx: &mut KvTxn<'_>,
        watched: &[(u8, Bytes, u64)],
        queued: Vec<Vec<Bytes>>,
    ) -> KvResult<Option<Vec<Reply>>> {
        for (db, key, _) in watched {
            tx.lock_keys(*db, &[key.as_ref()]).await?;
        }
        if self.watches.any_changed(watched) {
            return Ok(None);
        }
        let mut replies = Vec::with_capacity(queued.len());
        for args in queued {
            let spec = match resolve(&args) {
                Ok(spec) => spec,
                Err(text) => {
                    replies.push(Reply::Error(text));
                    continue;
                }
            };
            let reply = if is_data_command(spec) {
                self.run_data(tx, session.db, spec.id, &args).await
            } else {
                self.run_immediate(session, spec, &args).await
            };
            match reply {
                Ok(reply) => replies.push(reply),
                // Lock conflicts and storage failures abort the whole EXEC (nothing applied).
                Err(e) if e.kind() != crate::error::ErrorKind::Command => return Err(e),
                Err(e) => replies.push(Reply::Error(e.to_reply_text())),
            }
        }
        Ok(Some(replies))
    }

    fn reset(&self, session: &mut Session) -> Reply {
        session.multi = None;
        self.watches.unwatch(&std::mem::take(&mut session.watched));
        session.db = 0;
        session.protocol = crate::session::Protocol::Resp2;
        session.name = None;
        session.authenticated = !self.requires_auth_for(session.client_ip);
        session.update_entry(|e| e.user = "default".into());
        Reply::Simple("RESET".into())
    }
}
