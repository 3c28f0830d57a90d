//! Group commit: the durability pipeline.
//!
//! Writers append their batch to the LSM journal (buffered to the OS page cache) under
//! `append_lock`, which also hands out a commit sequence number, so sequence order is journal
//! order. One sync thread repeatedly takes the highest appended sequence, calls fdatasync once,
//! and releases every waiter at or below it. Under [`SyncPolicy::Always`] no commit is
//! acknowledged before the sync that covers it; concurrent commits share that sync.
//!
//! Invariants:
//! - `synced <= appended`; a waiter with sequence `s` is released with `Ok` only after a
//!   successful sync that started after `s` was appended.
//! - A failed sync (or journal write) poisons the pipeline: every current and later waiter gets
//!   [`StorageError::Poisoned`], `poisoned` is signalled once, nothing is retried.
//!
//! Batching: the LSM holds its journal lock during fdatasync, so committers that arrive during a
//! sync queue up behind it. If the sync thread started the next sync as soon as the first of them
//! had appended, it would lock the rest out again and each sync would cover one or two commits.
//! So appends in progress are counted, and before a sync the thread lets every append already in
//! progress finish (bounded by [`GATHER_LIMIT`]); a lone committer never waits for it.

use crate::config::SyncPolicy;
use crate::error::{Result, StorageError};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest the sync thread waits for appends already in progress to join the next sync.
const GATHER_LIMIT: Duration = Duration::from_micros(500);
use tokio::sync::{oneshot, watch};

/// Where the appended-but-not-yet-synced batches go (the LSM journal); a trait so that tests can
/// inject sync failures.
pub(crate) trait Journal: Send + Sync + 'static {
    /// Makes everything appended so far durable.
    fn sync(&self) -> Result<()>;
}

struct State {
    appended: u64,
    synced: u64,
    waiters: VecDeque<(u64, oneshot::Sender<Result<()>>)>,
    poisoned: bool,
    stopping: bool,
    syncs: u64,
}

pub(crate) struct GroupCommit {
    policy: SyncPolicy,
    append_lock: Mutex<()>,
    appends_in_progress: AtomicUsize,
    state: Mutex<State>,
    wake: Condvar,
    poisoned_tx: watch::Sender<bool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// A handle to wait for the durability of one appended commit.
#[must_use = "a commit is not durable until its ticket has been waited on"]
pub(crate) struct Ticket(Option<oneshot::Receiver<Result<()>>>);

impl Ticket {
    /// Resolves once the commit is durable under the engine's policy.
    pub(crate) async fn wait(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(rx) => rx.await.unwrap_or(Err(StorageError::Poisoned)),
        }
    }
}

impl GroupCommit {
    pub(crate) fn start(policy: SyncPolicy, journal: Arc<dyn Journal>) -> Result<Arc<Self>> {
        let (poisoned_tx, _) = watch::channel(false);
        let gc = Arc::new(Self {
            policy,
            append_lock: Mutex::new(()),
            appends_in_progress: AtomicUsize::new(0),
            state: Mutex::new(State {
                appended: 0,
                synced: 0,
                waiters: VecDeque::new(),
                poisoned: false,
                stopping: false,
                syncs: 0,
            }),
            wake: Condvar::new(),
            poisoned_tx,
            thread: Mutex::new(None),
        });
        let worker = Arc::clone(&gc);
        let handle = std::thread::Builder::new()
            .name("orcinus-sync".into())
            .spawn(move || worker.run(journal.as_ref()))?;
        *gc.thread.lock() = Some(handle);
        Ok(gc)
    }

    /// Appends with `write` (which must put the batch into the journal) and returns the ticket
    /// for its durability. `write` runs under the append lock, so appends are totally ordered.
    pub(crate) fn append(&self, write: impl FnOnce() -> Result<()>) -> Result<Ticket> {
        self.appends_in_progress.fetch_add(1, Ordering::SeqCst);
        let result = self.append_counted(write);
        self.appends_in_progress.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn append_counted(&self, write: impl FnOnce() -> Result<()>) -> Result<Ticket> {
        let _order = self.append_lock.lock();
        {
            let st = self.state.lock();
            if st.poisoned {
                return Err(StorageError::Poisoned);
            }
            if st.stopping {
                return Err(StorageError::ShuttingDown);
            }
        }
        if let Err(e) = write() {
            if matches!(e, StorageError::Poisoned | StorageError::Io(_)) {
                self.poison(&format!("journal write failed: {e}"));
            }
            return Err(e);
        }
        let mut st = self.state.lock();
        st.appended += 1;
        let seq = st.appended;
        if self.policy != SyncPolicy::Always {
            return Ok(Ticket(None));
        }
        let (tx, rx) = oneshot::channel();
        st.waiters.push_back((seq, tx));
        drop(st);
        self.wake.notify_one();
        Ok(Ticket(Some(rx)))
    }

    /// A receiver that turns `true` once the engine is poisoned.
    pub(crate) fn poisoned_signal(&self) -> watch::Receiver<bool> {
        self.poisoned_tx.subscribe()
    }

    pub(crate) fn is_poisoned(&self) -> bool {
        self.state.lock().poisoned
    }

    /// Number of fdatasync calls made so far (for statistics and benchmarks).
    pub(crate) fn sync_count(&self) -> u64 {
        self.state.lock().syncs
    }

    /// Stops accepting appends, performs a final sync and joins the sync thread.
    pub(crate) fn stop(&self) {
        {
            let _order = self.append_lock.lock();
            self.state.lock().stopping = true;
        }
        self.wake.notify_all();
        if let Some(handle) = self.thread.lock().take() {
            let _ = handle.join();
        }
    }

    fn poison(&self, why: &str) {
        let mut st = self.state.lock();
        if st.poisoned {
            return;
        }
        st.poisoned = true;
        tracing::error!("FATAL: {why}; storage is poisoned, no further writes are acknowledged");
        for (_, tx) in st.waiters.drain(..) {
            let _ = tx.send(Err(StorageError::Poisoned));
        }
        drop(st);
        self.poisoned_tx.send_replace(true);
        self.wake.notify_all();
    }

    /// Lets appends already in progress finish so the next sync covers them too.
    fn gather_appends(&self) {
        let started = Instant::now();
        while self.appends_in_progress.load(Ordering::SeqCst) > 0
            && started.elapsed() < GATHER_LIMIT
        {
            std::thread::yield_now();
        }
    }

    fn run(&self, journal: &dyn Journal) {
        let interval = Duration::from_secs(1);
        loop {
            self.gather_appends();
            let target = {
                let mut st = self.state.lock();
                loop {
                    if st.poisoned {
                        return;
                    }
                    if st.appended > st.synced && self.policy == SyncPolicy::Always {
                        break;
                    }
                    if st.stopping {
                        break;
                    }
                    if self.policy == SyncPolicy::Always {
                        self.wake.wait(&mut st);
                    } else {
                        let timed_out = self.wake.wait_for(&mut st, interval).timed_out();
                        if timed_out
                            && st.appended > st.synced
                            && self.policy == SyncPolicy::Everysec
                        {
                            break;
                        }
                    }
                }
                st.appended
            };
            let result = journal.sync();
            let mut st = self.state.lock();
            match result {
                Ok(()) => {
                    st.syncs += 1;
                    st.synced = st.synced.max(target);
                    while st.waiters.front().is_some_and(|(seq, _)| *seq <= target) {
                        if let Some((_, tx)) = st.waiters.pop_front() {
                            let _ = tx.send(Ok(()));
                        }
                    }
                    if st.stopping && st.appended == st.synced {
                        return;
                    }
                }
                Err(e) => {
                    drop(st);
                    self.poison(&format!("fdatasync failed: {e}"));
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct CountingJournal {
        syncs: AtomicU64,
        fail_at: u64,
    }

    impl Journal for CountingJournal {
        fn sync(&self) -> Result<()> {
            let n = self.syncs.fetch_add(1, Ordering::SeqCst) + 1;
            std::thread::sleep(Duration::from_millis(2));
            if n == self.fail_at {
                return Err(StorageError::Io(std::io::Error::other("injected EIO")));
            }
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_commits_share_syncs() {
        let journal = Arc::new(CountingJournal {
            syncs: AtomicU64::new(0),
            fail_at: 0,
        });
        let gc = GroupCommit::start(SyncPolicy::Always, journal.clone()).unwrap();
        let mut tasks = Vec::new();
        for _ in 0..64 {
            let gc = Arc::clone(&gc);
            tasks.push(tokio::spawn(async move {
                for _ in 0..10 {
                    gc.append(|| Ok(())).unwrap().wait().await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let syncs = journal.syncs.load(Ordering::SeqCst);
        assert!(
            syncs < 640,
            "expected shared syncs, got {syncs} for 640 commits"
        );
        gc.stop();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn failed_sync_poisons_and_never_acknowledges() {
        let journal = Arc::new(CountingJournal {
            syncs: AtomicU64::new(0),
            fail_at: 1,
        });
        let gc = GroupCommit::start(SyncPolicy::Always, journal).unwrap();
        let mut signal = gc.poisoned_signal();
        let ticket = gc.append(|| Ok(())).unwrap();
        assert!(matches!(ticket.wait().await, Err(StorageError::Poisoned)));
        signal.wait_for(|p| *p).await.unwrap();
        assert!(matches!(gc.append(|| Ok(())), Err(StorageError::Poisoned)));
        gc.stop();
    }
}
