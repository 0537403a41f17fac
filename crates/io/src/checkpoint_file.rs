//! The checkpoint container: a resumable bake's saved state, written atomically (temporary file,
//! fsync, rename) and checked on reading. Layout (little-endian):
//!
//! ```text
//! char[16] "CLOTHBAKE-CKPT\n\0"   magic
//! u32      format version (1)
//! u64      payload length (bytes)
//! u32      CRC-32 (IEEE) of the payload
//! payload  (the bake's own serialisation; clothbake writes JSON)
//! ```
//!
//! The container knows nothing of what the payload means: the CLI puts the solver state, the
//! cache progress and the bake's fingerprint in it.

use std::path::Path;

use crate::atomic_file::AtomicFile;
use crate::error::{IoError, Result};

const MAGIC: &[u8; 16] = b"CLOTHBAKE-CKPT\n\0";
/// Version of the container layout.
pub const CHECKPOINT_FORMAT: u32 = 1;
const HEADER_LEN: usize = 16 + 4 + 8 + 4;

/// Writes `payload` to `path` atomically: a reader sees the old file or the new one, never a mix.
pub fn write_checkpoint(path: &Path, payload: &[u8]) -> Result<()> {
    let mut header = [0u8; HEADER_LEN];
    header[..16].copy_from_slice(MAGIC);
    header[16..20].copy_from_slice(&CHECKPOINT_FORMAT.to_le_bytes());
    header[20..28].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    header[28..32].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let mut file = AtomicFile::create(path)?;
    file.write_all(&header)?;
    file.write_all(payload)?;
    file.commit()?;
    Ok(())
}

/// Reads a checkpoint's payload. Errors name the file and what is wrong with it: not a
/// checkpoint, another format version, truncated, or a checksum mismatch (damaged).
pub fn read_checkpoint(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| IoError::io(path, e))?;
    if bytes.len() < 16 || &bytes[..16] != MAGIC {
        return Err(IoError::invalid(
            path,
            "magic",
            "not a clothbake checkpoint",
        ));
    }
    if bytes.len() < HEADER_LEN {
        return Err(IoError::invalid(path, "header", "truncated"));
    }
    let word = |a: usize| u32::from_le_bytes([bytes[a], bytes[a + 1], bytes[a + 2], bytes[a + 3]]);
    let version = word(16);
    if version != CHECKPOINT_FORMAT {
        return Err(IoError::invalid(
            path,
            "version",
            format!("format version {version}, this clothbake reads {CHECKPOINT_FORMAT}"),
        ));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[20..28]);
    let len = u64::from_le_bytes(len);
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != len {
        return Err(IoError::invalid(
            path,
            "payload",
            format!(
                "{} bytes, the header says {len} (truncated or damaged)",
                payload.len()
            ),
        ));
    }
    let (stored, actual) = (word(28), crc32fast::hash(payload));
    if stored != actual {
        return Err(IoError::invalid(
            path,
            "checksum",
            format!("CRC-32 {actual:08x}, the header says {stored:08x} (damaged)"),
        ));
    }
    Ok(payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint");
        write_checkpoint(&path, b"{\"frame\": 12}").unwrap();
        assert_eq!(read_checkpoint(&path).unwrap(), b"{\"frame\": 12}");
        let good = std::fs::read(&path).unwrap();
        let expect = |bytes: &[u8], field: &str| {
            std::fs::write(&path, bytes).unwrap();
            let e = read_checkpoint(&path).unwrap_err().to_string();
            assert!(
                e.contains(field) && e.contains("checkpoint"),
                "{field}: {e}"
            );
        };
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        expect(&flipped, "checksum");
        expect(&good[..good.len() - 1], "payload");
        expect(&good[..20], "header");
        expect(b"POINTCACHE2\0 not ours at all", "magic");
        let mut version = good.clone();
        version[16] = 9;
        expect(&version, "version");
        // No temporary file is left next to it.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
