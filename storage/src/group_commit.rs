//! Group commit: the durability pipeline.
//!
//! Writers append their batch to the LSM journal (written into the OS page cache) under
//! `append_lock`, which also hands out a commit sequence number, so sequence order is journal
//! order. One sync thread repeatedly takes the highest appended sequence, makes the journal
//! durable once ([`Journal::sync`]), and releases every waiter at or below it. Under
//! [`SyncPolicy::Always`] no commit is acknowledged before the sync that covers it; concurrent
//! commits share that sync. An append returns a [`DurabilityTicket`] at once, so a caller can
//! append several commits and wait only for the last ticket (they resolve in sequence order).
//!
//! Invariants:
//! - `synced <= appended`; a waiter with sequence `s` is released with `Ok` only after a
//!   successful sync that started after `s` was appended.
//! - A failed sync (or journal write) poisons the pipeline: every current and later waiter gets
//!   [`StorageError::Poisoned`], `poisoned` is signalled once, nothing is retried.
//!
//! Why a sync that runs while appends go on still covers its target (the LSM journal,
//! `journal_sync.rs`): the thread reads `target = appended` after the append of every
//! sequence `<= target` has returned, so their bytes were written into a journal file before the
//! sync is even chosen. The sync then checks that no journal rotation created a newer file; if
//! none did, the bytes appended since the previous sync are in the active file, and the
//! fdatasync of the active file starts after they were written: it covers them, though appends
//! of later sequences may land while it runs. If a rotation did happen, or the check cannot be
//! made, that cycle syncs every journal file from the previous active one up to the newest
//! (the LSM defers the fsyncs of a rotation until after it released its lock, so a sealed
//! journal's tail may not be synced yet). Either way `target` is durable when `sync` returns
//! `Ok`.
//!
//! Batching: the commits that arrive during a sync are covered by the next one. Committers
//! released together by a sync come back together (each client answers its reply with its next
//! write), but one at a time: syncing at the first of them would leave the others to the sync
//! after. So once something new is appended, the sync thread waits until as many commits are
//! pending as the previous sync covered, or until half the previous sync's duration (at most
//! [`GATHER_WAIT_MAX`]) has passed, whichever is first; the batch size follows the load from one
//! sync to the next. Appenders wake the sync thread only when the count it waits for is
//! reached.
//!
//! Scheduling: the sync thread runs under `SCHED_BATCH` (Linux), so its wake-ups (the
//! appender that completes a batch, the end of an fdatasync) do not preempt the thread that is
//! running; it runs when that thread blocks or its time slice ends. Under the default policy,
//! on a server pinned to one CPU, each wake-up stopped the RESP worker in the middle of its
//! work, the sync started on a smaller batch and the worker resumed afterwards: 16 pipelined
//! SET and 16 pipelined GET clients at once (128-byte values) cost the one RESP worker 14,929
//! involuntary context switches in a 1.5-second run, and the two workers the server then used
//! ~3,500. With `SCHED_BATCH` (set with `chrt` on the same binary, 2 runs each) that mix went
//! from 316-328k SET and 890-913k GET a second to 346-356k and 1.40-1.48M, with less CPU;
//! single-command cells (128-byte and 16 KiB SETs, pipelined or not) and sysbench
//! `oltp_write_only` did not change beyond noise. On an idle CPU the thread is woken at once,
//! as before.
//!
//! Releasing: a waiter that is a callback ([`DurabilityTicket::on_durable`]: a RESP connection's
//! replies, written straight to its socket) is resolved by the sync thread as soon as the sync
//! returns; that wakes no task. The tasks waiting on the other tickets of the sync are woken
//! afterwards. If the pipeline was started inside a multi-thread tokio runtime, the sync thread
//! hands those waiters to a [`Releaser`] task on that runtime (one wake-up) which wakes them
//! there. On a server pinned to one CPU, every wake from the sync thread could hand the CPU to
//! the woken worker at once, so waking each waiter from the sync thread cost about two context
//! switches per commit; woken from a runtime worker, they queue on that worker instead. When the
//! runtime is gone (its tasks were dropped), the sync thread wakes them itself. Callbacks ran
//! on the releaser too until the releaser's wake-up (a runtime worker unparked on the server's
//! CPU for every sync) was measured: 32 unpipelined SET clients with the server on one CPU went
//! from 184 to 165 CPU ticks per 100,000 SETs and from 47k to 50k SETs a second (medians of 9).
//! Within each group, waiters resolve in sequence order; every waiter a sync releases is durable
//! before the first of them resolves.

use crate::config::SyncPolicy;
use crate::error::{Result, StorageError};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest the sync thread waits for a batch as large as the previous one to gather.
const GATHER_WAIT_MAX: Duration = Duration::from_millis(1);
use std::task::{Context, Poll, Waker};
use tokio::runtime::RuntimeFlavor;
use tokio::sync::watch;

/// Where the appended-but-not-yet-synced batches go (the LSM journal); a trait so that tests can
/// inject sync failures.
pub(crate) trait Journal: Send + Sync + 'static {
    /// Makes everything appended so far durable.
    fn sync(&self) -> Result<()>;
}

struct State {
    appended: u64,
    synced: u64,
    waiters: VecDeque<(u64, Waiter)>,
    poisoned: bool,
    stopping: bool,
    syncs: u64,
    /// The sync thread wants a wake-up when `appended` reaches this (`u64::MAX`: never).
    wake_at: u64,
}

/// What a commit's durability is delivered to: a task awaiting [`DurabilityTicket::wait`] or a
/// callback given to [`DurabilityTicket::on_durable`].
enum Outcome {
    Pending {
        waker: Option<Waker>,
        callback: Option<DurableCallback>,
    },
    /// `true`: durable; `false`: the pipeline was poisoned before a sync covered the commit.
    Resolved(bool),
}

/// Called once with the commit's durability (see [`DurabilityTicket::on_durable`]).
pub type DurableCallback = Box<dyn FnOnce(Result<()>) + Send>;

/// The shared state of one commit's ticket, resolved by the sync thread (or the releaser).
struct Slot(Mutex<Outcome>);

/// The resolving side of one waiting commit.
type Waiter = Arc<Slot>;

impl Slot {
    fn new() -> Self {
        Self(Mutex::new(Outcome::Pending {
            waker: None,
            callback: None,
        }))
    }

    /// Delivers the outcome: runs the callback or wakes the waiting task (outside the lock).
    fn resolve(&self, durable: bool) {
        let previous = std::mem::replace(&mut *self.0.lock(), Outcome::Resolved(durable));
        if let Outcome::Pending { waker, callback } = previous {
            if let Some(callback) = callback {
                callback(outcome(durable));
            }
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }

    /// Resolves a durable commit here if what waits for it is a callback (no task is woken):
    /// `true` if it did, `false` if it is left for [`Slot::resolve`].
    fn resolve_callback(&self) -> bool {
        let mut state = self.0.lock();
        let Outcome::Pending {
            waker: None,
            callback,
        } = &mut *state
        else {
            return false;
        };
        let Some(callback) = callback.take() else {
            return false;
        };
        *state = Outcome::Resolved(true);
        drop(state);
        callback(Ok(()));
        true
    }

    fn poll(&self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        match &mut *self.0.lock() {
            Outcome::Resolved(durable) => Poll::Ready(outcome(*durable)),
            Outcome::Pending { waker, .. } => {
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

fn outcome(durable: bool) -> Result<()> {
    if durable {
        Ok(())
    } else {
        Err(StorageError::Poisoned)
    }
}

/// Waiters covered by a completed sync, to be woken by the releaser task, and whether that task
/// is gone (then nothing may be queued here).
#[derive(Default)]
struct ReleaseQueue {
    waiters: Vec<Waiter>,
    gone: bool,
}

/// Wakes released waiters from a task on the runtime the pipeline was started in (see
/// "Releasing").
#[derive(Default)]
struct Releaser {
    queue: Mutex<ReleaseQueue>,
    ready: tokio::sync::Notify,
}

impl Releaser {
    /// Spawns the releaser task on `runtime`.
    fn spawn(runtime: &tokio::runtime::Handle) -> Arc<Self> {
        let releaser = Arc::new(Self::default());
        let task = ReleaserTask(Arc::clone(&releaser));
        runtime.spawn(async move { task.run().await });
        releaser
    }

    /// Queues `waiters` for the task; gives them back if the task is gone.
    fn hand_over(&self, waiters: &mut Vec<Waiter>) -> bool {
        let mut queue = self.queue.lock();
        if queue.gone {
            return false;
        }
        let was_empty = queue.waiters.is_empty();
        queue.waiters.append(waiters);
        drop(queue);
        if was_empty {
            self.ready.notify_one();
        }
        true
    }
}

/// The releaser task's side; when the task is dropped (runtime shutdown), it wakes what is
/// queued and marks the releaser gone, so the sync thread wakes waiters itself from then on.
struct ReleaserTask(Arc<Releaser>);

impl ReleaserTask {
    async fn run(&self) {
        let mut batch = Vec::new();
        loop {
            self.0.ready.notified().await;
            std::mem::swap(&mut batch, &mut self.0.queue.lock().waiters);
            for waiter in batch.drain(..) {
                waiter.resolve(true);
            }
        }
    }
}

impl Drop for ReleaserTask {
    fn drop(&mut self) {
        let mut queue = self.0.queue.lock();
        queue.gone = true;
        for waiter in queue.waiters.drain(..) {
            waiter.resolve(true);
        }
    }
}

pub(crate) struct GroupCommit {
    policy: SyncPolicy,
    append_lock: Mutex<()>,
    state: Mutex<State>,
    wake: Condvar,
    poisoned_tx: watch::Sender<bool>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Whether waiters are woken by a releaser task (see "Releasing").
    releases_on_runtime: bool,
}

/// The durability of one commit that is already applied (visible to readers) but may not be
/// durable yet. Nothing that depends on the commit may be acknowledged before
/// [`DurabilityTicket::wait`] returns `Ok`.
///
/// Tickets resolve in commit order: when one resolves `Ok`, every commit appended before it —
/// by any caller — is durable too, so a client that pipelines several commits need only wait for
/// the ticket of its last one and may drop the others. Under [`SyncPolicy::Everysec`] and
/// [`SyncPolicy::None`] tickets are ready at once (those policies promise no sync).
#[must_use = "a commit is not durable until its ticket has been waited on"]
pub struct DurabilityTicket(Option<Arc<Slot>>);

impl DurabilityTicket {
    /// A ticket with nothing to wait for (a commit that wrote nothing).
    pub(crate) fn ready() -> Self {
        Self(None)
    }

    /// Resolves once the commit is durable under the engine's policy; `Err(Poisoned)` if the sync
    /// that would have covered it failed (the commit must then never be acknowledged).
    pub async fn wait(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(slot) => std::future::poll_fn(|cx| slot.poll(cx)).await,
        }
    }

    /// Calls `callback` with what [`DurabilityTicket::wait`] would return, once that is known:
    /// at once (on this thread) if it is already known, else on the thread that resolves the
    /// ticket: mostly the sync thread, else a runtime worker (the callback came after the sync
    /// was done) or the thread that poisons the pipeline. So the callback must not block: the
    /// next sync may wait for it.
    pub fn on_durable(self, callback: DurableCallback) {
        let Some(slot) = self.0 else {
            callback(Ok(()));
            return;
        };
        let mut state = slot.0.lock();
        match &mut *state {
            Outcome::Resolved(durable) => {
                let durable = *durable;
                drop(state);
                callback(outcome(durable));
            }
            Outcome::Pending {
                callback: pending, ..
            } => *pending = Some(callback),
        }
    }
}

impl std::fmt::Debug for DurabilityTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = if self.0.is_some() { "pending" } else { "ready" };
        write!(f, "DurabilityTicket({state})")
    }
}

/// Puts the calling thread (the sync thread) under `SCHED_BATCH`, at nice 0 (see
/// "Scheduling"). Not fatal: a thread left under the default policy only syncs smaller batches.
fn run_as_batch_thread() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::unix::{
            NormalThreadSchedulePolicy, ThreadSchedulePolicy, set_thread_priority_and_policy,
            thread_native_id,
        };
        use thread_priority::{ThreadPriority, ThreadPriorityOsValue};
        // For the normal policies the priority is the nice value: the default, 0.
        if let Err(e) = set_thread_priority_and_policy(
            thread_native_id(),
            ThreadPriority::Os(ThreadPriorityOsValue::default()),
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Batch),
        ) {
            tracing::warn!("the sync thread stays under the default scheduling policy: {e:?}");
        }
    }
}

impl GroupCommit {
    pub(crate) fn start(policy: SyncPolicy, journal: Arc<dyn Journal>) -> Result<Arc<Self>> {
        // Only a multi-thread runtime runs its tasks whether or not anyone drives it.
        let releaser = tokio::runtime::Handle::try_current()
            .ok()
            .filter(|runtime| runtime.runtime_flavor() == RuntimeFlavor::MultiThread)
            .map(|runtime| Releaser::spawn(&runtime));
        let (poisoned_tx, _) = watch::channel(false);
        let gc = Arc::new(Self {
            policy,
            append_lock: Mutex::new(()),
            state: Mutex::new(State {
                appended: 0,
                synced: 0,
                waiters: VecDeque::new(),
                poisoned: false,
                stopping: false,
                syncs: 0,
                wake_at: u64::MAX,
            }),
            wake: Condvar::new(),
            poisoned_tx,
            thread: Mutex::new(None),
            releases_on_runtime: releaser.is_some(),
        });
        tracing::debug!(
            releases_on_runtime = gc.releases_on_runtime,
            "group commit started"
        );
        let worker = Arc::clone(&gc);
        let handle = std::thread::Builder::new()
            .name("orcinus-sync".into())
            .spawn(move || {
                run_as_batch_thread();
                worker.run(journal.as_ref(), releaser);
            })?;
        *gc.thread.lock() = Some(handle);
        Ok(gc)
    }

    /// Appends with `write` (which must put the batch into the journal) and returns the ticket
    /// for its durability. `write` runs under the append lock, so appends are totally ordered.
    pub(crate) fn append(&self, write: impl FnOnce() -> Result<()>) -> Result<DurabilityTicket> {
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
            return Ok(DurabilityTicket::ready());
        }
        let slot = Arc::new(Slot::new());
        st.waiters.push_back((seq, Arc::clone(&slot)));
        let wake = seq == st.wake_at;
        drop(st);
        if wake {
            self.wake.notify_one();
        }
        Ok(DurabilityTicket(Some(slot)))
    }

    /// A receiver that turns `true` once the engine is poisoned.
    pub(crate) fn poisoned_signal(&self) -> watch::Receiver<bool> {
        self.poisoned_tx.subscribe()
    }

    pub(crate) fn is_poisoned(&self) -> bool {
        self.state.lock().poisoned
    }

    /// Number of commits appended so far (for statistics and benchmarks).
    pub(crate) fn append_count(&self) -> u64 {
        self.state.lock().appended
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
        let waiters: Vec<_> = st.waiters.drain(..).map(|(_, waiter)| waiter).collect();
        drop(st);
        for waiter in waiters {
            waiter.resolve(false);
        }
        self.poisoned_tx.send_replace(true);
        self.wake.notify_all();
    }

    fn run(&self, journal: &dyn Journal, releaser: Option<Arc<Releaser>>) {
        let interval = Duration::from_secs(1);
        // Commits the previous sync covered, and how long it took (see "Batching").
        let mut last_batch = 1u64;
        let mut last_sync = Duration::ZERO;
        let mut report = SyncReport::new();
        let mut released = Vec::new();
        loop {
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
                        st.wake_at = st.synced + 1;
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
                let gather_started = Instant::now();
                let deadline = gather_started + (last_sync / 2).min(GATHER_WAIT_MAX);
                while st.appended - st.synced < last_batch && !st.stopping && !st.poisoned {
                    st.wake_at = st.synced + last_batch;
                    if self.wake.wait_until(&mut st, deadline).timed_out() {
                        report.gather_timeouts += 1;
                        break;
                    }
                }
                st.wake_at = u64::MAX;
                report.gather += gather_started.elapsed();
                st.appended
            };
            let started = Instant::now();
            let result = journal.sync();
            last_sync = started.elapsed();
            report.sync += last_sync;
            let mut st = self.state.lock();
            match result {
                Ok(()) => {
                    st.syncs += 1;
                    last_batch = target.saturating_sub(st.synced).max(1);
                    report.add(last_batch);
                    st.synced = st.synced.max(target);
                    let covered = st
                        .waiters
                        .iter()
                        .take_while(|(seq, _)| *seq <= target)
                        .count();
                    released.extend(st.waiters.drain(..covered).map(|(_, tx)| tx));
                    let done = st.stopping && st.appended == st.synced;
                    // Waking the committers (scheduler work) outside the lock appenders take.
                    drop(st);
                    released.retain(|waiter| !waiter.resolve_callback());
                    if !released.is_empty()
                        && !releaser
                            .as_ref()
                            .is_some_and(|r| r.hand_over(&mut released))
                    {
                        for waiter in released.drain(..) {
                            waiter.resolve(true);
                        }
                    }
                    report.maybe_log();
                    if done {
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

/// Per-second summary of the sync thread's work, logged at debug level (`RUST_LOG=
/// orcinus_storage=debug`): how many commits each sync covered and where its time went.
struct SyncReport {
    since: Instant,
    syncs: u64,
    commits: u64,
    largest: u64,
    gather_timeouts: u64,
    gather: Duration,
    sync: Duration,
}

impl SyncReport {
    fn new() -> Self {
        Self {
            since: Instant::now(),
            syncs: 0,
            commits: 0,
            largest: 0,
            gather_timeouts: 0,
            gather: Duration::ZERO,
            sync: Duration::ZERO,
        }
    }

    fn add(&mut self, batch: u64) {
        self.syncs += 1;
        self.commits += batch;
        self.largest = self.largest.max(batch);
    }

    fn maybe_log(&mut self) {
        if self.since.elapsed() < Duration::from_secs(1) {
            return;
        }
        let per_sync = |d: Duration| d.as_micros() / u128::from(self.syncs.max(1));
        tracing::debug!(
            syncs = self.syncs,
            commits = self.commits,
            largest_batch = self.largest,
            gather_timeouts = self.gather_timeouts,
            gather_us_per_sync = per_sync(self.gather),
            sync_us_per_sync = per_sync(self.sync),
            "group commit"
        );
        *self = Self::new();
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

    /// A journal whose syncs start freely but finish only when the test allows them.
    #[derive(Default)]
    struct GatedJournal {
        started: AtomicU64,
        allowed: Mutex<u64>,
        gate: Condvar,
    }

    impl GatedJournal {
        fn allow_all(&self) {
            *self.allowed.lock() = u64::MAX;
            self.gate.notify_all();
        }

        fn allow_one(&self) {
            *self.allowed.lock() += 1;
            self.gate.notify_all();
        }

        async fn wait_started(&self, n: u64) {
            while self.started.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }

    impl Journal for GatedJournal {
        fn sync(&self) -> Result<()> {
            let n = self.started.fetch_add(1, Ordering::SeqCst) + 1;
            let mut allowed = self.allowed.lock();
            while *allowed < n {
                self.gate.wait(&mut allowed);
            }
            Ok(())
        }
    }

    async fn is_pending(ticket: &mut std::pin::Pin<Box<impl Future<Output = Result<()>>>>) -> bool {
        tokio::time::timeout(Duration::from_millis(50), ticket.as_mut())
            .await
            .is_err()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ticket_resolves_only_after_a_sync_that_started_after_its_append() {
        let journal = Arc::new(GatedJournal::default());
        let gc = GroupCommit::start(SyncPolicy::Always, journal.clone()).unwrap();
        let mut first = Box::pin(gc.append(|| Ok(())).unwrap().wait());
        journal.wait_started(1).await;
        assert!(
            is_pending(&mut first).await,
            "resolved before its sync ended"
        );
        // Appended while sync 1 runs: sync 1 does not cover it.
        let mut second = Box::pin(gc.append(|| Ok(())).unwrap().wait());
        journal.allow_one();
        first.as_mut().await.unwrap();
        journal.wait_started(2).await;
        assert!(
            is_pending(&mut second).await,
            "covered by a sync that began before it"
        );
        journal.allow_one();
        second.as_mut().await.unwrap();
        journal.allow_all();
        gc.stop();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_last_ticket_of_a_pipeline_covers_the_earlier_ones() {
        let journal = Arc::new(GatedJournal::default());
        let gc = GroupCommit::start(SyncPolicy::Always, journal.clone()).unwrap();
        let tickets: Vec<_> = (0..8).map(|_| gc.append(|| Ok(())).unwrap()).collect();
        let mut rest = tickets;
        let last = Box::pin(rest.pop().unwrap().wait());
        for _ in 0..3 {
            journal.allow_one();
        }
        last.await.unwrap();
        assert!(gc.state.lock().synced >= 8);
        for ticket in rest {
            tokio::time::timeout(Duration::from_millis(10), ticket.wait())
                .await
                .expect("an earlier ticket is already resolved")
                .unwrap();
        }
        journal.allow_all();
        gc.stop();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sync_runs_its_callbacks_itself_and_wakes_its_tasks_from_the_runtime() {
        let journal = Arc::new(GatedJournal::default());
        let gc = GroupCommit::start(SyncPolicy::Always, journal.clone()).unwrap();
        assert!(gc.releases_on_runtime);
        let waiting = tokio::spawn(gc.append(|| Ok(())).unwrap().wait());
        let (tx, rx) = std::sync::mpsc::channel();
        gc.append(|| Ok(())).unwrap().on_durable(Box::new(move |r| {
            let thread = std::thread::current().name().map(str::to_owned);
            let _ = tx.send((r.is_ok(), thread));
        }));
        journal.allow_all();
        let (durable, thread) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(durable);
        assert_eq!(thread.as_deref(), Some("orcinus-sync"));
        waiting.await.unwrap().unwrap();
        gc.stop();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_sync_thread_runs_under_sched_batch_at_nice_zero() {
        let journal = Arc::new(GatedJournal::default());
        let gc = GroupCommit::start(SyncPolicy::Always, journal.clone()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        gc.append(|| Ok(())).unwrap().on_durable(Box::new(move |_| {
            let sched = std::fs::read_to_string("/proc/thread-self/sched").unwrap_or_default();
            let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
            let _ = tx.send((sched, stat));
        }));
        journal.allow_all();
        let (sched, stat) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let policy = sched
            .lines()
            .find(|l| l.starts_with("policy"))
            .and_then(|l| l.split(':').nth(1))
            .map(str::trim);
        assert_eq!(policy, Some("3"), "SCHED_BATCH is policy 3:\n{sched}");
        // Field 19 of /proc/<tid>/stat is the nice value; the comm field has no spaces here.
        assert_eq!(stat.split_whitespace().nth(18), Some("0"), "{stat}");
        gc.stop();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_callback_runs_only_after_the_sync_that_covers_its_commit() {
        let journal = Arc::new(GatedJournal::default());
        let gc = GroupCommit::start(SyncPolicy::Always, journal.clone()).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let first = tx.clone();
        gc.append(|| Ok(())).unwrap().on_durable(Box::new(move |r| {
            let _ = first.send(r.is_ok());
        }));
        journal.wait_started(1).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(rx.try_recv().is_err(), "called before its sync ended");
        journal.allow_one();
        assert_eq!(rx.recv().await, Some(true));
        // Already durable: called at once, on this thread.
        let ticket = gc.append(|| Ok(())).unwrap();
        journal.allow_all();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let here = std::thread::current().id();
        let (same_tx, same_rx) = std::sync::mpsc::channel();
        ticket.on_durable(Box::new(move |r| {
            let _ = same_tx.send((r.is_ok(), std::thread::current().id() == here));
        }));
        assert_eq!(same_rx.try_recv(), Ok((true, true)));
        gc.stop();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_callback_gets_the_poison_of_a_failed_sync() {
        let journal = Arc::new(CountingJournal {
            syncs: AtomicU64::new(0),
            fail_at: 1,
        });
        let gc = GroupCommit::start(SyncPolicy::Always, journal).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        gc.append(|| Ok(())).unwrap().on_durable(Box::new(move |r| {
            let _ = tx.send(matches!(r, Err(StorageError::Poisoned)));
        }));
        assert_eq!(rx.recv().await, Some(true));
        gc.stop();
    }

    #[test]
    fn waiters_are_released_after_the_starting_runtime_is_gone() {
        let journal = Arc::new(CountingJournal {
            syncs: AtomicU64::new(0),
            fail_at: 0,
        });
        let first = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let gc = first
            .block_on(async { GroupCommit::start(SyncPolicy::Always, journal) })
            .unwrap();
        assert!(
            gc.releases_on_runtime,
            "started inside a multi-thread runtime"
        );
        first
            .block_on(gc.append(|| Ok(())).unwrap().wait())
            .unwrap();
        drop(first);
        let second = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        second.block_on(async {
            let ticket = gc.append(|| Ok(())).unwrap();
            tokio::time::timeout(Duration::from_secs(10), ticket.wait())
                .await
                .expect("released without the first runtime")
                .unwrap();
        });
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
