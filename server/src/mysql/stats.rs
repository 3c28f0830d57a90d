//! Server-wide counters of the MySQL front door, reported by COM_STATISTICS.
//!
//! Invariant: only counted quantities are reported; nothing in the summary is a constant
//! standing in for a measurement.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// Counters shared by all connections.
#[derive(Debug)]
pub struct ServerStats {
    started: Instant,
    connections: AtomicUsize,
    questions: AtomicU64,
}

impl Default for ServerStats {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            connections: AtomicUsize::new(0),
            questions: AtomicU64::new(0),
        }
    }
}

/// Holds one connection slot; releases it when dropped.
#[derive(Debug)]
pub struct ConnectionSlot(Arc<ServerStats>);

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

impl ServerStats {
    /// Takes a connection slot unless `max` are in use.
    pub fn try_connect(self: &Arc<Self>, max: usize) -> Option<ConnectionSlot> {
        self.connections
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| ConnectionSlot(Arc::clone(self)))
    }

    /// Counts one client statement (COM_QUERY or COM_STMT_EXECUTE).
    pub fn count_question(&self) {
        self.questions.fetch_add(1, Ordering::Relaxed);
    }

    /// The COM_STATISTICS text.
    #[must_use]
    pub fn summary(&self) -> String {
        let uptime = self.started.elapsed().as_secs();
        let questions = self.questions.load(Ordering::Relaxed);
        let qps = questions as f64 / uptime.max(1) as f64;
        format!(
            "Uptime: {uptime}  Threads: {}  Questions: {questions}  Queries per second avg: {qps:.3}",
            self.connections.load(Ordering::Relaxed)
        )
    }
}
