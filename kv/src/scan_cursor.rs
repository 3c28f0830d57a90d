//! SCAN cursors. Redis cursors are integers, but our keys are ordered byte strings, so a cursor
//! is an id in a bounded table mapping to (db, the user key to resume from). Invariants: the
//! table never holds more than [`MAX_CURSORS`] entries (oldest evicted first); an unknown
//! cursor is an `ERR invalid cursor` error, never a silent restart.

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};

/// Most cursors remembered at once.
pub const MAX_CURSORS: usize = 16_384;

#[derive(Default)]
struct Table {
    by_id: HashMap<u64, (u8, Bytes)>,
    order: VecDeque<u64>,
    next_id: u64,
}

/// The cursor table.
#[derive(Default)]
pub struct ScanCursors {
    table: Mutex<Table>,
}

impl ScanCursors {
    /// Stores a resume point and returns its cursor (never 0).
    pub fn store(&self, db: u8, resume_key: Bytes) -> u64 {
        let mut t = self.table.lock();
        t.next_id = t.next_id.wrapping_add(1).max(1);
        let id = t.next_id;
        t.by_id.insert(id, (db, resume_key));
        t.order.push_back(id);
        while t.order.len() > MAX_CURSORS {
            if let Some(old) = t.order.pop_front() {
                t.by_id.remove(&old);
            }
        }
        id
    }

    /// The resume key of `cursor` in `db`, if the cursor is known.
    pub fn resume_key(&self, db: u8, cursor: u64) -> Option<Bytes> {
        let t = self.table.lock();
        t.by_id
            .get(&cursor)
            .filter(|(cursor_db, _)| *cursor_db == db)
            .map(|(_, key)| key.clone())
    }
}
