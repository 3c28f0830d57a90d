//! Blocking list commands: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP.
//!
//! Each is parsed once (all arguments, including the timeout, are validated before anything
//! runs) into a [`BlockingOp`], whose [`BlockingOp::attempt`] is the non-blocking form run in
//! one transaction: `Some(reply)` if it could serve (it popped), `None` if every list was
//! empty. Outside MULTI, [`KvServer::run_blocking`] registers the client in the
//! [`crate::blocking::BlockingKeys`] queues, then alternates attempt and wait until served,
//! timed out (the Redis null-array reply) or the client disconnected. Inside MULTI the
//! attempt runs once and an empty result is the null reply at once, as in Redis.
//!
//! Timeouts are seconds as a float (`0` = forever), parsed with Redis's rules and errors.

use crate::args::{arg, parse_f64};
use crate::cmd::list_move::{MpopArgs, move_one, mpop_lists, mpop_reply, parse_mpop};
use crate::cmd::lists::End;
use crate::command_table::CommandId as C;
use crate::error::{KvError, KvResult};
use crate::kv_server::KvServer;
use crate::reply::Reply;
use crate::session::Session;
use crate::store::KvTxn;
use bytes::Bytes;
use std::time::Duration;

/// Parses a blocking timeout in seconds; returns milliseconds (0 = wait forever).
pub fn parse_timeout_ms(raw: &[u8]) -> KvResult<u64> {
    let seconds = parse_f64(raw)
        .map_err(|_| KvError::command("ERR timeout is not a float or out of range"))?;
    let ms = (seconds * 1000.0).ceil();
    if ms > i64::MAX as f64 {
        return Err(KvError::command("ERR timeout is out of range"));
    }
    if ms < 0.0 {
        return Err(KvError::command("ERR timeout is negative"));
    }
    let now = i64::try_from(crate::clock::now_ms()).unwrap_or(i64::MAX);
    // In range after the checks above; `as` saturates and cannot wrap.
    let ms = ms as i64;
    if ms > 0 && ms > i64::MAX - now {
        return Err(KvError::command("ERR timeout is out of range"));
    }
    Ok(u64::try_from(ms).unwrap_or(0))
}

/// A parsed blocking command.
#[derive(Debug)]
pub enum BlockingOp {
    /// BLPOP / BRPOP: one element from the first non-empty key.
    Pop {
        /// Keys in argument order.
        keys: Vec<Bytes>,
        /// End to pop from.
        end: End,
    },
    /// BLMOVE / BRPOPLPUSH.
    Move {
        /// Source list.
        src: Bytes,
        /// Destination list.
        dst: Bytes,
        /// End of `src` to pop from.
        from: End,
        /// End of `dst` to push to.
        to: End,
    },
    /// BLMPOP.
    Mpop(MpopArgs),
}

impl BlockingOp {
    /// Parses `args` of command `id`; returns the operation and its timeout in ms.
    pub fn parse(id: C, args: &[Bytes]) -> KvResult<(Self, u64)> {
        match id {
            C::Blpop | C::Brpop => {
                let timeout_at = args.len().checked_sub(1).ok_or_else(KvError::syntax)?;
                let timeout = parse_timeout_ms(arg(args, timeout_at)?)?;
                let keys = args.get(1..timeout_at).unwrap_or_default().to_vec();
                let end = if id == C::Blpop {
                    End::Left
                } else {
                    End::Right
                };
                Ok((Self::Pop { keys, end }, timeout))
            }
            C::Blmove => {
                let (src, dst) = (arg(args, 1)?.clone(), arg(args, 2)?.clone());
                let from = End::parse(arg(args, 3)?)?;
                let to = End::parse(arg(args, 4)?)?;
                let timeout = parse_timeout_ms(arg(args, 5)?)?;
                Ok((Self::Move { src, dst, from, to }, timeout))
            }
            C::Brpoplpush => {
                let (src, dst) = (arg(args, 1)?.clone(), arg(args, 2)?.clone());
                let timeout = parse_timeout_ms(arg(args, 3)?)?;
                let (from, to) = (End::Right, End::Left);
                Ok((Self::Move { src, dst, from, to }, timeout))
            }
            C::Blmpop => {
                let timeout = parse_timeout_ms(arg(args, 1)?)?;
                Ok((Self::Mpop(parse_mpop(args, 2)?), timeout))
            }
            other => Err(KvError::command(format!(
                "ERR internal error: {other:?} is not a blocking command"
            ))),
        }
    }

    /// The keys a blocked client waits on.
    #[must_use]
    pub fn keys(&self) -> Vec<Bytes> {
        match self {
            Self::Pop { keys, .. } => keys.clone(),
            Self::Move { src, .. } => vec![src.clone()],
            Self::Mpop(m) => m.keys.clone(),
        }
    }

    /// The non-blocking form: `Some(reply)` if served, `None` if there was nothing to pop.
    ///
    /// `woken` = a retry after a wake-up. As in Redis, only the first attempt fails with
    /// WRONGTYPE; a blocked client whose key now holds another type keeps waiting. A failed
    /// retry may leave writes in `tx`; the caller drops it uncommitted.
    pub async fn attempt(
        &self,
        tx: &mut KvTxn<'_>,
        db: u8,
        woken: bool,
    ) -> KvResult<Option<Reply>> {
        match self {
            Self::Pop { keys, end } => {
                Ok(mpop_lists(tx, db, keys, *end, 1, woken)
                    .await?
                    .map(|(key, items)| {
                        let mut reply = vec![Reply::Bulk(key)];
                        reply.extend(items.into_iter().map(Reply::Bulk));
                        Reply::Array(reply)
                    }))
            }
            Self::Move { src, dst, from, to } => {
                match move_one(tx, db, src, dst, *from, *to).await {
                    Err(e) if woken && e.is_wrong_type() => Ok(None),
                    moved => Ok(moved?.map(Reply::Bulk)),
                }
            }
            Self::Mpop(m) => Ok(mpop_lists(tx, db, &m.keys, m.end, m.count, woken)
                .await?
                .map(|popped| mpop_reply(Some(popped)))),
        }
    }

    /// The reply when nothing could be popped without blocking (inside MULTI): Redis sends
    /// a null bulk for the move commands and a null array for the pops.
    #[must_use]
    pub fn empty_reply(&self) -> Reply {
        match self {
            Self::Move { .. } => Reply::Null,
            Self::Pop { .. } | Self::Mpop(_) => Reply::NullArray,
        }
    }
}

/// The non-blocking form of a blocking command (inside MULTI / EXEC).
pub async fn without_blocking(
    tx: &mut KvTxn<'_>,
    db: u8,
    id: C,
    args: &[Bytes],
) -> KvResult<Reply> {
    let (op, _) = BlockingOp::parse(id, args)?;
    Ok(match op.attempt(tx, db, false).await? {
        Some(reply) => reply,
        None => op.empty_reply(),
    })
}

impl KvServer {
    /// Runs a blocking command outside MULTI: attempt, and while there is nothing to pop,
    /// wait for a write to one of its keys, the timeout, or the client's disconnection.
    pub(crate) async fn run_blocking(
        &self,
        session: &Session,
        id: C,
        args: &[Bytes],
    ) -> KvResult<Reply> {
        let (op, timeout_ms) = BlockingOp::parse(id, args)?;
        let deadline = match timeout_ms {
            0 => None,
            ms => tokio::time::Instant::now().checked_add(Duration::from_millis(ms)),
        };
        let db = session.db;
        let guard = self.blocking.register(db, &op.keys());
        let disconnect = session.disconnect_handle();
        let mut woken = false;
        loop {
            let mut tx = self.store.begin(crate::clock::now_ms());
            if let Some(reply) = op.attempt(&mut tx, db, woken).await? {
                self.commit(tx).await?;
                drop(guard);
                return Ok(reply);
            }
            drop(tx);
            let timed_out = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = guard.notified() => woken = true,
                () = timed_out => return Ok(Reply::NullArray),
                () = disconnect.fired() => return Ok(Reply::NullArray),
            }
        }
    }
}
