//! [`LsmJournal`]: the commit pipeline's [`Journal`] over the LSM's write-ahead journal. It
//! fdatasyncs the active journal file through a descriptor of our own, so the sync does not hold
//! the LSM's journal lock and appends go on while the disk works (the LSM's own `persist` holds
//! that lock for the whole fdatasync, which stalls every committer behind each sync).
//!
//! Facts about the LSM (fjall 3.1, with our patch in `vendor/fjall`) this relies on — re-check
//! them on every upgrade:
//! - Journal files are `<lsm>/<id>.jnl`; the active one has the highest id. Rotation, under the
//!   journal lock, flushes the journal buffer into the sealed file and then creates
//!   `<id + 1>.jnl`; it fsyncs the sealed file, the new file and the directory only after
//!   releasing the lock (Orcinus patch), so a sealed journal's tail may still be unsynced when
//!   its successor takes writes. Sealed journals are deleted oldest first, only after their
//!   data was flushed to tables.
//! - A batch commit writes its bytes into the journal writer's user-space buffer, under the
//!   journal lock. Under `sync = "always"` our batches do not flush that buffer themselves
//!   (`Engine::lsm_batch`); `persist(Buffer)` flushes it (write(2), under the same lock), and
//!   rotation flushes it before it creates the next file. Under the other policies every commit
//!   flushes, as `persist` does.
//!
//! Invariants of [`LsmJournal::sync`] (the argument is in `group_commit.rs`):
//! - Every cycle first flushes the LSM's journal buffer, so each batch appended before the
//!   sync began is in a journal file (the page cache) no newer than the one active at that
//!   flush, before anything below is decided.
//! - The fast path fdatasyncs our descriptor of journal `id` only after checking that
//!   `<id + 1>.jnl` does not exist and then that `<id>.jnl` is still linked: so no rotation had
//!   created a newer journal when the check ran, and every batch appended since the previous
//!   sync is in journal `id`.
//! - Whenever that check fails or cannot be made (first sync, after a rotation, any error) the
//!   cycle lists the journals, opens each one from ours (or from the oldest, on the first sync)
//!   up to the newest, syncs the newest through the LSM's own `persist` and then every opened
//!   one (and the directory, for the new journals' names) through our descriptors: every file
//!   that can hold a batch of the cycle is synced, whether or not the rotation's own deferred
//!   fsyncs have run. A journal deleted before we opened it was flushed to tables already. A
//!   write-back error on a file before our descriptor existed is reported to the first
//!   descriptor that syncs it (the LSM's, or ours); one the LSM saw poisons it (next point).
//! - After a fast-path sync the region past the journal's write position is zeroed (see
//!   [`ZERO_LOW_WATER`]), under the LSM's journal lock, so it never overwrites journal bytes;
//!   recovery reads those zeros exactly as it reads the preallocated hole.
//! - After every sync the LSM's poison flag is checked: an fsync failure the LSM saw on its
//!   own descriptor (rotation, flush) is never turned into an acknowledgement here.
//!
//! Reading the link count: the check runs before every sync, and a `stat` of the journal
//! (`File::metadata`) asks for its timestamps too. On file systems with multigrain timestamps
//! (ext4 among them, since Linux 6.13) that gives the file's next write a fine-grained mtime, so
//! every journal write changed the inode, and every fdatasync wrote the inode block as well as the
//! data: a second I/O per sync. `statx` asking for the link count alone leaves the timestamps
//! alone. Measured on this project's VM disk (ext4, Linux 6.18), write of 6.8 KiB plus fdatasync
//! into zeroed blocks: 103-106 µs with no stat, 146-155 µs with `fstat`, 105-109 µs with
//! `statx(STATX_NLINK)`.

use crate::error::{Result, StorageError};
use crate::group_commit::Journal;
use parking_lot::Mutex;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Zeroing ahead (`fjall::Database::journal_zero_ahead`, an Orcinus patch): a new journal is
/// preallocated as a hole, so every sync of journal writes into fresh blocks has to commit the
/// file system's journal (block allocation), which under ext4's `data=ordered` also waits for
/// the data other files (our flushes, anything else on the disk) allocated meanwhile. After each
/// sync the sync thread overwrites the region ahead of the write position with zeros; the sync
/// after that allocates it once, and the syncs of the commits that later land there are plain
/// data writes plus a device flush. Measured on this project's VM disk while other builds
/// wrote to it: fdatasync after a 6.4 KiB write into a hole, median 198 µs, mean 643 µs, p99
/// 12 ms; into zeroed and synced blocks, median 113 µs, mean 129 µs, p99 0.34 ms.
///
/// Zeroing starts once fewer than this many bytes are zeroed ahead of the write position.
const ZERO_LOW_WATER: u64 = 1 << 20;
/// Bytes zeroed at a time past the low-water mark (one allocating sync per this many bytes).
const ZERO_CHUNK: u64 = 2 << 20;
/// No zeroing when more than this many journal bytes were written since the previous sync:
/// such syncs are bound by the disk's bandwidth, which writing each byte twice would halve
/// (32 unpipelined 4 KiB SETs append ~130 KiB per sync, 16 KiB SETs ~500 KiB; 32 pipelines of
/// 32 appends, several MiB). At 256 KiB, 32 unpipelined 16 KiB SET clients got no zeroing, and
/// each of their syncs allocated blocks; at 1 MiB they ran at 16.3k instead of 14.6k SETs a
/// second with about 10% less CPU per SET (medians of 10 alternated runs, server on one CPU).
const ZERO_MAX_ADVANCE: u64 = 1 << 20;

/// Our descriptor of the journal file that was active when it was opened.
struct ActiveJournal {
    id: u64,
    file: File,
    /// Path of the journal that rotation creates next (`<id + 1>.jnl`).
    successor: PathBuf,
}

impl ActiveJournal {
    fn open(dir: &Path, id: u64) -> std::io::Result<Self> {
        Ok(Self {
            id,
            file: File::open(journal_path(dir, id))?,
            successor: journal_path(dir, id.saturating_add(1)),
        })
    }

    /// True if this is still the LSM's active journal. Order matters: the successor is checked
    /// first; if it was created and already deleted before that check, this file (older) was
    /// deleted before it, which the link count then shows.
    fn still_active(&self) -> bool {
        let successor_absent = matches!(self.successor.try_exists(), Ok(false));
        successor_absent && self.link_count().is_ok_and(|links| links > 0)
    }

    /// The journal's link count, asked for alone (see "Reading the link count").
    fn link_count(&self) -> std::io::Result<u64> {
        let empty_path = rustix::fs::AtFlags::EMPTY_PATH;
        match rustix::fs::statx(&self.file, "", empty_path, rustix::fs::StatxFlags::NLINK) {
            Ok(statx) if statx.stx_mask & rustix::fs::StatxFlags::NLINK.bits() != 0 => {
                Ok(u64::from(statx.stx_nlink))
            }
            // No statx (kernels before 4.11) or no link count in its answer.
            _ => Ok(self.file.metadata()?.nlink()),
        }
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

    /// The slow path (see the module invariants): syncs every journal from `previous` (or the
    /// oldest) up to the newest, and remembers the newest for the fast path.
    fn sync_after_rotation(&self, active: &mut Option<ActiveJournal>) -> Result<()> {
        let previous = active.take();
        let ids = journal_ids(&self.dir)?;
        let first = previous.as_ref().map_or(0, |p| p.id.saturating_add(1));
        let mut opened = Vec::new();
        for &id in ids.iter().filter(|&&id| id >= first) {
            match ActiveJournal::open(&self.dir, id) {
                Ok(journal) => opened.push(journal),
                // Deleted since the listing: its batches were flushed to tables.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.locked_syncs.fetch_add(1, Ordering::Relaxed);
        self.db
            .persist(fjall::PersistMode::SyncData)
            .map_err(StorageError::from)?;
        for journal in previous.iter().chain(&opened) {
            journal.file.sync_data()?;
        }
        File::open(&self.dir)?.sync_all()?;
        self.flush_buffer()?;
        *active = opened.pop();
        Ok(())
    }
}

impl Journal for LsmJournal {
    fn sync(&self) -> Result<()> {
        let mut active = self.active.lock();
        self.flush_buffer()?;
        match active.as_ref() {
            Some(journal) if journal.still_active() => {
                journal.file.sync_data()?;
                self.db
                    .journal_zero_ahead(ZERO_LOW_WATER, ZERO_CHUNK, ZERO_MAX_ADVANCE)
                    .map_err(StorageError::from)?;
                // An fsync failure the LSM saw on its own descriptor must not be acknowledged.
                self.flush_buffer()
            }
            _ => self.sync_after_rotation(&mut active),
        }
    }
}

fn journal_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id}.jnl"))
}

/// The ids of the journals in `dir`, oldest first.
fn journal_ids(dir: &Path) -> std::io::Result<Vec<u64>> {
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let id = name
            .to_str()
            .and_then(|n| n.strip_suffix(".jnl"))
            .and_then(|n| n.parse::<u64>().ok());
        ids.extend(id);
    }
    ids.sort_unstable();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_ids_and_the_successor() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["3.jnl", "12.jnl", "7.jnl", "notes.txt", "x.jnl"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        assert_eq!(journal_ids(dir.path()).unwrap(), vec![3, 7, 12]);
        let active = ActiveJournal::open(dir.path(), 12).unwrap();
        assert_eq!(active.successor, dir.path().join("13.jnl"));
        assert!(active.still_active());
        std::fs::hard_link(dir.path().join("12.jnl"), dir.path().join("linked")).unwrap();
        assert_eq!(active.link_count().unwrap(), 2);
        std::fs::remove_file(dir.path().join("linked")).unwrap();
        assert_eq!(active.link_count().unwrap(), 1);
        std::fs::write(dir.path().join("13.jnl"), b"").unwrap();
        assert!(!active.still_active(), "a successor means a rotation");
        std::fs::remove_file(dir.path().join("13.jnl")).unwrap();
        std::fs::remove_file(dir.path().join("12.jnl")).unwrap();
        assert!(!active.still_active(), "an unlinked journal is not active");
    }

    #[test]
    fn no_journal_yet() {
        let dir = tempfile::tempdir().unwrap();
        assert!(journal_ids(dir.path()).unwrap().is_empty());
    }

    /// Across rotations (the sealed journals' own fsyncs deferred by the LSM), the slow path
    /// moves our descriptor to the newest journal and every cycle's batches stay readable.
    #[test]
    fn syncs_follow_rotations() {
        let dir = tempfile::tempdir().unwrap();
        let lsm = dir.path().join("lsm");
        let db = fjall::Database::builder(&lsm)
            .journal_compression(fjall::CompressionType::None)
            .open()
            .unwrap();
        let ks = db
            .keyspace("k", || {
                fjall::KeyspaceCreateOptions::default().max_memtable_size(4 << 20)
            })
            .unwrap();
        let journal = LsmJournal::new(db.clone(), std::path::absolute(&lsm).unwrap());
        journal.sync().unwrap();
        let first = journal.active.lock().as_ref().map(|j| j.id);
        assert!(first.is_some(), "the first sync opens the newest journal");
        let value = vec![7u8; 1 << 20];
        let mut rotated = false;
        for i in 0u32..400 {
            ks.insert(i.to_be_bytes(), &value).unwrap();
            journal.sync().unwrap();
            let id = journal.active.lock().as_ref().map(|j| j.id);
            if id > first {
                rotated = true;
                break;
            }
        }
        assert!(rotated, "64 MiB of journal must rotate it");
        assert!(journal.locked_syncs() >= 2);
        assert!(ks.get(0u32.to_be_bytes()).unwrap().is_some());
    }
}
