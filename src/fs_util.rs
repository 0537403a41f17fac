//! Writing files so that they appear under their final name only when complete.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};

/// The temporary name used while `path` is being written: `.<name>.partial` in the same folder.
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.partial"))
}

/// Writes `bytes` to a temporary file next to `path`, then renames it into place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = partial_path(path);
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        CliError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Creates `dir` and its parents.
pub fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| CliError::Write {
        path: dir.to_path_buf(),
        source,
    })
}
