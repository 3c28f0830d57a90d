//! Write groups: consecutive write commands of one connection's pipeline run in ONE storage
//! transaction and one commit, so a pipeline of N writes costs one journal append and one
//! durability ticket instead of N.
//!
//! A group must behave exactly like its commands run one after another, each in a transaction
//! of its own, with nothing interleaved:
//! - each command runs from a savepoint; a command that fails is rolled back to it alone and
//!   answers its own error, as it would by itself; the others are unaffected;
//! - before each command after the first, the snapshot is refreshed, so its plain reads see
//!   everything committed before it ran (as a transaction begun then would) plus the group's
//!   own earlier writes;
//! - the group's transaction never waits for a lock while it holds locks of earlier commands
//!   (that wait could close a cycle that one-by-one execution cannot have): its locks are
//!   taken without waiting, and a command that meets a lock held by another transaction is
//!   undone, the group so far is committed (releasing its locks), and the command reruns at
//!   the head of a new group transaction that may wait, exactly as it would run alone;
//! - nothing of a group is visible to others before its commit, and every reply is sent only
//!   once the commit covering it is durable (the caller waits for the returned ticket).
//!
//! Only commands the connection may run ahead of their replies join a group: data writes
//! that do not block, from an authenticated session outside MULTI. Anything else ends the
//! group, which is committed (and so visible) before that command runs.

use crate::command_table::{CommandSpec, Flag};
use crate::dispatch::{GroupMember, is_data_command, resolve};
use crate::error::{KvError, KvResult};
use crate::kv_server::KvServer;
use crate::reply::Reply;
use crate::session::Session;
use crate::store::{CommandSavepoint, KvTxn};
use bytes::Bytes;
use orcinus_storage::{DurabilityTicket, StorageError};

/// True for commands that may run in a write group.
pub(crate) fn groupable(spec: &CommandSpec) -> bool {
    spec.has(Flag::Write) && !spec.has(Flag::Blocking) && is_data_command(spec)
}

/// The replies of a write group, in request order, and the ticket of its last commit.
pub type GroupOutcome = (Vec<Reply>, Option<DurabilityTicket>);

/// A group transaction being filled and where its commands' replies start.
struct Segment<'a> {
    tx: KvTxn<'a>,
    first_reply: usize,
}

/// Keeps a command's effects (or undoes them on error) and records its reply.
fn finish_command(
    tx: &mut KvTxn<'_>,
    savepoint: CommandSavepoint,
    result: KvResult<Reply>,
    replies: &mut Vec<Reply>,
) {
    match result {
        Ok(reply) => {
            tx.settle(savepoint);
            replies.push(reply);
        }
        Err(e) => {
            tx.rollback_to(savepoint);
            replies.push(Reply::Error(e.to_reply_text()));
        }
    }
}

impl KvServer {
    /// True if `args` may join a write group of `session` (see the module docs).
    #[must_use]
    pub fn joins_write_group(&self, session: &Session, args: &[Bytes]) -> bool {
        session.authenticated && session.multi.is_none() && resolve(args).is_ok_and(groupable)
    }

    /// Runs `requests` (each accepted by [`KvServer::joins_write_group`]) as one write group.
    /// The replies must not be sent before the ticket resolves `Ok`.
    pub async fn execute_write_group(
        &self,
        session: &mut Session,
        requests: Vec<Vec<Bytes>>,
    ) -> GroupOutcome {
        let count = requests.len();
        let requests = requests.into_iter().map(|args| {
            let spec = resolve(&args).ok().filter(|spec| groupable(spec));
            (spec, args)
        });
        self.run_write_group(session, count, requests).await
    }

    /// [`KvServer::execute_write_group`] for requests routed to a group by
    /// [`KvServer::route`], with the commands it looked up.
    pub async fn execute_routed_write_group(
        &self,
        session: &mut Session,
        requests: Vec<(GroupMember, Vec<Bytes>)>,
    ) -> GroupOutcome {
        let count = requests.len();
        let requests = requests
            .into_iter()
            .map(|(GroupMember(spec), args)| (Some(spec), args));
        self.run_write_group(session, count, requests).await
    }

    /// Runs a write group of `count` requests, each with its command if it may join a group
    /// (`None`: it ends the group and runs by itself).
    async fn run_write_group(
        &self,
        session: &mut Session,
        count: usize,
        requests: impl Iterator<Item = (Option<&'static CommandSpec>, Vec<Bytes>)> + Send,
    ) -> GroupOutcome {
        let mut replies = Vec::with_capacity(count);
        let mut ticket = None;
        let mut open: Option<Segment<'_>> = None;
        for (spec, args) in requests {
            let Some(spec) = spec else {
                // Not for a group (the caller checked): end the group, then answer as
                // one-by-one execution would.
                if let Some(segment) = open.take() {
                    ticket = self.end_segment(segment, &mut replies).or(ticket);
                }
                // Boxed: the general path's future is large, and this one is created per group.
                let (reply, t) = Box::pin(self.execute_deferred(session, args)).await;
                replies.push(reply);
                ticket = t.or(ticket);
                continue;
            };
            self.note_command(session, spec, &args);
            let mut segment = match open.take() {
                Some(mut segment) => {
                    segment.tx.refresh();
                    segment
                }
                None => self.begin_segment(replies.len(), false),
            };
            let mut savepoint = segment.tx.savepoint();
            let mut result = self
                .run_data(&mut segment.tx, session.db, spec.id, &args)
                .await;
            if matches!(result, Err(KvError::Storage(StorageError::WouldWait))) {
                // Give up the group's locks before waiting: commit it, rerun alone.
                segment.tx.rollback_to(savepoint);
                ticket = self.end_segment(segment, &mut replies).or(ticket);
                segment = self.begin_segment(replies.len(), true);
                savepoint = segment.tx.savepoint();
                result = self
                    .run_data(&mut segment.tx, session.db, spec.id, &args)
                    .await;
                segment.tx.set_lock_wait(false);
            }
            finish_command(&mut segment.tx, savepoint, result, &mut replies);
            open = Some(segment);
        }
        if let Some(segment) = open {
            ticket = self.end_segment(segment, &mut replies).or(ticket);
        }
        session.sync_entry();
        (replies, ticket)
    }

    /// A new group transaction whose first command's reply will be at `first_reply`.
    /// `wait`: whether its (first) command may wait for locks.
    fn begin_segment(&self, first_reply: usize, wait: bool) -> Segment<'_> {
        let mut tx = self.store.begin(crate::clock::now_ms());
        tx.set_lock_wait(wait);
        Segment { tx, first_reply }
    }

    /// Commits a segment and returns its ticket. If the commit fails, none of its writes
    /// happened: every reply of the segment that was not already an error becomes that error,
    /// as each command alone would have answered.
    fn end_segment(&self, segment: Segment<'_>, replies: &mut [Reply]) -> Option<DurabilityTicket> {
        match self.commit_deferred(segment.tx) {
            Ok(ticket) => ticket,
            Err(e) => {
                let text = e.to_reply_text();
                for reply in replies.iter_mut().skip(segment.first_reply) {
                    if !matches!(reply, Reply::Error(_)) {
                        *reply = Reply::Error(text.clone());
                    }
                }
                None
            }
        }
    }
}
