//! [`CommandHandler`]: the one seam between a RESP connection and the command engine, so the
//! connection (framing, ordering, limits, backpressure) can be tested against a fake handler
//! and the engine without a socket. `orcinus_kv::KvServer` is the production implementation.

use orcinus_kv::{Bytes, KvServer, Reply, Session};
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
}

impl CommandHandler for KvServer {
    fn execute<'a>(
        &'a self,
        session: &'a mut Session,
        args: Vec<Bytes>,
    ) -> impl Future<Output = Reply> + Send + 'a {
        KvServer::execute(self, session, args)
    }
}
