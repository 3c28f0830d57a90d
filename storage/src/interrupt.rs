//! Statement interruption (MySQL `KILL QUERY`): an [`Interrupt`] is a flag another task can fire;
//! code running inside [`Interrupt::scope`] sees it through [`Interrupt::current`] and stops at
//! its next interruption point with [`StorageError::Interrupted`].
//!
//! Interruption points are explicit, never a dropped future at an arbitrary await: here, a lock
//! wait ([`crate::Transaction::lock`]); above storage, whoever wraps a long wait in
//! [`interruptible`] (the analytical executor's stream, LOAD DATA between rows). A commit is
//! never interrupted, so a statement either reports 1317 with nothing of it applied, or
//! completes.
//!
//! Invariant: firing is sticky until [`Interrupt::clear`], so an interrupt fired just before a
//! wait starts is still seen by that wait.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use tokio::sync::Notify;

use crate::error::{Result, StorageError};

tokio::task_local! {
    static CURRENT: Interrupt;
}

#[derive(Debug, Default)]
struct Inner {
    fired: AtomicBool,
    notify: Notify,
}

/// A statement-interruption flag shared by the statement's task and whoever may kill it.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Arc<Inner>);

impl Interrupt {
    /// A flag that has not fired.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the flag: every current and later wait in its scope ends with `Interrupted`.
    pub fn fire(&self) {
        self.0.fired.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Re-arms the flag (the next statement starts uninterrupted).
    pub fn clear(&self) {
        self.0.fired.store(false, Ordering::SeqCst);
    }

    /// True once fired (and not cleared since).
    #[must_use]
    pub fn is_fired(&self) -> bool {
        self.0.fired.load(Ordering::SeqCst)
    }

    /// Resolves when the flag fires (at once if it already has).
    pub async fn fired(&self) {
        loop {
            let mut notified = pin!(self.0.notify.notified());
            notified.as_mut().enable();
            if self.is_fired() {
                return;
            }
            notified.await;
        }
    }

    /// Runs `fut` with this flag as the task's current interrupt. Not an `async fn`: that
    /// would hold `fut` twice (as its argument and inside the task-local scope), doubling the
    /// size of every statement's future.
    pub fn scope<F: Future>(self, fut: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self, fut)
    }

    /// The interrupt of the running statement, if it runs inside [`Interrupt::scope`].
    #[must_use]
    pub fn current() -> Option<Self> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// `Err(Interrupted)` if the current statement's flag has fired.
    pub fn check_current() -> Result<()> {
        match Self::current() {
            Some(i) if i.is_fired() => Err(StorageError::Interrupted),
            _ => Ok(()),
        }
    }
}

/// Runs `fut` until it completes or the current statement's interrupt fires (then `fut` is
/// dropped and the result is `Err(Interrupted)`). Outside a scope it simply awaits `fut`. Only
/// wrap futures that are safe to drop at any await (reads, lock waits, result streams).
pub async fn interruptible<F: Future>(fut: F) -> Result<F::Output> {
    let Some(interrupt) = Interrupt::current() else {
        return Ok(fut.await);
    };
    let mut fut = pin!(fut);
    let mut fired = pin!(interrupt.fired());
    std::future::poll_fn(|cx| {
        if fired.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(StorageError::Interrupted));
        }
        fut.as_mut().poll(cx).map(Ok)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_fired_interrupt_ends_a_wait_in_its_scope() {
        let interrupt = Interrupt::new();
        let killer = interrupt.clone();
        let waiting = tokio::spawn(
            interrupt.scope(interruptible(tokio::time::sleep(Duration::from_secs(60)))),
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        killer.fire();
        let result = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(result, Err(StorageError::Interrupted)));
    }

    #[tokio::test]
    async fn outside_a_scope_or_unfired_the_future_completes() {
        assert_eq!(interruptible(async { 7 }).await.unwrap(), 7);
        let interrupt = Interrupt::new();
        let out = interrupt.clone().scope(interruptible(async { 8 })).await;
        assert_eq!(out.unwrap(), 8);
        interrupt.fire();
        assert!(
            interrupt
                .clone()
                .scope(async { Interrupt::check_current() })
                .await
                .is_err()
        );
        interrupt.clear();
        assert!(
            interrupt
                .scope(async { Interrupt::check_current() })
                .await
                .is_ok()
        );
    }
}
