//! USD point cache in the binary crate format (`.usdc`): the same layer as [`crate::cache_usd`]'s
//! `.usda` — one `UsdGeomMesh` with its topology, `points` and `extent` time-sampled per output
//! frame, the same layer metadata — a third of the size and read by pxr and Blender without
//! parsing text (BENCHMARKS.md, "USD: usda or usdc").
//!
//! Streamed: the topology goes right after the 88-byte header, then each frame appends its
//! points and its extent as two `VtVec3fArray` values (a fixed number of bytes per frame, so a
//! staged file resumes at `head + frames × stride`); [`UsdcWriter::finish`] writes the sample
//! times, the two time-sample tables pointing at those arrays, the layer's fields and specs
//! ([`crate::usdc_crate`]), and last the header with the offset of the table of contents.
//! Memory does not grow with the frame count except for one file offset per frame. Read back by
//! [`crate::usdc_layer`].

use std::path::{Path, PathBuf};

use glam::Vec3;

use crate::atomic_file::AtomicFile;
use crate::cache_usd::{
    bounds, check_faces, check_finished, check_frame, usd_identifier, UsdLayerInfo,
};
use crate::error::{IoError, Result};
use crate::scene::Up;
use crate::usdc_crate::{
    bootstrap, encode_ints, put_compressed, put_u64, CrateType, PathNode, Spec, SpecType, Tables,
    ValueRep, BOOTSTRAP_LEN,
};

/// The file name of garment `name`'s binary layer.
pub fn usdc_file_name(name: &str) -> String {
    format!("{name}.usdc")
}

/// Streams a `.usdc` layer frame by frame; the file appears under its name on
/// [`UsdcWriter::finish`].
pub struct UsdcWriter {
    file: AtomicFile,
    prim: String,
    info: UsdLayerInfo,
    num_points: usize,
    /// The topology's two arrays (faceVertexCounts, faceVertexIndices) as field values.
    topology: [ValueRep; 2],
    /// Bytes before the first frame.
    head: u64,
    written: usize,
    buf: Vec<u8>,
}

impl UsdcWriter {
    /// Starts the layer `path` for a mesh of `num_points` points and polygons `faces` (0-based
    /// source indices) named `name`.
    pub fn create(
        path: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
        info: UsdLayerInfo,
    ) -> Result<Self> {
        Self::start(
            AtomicFile::create(path)?,
            path,
            name,
            num_points,
            faces,
            info,
        )
    }

    /// As [`Self::create`], staged in `temp`, kept until [`Self::finish`].
    pub fn create_staged(
        path: &Path,
        temp: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
        info: UsdLayerInfo,
    ) -> Result<Self> {
        let file = AtomicFile::create_staged(path, temp)?;
        Self::start(file, path, name, num_points, faces, info)
    }

    /// Continues the staged file after `frames` frames, its first `len` bytes (what
    /// [`Self::sync`] returned): the header and topology of `faces`, then whole frames.
    #[allow(clippy::too_many_arguments)]
    pub fn resume_staged(
        path: &Path,
        temp: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
        info: UsdLayerInfo,
        frames: usize,
        len: u64,
    ) -> Result<Self> {
        let (_, topology, head) = topology_values(faces);
        let expected = head + frames as u64 * frame_stride(num_points);
        if len != expected || frames > info.num_frames {
            return Err(IoError::invalid(
                temp,
                "length",
                format!(
                    "{len} bytes recorded for {frames} frames of {num_points} points (expected \
                     {expected}): the partial cache was damaged"
                ),
            ));
        }
        Ok(Self {
            file: AtomicFile::reopen_staged(path, temp, len)?,
            prim: usd_identifier(name),
            info,
            num_points,
            topology,
            head,
            written: frames,
            buf: Vec::new(),
        })
    }

    fn start(
        mut file: AtomicFile,
        path: &Path,
        name: &str,
        num_points: usize,
        faces: &[Vec<u32>],
        info: UsdLayerInfo,
    ) -> Result<Self> {
        check_faces(path, faces, num_points)?;
        let (b, topology, head) = topology_values(faces);
        file.write_all(&b)?;
        Ok(Self {
            file,
            prim: usd_identifier(name),
            info,
            num_points,
            topology,
            head,
            written: 0,
            buf: Vec::with_capacity(frame_stride(num_points) as usize),
        })
    }

    /// Appends one frame's positions (time code `frame_start + frames written`).
    pub fn write_frame(&mut self, positions: &[Vec3]) -> Result<()> {
        let (n, written) = (positions.len(), self.written);
        check_frame(self.file.path(), written, n, self.num_points, &self.info)?;
        self.buf.clear();
        put_vec3s(&mut self.buf, positions);
        let (lo, hi) = bounds(positions);
        put_vec3s(&mut self.buf, &[lo, hi]);
        self.file.write_all(&self.buf)?;
        self.written += 1;
        Ok(())
    }

    /// Makes the frames written so far durable; returns the file's length (bytes).
    pub fn sync(&mut self) -> Result<u64> {
        self.file.sync()
    }

    /// Writes the sample times, the time-sample tables, the fields and specs and the header,
    /// and renames the layer to its final name; all announced frames must have been written.
    pub fn finish(mut self) -> Result<PathBuf> {
        let (frames, info) = (self.written, self.info);
        check_finished(self.file.path(), frames, &info)?;
        let stride = frame_stride(self.num_points);
        let points_at = |k: usize| self.head + k as u64 * stride;
        let extent_at = |k: usize| points_at(k) + 8 + 12 * self.num_points as u64;
        let mut t = Tables::default();
        t.token(""); // index 0: the root path's element, never a property's
        let mut out = Vec::new();
        let at = self.head + frames as u64 * stride;
        // Values written here are appended to `out`, which starts at file offset `at`.
        let here = |out: &Vec<u8>| at + out.len() as u64;
        // The sample times (one array for both attributes): the scene frames.
        let times = here(&out);
        put_u64(&mut out, frames as u64);
        for k in 0..frames {
            out.extend_from_slice(&((info.frame_start as i64 + k as i64) as f64).to_le_bytes());
        }
        let times = ValueRep::at(CrateType::DoubleVector, times, false);
        // A time-sample table: a jump to the times' rep, the rep, a jump to the values' reps,
        // their count and the reps (`crateFile.cpp`, `_Write(TimeSamples)`).
        let samples = |out: &mut Vec<u8>, value_at: &dyn Fn(usize) -> u64| {
            let start = here(out);
            out.extend_from_slice(&8i64.to_le_bytes());
            put_u64(out, times.0);
            out.extend_from_slice(&8i64.to_le_bytes());
            put_u64(out, frames as u64);
            for k in 0..frames {
                put_u64(out, ValueRep::at(CrateType::Vec3f, value_at(k), true).0);
            }
            ValueRep::at(CrateType::TimeSamples, start, false)
        };
        let points_samples = samples(&mut out, &points_at);
        let extent_samples = samples(&mut out, &extent_at);
        // Doubles the f32 cannot hold exactly are written out of line.
        let double = |out: &mut Vec<u8>, x: f64| {
            ValueRep::inlined_double(x).unwrap_or_else(|| {
                let r = ValueRep::at(CrateType::Double, here(out), false);
                out.extend_from_slice(&x.to_le_bytes());
                r
            })
        };
        // The text layer writes the fps as the f32's shortest decimal: the same double here.
        let fps: f64 = format!("{}", info.fps).parse().unwrap_or(info.fps as f64);
        let end = info.frame_start as i64 + info.num_frames.max(1) as i64 - 1;
        let doubles = [
            ("endTimeCode", double(&mut out, end as f64)),
            ("framesPerSecond", double(&mut out, fps)),
            ("metersPerUnit", double(&mut out, 1.0)),
            ("startTimeCode", double(&mut out, info.frame_start as f64)),
            ("timeCodesPerSecond", double(&mut out, fps)),
        ];
        let properties = [
            "faceVertexCounts",
            "faceVertexIndices",
            "subdivisionScheme",
            "points",
            "extent",
        ];
        let token_vector = |out: &mut Vec<u8>, t: &mut Tables, items: &[&str]| {
            let r = ValueRep::at(CrateType::TokenVector, here(out), false);
            put_u64(out, items.len() as u64);
            for item in items {
                out.extend_from_slice(&t.token(item).to_le_bytes());
            }
            r
        };
        let prim_children = token_vector(&mut out, &mut t, &[&self.prim]);
        let property_children = token_vector(&mut out, &mut t, &properties);

        // The pseudo-root: the layer's metadata and its one prim.
        let prim_token = t.token(&self.prim);
        let mut root = vec![t.field(
            "defaultPrim",
            ValueRep::inlined(CrateType::Token, prim_token as u64),
        )];
        let doc = t.string(&format!("clothbake point cache of garment {}", self.prim));
        root.push(t.field(
            "documentation",
            ValueRep::inlined(CrateType::String, doc as u64),
        ));
        for (name, value) in doubles {
            root.push(t.field(name, value));
        }
        let up = t.token(match info.up {
            Up::Y => "Y",
            Up::Z => "Z",
        });
        root.push(t.field("upAxis", ValueRep::inlined(CrateType::Token, up as u64)));
        root.push(t.field("primChildren", prim_children));
        // The mesh prim.
        let mesh = t.token("Mesh");
        let prim = vec![
            t.field("specifier", ValueRep::inlined(CrateType::Specifier, 0)), // def
            t.field("typeName", ValueRep::inlined(CrateType::Token, mesh as u64)),
            t.field("properties", property_children),
        ];
        // Its attributes: (type name, uniform, value field).
        let scheme = t.token("none");
        let values = [
            ("int[]", false, ("default", self.topology[0])),
            ("int[]", false, ("default", self.topology[1])),
            (
                "token",
                true,
                (
                    "default",
                    ValueRep::inlined(CrateType::Token, scheme as u64),
                ),
            ),
            ("point3f[]", false, ("timeSamples", points_samples)),
            ("float3[]", false, ("timeSamples", extent_samples)),
        ];
        t.specs.push(Spec {
            path: 0,
            kind: SpecType::PseudoRoot,
            fields: root,
        });
        t.specs.push(Spec {
            path: 1,
            kind: SpecType::Prim,
            fields: prim,
        });
        for (k, (type_name, uniform, (field, value))) in values.into_iter().enumerate() {
            let tn = t.token(type_name);
            let fields = vec![
                t.field("custom", ValueRep::inlined(CrateType::Bool, 0)),
                t.field("typeName", ValueRep::inlined(CrateType::Token, tn as u64)),
                t.field(
                    "variability",
                    ValueRep::inlined(CrateType::Variability, uniform as u64),
                ),
                t.field(field, value),
            ];
            t.specs.push(Spec {
                path: 2 + k as u32,
                kind: SpecType::Attribute,
                fields,
            });
        }
        // The path tree: /, /<prim>, then its properties as siblings.
        t.paths.push(PathNode {
            path: 0,
            token: 0,
            property: false,
            has_child: true,
            sibling: None,
        });
        t.paths.push(PathNode {
            path: 1,
            token: prim_token,
            property: false,
            has_child: true,
            sibling: None,
        });
        for (k, name) in properties.iter().enumerate() {
            let last = k + 1 == properties.len();
            let token = t.token(name);
            t.paths.push(PathNode {
                path: 2 + k as u32,
                token,
                property: true,
                has_child: false,
                sibling: (!last).then_some(1),
            });
        }
        let (sections, toc) = t.sections(here(&out));
        out.extend_from_slice(&sections);
        self.file.write_all(&out)?;
        self.file.patch(0, &bootstrap(toc))?;
        self.file.commit()
    }
}

/// The file up to the first frame for `faces`: the header (zeros until [`UsdcWriter::finish`])
/// and the topology's two int arrays, their field values and the length (bytes).
fn topology_values(faces: &[Vec<u32>]) -> (Vec<u8>, [ValueRep; 2], u64) {
    let mut b = vec![0u8; BOOTSTRAP_LEN as usize];
    let counts: Vec<u32> = faces.iter().map(|f| f.len() as u32).collect();
    let indices: Vec<u32> = faces.iter().flatten().copied().collect();
    let counts = put_ints(&mut b, &counts);
    let indices = put_ints(&mut b, &indices);
    let head = b.len() as u64;
    (b, [counts, indices], head)
}

/// Bytes per frame: the points' array (count, then 3 f32 per point) and the extent's (2 points).
fn frame_stride(num_points: usize) -> u64 {
    8 + 12 * num_points as u64 + 8 + 24
}

/// Arrays of at least this many ints are written compressed, as pxr writes them
/// (`_MinCompressedArraySize`).
const MIN_COMPRESSED_INTS: usize = 16;

/// A `VtArray<int>` value at the end of `out` (a file from offset 0): its count, then the values
/// integer-coded and compressed ([`crate::usdc_crate::put_compressed`]), or raw if few.
fn put_ints(out: &mut Vec<u8>, values: &[u32]) -> ValueRep {
    let at = out.len() as u64;
    put_u64(out, values.len() as u64);
    if values.len() >= MIN_COMPRESSED_INTS {
        put_compressed(out, &encode_ints(values));
        return ValueRep::compressed_array(CrateType::Int, at);
    }
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    ValueRep::at(CrateType::Int, at, true)
}

/// A `VtArray<GfVec3f>` value: count, then x, y, z per element.
fn put_vec3s(out: &mut Vec<u8>, values: &[Vec3]) {
    put_u64(out, values.len() as u64);
    for p in values {
        for c in p.to_array() {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_have_a_fixed_stride_after_the_topology() {
        // Two triangles: both arrays raw (fewer than 16 ints).
        let faces = vec![vec![0, 1, 2], vec![0, 2, 3]];
        let (b, topology, head) = topology_values(&faces);
        assert_eq!(
            topology,
            [
                ValueRep::at(CrateType::Int, 88, true),
                ValueRep::at(CrateType::Int, 88 + 16, true)
            ]
        );
        assert_eq!(head, 88 + 16 + 8 + 24);
        assert_eq!(b.len() as u64, head);
        assert_eq!(frame_stride(4), 8 + 48 + 8 + 24);
        // A grid's indices compress: far fewer bytes than 4 per index.
        let grid: Vec<Vec<u32>> = (0..100u32)
            .map(|k| vec![k, k + 1, k + 12, k + 11])
            .collect();
        let (b, topology, head) = topology_values(&grid);
        assert_eq!(topology[1].0 >> 61, 0b101, "array, compressed");
        assert!(head < 88 + 8 + 400 + 8 + 200, "{head}");
        assert_eq!(b.len() as u64, head);
    }
}
