//! Reading a USD binary layer (`.usdc`, the crate format of [`crate::usdc_crate`]) back as a point
//! cache: the layout clothbake writes (and pxr's own export of that layer) — one `Mesh` prim (the
//! layer's `defaultPrim`, else the first `Mesh`) with `points` time-sampled and its topology.
//!
//! Only the structure is read whole (the sections at the end of the file, small); each frame's
//! points stay in the file until [`crate::cache_stream::CacheStream::next_frame`] reads them, so
//! memory does not grow with the frame count. Every count and offset from the file is checked
//! against the file's length before anything is allocated or read, and a damaged file is an error
//! naming the file and the section or field.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::cache_stream::usd_polygons;
use crate::error::{IoError, Result};
use crate::scene::Up;

/// What a point cache needs from the layer.
#[derive(Debug, Clone, PartialEq)]
pub struct UsdcMesh {
    /// The first sample's time code.
    pub frame_start: f64,
    /// `timeCodesPerSecond`, when the layer has it.
    pub fps: Option<f64>,
    pub up: Option<Up>,
    /// Polygons (0-based), when the mesh has `faceVertexCounts` and `faceVertexIndices`.
    pub faces: Option<Vec<Vec<u32>>>,
    pub num_points: usize,
    /// Per sample, in time order: the file offset of its points (`x, y, z` f32 each).
    pub samples: Vec<u64>,
}

/// Opens `path` and finds its point-cache mesh; returns it with the open file (to read the
/// samples from).
pub fn read_usdc_mesh(path: &Path) -> Result<(UsdcMesh, File)> {
    let mut r = CrateReader::open(path)?;
    let layer = r.structure()?;
    let mesh = layer.mesh(&mut r)?;
    Ok((mesh, r.file))
}

/// A crate file being read: the open file and its length, every read bounds-checked.
struct CrateReader {
    path: PathBuf,
    file: File,
    len: u64,
}

/// Value representation bits (`ValueRep`).
const ARRAY: u64 = 1 << 63;
const INLINED: u64 = 1 << 62;
const COMPRESSED: u64 = 1 << 61;
const PAYLOAD: u64 = (1 << 48) - 1;
/// The types read (`crateDataTypes.h`).
const TY_INT: u64 = 3;
const TY_DOUBLE: u64 = 9;
const TY_TOKEN: u64 = 11;
const TY_VEC3F: u64 = 24;
const TY_TIME_SAMPLES: u64 = 46;
const TY_DOUBLE_VECTOR: u64 = 48;
/// Spec kinds (`SdfSpecType`).
const SPEC_ATTRIBUTE: u32 = 1;
const SPEC_PRIM: u32 = 6;
/// A field set's end.
const END: u32 = u32::MAX;

impl CrateReader {
    fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| IoError::io(path, e))?;
        let len = file.metadata().map_err(|e| IoError::io(path, e))?.len();
        Ok(Self {
            path: path.to_path_buf(),
            file,
            len,
        })
    }

    fn bad(&self, field: impl Into<String>, msg: impl Into<String>) -> IoError {
        IoError::parse(&self.path, field, msg)
    }

    /// `n` bytes at `offset`, both checked against the file's length.
    fn read_at(&mut self, offset: u64, n: u64, what: &str) -> Result<Vec<u8>> {
        if offset.checked_add(n).is_none_or(|end| end > self.len) {
            return Err(self.bad(
                what,
                format!(
                    "{n} bytes at offset {offset}: past the end of the {}-byte file",
                    self.len
                ),
            ));
        }
        let mut buf = vec![0u8; n as usize];
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(&mut buf))
            .map_err(|e| IoError::io(&self.path, e))?;
        Ok(buf)
    }

    fn u64_at(&mut self, offset: u64, what: &str) -> Result<u64> {
        let b = self.read_at(offset, 8, what)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or_default()))
    }

    /// The header, the table of contents and the six sections, decoded.
    fn structure(&mut self) -> Result<Layer> {
        let head = self.read_at(0, 24, "header")?;
        if &head[..8] != b"PXR-USDC" {
            return Err(self.bad("header", "not a USD binary layer (no PXR-USDC signature)"));
        }
        if head[8] != 0 {
            return Err(self.bad(
                "header",
                format!(
                    "crate version {}.{}.{}: only 0.x is read",
                    head[8], head[9], head[10]
                ),
            ));
        }
        let toc = u64::from_le_bytes(head[16..24].try_into().unwrap_or_default());
        let count = self.u64_at(toc, "table of contents")?;
        if count > 64 {
            return Err(self.bad("table of contents", format!("{count} sections")));
        }
        let toc_bytes = self.read_at(toc + 8, count * 32, "table of contents")?;
        let mut sections = Vec::new();
        for e in toc_bytes.chunks_exact(32) {
            let name: String = e[..16]
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as char)
                .collect();
            let start = u64::from_le_bytes(e[16..24].try_into().unwrap_or_default());
            let size = u64::from_le_bytes(e[24..32].try_into().unwrap_or_default());
            let bytes = self.read_at(start, size, &format!("section {name}"))?;
            sections.push((name, bytes));
        }
        let section = |name: &str| -> Result<Section> {
            sections
                .iter()
                .find(|s| s.0 == name)
                .map(|s| Section {
                    name: s.0.clone(),
                    bytes: &s.1,
                    at: 0,
                })
                .ok_or_else(|| self.bad("table of contents", format!("no {name} section")))
        };
        let p = &self.path;
        // TOKENS: count, uncompressed size, then the NUL-terminated tokens compressed.
        let mut s = section("TOKENS")?;
        let count = s.u64(p)?;
        let size = s.u64(p)?;
        let text = s.compressed(p, size)?;
        if text.len() as u64 != size {
            return Err(self.bad(
                "TOKENS",
                format!(
                    "{size} bytes of tokens announced, {} decompressed",
                    text.len()
                ),
            ));
        }
        let tokens: Vec<String> = text
            .split(|&c| c == 0)
            .take(count.min(text.len() as u64) as usize)
            .map(|t| String::from_utf8_lossy(t).into_owned())
            .collect();
        if tokens.len() as u64 != count || text.last() != Some(&0) {
            return Err(self.bad(
                "TOKENS",
                format!("{count} tokens announced, {} found", tokens.len()),
            ));
        }
        // FIELDS: the names' tokens coded, the values compressed.
        let mut s = section("FIELDS")?;
        let n = s.u64(p)?;
        let names = s.ints(p, n)?;
        let reps = s.compressed(p, n.saturating_mul(8))?;
        if reps.len() as u64 != n * 8 {
            return Err(self.bad(
                "FIELDS",
                format!("{} value bytes for {n} fields", reps.len()),
            ));
        }
        let fields: Vec<(u32, u64)> = names
            .into_iter()
            .zip(
                reps.chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())),
            )
            .collect();
        let mut s = section("FIELDSETS")?;
        let n = s.u64(p)?;
        let fieldsets = s.ints(p, n)?;
        let mut s = section("PATHS")?;
        let _num_paths = s.u64(p)?;
        let n = s.u64(p)?;
        let path_index = s.ints(p, n)?;
        let element = s.ints(p, n)?;
        let jumps = s.ints(p, n)?;
        let mut s = section("SPECS")?;
        let n = s.u64(p)?;
        let spec_path = s.ints(p, n)?;
        let spec_fields = s.ints(p, n)?;
        let spec_kind = s.ints(p, n)?;
        let paths = build_paths(&tokens, &path_index, &element, &jumps)
            .map_err(|m| self.bad("PATHS", m))?;
        let mut specs = Vec::with_capacity(spec_path.len());
        for k in 0..spec_path.len() {
            let path = paths
                .get(spec_path[k] as usize)
                .cloned()
                .flatten()
                .ok_or_else(|| self.bad("SPECS", format!("spec {k}: no path {}", spec_path[k])))?;
            let mut list = Vec::new();
            let mut i = spec_fields[k] as usize;
            loop {
                let f = *fieldsets.get(i).ok_or_else(|| {
                    self.bad(
                        "FIELDSETS",
                        format!("spec {k}: field set runs past the end"),
                    )
                })?;
                if f == END {
                    break;
                }
                let &(name, rep) = fields
                    .get(f as usize)
                    .ok_or_else(|| self.bad("FIELDS", format!("no field {f}")))?;
                let name = tokens
                    .get(name as usize)
                    .cloned()
                    .ok_or_else(|| self.bad("FIELDS", format!("field {f}: no token {name}")))?;
                list.push((name, rep));
                i += 1;
            }
            specs.push(SpecRecord {
                path,
                kind: spec_kind[k],
                fields: list,
            });
        }
        Ok(Layer { tokens, specs })
    }
}

/// One section's bytes and a read position.
struct Section<'a> {
    name: String,
    bytes: &'a [u8],
    at: usize,
}

impl Section<'_> {
    fn take(&mut self, path: &Path, n: u64) -> Result<&[u8]> {
        let end = (self.at as u64)
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len() as u64);
        let Some(end) = end else {
            return Err(IoError::parse(
                path,
                self.name.clone(),
                format!("{n} bytes at {}: past the section's end", self.at),
            ));
        };
        let out = &self.bytes[self.at..end as usize];
        self.at = end as usize;
        Ok(out)
    }

    fn u64(&mut self, path: &Path) -> Result<u64> {
        let b = self.take(path, 8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or_default()))
    }

    /// A compressed block (its size, then one LZ4 chunk) of at most `max` bytes decompressed.
    fn compressed(&mut self, path: &Path, max: u64) -> Result<Vec<u8>> {
        let size = self.u64(path)?;
        let block = self.take(path, size)?;
        decompress(block, max).map_err(|m| IoError::parse(path, self.name.clone(), m))
    }

    /// `n` integers in the crate's integer coding, compressed.
    fn ints(&mut self, path: &Path, n: u64) -> Result<Vec<u32>> {
        let size = self.u64(path)?;
        let block = self.take(path, size)?;
        decode_compressed_ints(block, n).map_err(|m| IoError::parse(path, self.name.clone(), m))
    }
}

/// One LZ4 chunk as `TfFastCompression` frames it (a chunk count of 0, then the block), of at most
/// `max` bytes — and never more than the 255-fold LZ4 can expand, whatever a header claims.
fn decompress(block: &[u8], max: u64) -> std::result::Result<Vec<u8>, String> {
    match block.split_first() {
        Some((0, data)) => {
            let max = max.min(255 * data.len() as u64 + 64);
            let max = usize::try_from(max).map_err(|_| "too large".to_string())?;
            lz4_flex::block::decompress(data, max).map_err(|e| format!("LZ4: {e}"))
        }
        Some((k, _)) => Err(format!(
            "{k} compressed chunks (only single-chunk sections are read)"
        )),
        None => Err("empty compressed block".into()),
    }
}

/// `n` integers from a compressed block of integer codes. LZ4 expands at most 255-fold and a
/// code takes at least two bits, so `n` beyond that bound is damage, not a large table.
fn decode_compressed_ints(block: &[u8], n: u64) -> std::result::Result<Vec<u32>, String> {
    let most = 255 * block.len() as u64 + 64;
    if n / 4 > most {
        return Err(format!("{n} integers in {} compressed bytes", block.len()));
    }
    let coded_len = (4 * n + 4 + (2 * n).div_ceil(8)).min(most);
    decode_ints(&decompress(block, coded_len)?, n as usize)
}

/// The inverse of [`crate::usdc_crate::encode_ints`].
fn decode_ints(data: &[u8], n: usize) -> std::result::Result<Vec<u32>, String> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let codes_len = (n * 2).div_ceil(8);
    if data.len() < 4 + codes_len {
        return Err(format!("{} coded bytes for {n} integers", data.len()));
    }
    let common = i32::from_le_bytes(data[..4].try_into().unwrap_or_default());
    let (codes, mut rest) = data[4..].split_at(codes_len);
    let (mut prev, mut out) = (0i32, Vec::with_capacity(n));
    for k in 0..n {
        let width = [0usize, 1, 2, 4][((codes[k / 4] >> (2 * (k % 4))) & 3) as usize];
        if rest.len() < width {
            return Err(format!("integer {k} of {n}: the coded bytes end"));
        }
        let d = match width {
            0 => common,
            1 => rest[0] as i8 as i32,
            2 => i16::from_le_bytes([rest[0], rest[1]]) as i32,
            _ => i32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]),
        };
        rest = &rest[width..];
        prev = prev.wrapping_add(d);
        out.push(prev as u32);
    }
    Ok(out)
}

/// The paths of the tree encoding (`_BuildDecompressedPathsImpl`), by path index: depth-first,
/// each entry's element token (negative: a property) and jump (−1: child only, −2: neither, 0:
/// sibling next, > 0: child next and sibling that many entries on). Iterative, each entry once.
fn build_paths(
    tokens: &[String],
    index: &[u32],
    element: &[u32],
    jumps: &[u32],
) -> std::result::Result<Vec<Option<String>>, String> {
    let n = index.len();
    let mut paths: Vec<Option<String>> = vec![
        None;
        index
            .iter()
            .map(|&i| i as usize + 1)
            .max()
            .unwrap_or(0)
            .min(n.max(1) * 2)
    ];
    let mut visited = vec![false; n];
    // (entry, parent path; None for the root)
    let mut todo: Vec<(usize, Option<String>)> = if n > 0 { vec![(0, None)] } else { Vec::new() };
    while let Some((mut k, mut parent)) = todo.pop() {
        loop {
            if k >= n || std::mem::replace(&mut visited[k], true) {
                return Err(format!("entry {k} is out of the tree or visited twice"));
            }
            let this = match &parent {
                None => "/".to_string(),
                Some(p) => {
                    let e = element[k] as i32;
                    let token = tokens
                        .get(e.unsigned_abs() as usize)
                        .ok_or_else(|| format!("entry {k}: no token {}", e.unsigned_abs()))?;
                    match (e < 0, p.as_str()) {
                        (true, _) => format!("{p}.{token}"),
                        (false, "/") => format!("/{token}"),
                        (false, _) => format!("{p}/{token}"),
                    }
                }
            };
            let slot = paths
                .get_mut(index[k] as usize)
                .ok_or_else(|| format!("entry {k}: path index {} out of range", index[k]))?;
            *slot = Some(this.clone());
            let jump = jumps[k] as i32;
            let (child, sibling) = (jump > 0 || jump == -1, jump >= 0);
            if child && sibling {
                todo.push((k + jump as usize, parent.clone()));
            }
            if child {
                parent = Some(this);
            } else if !sibling {
                break;
            }
            k += 1;
        }
    }
    Ok(paths)
}

/// One decoded spec.
struct SpecRecord {
    path: String,
    /// `SdfSpecType`.
    kind: u32,
    /// (field name, value rep).
    fields: Vec<(String, u64)>,
}

/// The decoded layer: its tokens and specs.
struct Layer {
    tokens: Vec<String>,
    specs: Vec<SpecRecord>,
}

impl Layer {
    fn spec(&self, path: &str, kind: u32) -> Option<&Vec<(String, u64)>> {
        self.specs
            .iter()
            .find(|s| s.path == path && s.kind == kind)
            .map(|s| &s.fields)
    }

    fn field(fields: &[(String, u64)], name: &str) -> Option<u64> {
        fields.iter().find(|f| f.0 == name).map(|f| f.1)
    }

    fn token(&self, r: &CrateReader, rep: u64, what: &str) -> Result<String> {
        if (rep >> 48) & 0xff != TY_TOKEN || rep & INLINED == 0 {
            return Err(r.bad(what, "not a token"));
        }
        self.tokens
            .get((rep & PAYLOAD) as usize)
            .cloned()
            .ok_or_else(|| r.bad(what, "no such token"))
    }

    fn double(r: &mut CrateReader, rep: u64, what: &str) -> Result<f64> {
        if (rep >> 48) & 0xff != TY_DOUBLE || rep & ARRAY != 0 {
            return Err(r.bad(what, "not a double"));
        }
        if rep & INLINED != 0 {
            return Ok(f32::from_bits((rep & PAYLOAD) as u32) as f64);
        }
        let b = r.read_at(rep & PAYLOAD, 8, what)?;
        Ok(f64::from_le_bytes(b.try_into().unwrap_or_default()))
    }

    fn ints(r: &mut CrateReader, rep: u64, what: &str) -> Result<Vec<u32>> {
        if (rep >> 48) & 0xff != TY_INT || rep & ARRAY == 0 || rep & INLINED != 0 {
            return Err(r.bad(what, "not an int array"));
        }
        let at = rep & PAYLOAD;
        let n = r.u64_at(at, what)?;
        if rep & COMPRESSED == 0 {
            let b = r.read_at(at + 8, n.saturating_mul(4), what)?;
            return Ok(b
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect());
        }
        let size = r.u64_at(at + 8, what)?;
        let block = r.read_at(at + 16, size, what)?;
        decode_compressed_ints(&block, n).map_err(|m| r.bad(what, m))
    }

    /// The time samples at `rep`: (times, value reps).
    fn samples(r: &mut CrateReader, rep: u64, what: &str) -> Result<(Vec<f64>, Vec<u64>)> {
        if (rep >> 48) & 0xff != TY_TIME_SAMPLES || rep & (INLINED | ARRAY) != 0 {
            return Err(r.bad(what, "not time samples"));
        }
        let at = rep & PAYLOAD;
        let jump = |r: &mut CrateReader, at: u64| -> Result<u64> {
            let rel = r.u64_at(at, what)? as i64;
            at.checked_add_signed(rel)
                .ok_or_else(|| r.bad(what, "a jump leaves the file"))
        };
        let times_at = jump(r, at)?;
        let times_rep = r.u64_at(times_at, what)?;
        let ty = (times_rep >> 48) & 0xff;
        if !(ty == TY_DOUBLE_VECTOR || ty == TY_DOUBLE && times_rep & ARRAY != 0)
            || times_rep & INLINED != 0
        {
            return Err(r.bad(what, "sample times are not doubles"));
        }
        let t_at = times_rep & PAYLOAD;
        let n = r.u64_at(t_at, what)?;
        let b = r.read_at(t_at + 8, n.saturating_mul(8), what)?;
        let times: Vec<f64> = b
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let values_at = jump(r, times_at + 8)?;
        let m = r.u64_at(values_at, what)?;
        if m != n {
            return Err(r.bad(what, format!("{m} values for {n} sample times")));
        }
        let b = r.read_at(values_at + 8, m.saturating_mul(8), what)?;
        let reps = b
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        Ok((times, reps))
    }

    /// The point-cache mesh: `defaultPrim` (else the first Mesh prim) and its attributes.
    fn mesh(&self, r: &mut CrateReader) -> Result<UsdcMesh> {
        let root = self.spec("/", 7).cloned().unwrap_or_default();
        let default = match Self::field(&root, "defaultPrim") {
            Some(rep) => Some(format!("/{}", self.token(r, rep, "defaultPrim")?)),
            None => None,
        };
        let prim = default
            .filter(|p| self.spec(p, SPEC_PRIM).is_some())
            .or_else(|| {
                self.specs
                    .iter()
                    .find(|s| {
                        s.kind == SPEC_PRIM
                            && Self::field(&s.fields, "typeName").is_some_and(|t| {
                                self.token(r, t, "typeName").is_ok_and(|t| t == "Mesh")
                            })
                    })
                    .map(|s| s.path.clone())
            })
            .ok_or_else(|| r.bad("Mesh", "no Mesh prim: expected the layout clothbake writes"))?;
        let attr = |name: &str| self.spec(&format!("{prim}.{name}"), SPEC_ATTRIBUTE);
        let points = attr("points")
            .and_then(|f| Self::field(f, "timeSamples"))
            .ok_or_else(|| {
                r.bad(
                    "points.timeSamples",
                    "not found: expected the layout clothbake writes",
                )
            })?;
        let (times, reps) = Self::samples(r, points, "points.timeSamples")?;
        let mut samples = Vec::with_capacity(reps.len());
        let mut num_points = None;
        for (k, rep) in reps.into_iter().enumerate() {
            let what = format!("points.timeSamples[{k}]");
            if (rep >> 48) & 0xff != TY_VEC3F
                || rep & ARRAY == 0
                || rep & (INLINED | COMPRESSED) != 0
            {
                return Err(r.bad(what, "not a point3f[] array"));
            }
            let at = rep & PAYLOAD;
            let n = r.u64_at(at, &what)?;
            if n.checked_mul(12)
                .and_then(|b| b.checked_add(at + 8))
                .is_none_or(|end| end > r.len)
            {
                return Err(r.bad(what, format!("{n} points past the end of the file")));
            }
            match num_points {
                None => num_points = Some(n),
                Some(p) if p != n => {
                    return Err(r.bad(what, format!("{n} points, the first sample has {p}")))
                }
                _ => {}
            }
            samples.push(at + 8);
        }
        let num_points = num_points.unwrap_or(0) as usize;
        let faces = match (
            attr("faceVertexCounts").and_then(|f| Self::field(f, "default")),
            attr("faceVertexIndices").and_then(|f| Self::field(f, "default")),
        ) {
            (Some(c), Some(i)) => {
                let counts = Self::ints(r, c, "faceVertexCounts")?;
                let indices = Self::ints(r, i, "faceVertexIndices")?;
                if let Some(&i) = indices.iter().find(|&&i| i as usize >= num_points) {
                    return Err(r.bad(
                        "faceVertexIndices",
                        format!("vertex {i} is out of range: the points have {num_points}"),
                    ));
                }
                let faces =
                    usd_polygons(&counts, &indices).map_err(|m| r.bad("faceVertexIndices", m))?;
                Some(faces)
            }
            _ => None,
        };
        let fps = match Self::field(&root, "timeCodesPerSecond") {
            Some(rep) => Some(Self::double(r, rep, "timeCodesPerSecond")?),
            None => None,
        };
        let start = match Self::field(&root, "startTimeCode") {
            Some(rep) => Some(Self::double(r, rep, "startTimeCode")?),
            None => None,
        };
        let up = match Self::field(&root, "upAxis") {
            Some(rep) => match self.token(r, rep, "upAxis")?.as_str() {
                "Y" => Some(Up::Y),
                "Z" => Some(Up::Z),
                o => return Err(r.bad("upAxis", format!("{o:?}"))),
            },
            None => None,
        };
        Ok(UsdcMesh {
            frame_start: times.first().copied().or(start).unwrap_or(0.0),
            fps,
            up,
            faces,
            num_points,
            samples,
        })
    }
}
