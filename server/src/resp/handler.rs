//! [`CommandHandler`]: the one seam between a RESP connection and the command engine, so the
//! connection (framing, ordering, limits, backpressure) can be tested against a fake handler
//! and the engine without a socket. `orcinus_kv::KvServer` is the production implementation.

use orcinus_kv::{Bytes, KvServer, Reply, Session};
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
}
