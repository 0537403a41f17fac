//! MDD point cache (big-endian): `i32 numFrames`, `i32 numPoints`, `f32 time[numFrames]`
//! (seconds), then `numFrames × numPoints × f32[3]`.
//!
//! Time convention: `time[i] = (frame_start + i) / fps`, the absolute scene time of the sample's
//! frame. Blender's Mesh Cache modifier (MOD_meshcache.cc, MOD_meshcache_mdd.cc) in its "Seconds"
//! time mode looks up `scene_frame / fps × frame_scale − modifier.frame_start` in this table, so with
//! the modifier's `frame_start = 0` scene frame `f` plays sample `f − frame_start`; in "Frames"
//! mode it ignores the table and plays sample `scene_frame − modifier.frame_start`.

use std::path::{Path, PathBuf};

use byteorder::{BigEndian, ByteOrder};
use glam::Vec3;

use crate::atomic_file::AtomicFile;
use crate::cache_size::{describe, expected_len};
use crate::error::{IoError, Result};

/// Streams an MDD file; the frame count is fixed up front because the time table precedes the
/// data. The file appears under its name on [`MddWriter::finish`].
pub struct MddWriter {
    file: AtomicFile,
    num_points: usize,
    num_frames: usize,
    written: usize,
    buf: Vec<u8>,
}

impl MddWriter {
    /// Starts `path` with `times.len()` frames of `num_points` points; `times` in seconds.
    pub fn create(path: &Path, num_points: usize, times: &[f32]) -> Result<Self> {
        Self::start(AtomicFile::create(path)?, path, num_points, times)
    }

    /// As [`Self::create`], staged in `temp` (a resumable bake's partial file, kept until
    /// [`Self::finish`]).
    pub fn create_staged(
        path: &Path,
        temp: &Path,
        num_points: usize,
        times: &[f32],
    ) -> Result<Self> {
        Self::start(
            AtomicFile::create_staged(path, temp)?,
            path,
            num_points,
            times,
        )
    }

    /// Continues the staged file `temp` after its first `len` bytes (header and whole frames, as
    /// [`Self::sync`] returned them) of a cache of `num_frames` frames.
    pub fn resume_staged(
        path: &Path,
        temp: &Path,
        num_points: usize,
        num_frames: usize,
        len: u64,
    ) -> Result<Self> {
        let frame = 12 * num_points as u64;
        let body = len.checked_sub(8 + 4 * num_frames as u64);
        let written = match body {
            Some(b) if frame > 0 && b % frame == 0 && b / frame <= num_frames as u64 => b / frame,
            _ => {
                return Err(IoError::invalid(
                    temp,
                    "length",
                    format!(
                        "{len} bytes is not a header and whole frames of {num_frames} frames × {num_points} points"
                    ),
                ))
            }
        };
        let file = AtomicFile::reopen_staged(path, temp, len)?;
        Ok(Self {
            file,
            num_points,
            num_frames,
            written: written as usize,
            buf: Vec::with_capacity(num_points * 12),
        })
    }

    fn start(mut file: AtomicFile, path: &Path, num_points: usize, times: &[f32]) -> Result<Self> {
        let n = i32::try_from(num_points).map_err(|_| {
            IoError::invalid(
                path,
                "numPoints",
                format!("{num_points} points do not fit MDD"),
            )
        })?;
        let f = i32::try_from(times.len()).map_err(|_| {
            IoError::invalid(
                path,
                "numFrames",
                format!("{} frames do not fit MDD", times.len()),
            )
        })?;
        let mut h = vec![0u8; 8 + 4 * times.len()];
        BigEndian::write_i32(&mut h[0..4], f);
        BigEndian::write_i32(&mut h[4..8], n);
        BigEndian::write_f32_into(times, &mut h[8..]);
        file.write_all(&h)?;
        Ok(Self {
            file,
            num_points,
            num_frames: times.len(),
            written: 0,
            buf: Vec::with_capacity(num_points * 12),
        })
    }

    /// Makes the frames written so far durable; returns the file's length (bytes).
    pub fn sync(&mut self) -> Result<u64> {
        self.file.sync()
    }

    /// The times of a scene: `time[i] = (frame_start + i) / fps`.
    pub fn scene_times(frame_start: i32, num_frames: usize, fps: f32) -> Vec<f32> {
        (0..num_frames)
            .map(|i| ((frame_start as f64 + i as f64) / fps as f64) as f32)
            .collect()
    }

    /// Appends one frame.
    pub fn write_frame(&mut self, positions: &[Vec3]) -> Result<()> {
        if positions.len() != self.num_points || self.written == self.num_frames {
            return Err(IoError::invalid(
                self.file.path(),
                format!("frame {}", self.written),
                format!(
                    "{} points given for a cache of {} frames × {} points",
                    positions.len(),
                    self.num_frames,
                    self.num_points
                ),
            ));
        }
        self.buf.clear();
        for p in positions {
            for c in p.to_array() {
                self.buf.extend_from_slice(&c.to_be_bytes());
            }
        }
        self.file.write_all(&self.buf)?;
        self.written += 1;
        Ok(())
    }

    /// Renames the file to its final name; all announced frames must have been written.
    pub fn finish(self) -> Result<PathBuf> {
        if self.written != self.num_frames {
            return Err(IoError::invalid(
                self.file.path(),
                "numFrames",
                format!(
                    "{} frames written, {} announced",
                    self.written, self.num_frames
                ),
            ));
        }
        self.file.commit()
    }
}

/// An MDD file read back.
#[derive(Debug, Clone, PartialEq)]
pub struct MddCache {
    /// Seconds per frame.
    pub times: Vec<f32>,
    /// Header `numPoints`.
    pub num_points: usize,
    /// `numFrames` frames of `num_points` positions.
    pub frames: Vec<Vec<Vec3>>,
}

/// Reads a whole MDD file, checking the length against the header.
pub fn read_mdd(path: &Path) -> Result<MddCache> {
    read_mdd_values(path, true)
}

/// As [`read_mdd`]; with `finite` false non-finite coordinates are returned as stored (for a
/// caller that names them better, such as a driver with its scene frames).
pub(crate) fn read_mdd_values(path: &Path, finite: bool) -> Result<MddCache> {
    let bytes = std::fs::read(path).map_err(|e| IoError::io(path, e))?;
    if bytes.len() < 8 {
        return Err(IoError::parse(
            path,
            "header",
            format!("truncated: {} bytes, the header has 8", bytes.len()),
        ));
    }
    let nf = BigEndian::read_i32(&bytes[0..4]);
    let np = BigEndian::read_i32(&bytes[4..8]);
    if nf < 0 || np < 0 {
        return Err(IoError::parse(
            path,
            "header",
            format!("negative counts ({nf} frames, {np} points)"),
        ));
    }
    let (nf, np) = (nf as usize, np as usize);
    let data = 8 + 4 * nf;
    let expected = expected_len(data as u64, nf as u64, np as u64);
    if expected != Some(bytes.len() as u64) {
        let need = describe(expected);
        return Err(IoError::parse(
            path,
            "data",
            format!(
                "{} bytes, but {nf} frames of {np} points need {need}",
                bytes.len()
            ),
        ));
    }
    let mut times = vec![0.0f32; nf];
    BigEndian::read_f32_into(&bytes[8..data], &mut times);
    let mut frames = Vec::with_capacity(nf);
    for f in 0..nf {
        let base = data + f * np * 12;
        let mut frame = Vec::with_capacity(np);
        for i in 0..np {
            let o = base + i * 12;
            let p = Vec3::new(
                BigEndian::read_f32(&bytes[o..]),
                BigEndian::read_f32(&bytes[o + 4..]),
                BigEndian::read_f32(&bytes[o + 8..]),
            );
            if finite && !p.is_finite() {
                return Err(IoError::parse(
                    path,
                    format!("frame {f}, point {i}"),
                    format!("not finite: {p}"),
                ));
            }
            frame.push(p);
        }
        frames.push(frame);
    }
    Ok(MddCache {
        times,
        num_points: np,
        frames,
    })
}
