//! USD point cache: one text layer (`.usda`) per garment holding one `UsdGeomMesh` named after the
//! garment (sanitised to a USD identifier), with its topology (`faceVertexCounts`,
//! `faceVertexIndices` in the garment's source order, right-handed), `points` time-sampled per
//! output frame and `extent` (the frame's bounding box) per frame. Layer metadata: `defaultPrim`,
//! `timeCodesPerSecond` = `framesPerSecond` = fps, `startTimeCode`/`endTimeCode` = the first and
//! last scene frame (the time code of a sample is its scene frame), `upAxis` ("Y" or "Z", the
//! output's `up`) and `metersPerUnit = 1`.
//!
//! Streamed: the header and topology are known up front, then each frame appends one entry of the
//! `points.timeSamples` dictionary, so memory does not grow with the frame count except for the
//! extents (two points per frame), which are written after the points on [`UsdWriter::finish`].
//! Floats are written as the shortest decimal that reads back to the same f32 (Rust's `Display`),
//! so `pxr` reads exactly the positions of the PC2 of the same bake.
//!
//! The same layer in the binary crate format: [`crate::cache_usdc`] (a third of the size, opened
//! without parsing text; BENCHMARKS.md "USD: usda or usdc").

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glam::Vec3;

use crate::atomic_file::AtomicFile;
use crate::error::{IoError, Result};
use crate::scene::Up;

/// Layer header values known before the first frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsdLayerInfo {
    /// Scene frame (= time code) of the first sample.
    pub frame_start: i32,
    /// Number of samples that will be written.
    pub num_frames: usize,
    /// Frames per second (`timeCodesPerSecond`).
    pub fps: f32,
    /// `upAxis`.
    pub up: Up,
}

/// Streams a `.usda` layer frame by frame; the file appears under its name on
/// [`UsdWriter::finish`]. A staged writer (resumable bake) keeps the partial layer and its extents
/// in two files that outlive the process (see [`Self::sync`] and [`Self::resume_staged`]).
pub struct UsdWriter {
    file: AtomicFile,
    /// The extents' dictionary entries (text), written after the points on finish.
    extents: String,
    /// Staged: the extents' partial file, and how much of `extents` it holds.
    extent_file: Option<(AtomicFile, usize)>,
    num_points: usize,
    info: UsdLayerInfo,
    written: usize,
    buf: String,
}

/// The file name of garment `name`'s layer.
pub fn usd_file_name(name: &str) -> String {
    format!("{name}.usda")
}

/// `name` as a USD prim name: `[A-Za-z_][A-Za-z0-9_]*` (other characters become `_`, a leading
/// digit gets a `_` before it; empty gives `_`).
pub fn usd_identifier(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// Appends `x` as USD text: the shortest decimal that reads back to the same f32; `nan`, `inf`,
/// `-inf` for non-finite values.
fn push_f32(out: &mut String, x: f32) {
    if x.is_finite() {
        let _ = write!(out, "{x}");
    } else if x.is_nan() {
        out.push_str("nan");
    } else if x > 0.0 {
        out.push_str("inf");
    } else {
        out.push_str("-inf");
    }
}

fn push_vec3(out: &mut String, p: Vec3) {
    out.push('(');
    push_f32(out, p.x);
    out.push_str(", ");
    push_f32(out, p.y);
    out.push_str(", ");
    push_f32(out, p.z);
    out.push(')');
}

/// The bounding box of `positions`: componentwise min and max; a NaN coordinate makes that
/// component NaN so that a broken frame shows (zero for no points).
pub fn bounds(positions: &[Vec3]) -> (Vec3, Vec3) {
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    let mut nan = [false; 3];
    for p in positions {
        for (k, c) in p.to_array().into_iter().enumerate() {
            nan[k] |= c.is_nan();
        }
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    for (k, n) in nan.into_iter().enumerate() {
        if n {
            lo[k] = f32::NAN;
            hi[k] = f32::NAN;
        }
    }
    if positions.is_empty() {
        return (Vec3::ZERO, Vec3::ZERO);
    }
    (lo, hi)
}

/// Rejects a face corner beyond the mesh's `num_points` points (the layer at `path`).
pub(crate) fn check_faces(path: &Path, faces: &[Vec<u32>], num_points: usize) -> Result<()> {
    match faces.iter().flatten().find(|&&i| i as usize >= num_points) {
        Some(&bad) => Err(IoError::invalid(
            path,
            "faceVertexIndices",
            format!("vertex {bad} is out of range: the mesh has {num_points} points"),
        )),
        None => Ok(()),
    }
}

/// Rejects frame `written` of `given` points for a layer of `info.num_frames` × `num_points`.
pub(crate) fn check_frame(
    path: &Path,
    written: usize,
    given: usize,
    num_points: usize,
    info: &UsdLayerInfo,
) -> Result<()> {
    if given == num_points && written < info.num_frames {
        return Ok(());
    }
    Err(IoError::invalid(
        path,
        format!("points.timeSamples[{written}]"),
        format!(
            "{given} points given for a cache of {} frames × {num_points} points",
            info.num_frames
        ),
    ))
}

/// Rejects finishing a layer after `written` of its `info.num_frames` frames.
pub(crate) fn check_finished(path: &Path, written: usize, info: &UsdLayerInfo) -> Result<()> {
    if written == info.num_frames {
        return Ok(());
    }
    Err(IoError::invalid(
        path,
        "points.timeSamples",
        format!("{written} frames written, {} announced", info.num_frames),
    ))
}

impl UsdWriter {
    /// Starts the layer `path` for a mesh of `num_points` points and polygons `faces` (0-based
    /// source indices) named `name`.
    pub fn create(
        path: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
        info: UsdLayerInfo,
    ) -> Result<Self> {
        let file = AtomicFile::create(path)?;
        Self::start(file, None, path, name, num_points, faces, info)
    }

    /// As [`Self::create`], staged in `temp` (the layer) and `temp_extent` (its extents), kept
    /// until [`Self::finish`].
    pub fn create_staged(
        path: &Path,
        temp: &Path,
        temp_extent: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
        info: UsdLayerInfo,
    ) -> Result<Self> {
        let file = AtomicFile::create_staged(path, temp)?;
        let ext = AtomicFile::create_staged(path, temp_extent)?;
        Self::start(file, Some(ext), path, name, num_points, faces, info)
    }

    /// Continues the staged files after `frames` frames: the layer's first `len` bytes and the
    /// extents' first `extent_len` bytes (as [`Self::sync`] returned them).
    #[allow(clippy::too_many_arguments)]
    pub fn resume_staged(
        path: &Path,
        temp: &Path,
        temp_extent: &Path,
        num_points: usize,
        info: UsdLayerInfo,
        frames: usize,
        len: u64,
        extent_len: u64,
    ) -> Result<Self> {
        let damaged = |p: &Path, why: String| IoError::invalid(p, "length", why);
        let bytes = std::fs::read(temp_extent).map_err(|e| IoError::io(temp_extent, e))?;
        let n = usize::try_from(extent_len).unwrap_or(usize::MAX);
        if bytes.len() < n {
            return Err(damaged(
                temp_extent,
                format!(
                    "{} bytes, the checkpoint recorded {extent_len}: the partial cache was damaged",
                    bytes.len()
                ),
            ));
        }
        let extents = String::from_utf8(bytes[..n].to_vec())
            .map_err(|_| damaged(temp_extent, "not UTF-8 text".into()))?;
        if extents.lines().count() != frames || frames > info.num_frames {
            return Err(damaged(
                temp_extent,
                format!("does not hold the {frames} frames the checkpoint recorded"),
            ));
        }
        let file = AtomicFile::reopen_staged(path, temp, len)?;
        let ext = AtomicFile::reopen_staged(path, temp_extent, extent_len)?;
        Ok(Self {
            file,
            extent_file: Some((ext, extents.len())),
            extents,
            num_points,
            info,
            written: frames,
            buf: String::new(),
        })
    }

    fn start(
        mut file: AtomicFile,
        extent_file: Option<AtomicFile>,
        path: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
        info: UsdLayerInfo,
    ) -> Result<Self> {
        check_faces(path, faces, num_points)?;
        let prim = usd_identifier(name);
        let end = info.frame_start as i64 + info.num_frames.max(1) as i64 - 1;
        let mut h = String::new();
        let _ = writeln!(h, "#usda 1.0\n(");
        let _ = writeln!(h, "    defaultPrim = \"{prim}\"");
        let _ = writeln!(h, "    doc = \"clothbake point cache of garment {prim}\"");
        let _ = writeln!(h, "    endTimeCode = {end}");
        let mut fps = String::new();
        push_f32(&mut fps, info.fps);
        let _ = writeln!(h, "    framesPerSecond = {fps}");
        let _ = writeln!(h, "    metersPerUnit = 1");
        let _ = writeln!(h, "    startTimeCode = {}", info.frame_start);
        let _ = writeln!(h, "    timeCodesPerSecond = {fps}");
        let up = match info.up {
            Up::Y => "Y",
            Up::Z => "Z",
        };
        let _ = writeln!(h, "    upAxis = \"{up}\"\n)\n");
        let _ = writeln!(h, "def Mesh \"{prim}\"\n{{");
        h.push_str("    int[] faceVertexCounts = [");
        for (k, f) in faces.iter().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            let _ = write!(h, "{sep}{}", f.len());
        }
        h.push_str("]\n    int[] faceVertexIndices = [");
        for (k, i) in faces.iter().flatten().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            let _ = write!(h, "{sep}{i}");
        }
        h.push_str("]\n    uniform token subdivisionScheme = \"none\"\n");
        h.push_str("    point3f[] points.timeSamples = {\n");
        file.write_all(h.as_bytes())?;
        Ok(Self {
            file,
            extents: String::new(),
            extent_file: extent_file.map(|f| (f, 0)),
            num_points,
            info,
            written: 0,
            buf: String::with_capacity(num_points * 36),
        })
    }

    /// Appends one frame's positions (time code `frame_start + frames written`).
    pub fn write_frame(&mut self, positions: &[Vec3]) -> Result<()> {
        let (n, written) = (positions.len(), self.written);
        check_frame(self.file.path(), written, n, self.num_points, &self.info)?;
        let time = self.info.frame_start as i64 + self.written as i64;
        self.buf.clear();
        let _ = write!(self.buf, "        {time}: [");
        for (k, p) in positions.iter().enumerate() {
            if k > 0 {
                self.buf.push_str(", ");
            }
            push_vec3(&mut self.buf, *p);
        }
        self.buf.push_str("],\n");
        self.file.write_all(self.buf.as_bytes())?;
        let (lo, hi) = bounds(positions);
        let _ = write!(self.extents, "        {time}: [");
        push_vec3(&mut self.extents, lo);
        self.extents.push_str(", ");
        push_vec3(&mut self.extents, hi);
        self.extents.push_str("],\n");
        self.written += 1;
        Ok(())
    }

    /// Makes the frames written so far durable; returns the lengths (bytes) of the layer and of
    /// the extents.
    pub fn sync(&mut self) -> Result<(u64, u64)> {
        let len = self.file.sync()?;
        let ext_len = match &mut self.extent_file {
            Some((f, done)) => {
                f.write_all(&self.extents.as_bytes()[*done..])?;
                *done = self.extents.len();
                f.sync()?
            }
            None => self.extents.len() as u64,
        };
        Ok((len, ext_len))
    }

    /// Closes the dictionaries, appends the extents and renames the layer to its final name; all
    /// announced frames must have been written.
    pub fn finish(mut self) -> Result<PathBuf> {
        check_finished(self.file.path(), self.written, &self.info)?;
        self.file
            .write_all(b"    }\n    float3[] extent.timeSamples = {\n")?;
        self.file.write_all(self.extents.as_bytes())?;
        self.file.write_all(b"    }\n}\n")?;
        let path = self.file.commit()?;
        if let Some((f, _)) = self.extent_file {
            // The extents now live in the layer; their staged file is no longer needed.
            let temp = f.close()?;
            drop(temp);
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_valid_usd_prim_names() {
        assert_eq!(usd_identifier("skirt"), "skirt");
        assert_eq!(usd_identifier("3d sheet-v2"), "_3d_sheet_v2");
        assert_eq!(usd_identifier("Shirt.Front"), "Shirt_Front");
        assert_eq!(usd_identifier(""), "_");
        assert_eq!(usd_identifier("Röck"), "R_ck");
    }

    #[test]
    fn floats_are_shortest_round_trip_and_non_finite_named() {
        let mut s = String::new();
        for x in [
            0.1f32,
            1.0 / 3.0,
            -0.0,
            1e-30,
            3.4028235e38,
            f32::MIN_POSITIVE,
        ] {
            s.clear();
            push_f32(&mut s, x);
            assert_eq!(s.parse::<f32>().unwrap().to_bits(), x.to_bits(), "{s}");
            // Parsed as a double first (as pxr does) and then rounded to f32: the same bits.
            assert_eq!(
                (s.parse::<f64>().unwrap() as f32).to_bits(),
                x.to_bits(),
                "{s}"
            );
        }
        for (x, t) in [
            (f32::NAN, "nan"),
            (f32::INFINITY, "inf"),
            (f32::NEG_INFINITY, "-inf"),
        ] {
            s.clear();
            push_f32(&mut s, x);
            assert_eq!(s, t);
        }
    }

    #[test]
    fn bounds_mark_nan_components() {
        let (lo, hi) = bounds(&[Vec3::new(1.0, f32::NAN, 0.0), Vec3::new(-1.0, 2.0, 3.0)]);
        assert_eq!((lo.x, hi.x, lo.z, hi.z), (-1.0, 1.0, 0.0, 3.0));
        assert!(lo.y.is_nan() && hi.y.is_nan());
    }
}
