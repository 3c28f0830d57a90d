//! [`LsmJournal`]: the commit pipeline's [`Journal`] over the LSM's write-ahead journal. It
//! fdatasyncs the active journal file through a descriptor of our own, so the sync does not hold
//! the LSM's journal lock and appends go on while the disk works (the LSM's own `persist` holds
//! that lock for the whole fdatasync, which stalls every committer behind each sync).
//!
//! Facts about the LSM (fjall 3.1) this relies on — re-check them on every upgrade:
//! - Journal files are `<lsm>/<id>.jnl`; the active one has the highest id, and rotation seals it
//!   with an fsync (under the journal lock, failure poisons the LSM) *before* it creates
//!   `<id + 1>.jnl`. Sealed journals are deleted oldest first, only after they were flushed.
//! - A batch commit writes its bytes into the journal writer's user-space buffer, under the
//!   journal lock. Under `sync = "always"` our batches do not flush that buffer themselves
//!   (`Engine::lsm_batch`); `persist(Buffer)` flushes it (write(2), under the same lock), and
//!   rotation flushes it before it seals the file. Under the other policies every commit
//!   flushes, as `persist` does.
//!
//! Invariants of [`LsmJournal::sync`] (the argument is in `group_commit.rs`):
//! - Every cycle first flushes the LSM's journal buffer, so each batch appended before the
//!   sync began is in a journal file (the page cache) before anything below is decided.
//! - The fast path fdatasyncs our descriptor of journal `id` only after checking that
//!   `<id + 1>.jnl` does not exist and then that `<id>.jnl` is still linked: so no rotation had
//!   created a newer journal when the check ran, and every batch appended before the check is in
//!   journal `id` or in a sealed journal that rotation already fsynced.
//! - Whenever that check fails or cannot be made (first sync, after a rotation, any error) the
//!   cycle opens a descriptor on the newest journal first and then syncs through the LSM's own
//!   `persist`. A write-back error on that file before our descriptor existed is reported by the
//!   LSM's descriptor (open since the file's creation); one after it, by ours.
//! - After a fast-path sync the LSM's poison flag is checked: an fsync failure the LSM saw on its
//!   own descriptor (rotation, flush) is never turned into an acknowledgement here.

use crate::error::{Result, StorageError};
use crate::group_commit::Journal;
use parking_lot::Mutex;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Our descriptor of the journal file that was active when it was opened.
struct ActiveJournal {
    file: File,
    /// Path of the journal that rotation creates next (`<id + 1>.jnl`).
    successor: PathBuf,
}

impl ActiveJournal {
    /// True if this is still the LSM's active journal. Order matters: the successor is checked
    /// first; if it was created and already deleted before that check, this file (older) was
    /// deleted before it, which the link count then shows.
    fn still_active(&self) -> bool {
        let successor_absent = matches!(self.successor.try_exists(), Ok(false));
        successor_absent && self.file.metadata().is_ok_and(|m| m.nlink() > 0)
    }
}

/// The LSM journal as seen by the commit pipeline.
pub(crate) struct LsmJournal {
    db: fjall::Database,
    dir: PathBuf,
    active: Mutex<Option<ActiveJournal>>,
    /// Syncs that went through the LSM's `persist` (under its journal lock).
    locked_syncs: AtomicU64,
}

impl LsmJournal {
    /// `dir` is the directory the LSM was opened on (its journals live there).
    pub(crate) fn new(db: fjall::Database, dir: PathBuf) -> Self {
        Self {
            db,
            dir,
            active: Mutex::new(None),
            locked_syncs: AtomicU64::new(0),
        }
    }

    /// Syncs that had to go through the LSM's lock (first sync, rotations, errors).
    pub(crate) fn locked_syncs(&self) -> u64 {
        self.locked_syncs.load(Ordering::Relaxed)
    }

    /// Flushes the LSM's user-space journal buffer into the active journal file (under the
    /// LSM's journal lock). Fails if the LSM has poisoned itself (a failed fsync on its own
    /// descriptor) or the write fails (which poisons it).
    fn flush_buffer(&self) -> Result<()> {
        self.db
            .persist(fjall::PersistMode::Buffer)
            .map_err(StorageError::from)
    }

    /// The slow path: open the newest journal (best effort), then sync through the LSM.
    fn sync_through_lsm(&self, active: &mut Option<ActiveJournal>) -> Result<()> {
        *active = open_newest(&self.dir).ok().flatten();
        self.locked_syncs.fetch_add(1, Ordering::Relaxed);
        self.db
            .persist(fjall::PersistMode::SyncData)
            .map_err(StorageError::from)
    }
}

impl Journal for LsmJournal {
    fn sync(&self) -> Result<()> {
        let mut active = self.active.lock();
        self.flush_buffer()?;
        match active.as_ref() {
            Some(journal) if journal.still_active() => {
                journal.file.sync_data()?;
                // An fsync failure the LSM saw on its own descriptor must not be acknowledged.
                self.flush_buffer()
            }
            _ => self.sync_through_lsm(&mut active),
        }
    }
}

/// Opens the journal with the highest id in `dir` (read-only: fdatasync needs no write access).
fn open_newest(dir: &Path) -> std::io::Result<Option<ActiveJournal>> {
    let mut newest: Option<u64> = None;
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let id = name
            .to_str()
            .and_then(|n| n.strip_suffix(".jnl"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(id) = id {
            newest = Some(newest.map_or(id, |n| n.max(id)));
        }
    }
    let Some(id) = newest else {
        return Ok(None);
    };
    let file = File::open(dir.join(format!("{id}.jnl")))?;
    let successor = dir.join(format!("{}.jnl", id.saturating_add(1)));
    Ok(Some(ActiveJournal { file, successor }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_journal_and_its_successor() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["3.jnl", "12.jnl", "7.jnl", "notes.txt", "x.jnl"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let active = open_newest(dir.path()).unwrap().unwrap();
        assert_eq!(active.successor, dir.path().join("13.jnl"));
        assert!(active.still_active());
        std::fs::write(dir.path().join("13.jnl"), b"").unwrap();
        assert!(!active.still_active(), "a successor means a rotation");
        std::fs::remove_file(dir.path().join("13.jnl")).unwrap();
        std::fs::remove_file(dir.path().join("12.jnl")).unwrap();
        assert!(!active.still_active(), "an unlinked journal is not active");
    }

    #[test]
    fn no_journal_yet() {
        let dir = tempfile::tempdir().unwrap();
        assert!(open_newest(dir.path()).unwrap().is_none());
    }
}
