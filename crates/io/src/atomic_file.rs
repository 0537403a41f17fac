//! A file that appears under its final name only when complete: written as a temporary file in the
//! same folder, renamed on [`AtomicFile::commit`] (or closed first and renamed later, see
//! [`PendingFile`]), removed if dropped before. A *staged* file (a resumable bake's) has a fixed
//! temporary path that outlives the process: [`AtomicFile::sync`] makes what was written durable and
//! [`AtomicFile::reopen_staged`] continues it after a restart.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{IoError, Result};

/// Buffered writer to `.<name>.part-<pid>` next to the final path.
pub(crate) struct AtomicFile {
    final_path: PathBuf,
    temp_path: PathBuf,
    writer: Option<BufWriter<File>>,
    /// Staged: the temporary file is kept when dropped uncommitted.
    keep: bool,
}

impl AtomicFile {
    /// Creates the temporary file (the folder must exist).
    pub(crate) fn create(final_path: &Path) -> Result<Self> {
        let name = final_path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| IoError::invalid(final_path, "", "output path has no file name"))?;
        let temp_path = final_path.with_file_name(format!(".{name}.part-{}", std::process::id()));
        Self::open(final_path, temp_path, false, None)
    }

    /// Creates a staged file at `temp_path` (truncating any old one), kept if dropped uncommitted.
    pub(crate) fn create_staged(final_path: &Path, temp_path: &Path) -> Result<Self> {
        Self::open(final_path, temp_path.to_path_buf(), true, None)
    }

    /// Continues the staged file `temp_path` after its first `len` bytes (what a checkpoint
    /// recorded): longer files are cut back to `len`; a shorter or missing one is an error.
    pub(crate) fn reopen_staged(final_path: &Path, temp_path: &Path, len: u64) -> Result<Self> {
        Self::open(final_path, temp_path.to_path_buf(), true, Some(len))
    }

    fn open(
        final_path: &Path,
        temp_path: PathBuf,
        keep: bool,
        resume: Option<u64>,
    ) -> Result<Self> {
        let file = match resume {
            None => File::create(&temp_path).map_err(|e| IoError::io(&temp_path, e))?,
            Some(len) => {
                let mut file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&temp_path)
                    .map_err(|e| IoError::io(&temp_path, e))?;
                let found = file
                    .metadata()
                    .map_err(|e| IoError::io(&temp_path, e))?
                    .len();
                if found < len {
                    return Err(IoError::invalid(
                        &temp_path,
                        "length",
                        format!("{found} bytes, the checkpoint recorded {len}: the partial cache was damaged"),
                    ));
                }
                file.set_len(len)
                    .and_then(|_| file.seek(SeekFrom::End(0)).map(|_| ()))
                    .map_err(|e| IoError::io(&temp_path, e))?;
                file
            }
        };
        Ok(Self {
            final_path: final_path.to_path_buf(),
            temp_path,
            writer: Some(BufWriter::with_capacity(1 << 16, file)),
            keep,
        })
    }

    /// Flushes and syncs what was written so far; returns the file's length (bytes).
    pub(crate) fn sync(&mut self) -> Result<u64> {
        let temp = self.temp_path.clone();
        let w = self.writer();
        let r = w
            .flush()
            .and_then(|_| w.get_ref().sync_data())
            .and_then(|_| w.stream_position());
        r.map_err(|e| IoError::io(&temp, e))
    }

    /// The final path.
    pub(crate) fn path(&self) -> &Path {
        &self.final_path
    }

    fn writer(&mut self) -> &mut BufWriter<File> {
        // Invariant: `writer` is Some until `commit` consumes `self`.
        self.writer.as_mut().expect("AtomicFile used after commit")
    }

    /// Appends bytes.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let r = self.writer().write_all(bytes);
        r.map_err(|e| IoError::io(&self.temp_path, e))
    }

    /// Overwrites bytes at `offset` (from the start) and returns to the end.
    pub(crate) fn patch(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        let w = self.writer();
        let r = w
            .seek(SeekFrom::Start(offset))
            .and_then(|_| w.write_all(bytes))
            .and_then(|_| w.seek(SeekFrom::End(0)).map(|_| ()));
        r.map_err(|e| IoError::io(&self.temp_path, e))
    }

    /// Flushes, syncs and renames the temporary file to the final name.
    pub(crate) fn commit(self) -> Result<PathBuf> {
        self.close()?.commit()
    }

    /// Flushes, syncs and closes the temporary file without renaming it yet: the returned
    /// [`PendingFile`] renames it on `commit` and removes it if dropped before.
    pub(crate) fn close(mut self) -> Result<PendingFile> {
        let w = self.writer.take().expect("AtomicFile closed twice");
        // From here on `self` no longer owns the temporary file: the PendingFile does.
        let pending = PendingFile {
            final_path: std::mem::take(&mut self.final_path),
            temp_path: Some(std::mem::take(&mut self.temp_path)),
        };
        let file = w
            .into_inner()
            .map_err(|e| pending.io_error(e.into_error()))?;
        file.sync_all().map_err(|e| pending.io_error(e))?;
        Ok(pending)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() && !self.keep {
            // Not committed: leave nothing behind. Errors here have nowhere to go.
            let _ = std::fs::remove_file(&self.temp_path);
        }
    }
}

/// A complete, closed temporary file waiting to be renamed to its final name (see
/// [`AtomicFile::close`]); removed if dropped uncommitted.
pub(crate) struct PendingFile {
    final_path: PathBuf,
    temp_path: Option<PathBuf>,
}

impl PendingFile {
    fn io_error(&self, e: std::io::Error) -> IoError {
        IoError::io(self.temp_path.as_deref().unwrap_or(&self.final_path), e)
    }

    /// Renames the temporary file to the final name.
    pub(crate) fn commit(mut self) -> Result<PathBuf> {
        if let Some(temp) = self.temp_path.take() {
            if let Err(e) = std::fs::rename(&temp, &self.final_path) {
                let _ = std::fs::remove_file(&temp);
                return Err(IoError::io(&self.final_path, e));
            }
        }
        Ok(std::mem::take(&mut self.final_path))
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if let Some(temp) = self.temp_path.take() {
            let _ = std::fs::remove_file(temp);
        }
    }
}
