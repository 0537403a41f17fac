//! PC2 point cache (little-endian): `char[12] "POINTCACHE2\0"`, `i32 version = 1`,
//! `i32 numPoints`, `f32 startFrame`, `f32 sampleRate`, `i32 numSamples`, then
//! `numSamples × numPoints × f32[3]`.
//!
//! Blender's Mesh Cache modifier (MOD_meshcache_pc2.cc) checks the magic and the vertex count and,
//! in its "Frames" time mode, picks sample `scene_frame × frame_scale − modifier.frame_start`; it
//! ignores `startFrame`/`sampleRate` there, so the add-on sets `frame_start` to the scene's
//! `frame_start`.

use std::path::{Path, PathBuf};

use byteorder::{ByteOrder, LittleEndian};
use glam::Vec3;

use crate::atomic_file::AtomicFile;
use crate::cache_size::{describe, expected_len};
use crate::error::{IoError, Result};

const MAGIC: &[u8; 12] = b"POINTCACHE2\0";
const HEADER_LEN: usize = 32;
const SAMPLES_OFFSET: u64 = 28;

/// Streams a PC2 file frame by frame; the file appears under its name on [`Pc2Writer::finish`].
pub struct Pc2Writer {
    file: AtomicFile,
    num_points: usize,
    samples: u32,
    buf: Vec<u8>,
}

impl Pc2Writer {
    /// Starts `path` for `num_points` points; `start_frame` and `sample_rate` (frames per sample)
    /// go into the header.
    pub fn create(
        path: &Path,
        num_points: usize,
        start_frame: f32,
        sample_rate: f32,
    ) -> Result<Self> {
        Self::start(
            AtomicFile::create(path)?,
            path,
            num_points,
            start_frame,
            sample_rate,
        )
    }

    /// As [`Self::create`], staged in `temp` (a resumable bake's partial file, kept until
    /// [`Self::finish`]).
    pub fn create_staged(
        path: &Path,
        temp: &Path,
        num_points: usize,
        start_frame: f32,
        sample_rate: f32,
    ) -> Result<Self> {
        let file = AtomicFile::create_staged(path, temp)?;
        Self::start(file, path, num_points, start_frame, sample_rate)
    }

    /// Continues the staged file `temp` after its first `len` bytes (header and whole samples, as
    /// [`Self::sync`] returned them).
    pub fn resume_staged(path: &Path, temp: &Path, num_points: usize, len: u64) -> Result<Self> {
        let frame = 12 * num_points as u64;
        let body = len.checked_sub(HEADER_LEN as u64);
        let samples = match body {
            Some(b) if frame > 0 && b % frame == 0 => b / frame,
            _ => {
                return Err(IoError::invalid(
                    temp,
                    "length",
                    format!("{len} bytes is not a header and whole samples of {num_points} points"),
                ))
            }
        };
        let file = AtomicFile::reopen_staged(path, temp, len)?;
        Ok(Self {
            file,
            num_points,
            samples: samples as u32,
            buf: Vec::with_capacity(num_points * 12),
        })
    }

    fn start(
        mut file: AtomicFile,
        path: &Path,
        num_points: usize,
        start_frame: f32,
        sample_rate: f32,
    ) -> Result<Self> {
        let n = i32::try_from(num_points).map_err(|_| {
            IoError::invalid(
                path,
                "numPoints",
                format!("{num_points} points do not fit PC2"),
            )
        })?;
        let mut h = [0u8; HEADER_LEN];
        h[..12].copy_from_slice(MAGIC);
        LittleEndian::write_i32(&mut h[12..16], 1);
        LittleEndian::write_i32(&mut h[16..20], n);
        LittleEndian::write_f32(&mut h[20..24], start_frame);
        LittleEndian::write_f32(&mut h[24..28], sample_rate);
        LittleEndian::write_i32(&mut h[28..32], 0);
        file.write_all(&h)?;
        Ok(Self {
            file,
            num_points,
            samples: 0,
            buf: Vec::with_capacity(num_points * 12),
        })
    }

    /// Makes the samples written so far durable; returns the file's length (bytes).
    pub fn sync(&mut self) -> Result<u64> {
        self.file.sync()
    }

    /// Appends one sample (`positions.len()` must be the point count).
    pub fn write_frame(&mut self, positions: &[Vec3]) -> Result<()> {
        if positions.len() != self.num_points {
            return Err(IoError::invalid(
                self.file.path(),
                format!("sample {}", self.samples),
                format!(
                    "{} points given, the cache has {}",
                    positions.len(),
                    self.num_points
                ),
            ));
        }
        self.buf.clear();
        for p in positions {
            for c in p.to_array() {
                self.buf.extend_from_slice(&c.to_le_bytes());
            }
        }
        self.file.write_all(&self.buf)?;
        self.samples += 1;
        Ok(())
    }

    /// Writes the sample count into the header and renames the file to its final name.
    pub fn finish(mut self) -> Result<PathBuf> {
        let mut n = [0u8; 4];
        LittleEndian::write_u32(&mut n, self.samples);
        self.file.patch(SAMPLES_OFFSET, &n)?;
        self.file.commit()
    }
}

/// A PC2 file read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Pc2Cache {
    /// Header `startFrame`.
    pub start_frame: f32,
    /// Header `sampleRate`.
    pub sample_rate: f32,
    /// Header `numPoints`.
    pub num_points: usize,
    /// `numSamples` frames of `num_points` positions.
    pub frames: Vec<Vec<Vec3>>,
}

/// Reads a whole PC2 file, checking the magic, the version and the length.
pub fn read_pc2(path: &Path) -> Result<Pc2Cache> {
    read_pc2_values(path, true)
}

/// As [`read_pc2`]; with `finite` false non-finite coordinates are returned as stored (for a
/// caller that names them better, such as a driver with its scene frames).
pub(crate) fn read_pc2_values(path: &Path, finite: bool) -> Result<Pc2Cache> {
    let bytes = std::fs::read(path).map_err(|e| IoError::io(path, e))?;
    if bytes.len() < HEADER_LEN {
        return Err(IoError::parse(
            path,
            "header",
            format!("truncated: {} bytes, the header has 32", bytes.len()),
        ));
    }
    if &bytes[..12] != MAGIC {
        return Err(IoError::parse(
            path,
            "header",
            "not a PC2 file (no \"POINTCACHE2\" magic)",
        ));
    }
    let version = LittleEndian::read_i32(&bytes[12..16]);
    if version != 1 {
        return Err(IoError::parse(
            path,
            "version",
            format!("unsupported version {version}"),
        ));
    }
    let num_points = LittleEndian::read_i32(&bytes[16..20]);
    let samples = LittleEndian::read_i32(&bytes[28..32]);
    if num_points < 0 || samples < 0 {
        return Err(IoError::parse(
            path,
            "header",
            format!("negative counts ({num_points} points, {samples} samples)"),
        ));
    }
    if num_points == 0 && samples > 0 {
        // Nothing in the file bounds the sample count then (each sample is 0 bytes).
        return Err(IoError::parse(
            path,
            "header",
            format!("{samples} samples of 0 points"),
        ));
    }
    let (num_points, samples) = (num_points as usize, samples as usize);
    let expected = expected_len(HEADER_LEN as u64, samples as u64, num_points as u64);
    if expected != Some(bytes.len() as u64) {
        let need = describe(expected);
        return Err(IoError::parse(
            path,
            "data",
            format!(
                "{} bytes, but {samples} samples of {num_points} points need {need}",
                bytes.len()
            ),
        ));
    }
    let mut frames = Vec::with_capacity(samples);
    for s in 0..samples {
        let base = HEADER_LEN + s * num_points * 12;
        let mut frame = Vec::with_capacity(num_points);
        for i in 0..num_points {
            let o = base + i * 12;
            let p = Vec3::new(
                LittleEndian::read_f32(&bytes[o..]),
                LittleEndian::read_f32(&bytes[o + 4..]),
                LittleEndian::read_f32(&bytes[o + 8..]),
            );
            if finite && !p.is_finite() {
                return Err(IoError::parse(
                    path,
                    format!("sample {s}, point {i}"),
                    format!("not finite: {p}"),
                ));
            }
            frame.push(p);
        }
        frames.push(frame);
    }
    Ok(Pc2Cache {
        start_frame: LittleEndian::read_f32(&bytes[20..24]),
        sample_rate: LittleEndian::read_f32(&bytes[24..28]),
        num_points,
        frames,
    })
}
