//! [`CommandHandler`]: the one seam between a RESP connection and the command engine, so the
//! connection (framing, ordering, limits, backpressure) can be tested against a fake handler
//! and the engine without a socket. `orcinus_kv::KvServer` is the production implementation.

use orcinus_kv::command_table::may_block;
use orcinus_kv::{Bytes, GroupMember, KvServer, Reply, Resolved, Route, Session};
use orcinus_storage::DurabilityTicket;
use std::future::Future;

/// Executes decoded requests for a connection's session.
pub trait CommandHandler: Send + Sync + 'static {
    /// Runs one request (`args[0]` is the command name) and returns its reply; durable
    /// effects must be complete when the future resolves.
    fn execute<'a>(
        &'a self,
        session: &'a mut Session,
        args: Vec<Bytes>,
    ) -> impl Future<Output = Reply> + Send + 'a;

    /// Like [`CommandHandler::execute`], but the reply may come with the ticket of a commit that
    /// is applied and not yet durable; the connection sends the reply (and any later one) only
    /// after the ticket resolves. The default waits inside, like `execute`.
    fn execute_deferred<'a>(
        &'a self,
        session: &'a mut Session,
        args: Vec<Bytes>,
    ) -> impl Future<Output = (Reply, Option<DurabilityTicket>)> + Send + 'a {
        async move { (self.execute(session, args).await, None) }
    }

    /// How the connection runs `args`: held back for a write group, run while the socket is
    /// watched (a command that may block), or run now with
    /// [`CommandHandler::execute_resolved`] — decided with one command lookup, which the
    /// result carries. The default never groups.
    fn route(&self, _session: &Session, args: &[Bytes]) -> Route {
        if may_block(args) {
            Route::MayBlock
        } else {
            Route::Now(Resolved::lookup(args))
        }
    }

    /// [`CommandHandler::execute_deferred`] for a request [`CommandHandler::route`] looked up.
    /// The default ignores the lookup.
    fn execute_resolved<'a>(
        &'a self,
        session: &'a mut Session,
        _resolved: Resolved,
        args: Vec<Bytes>,
    ) -> impl Future<Output = (Reply, Option<DurabilityTicket>)> + Send + 'a {
        self.execute_deferred(session, args)
    }

    /// Runs requests [`CommandHandler::route`] sent to a write group as if one after another
    /// with nothing interleaved; returns their replies in order and the ticket of the last
    /// commit, which must resolve before any of them is sent. The default runs them one by one.
    fn execute_write_group<'a>(
        &'a self,
        session: &'a mut Session,
        requests: Vec<(GroupMember, Vec<Bytes>)>,
    ) -> impl Future<Output = (Vec<Reply>, Option<DurabilityTicket>)> + Send + 'a {
        async move {
            let mut replies = Vec::with_capacity(requests.len());
            let mut last = None;
            for (_, args) in requests {
                let (reply, ticket) = self.execute_deferred(session, args).await;
                replies.push(reply);
                last = ticket.or(last);
            }
            (replies, last)
        }
    }
}

impl CommandHandler for KvServer {
    fn execute<'a>(
        &'a self,
        session: &'a mut Session,
        args: Vec<Bytes>,
    ) -> impl Future<Output = Reply> + Send + 'a {
        KvServer::execute(self, session, args)
    }

    fn execute_deferred<'a>(
        &'a self,
        session: &'a mut Session,
        args: Vec<Bytes>,
    ) -> impl Future<Output = (Reply, Option<DurabilityTicket>)> + Send + 'a {
        KvServer::execute_deferred(self, session, args)
    }

    fn route(&self, session: &Session, args: &[Bytes]) -> Route {
        KvServer::route(self, session, args)
    }

    fn execute_resolved<'a>(
        &'a self,
        session: &'a mut Session,
        resolved: Resolved,
        args: Vec<Bytes>,
    ) -> impl Future<Output = (Reply, Option<DurabilityTicket>)> + Send + 'a {
        KvServer::execute_resolved(self, session, resolved, args)
    }

    fn execute_write_group<'a>(
        &'a self,
        session: &'a mut Session,
        requests: Vec<(GroupMember, Vec<Bytes>)>,
    ) -> impl Future<Output = (Vec<Reply>, Option<DurabilityTicket>)> + Send + 'a {
        KvServer::execute_routed_write_group(self, session, requests)
    }
}
