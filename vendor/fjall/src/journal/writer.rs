// Copyright (c) 2024-present, fjall-rs
// This source code is licensed under both the Apache 2.0 and MIT License
// (found in the LICENSE-* files in the repository)

use super::entry::{serialize_marker_item, Entry};
use crate::{
    batch::item::Item as BatchItem, file::fsync_directory, journal::recovery::JournalId,
    keyspace::InternalKeyspaceId,
};
use lsm_tree::{CompressionType, SeqNo, ValueType};
use std::{
    fs::{File, OpenOptions},
    hash::Hasher,
    io::{BufWriter, Seek, Write},
    path::{Path, PathBuf},
};

// TODO: this should be a database configuration
pub const PRE_ALLOCATED_BYTES: u64 = 64 * 1_024 * 1_024;

/// Orcinus patch: 256 KiB, not 8 KiB. A journal item longer than the buffer bypasses it: with
/// 8 KiB every value of 8 KiB or more went out as its own write(2), after another one for the
/// bytes buffered before it. The buffer is flushed before each sync, so the items of the
/// commits between two syncs go out together.
pub const JOURNAL_BUFFER_BYTES: usize = 256 * 1_024;

/// Orcinus patch: the fsyncs that make a journal rotation durable, deferred by
/// [`Writer::rotate_deferred`] until the journal lock is released.
pub struct RotationSync {
    sealed: File,
    created: File,
    folder: PathBuf,
}

impl RotationSync {
    /// Syncs the sealed journal, the new journal (its preallocated length) and the directory
    /// (the new journal's name), as the rotation itself used to under the journal lock.
    pub fn run(self) -> std::io::Result<()> {
        self.sealed.sync_all().inspect_err(|e| {
            log::error!("Failed to fsync sealed journal file: {e:?}");
        })?;
        self.created.sync_all().inspect_err(|e| {
            log::error!("Failed to fsync new journal file: {e:?}");
        })?;
        // IMPORTANT: fsync folder on Unix
        fsync_directory(&self.folder)
    }
}

pub struct Writer {
    pub(crate) path: PathBuf,
    file: BufWriter<File>,
    buf: Vec<u8>,
    is_buffer_dirty: bool,

    compression: CompressionType,
    compression_threshold: usize,

    /// Orcinus patch: how far the preallocated part of the file has been overwritten with
    /// zeros ([`Writer::zero_ahead`]); `None` for a file opened for appending (reopened after a
    /// restart), which is never zeroed.
    zeroed_to: Option<u64>,

    /// Orcinus patch: the write position at the previous [`Writer::zero_ahead`] call.
    position_at_zeroing: u64,
}

/// The persist mode allows setting the durability guarantee of previous writes
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub enum PersistMode {
    /// Flushes data to OS buffers. This allows the OS to write out data in case of an
    /// application crash.
    ///
    /// When this function returns, data is **not** guaranteed to be persisted in case
    /// of a power loss event or OS crash.
    Buffer,

    /// Flushes data using `fdatasync`.
    ///
    /// Use if you know that `fdatasync` is sufficient for your file system and/or operating system.
    SyncData,

    /// Flushes data + metadata using `fsync`.
    SyncAll,
}

impl Writer {
    pub fn set_compression(&mut self, comp: CompressionType, threshold: usize) {
        self.compression = comp;
        self.compression_threshold = threshold;
    }

    pub fn pos(&mut self) -> crate::Result<u64> {
        self.file.stream_position().map_err(Into::into)
    }

    pub fn len(&self) -> crate::Result<u64> {
        Ok(self.file.get_ref().metadata()?.len())
    }

    #[cfg(test)]
    pub fn rotate(&mut self) -> crate::Result<(PathBuf, PathBuf)> {
        let (prev_path, new_path, sync) = self.rotate_deferred()?;
        sync.run()?;
        Ok((prev_path, new_path))
    }

    /// Orcinus patch: like [`Writer::rotate`], but the fsyncs that make the rotation durable
    /// (the sealed journal's data, the new journal's length and the directory entry) are left
    /// to the returned [`RotationSync`], which the caller runs after it released the journal
    /// lock, so writers are not stalled behind them (as in fjall PR #282).
    ///
    /// Until that sync has returned, the sealed journal's tail is only in the OS page cache: a
    /// caller that needs the batches of the sealed journal durable (a commit pipeline that
    /// syncs the active journal itself) must sync the sealed file too.
    pub fn rotate_deferred(&mut self) -> crate::Result<(PathBuf, PathBuf, RotationSync)> {
        // Every batch written so far reaches the sealed file before the next one exists.
        self.persist(PersistMode::Buffer)?;
        let sealed = self.file.get_ref().try_clone()?;

        log::debug!(
            "Sealing active journal at {}, len={}B",
            self.path.display(),
            self.path
                .metadata()
                .inspect_err(|e| {
                    log::error!(
                        "Failed to get file metadata of journal file at {}: {e:?}",
                        self.path.display()
                    );
                })?
                .len(),
        );

        let prev_path = self.path.clone();

        let folder = self
            .path
            .parent()
            .expect("should have parent")
            .to_path_buf();

        let Some(basename) = self
            .path
            .file_name()
            .expect("should be valid file name")
            .to_str()
            .expect("should be valid utf-8")
            .strip_suffix(".jnl")
        else {
            log::error!("Invalid journal file name: {}", self.path.display());
            return Err(crate::Error::JournalRecovery(
                crate::JournalRecoveryError::InvalidFileName,
            ));
        };

        let journal_id = basename.parse::<JournalId>().map_err(|_| {
            log::error!("Invalid journal file name: {}", self.path.display());
            crate::Error::JournalRecovery(crate::JournalRecoveryError::InvalidFileName)
        })?;

        let new_path = folder.join(format!("{}.jnl", journal_id + 1));
        log::debug!("Rotating active journal to {}", new_path.display());

        let comp = self.compression;
        let compt = self.compression_threshold;
        *self = Self::create_new_unsynced(new_path.clone())?;
        self.set_compression(comp, compt);
        let created = self.file.get_ref().try_clone()?;

        Ok((
            prev_path,
            new_path,
            RotationSync {
                sealed,
                created,
                folder,
            },
        ))
    }

    pub fn create_new<P: Into<PathBuf>>(path: P) -> crate::Result<Self> {
        let writer = Self::create_new_unsynced(path)?;

        writer.file.get_ref().sync_all().inspect_err(|e| {
            log::error!(
                "Failed to fsync journal file at {}: {e:?}",
                writer.path.display()
            );
        })?;

        Ok(writer)
    }

    /// Orcinus patch: [`Writer::create_new`] without its fsync (see [`Writer::rotate_deferred`]).
    fn create_new_unsynced<P: Into<PathBuf>>(path: P) -> crate::Result<Self> {
        let path = path.into();

        let file = File::create_new(&path).inspect_err(|e| {
            log::error!("Failed to create journal file at {}: {e:?}", path.display());
        })?;

        file.set_len(PRE_ALLOCATED_BYTES).inspect_err(|e| {
            log::error!(
                "Failed to set journal file size to {PRE_ALLOCATED_BYTES}B at {}: {e:?}",
                path.display(),
            );
        })?;

        Ok(Self {
            path,
            file: BufWriter::with_capacity(JOURNAL_BUFFER_BYTES, file),
            buf: Vec::new(),
            is_buffer_dirty: false,
            compression: CompressionType::None,
            compression_threshold: 0,
            zeroed_to: Some(0),
            position_at_zeroing: 0,
        })
    }

    pub fn from_file<P: AsRef<Path>>(path: P) -> crate::Result<Self> {
        let path = path.as_ref();

        if !path.try_exists()? {
            let file = OpenOptions::new()
                .create_new(true)
                .write(true)
                .open(path)
                .inspect_err(|e| {
                    log::error!("Failed to create journal file at {}: {e:?}", path.display());
                })?;

            file.set_len(PRE_ALLOCATED_BYTES).inspect_err(|e| {
                log::error!(
                    "Failed to set journal file size to {PRE_ALLOCATED_BYTES}B at {}: {e:?}",
                    path.display(),
                );
            })?;

            file.sync_all().inspect_err(|e| {
                log::error!("Failed to fsync journal file at {}: {e:?}", path.display());
            })?;

            return Ok(Self {
                path: path.into(),
                file: BufWriter::with_capacity(JOURNAL_BUFFER_BYTES, file),
                buf: Vec::new(),
                is_buffer_dirty: false,
                compression: CompressionType::None,
                compression_threshold: 0,
                zeroed_to: None,
                position_at_zeroing: 0,
            });
        }

        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .inspect_err(|e| {
                log::error!("Failed to open journal file at {}: {e:?}", path.display());
            })?;

        Ok(Self {
            path: path.into(),
            file: BufWriter::with_capacity(JOURNAL_BUFFER_BYTES, file),
            buf: Vec::new(),
            is_buffer_dirty: false,
            compression: CompressionType::None,
            compression_threshold: 0,
            zeroed_to: None,
            position_at_zeroing: 0,
        })
    }

    /// Orcinus patch: overwrites the preallocated part of the file with zeros ahead of the
    /// write position, once fewer than `low_water` bytes are zeroed ahead of it: from there up
    /// to `low_water + chunk` bytes past the position. Past the preallocated length this
    /// extends the file with zeros, as the preallocation did (a journal grows past it until
    /// the next memtable flush rotates it).
    /// Does nothing if the position moved more than `max_advance` bytes since the previous
    /// call: journal writes that large per call are bound by the disk's bandwidth, which
    /// writing every byte twice would halve. Returns the number of bytes zeroed.
    ///
    /// The preallocated length is a hole: the first write into each block allocates it, so the
    /// fdatasync that follows must commit the file system's journal (and, under ext4's
    /// `data=ordered`, wait for other files' data allocated in that transaction). Once zeros
    /// were written into a block and synced, later writes only overwrite it, and an fdatasync
    /// of them is a data write plus a device flush. Recovery reads zeros either way. Only the
    /// region at and past the position is written, which holds no journal data: the position
    /// includes the buffered bytes.
    pub(crate) fn zero_ahead(
        &mut self,
        low_water: u64,
        chunk: u64,
        max_advance: u64,
    ) -> std::io::Result<u64> {
        use std::os::unix::fs::FileExt;

        let Some(zeroed_to) = self.zeroed_to else {
            return Ok(0);
        };
        let pos = self.file.stream_position()?;
        let advance = pos.saturating_sub(self.position_at_zeroing);
        self.position_at_zeroing = pos;
        if advance > max_advance || zeroed_to >= pos.saturating_add(low_water) {
            return Ok(0);
        }
        let start = zeroed_to.max(pos);
        let end = pos.saturating_add(low_water).saturating_add(chunk);
        if start >= end {
            return Ok(0);
        }
        let mut offset = start;
        while offset < end {
            #[expect(clippy::cast_possible_truncation, reason = "at most 1 MiB")]
            let piece = vec![0u8; (end - offset).min(1 << 20) as usize];
            self.file.get_ref().write_all_at(&piece, offset)?;
            offset += piece.len() as u64;
        }
        self.zeroed_to = Some(end);
        Ok(end - start)
    }

    /// Orcinus patch: flushes the user-space buffer into the journal file and returns a second
    /// descriptor of that file, so the caller can fsync it after releasing the journal lock.
    pub(crate) fn flush_for_deferred_sync(&mut self) -> std::io::Result<File> {
        self.persist(PersistMode::Buffer)?;
        self.file.get_ref().try_clone()
    }

    /// Persists the journal file.
    pub(crate) fn persist(&mut self, mode: PersistMode) -> std::io::Result<()> {
        log::trace!(
            "Persisting journal at {} with mode={mode:?}",
            self.path.display(),
        );

        if self.is_buffer_dirty {
            self.file.flush().inspect_err(|e| {
                log::error!(
                    "Failed to flush journal IO buffers at {}: {e:?}",
                    self.path.display(),
                );
            })?;
            self.is_buffer_dirty = false;
        }

        match mode {
            PersistMode::SyncAll => self.file.get_mut().sync_all().inspect_err(|e| {
                log::error!(
                    "Failed to fsync journal file at {}: {e:?}",
                    self.path.display(),
                );
            }),
            PersistMode::SyncData => self.file.get_mut().sync_data().inspect_err(|e| {
                log::error!(
                    "Failed to fsyncdata journal file at {}: {e:?}",
                    self.path.display(),
                );
            }),
            PersistMode::Buffer => Ok(()),
        }
    }

    /// Writes a batch start marker to the journal
    fn write_start(&mut self, item_count: u32, seqno: SeqNo) -> Result<usize, crate::Error> {
        debug_assert!(self.buf.is_empty());

        Entry::Start { item_count, seqno }.encode_into(&mut self.buf)?;

        self.file.write_all(&self.buf)?;

        Ok(self.buf.len())
    }

    /// Writes a batch end marker to the journal
    fn write_end(&mut self, checksum: u64) -> Result<usize, crate::Error> {
        debug_assert!(self.buf.is_empty());

        Entry::End(checksum).encode_into(&mut self.buf)?;

        self.file.write_all(&self.buf)?;

        Ok(self.buf.len())
    }

    pub(crate) fn write_raw(
        &mut self,
        keyspace_id: InternalKeyspaceId,
        key: &[u8],
        value: &[u8],
        value_type: ValueType,
        seqno: u64,
    ) -> crate::Result<usize> {
        self.is_buffer_dirty = true;

        let mut hasher = xxhash_rust::xxh3::Xxh3::default();
        let mut byte_count = 0;

        self.buf.clear();
        byte_count += self.write_start(1, seqno)?;
        self.buf.clear();

        serialize_marker_item(
            &mut self.buf,
            keyspace_id,
            key,
            value,
            value_type,
            if self.compression_threshold > 0 && value.len() >= self.compression_threshold {
                self.compression
            } else {
                CompressionType::None
            },
        )?;

        self.file.write_all(&self.buf)?;

        hasher.update(&self.buf);
        byte_count += self.buf.len();

        self.buf.clear();
        let checksum = hasher.finish();
        byte_count += self.write_end(checksum)?;

        Ok(byte_count)
    }

    pub(crate) fn write_clear(
        &mut self,
        keyspace_id: InternalKeyspaceId,
        seqno: SeqNo,
    ) -> crate::Result<usize> {
        self.is_buffer_dirty = true;

        let mut hasher = xxhash_rust::xxh3::Xxh3::default();
        let mut byte_count = 0;

        self.buf.clear();
        byte_count += self.write_start(1, seqno)?;
        self.buf.clear();

        Entry::Clear { keyspace_id }.encode_into(&mut self.buf)?;
        self.file.write_all(&self.buf)?;
        hasher.update(&self.buf);
        byte_count += self.buf.len();

        self.buf.clear();
        let checksum = hasher.finish();
        byte_count += self.write_end(checksum)?;

        Ok(byte_count)
    }

    pub fn write_batch<'a>(
        &mut self,
        items: impl Iterator<Item = &'a BatchItem>,
        batch_size: usize,
        seqno: SeqNo,
    ) -> crate::Result<usize> {
        if batch_size == 0 {
            return Ok(0);
        }

        self.is_buffer_dirty = true;

        self.buf.clear();

        // NOTE: entries.len() is surely never > u32::MAX
        #[expect(clippy::cast_possible_truncation)]
        let item_count = batch_size as u32;

        let mut hasher = xxhash_rust::xxh3::Xxh3::default();
        let mut byte_count = 0;

        byte_count += self.write_start(item_count, seqno)?;
        self.buf.clear();

        for item in items {
            debug_assert!(self.buf.is_empty());

            serialize_marker_item(
                &mut self.buf,
                item.keyspace.id,
                &item.key,
                &item.value,
                item.value_type,
                if self.compression_threshold > 0 && item.value.len() >= self.compression_threshold
                {
                    self.compression
                } else {
                    CompressionType::None
                },
            )?;

            self.file.write_all(&self.buf)?;

            hasher.update(&self.buf);
            byte_count += self.buf.len();

            self.buf.clear();
        }

        let checksum = hasher.finish();
        byte_count += self.write_end(checksum)?;

        Ok(byte_count)
    }
}
