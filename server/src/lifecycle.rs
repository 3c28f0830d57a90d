//! The running server: builds the tokio runtimes, performs the start-up steps of
//! [`crate::startup`], serves both ports, and shuts down.
//!
//! Two runtimes: the main one (MySQL connections, the engine's background tasks, signals) and
//! one for RESP connections, sized to the CPUs the process may run on (see
//! [`resp_worker_threads`]).
//!
//! Invariants:
//! - SIGINT/SIGTERM handlers are installed before the listening lines are printed, so a signal
//!   sent by anyone who saw those lines always takes the clean path: stop the listener tasks,
//!   `Engine::shutdown` (finish in-flight commits, sync), exit 0.
//! - A poisoned engine or a listener task that ends is fatal: the server stops and `run`
//!   returns an error (exit status 1). The engine is still shut down so that everything that was
//!   acknowledged is synced; its error never masks the original one.

use crate::accounts::AccountAuthenticator;
use crate::config::Config;
use crate::error::ServerError;
use crate::startup::{
    announce, bind_listeners, check_public_bind_before_open, open_accounts, open_engine,
};
use crate::{mysql, resp};
use orcinus_storage::Engine;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::task::{JoinError, JoinHandle};

/// How long connection tasks may linger after shutdown before the runtime drops them.
const RUNTIME_SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Stack of each runtime worker. A statement runs as one deep chain of futures (connection →
/// session → prepared/SQL-level EXECUTE → executor → DataFusion's planner); in a debug build
/// that chain outgrows tokio's 2 MiB default, so workers get 8 MiB (only touched pages cost
/// memory).
const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Starts the server with a valid `config` and serves until a signal or a fatal failure.
pub fn run(config: Config) -> Result<(), ServerError> {
    let runtime = build_runtime("orcinus-worker", worker_threads())?;
    let resp_runtime = build_runtime("orcinus-resp", resp_worker_threads())?;
    let (engine, outcome) = runtime.block_on(start_and_serve(config, resp_runtime.handle()))?;
    let shutdown = engine.shutdown();
    resp_runtime.shutdown_timeout(RUNTIME_SHUTDOWN_GRACE);
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN_GRACE);
    outcome?;
    shutdown.map_err(ServerError::Shutdown)?;
    tracing::info!("shutdown complete");
    Ok(())
}

/// A multi-thread runtime named `name` with `workers` worker threads (`TOKIO_WORKER_THREADS`,
/// if set, overrides the count).
fn build_runtime(name: &str, workers: usize) -> Result<tokio::runtime::Runtime, ServerError> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(workers);
    }
    builder
        .enable_all()
        .thread_name(name)
        .thread_stack_size(WORKER_STACK_BYTES)
        .build()
        .map_err(ServerError::Runtime)
}

/// Fewest main-runtime worker threads, whatever the CPU count.
const MIN_WORKER_THREADS: usize = 8;

/// Worker threads for the runtime: one per CPU the process may run on, but at least
/// [`MIN_WORKER_THREADS`]. Storage reads run on the workers and can block on the disk, and on a
/// shared or pinned CPU the kernel schedules per thread: under sysbench with the server pinned
/// to one busy CPU, one worker got about a tenth of that CPU while a thread-per-connection peer
/// got most of it; with 4-8 workers throughput doubled and CPU per query did not grow.
/// `TOKIO_WORKER_THREADS` overrides this.
fn worker_threads() -> usize {
    usable_cpus().max(MIN_WORKER_THREADS)
}

/// Worker threads for the RESP runtime: one per CPU the process may run on. A RESP command is
/// short and a pipeline runs as one task step, so more workers than CPUs buy no throughput:
/// they only hand connection tasks from thread to thread. With the server pinned to one CPU
/// (redis-benchmark, 32 clients, medians of 3 alternated runs):
/// - two workers against one: the workers woke each other through futexes, twice the context
///   switches; pipelined 128-byte SETs 521k against 560k/s, 16 KiB ones 23.7k against 24.7k/s,
///   16 pipelined SET plus 16 pipelined GET clients 371k + 1.29M against 411k + 1.55M/s;
///   unpipelined GETs, which the client's CPU bounds, were the same (about 90k/s, as Redis);
/// - 8 workers cost about 10% more CPU per pipelined SET than one or two.
///
/// What one worker per CPU gives up: a read that misses every cache and waits on the disk holds
/// up the other connections on that worker for as long. A single worker used to collapse under
/// mixed reads and writes; that was the group-commit sync thread preempting it on every
/// wake-up, which `SCHED_BATCH` ended (see `orcinus_storage::group_commit`).
fn resp_worker_threads() -> usize {
    usable_cpus()
}

/// CPUs this process may run on (its affinity mask, as `sched_getaffinity` reports it).
fn usable_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Start-up errors come back as the outer `Err`; once serving, the engine is returned with the
/// reason serving stopped, so the caller shuts it down either way.
/// RESP connections are served on `resp_runtime`.
async fn start_and_serve(
    config: Config,
    resp_runtime: &tokio::runtime::Handle,
) -> Result<(Engine, Result<(), ServerError>), ServerError> {
    let listeners = bind_listeners(&config.server).await?;
    check_public_bind_before_open(&config.server)?;
    let engine = open_engine(config.storage.clone())?;
    let accounts = open_accounts(&engine, config.server.bind).await?;
    let resp_port = listeners.resp.local_addr().map_or(0, |a| a.port());
    let authenticator = Arc::new(AccountAuthenticator(accounts.clone()));
    let resp_service =
        resp::RespService::open(engine.clone(), config.resp, resp_port, authenticator).map_err(
            |e| ServerError::ServiceOpen {
                protocol: "redis",
                reason: e.to_string(),
            },
        )?;
    let sql = Arc::new(
        mysql::open_sql(engine.clone(), &config.mysql, accounts).map_err(|e| {
            ServerError::ServiceOpen {
                protocol: "mysql",
                reason: e.to_string(),
            }
        })?,
    );
    let mut signals = ShutdownSignals::install()?;
    announce(&listeners, &mut std::io::stdout().lock())?;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        data_dir = %config.server.data_dir.display(),
        sync = ?config.storage.sync,
        "orcinus started"
    );

    let mut mysql_task = tokio::spawn(mysql::serve(listeners.mysql, sql, config.mysql));
    // The listener moves to the RESP runtime's reactor, so do the sockets it accepts.
    let resp_listener = listeners.resp.into_std().map_err(ServerError::Runtime)?;
    let mut resp_task = resp_runtime.spawn(async move {
        resp_service
            .serve(tokio::net::TcpListener::from_std(resp_listener)?)
            .await
    });
    let outcome = wait_for_stop(
        signals.recv(),
        &mut mysql_task,
        &mut resp_task,
        engine.poisoned(),
    )
    .await;
    mysql_task.abort();
    resp_task.abort();
    Ok((engine, outcome))
}

type ListenerTask = JoinHandle<std::io::Result<()>>;

/// Waits until serving must stop: a shutdown signal (`Ok`), or a listener task that ended or a
/// poisoned engine (`Err`, reported by `main` as the one error line).
async fn wait_for_stop(
    shutdown_signal: impl Future<Output = &'static str>,
    mysql_task: &mut ListenerTask,
    resp_task: &mut ListenerTask,
    poisoned: impl Future<Output = ()>,
) -> Result<(), ServerError> {
    tokio::select! {
        name = shutdown_signal => {
            tracing::info!(signal = name, "shutting down");
            Ok(())
        }
        joined = mysql_task => Err(listener_stopped("mysql", joined)),
        joined = resp_task => Err(listener_stopped("redis", joined)),
        () = poisoned => Err(ServerError::EnginePoisoned),
    }
}

fn listener_stopped(
    protocol: &'static str,
    joined: Result<std::io::Result<()>, JoinError>,
) -> ServerError {
    let reason = match joined {
        Ok(Ok(())) => "the accept loop returned".to_string(),
        Ok(Err(err)) => err.to_string(),
        Err(err) if err.is_panic() => "the listener task panicked".to_string(),
        Err(err) => err.to_string(),
    };
    ServerError::ListenerStopped { protocol, reason }
}

/// SIGINT and SIGTERM, installed together.
struct ShutdownSignals {
    interrupt: Signal,
    terminate: Signal,
}

impl ShutdownSignals {
    fn install() -> Result<Self, ServerError> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt()).map_err(ServerError::Runtime)?,
            terminate: signal(SignalKind::terminate()).map_err(ServerError::Runtime)?,
        })
    }

    /// Resolves with the signal's name when one arrives.
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            Some(()) = self.interrupt.recv() => "SIGINT",
            Some(()) = self.terminate.recv() => "SIGTERM",
            else => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::pending;

    fn idle_listener() -> ListenerTask {
        tokio::spawn(pending())
    }

    #[tokio::test]
    async fn a_signal_stops_serving_cleanly() {
        let (mut mysql, mut resp) = (idle_listener(), idle_listener());
        let outcome = wait_for_stop(async { "SIGTERM" }, &mut mysql, &mut resp, pending()).await;
        assert!(outcome.is_ok(), "{outcome:?}");
    }

    #[tokio::test]
    async fn a_failed_listener_is_fatal_and_named() {
        let mut mysql = tokio::spawn(async { Err(std::io::Error::other("accept broke")) });
        let mut resp = idle_listener();
        let err = wait_for_stop(pending(), &mut mysql, &mut resp, pending())
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "mysql listener stopped: accept broke");
        assert_eq!(err.exit_code(), 1);
    }

    #[tokio::test]
    async fn a_listener_that_returns_is_fatal() {
        let mut mysql = idle_listener();
        let mut resp = tokio::spawn(async { Ok(()) });
        let err = wait_for_stop(pending(), &mut mysql, &mut resp, pending())
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "redis listener stopped: the accept loop returned"
        );
    }

    #[tokio::test]
    async fn a_panicking_listener_is_fatal() {
        let mut mysql = idle_listener();
        let mut resp: ListenerTask = tokio::spawn(async { panic!("bug in the accept loop") });
        let err = wait_for_stop(pending(), &mut mysql, &mut resp, pending())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("panicked"), "{err}");
    }

    #[tokio::test]
    async fn a_poisoned_engine_is_fatal() {
        let (mut mysql, mut resp) = (idle_listener(), idle_listener());
        let err = wait_for_stop(pending(), &mut mysql, &mut resp, async {})
            .await
            .unwrap_err();
        assert!(matches!(err, ServerError::EnginePoisoned), "{err}");
    }
}
