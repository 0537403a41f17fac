//! Any point cache read frame by frame (memory ∝ point count): PC2, MDD, an OBJ sequence (a folder
//! of `<name>.<frame>.obj`, or a pattern `<name>.####.obj`), a USD text layer in the layout
//! clothbake writes (see `cache_usd`) or a USD binary layer ([`crate::usdc_layer`]). Headers are checked as [`crate::read_pc2`] and
//! [`crate::read_mdd`] check them (magic, version, counts, file length); every error names the
//! file and the element (`sample 3`, `points.timeSamples[12]`, `v[7]`). Used by `convert` and
//! `inspect`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use byteorder::{BigEndian, ByteOrder, LittleEndian};
use glam::Vec3;

use crate::cache_size::{describe, expected_len};
use crate::error::{IoError, Result};
use crate::obj_mesh::read_obj;
use crate::scene::Up;
use crate::usdc_layer::read_usdc_mesh;

/// The format of a cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKind {
    Pc2,
    Mdd,
    ObjSeq,
    Usd,
    Usdc,
}

impl CacheKind {
    /// Lower-case name (`pc2`, `mdd`, `obj`, `usd`, `usdc`).
    pub fn name(self) -> &'static str {
        match self {
            CacheKind::Pc2 => "pc2",
            CacheKind::Mdd => "mdd",
            CacheKind::ObjSeq => "obj",
            CacheKind::Usd => "usd",
            CacheKind::Usdc => "usdc",
        }
    }
}

enum Source {
    Binary {
        file: BufReader<File>,
        big_endian: bool,
        buf: Vec<u8>,
    },
    Obj {
        files: Vec<(i32, PathBuf)>,
        /// The first frame's polygons: every frame must have them.
        faces: Vec<Vec<u32>>,
    },
    Usd {
        lines: std::io::Lines<BufReader<File>>,
        line_no: usize,
    },
    /// A binary USD layer: each sample's points at its offset ([`crate::usdc_layer`]).
    Usdc {
        file: File,
        samples: Vec<u64>,
        buf: Vec<u8>,
    },
}

/// A cache opened for reading frame by frame.
pub struct CacheStream {
    /// The file (or the first OBJ frame's folder pattern) errors name.
    pub path: PathBuf,
    pub kind: CacheKind,
    pub num_points: usize,
    pub num_frames: usize,
    /// Scene frame of the first sample (PC2 `startFrame`; MDD `time[0] × fps`; OBJ: the first
    /// file's number; USD: the first time code).
    pub frame_start: f64,
    /// Frames per sample (PC2 `sampleRate`; 1 otherwise).
    pub frame_step: f64,
    /// Frames per second, when the cache says (USD `timeCodesPerSecond`; MDD: from its first two
    /// times).
    pub fps: Option<f64>,
    /// MDD: the time table (seconds).
    pub times: Option<Vec<f32>>,
    /// Polygons (0-based), when the cache has a topology (OBJ sequence, USD).
    pub faces: Option<Vec<Vec<u32>>>,
    /// USD `upAxis`.
    pub up: Option<Up>,
    next: usize,
    source: Source,
}

/// Whether `path` names an OBJ sequence (a folder, or a pattern holding `#`).
pub fn is_obj_sequence(path: &Path) -> bool {
    path.is_dir() || path.to_string_lossy().contains('#')
}

/// Splits an OBJ sequence path into (folder, prefix before the frame number, suffix after it).
/// A folder holds `<prefix>.<digits>.obj` files with one common prefix; a pattern
/// `dir/name.####.obj` gives `("dir", "name.", ".obj")`.
pub fn obj_sequence_parts(path: &Path) -> Result<(PathBuf, String, String)> {
    if path.is_dir() {
        return Ok((path.to_path_buf(), String::new(), ".obj".into()));
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| IoError::invalid(path, "", "an OBJ sequence pattern needs a file name"))?;
    let (a, b) = match (name.find('#'), name.rfind('#')) {
        (Some(a), Some(b)) if name[a..=b].chars().all(|c| c == '#') => (a, b),
        _ => {
            return Err(IoError::invalid(
                path,
                "",
                "expected a pattern like name.####.obj (one run of #)",
            ))
        }
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((dir.to_path_buf(), name[..a].into(), name[b + 1..].into()))
}

fn list_obj_sequence(path: &Path) -> Result<Vec<(i32, PathBuf)>> {
    let (dir, prefix, suffix) = obj_sequence_parts(path)?;
    let rd = std::fs::read_dir(&dir).map_err(|e| IoError::io(&dir, e))?;
    let mut files = Vec::new();
    let mut prefixes = std::collections::BTreeSet::new();
    for entry in rd {
        let entry = entry.map_err(|e| IoError::io(&dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Some(mid) = name
            .strip_prefix(prefix.as_str())
            .and_then(|r| r.strip_suffix(suffix.as_str()))
        else {
            continue;
        };
        // In a folder, the frame number is the last `.`-separated part before `.obj`.
        let (stem, digits) = match mid.rsplit_once('.') {
            Some((s, d)) if path.is_dir() => (s, d),
            _ if path.is_dir() => continue,
            _ => ("", mid),
        };
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Ok(frame) = digits.parse::<i32>() else {
            continue;
        };
        prefixes.insert(stem.to_string());
        files.push((frame, entry.path()));
    }
    if prefixes.len() > 1 {
        return Err(IoError::invalid(
            path,
            "",
            format!(
                "holds several OBJ sequences ({}): name one as name.####.obj",
                prefixes.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    files.sort();
    if files.is_empty() {
        return Err(IoError::invalid(path, "", "no OBJ frames found"));
    }
    for w in files.windows(2) {
        if w[1].0 == w[0].0 {
            return Err(IoError::invalid(
                &w[1].1,
                "",
                format!("frame {} appears twice ({})", w[0].0, w[0].1.display()),
            ));
        }
        if w[1].0 != w[0].0 + 1 {
            return Err(IoError::invalid(
                path,
                "",
                format!(
                    "frames {}..{} are missing (after {})",
                    w[0].0 + 1,
                    w[1].0 - 1,
                    w[0].1.display()
                ),
            ));
        }
    }
    Ok(files)
}

fn file_len(path: &Path, file: &File) -> Result<u64> {
    Ok(file.metadata().map_err(|e| IoError::io(path, e))?.len())
}

impl CacheStream {
    /// Opens `path` by its extension (`.pc2`, `.mdd`, `.usda`/`.usd`) or as an OBJ sequence (a
    /// folder, or a pattern with `#`).
    pub fn open(path: &Path) -> Result<Self> {
        if is_obj_sequence(path) {
            return Self::open_obj_sequence(path);
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "pc2" => Self::open_pc2(path),
            "mdd" => Self::open_mdd(path),
            "usda" | "usd" => Self::open_usda(path),
            "usdc" => Self::open_usdc(path),
            _ => Err(IoError::invalid(
                path,
                "",
                "unknown cache type (expected .pc2, .mdd, .usda, .usdc, a folder of OBJ frames or name.####.obj)",
            )),
        }
    }

    fn base(path: &Path, kind: CacheKind, source: Source) -> Self {
        Self {
            path: path.to_path_buf(),
            kind,
            num_points: 0,
            num_frames: 0,
            frame_start: 0.0,
            frame_step: 1.0,
            fps: None,
            times: None,
            faces: None,
            up: None,
            next: 0,
            source,
        }
    }

    fn open_pc2(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| IoError::io(path, e))?;
        let len = file_len(path, &file)?;
        let mut r = BufReader::with_capacity(1 << 16, file);
        let mut h = [0u8; 32];
        if len < 32 {
            return Err(IoError::parse(
                path,
                "header",
                format!("truncated: {len} bytes, the header has 32"),
            ));
        }
        r.read_exact(&mut h).map_err(|e| IoError::io(path, e))?;
        if &h[..12] != b"POINTCACHE2\0" {
            return Err(IoError::parse(
                path,
                "header",
                "not a PC2 file (no \"POINTCACHE2\" magic)",
            ));
        }
        let version = LittleEndian::read_i32(&h[12..16]);
        if version != 1 {
            return Err(IoError::parse(
                path,
                "version",
                format!("unsupported version {version}"),
            ));
        }
        let np = LittleEndian::read_i32(&h[16..20]);
        let ns = LittleEndian::read_i32(&h[28..32]);
        if np < 0 || ns < 0 {
            return Err(IoError::parse(
                path,
                "header",
                format!("negative counts ({np} points, {ns} samples)"),
            ));
        }
        if np == 0 && ns > 0 {
            // Nothing in the file bounds the sample count then: refuse it before anything is sized
            // by it.
            return Err(IoError::parse(
                path,
                "header",
                format!("{ns} samples of 0 points"),
            ));
        }
        let expected = expected_len(32, ns as u64, np as u64);
        if expected != Some(len) {
            return Err(IoError::parse(
                path,
                "data",
                format!(
                    "{len} bytes, but {ns} samples of {np} points need {}",
                    describe(expected)
                ),
            ));
        }
        let mut s = Self::base(
            path,
            CacheKind::Pc2,
            Source::Binary {
                file: r,
                big_endian: false,
                buf: Vec::new(),
            },
        );
        s.num_points = np as usize;
        s.num_frames = ns as usize;
        s.frame_start = LittleEndian::read_f32(&h[20..24]) as f64;
        s.frame_step = LittleEndian::read_f32(&h[24..28]) as f64;
        Ok(s)
    }

    fn open_mdd(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| IoError::io(path, e))?;
        let len = file_len(path, &file)?;
        let mut r = BufReader::with_capacity(1 << 16, file);
        if len < 8 {
            return Err(IoError::parse(
                path,
                "header",
                format!("truncated: {len} bytes, the header has 8"),
            ));
        }
        let mut h = [0u8; 8];
        r.read_exact(&mut h).map_err(|e| IoError::io(path, e))?;
        let nf = BigEndian::read_i32(&h[0..4]);
        let np = BigEndian::read_i32(&h[4..8]);
        if nf < 0 || np < 0 {
            return Err(IoError::parse(
                path,
                "header",
                format!("negative counts ({nf} frames, {np} points)"),
            ));
        }
        let expected = expected_len(8 + 4 * nf as u64, nf as u64, np as u64);
        if expected != Some(len) {
            return Err(IoError::parse(
                path,
                "data",
                format!(
                    "{len} bytes, but {nf} frames of {np} points need {}",
                    describe(expected)
                ),
            ));
        }
        let mut tb = vec![0u8; 4 * nf as usize];
        r.read_exact(&mut tb).map_err(|e| IoError::io(path, e))?;
        let mut times = vec![0.0f32; nf as usize];
        BigEndian::read_f32_into(&tb, &mut times);
        let mut s = Self::base(
            path,
            CacheKind::Mdd,
            Source::Binary {
                file: r,
                big_endian: true,
                buf: Vec::new(),
            },
        );
        s.num_points = np as usize;
        s.num_frames = nf as usize;
        if times.len() >= 2 && times[1] > times[0] {
            // The writer's times are f32 of (frame / fps): recover fps to 1/1000.
            let fps = (1000.0 / (times[1] as f64 - times[0] as f64)).round() / 1000.0;
            s.fps = Some(fps);
            s.frame_start = (times[0] as f64 * fps).round();
        }
        s.times = Some(times);
        Ok(s)
    }

    fn open_obj_sequence(path: &Path) -> Result<Self> {
        let files = list_obj_sequence(path)?;
        let first = read_obj(&files[0].1)?;
        let (num_frames, frame_start) = (files.len(), files[0].0 as f64);
        let faces = first.faces.clone();
        let mut s = Self::base(path, CacheKind::ObjSeq, Source::Obj { files, faces });
        s.num_frames = num_frames;
        s.frame_start = frame_start;
        s.num_points = first.positions.len();
        s.faces = Some(first.faces);
        Ok(s)
    }

    fn open_usdc(path: &Path) -> Result<Self> {
        let (mesh, file) = read_usdc_mesh(path)?;
        let num_frames = mesh.samples.len();
        let source = Source::Usdc {
            file,
            samples: mesh.samples,
            buf: Vec::new(),
        };
        let mut s = Self::base(path, CacheKind::Usdc, source);
        s.num_frames = num_frames;
        s.num_points = mesh.num_points;
        s.frame_start = mesh.frame_start;
        s.fps = mesh.fps;
        s.up = mesh.up;
        s.faces = mesh.faces;
        Ok(s)
    }

    fn open_usda(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| IoError::io(path, e))?;
        let mut lines = BufReader::with_capacity(1 << 16, file).lines();
        let mut line_no = 0usize;
        let mut s_start = None;
        let mut fps = None;
        let mut up = None;
        let mut counts: Option<Vec<u32>> = None;
        let mut indices: Option<Vec<u32>> = None;
        let bad =
            |line_no: usize, msg: String| IoError::parse(path, format!("line {line_no}"), msg);
        let mut first = true;
        loop {
            let Some(line) = lines.next() else {
                return Err(IoError::parse(
                    path,
                    "points.timeSamples",
                    "not found: expected the layout clothbake writes (one Mesh with point3f[] points.timeSamples)",
                ));
            };
            line_no += 1;
            let line = line.map_err(|e| IoError::io(path, e))?;
            let t = line.trim();
            if first {
                first = false;
                if !t.starts_with("#usda") {
                    return Err(bad(
                        line_no,
                        "not a USD text layer (no #usda header; binary .usdc is not read: convert it with usdcat first)".into(),
                    ));
                }
                continue;
            }
            let value = |key: &str| t.strip_prefix(key).and_then(|r| r.trim().strip_prefix('='));
            if let Some(v) = value("startTimeCode") {
                s_start = Some(
                    v.trim()
                        .parse::<f64>()
                        .map_err(|_| bad(line_no, format!("startTimeCode {v:?}")))?,
                );
            } else if let Some(v) = value("timeCodesPerSecond") {
                fps = Some(
                    v.trim()
                        .parse::<f64>()
                        .map_err(|_| bad(line_no, format!("timeCodesPerSecond {v:?}")))?,
                );
            } else if let Some(v) = value("upAxis") {
                up = match v.trim() {
                    "\"Y\"" => Some(Up::Y),
                    "\"Z\"" => Some(Up::Z),
                    o => return Err(bad(line_no, format!("upAxis {o}"))),
                };
            } else if let Some(v) = value("int[] faceVertexCounts") {
                counts = Some(
                    parse_int_list(v)
                        .map_err(|m| bad(line_no, format!("faceVertexCounts: {m}")))?,
                );
            } else if let Some(v) = value("int[] faceVertexIndices") {
                indices = Some(
                    parse_int_list(v)
                        .map_err(|m| bad(line_no, format!("faceVertexIndices: {m}")))?,
                );
            } else if t.starts_with("point3f[] points.timeSamples") {
                break;
            }
        }
        let faces = match (counts, indices) {
            (Some(c), Some(i)) => Some(
                usd_polygons(&c, &i).map_err(|m| IoError::parse(path, "faceVertexIndices", m))?,
            ),
            _ => None,
        };
        // Count the samples and points in a first pass over the dictionary (streamed).
        let (num_frames, num_points, first_time) = {
            let file = File::open(path).map_err(|e| IoError::io(path, e))?;
            let mut frames = 0usize;
            let mut points = None;
            let mut first_time = None;
            for (k, line) in BufReader::with_capacity(1 << 16, file)
                .lines()
                .enumerate()
                .skip(line_no)
            {
                let line = line.map_err(|e| IoError::io(path, e))?;
                let t = line.trim();
                if t.starts_with('}') {
                    break;
                }
                let (time, n) = sample_header(t).map_err(|m| bad(k + 1, m))?;
                first_time.get_or_insert(time);
                match points {
                    None => points = Some(n),
                    Some(p) if p != n => {
                        return Err(IoError::parse(
                            path,
                            format!("points.timeSamples[{time}]"),
                            format!("{n} points, the first sample has {p}"),
                        ))
                    }
                    _ => {}
                }
                frames += 1;
            }
            (frames, points.unwrap_or(0), first_time)
        };
        let mut s = Self::base(path, CacheKind::Usd, Source::Usd { lines, line_no });
        s.num_frames = num_frames;
        s.num_points = num_points;
        s.frame_start = first_time.or(s_start).unwrap_or(0.0);
        s.fps = fps;
        s.up = up;
        if let Some(f) = &faces {
            if let Some(&i) = f.iter().flatten().find(|&&i| i as usize >= num_points) {
                return Err(IoError::parse(
                    path,
                    "faceVertexIndices",
                    format!("vertex {i} is out of range: the points have {num_points}"),
                ));
            }
        }
        s.faces = faces;
        Ok(s)
    }

    /// Reads the next frame into `out` (resized to the point count). Call `num_frames` times.
    pub fn next_frame(&mut self, out: &mut Vec<Vec3>) -> Result<()> {
        let k = self.next;
        if k >= self.num_frames {
            return Err(IoError::invalid(&self.path, "", "read past the last frame"));
        }
        out.clear();
        let n = self.num_points;
        match &mut self.source {
            Source::Binary {
                file,
                big_endian,
                buf,
            } => {
                buf.resize(n * 12, 0);
                let elem = if *big_endian { "frame" } else { "sample" };
                file.read_exact(buf).map_err(|e| {
                    IoError::parse(&self.path, format!("{elem} {k}"), e.to_string())
                })?;
                for c in buf.chunks_exact(12) {
                    let r = |o: usize| {
                        if *big_endian {
                            BigEndian::read_f32(&c[o..])
                        } else {
                            LittleEndian::read_f32(&c[o..])
                        }
                    };
                    out.push(Vec3::new(r(0), r(4), r(8)));
                }
            }
            Source::Obj { files, faces } => {
                let (_, file) = &files[k];
                let m = read_obj(file)?;
                if m.positions.len() != n {
                    return Err(IoError::invalid(
                        file,
                        "v",
                        format!("{} vertices, the first frame has {n}", m.positions.len()),
                    ));
                }
                if *faces != m.faces {
                    return Err(IoError::invalid(
                        file,
                        "f",
                        "the faces differ from the first frame's",
                    ));
                }
                out.extend_from_slice(&m.positions);
            }
            Source::Usdc { file, samples, buf } => {
                buf.resize(n * 12, 0);
                let field = format!("points.timeSamples[{k}]");
                file.seek(SeekFrom::Start(samples[k]))
                    .and_then(|_| file.read_exact(buf))
                    .map_err(|e| IoError::parse(&self.path, field, e.to_string()))?;
                for c in buf.chunks_exact(12) {
                    let r = |o: usize| LittleEndian::read_f32(&c[o..]);
                    out.push(Vec3::new(r(0), r(4), r(8)));
                }
            }
            Source::Usd { lines, line_no } => {
                let line = lines
                    .next()
                    .ok_or_else(|| IoError::parse(&self.path, "points.timeSamples", "ends early"))?
                    .map_err(|e| IoError::io(&self.path, e))?;
                *line_no += 1;
                let field = format!("points.timeSamples (line {line_no})");
                parse_sample(line.trim(), out)
                    .map_err(|m| IoError::parse(&self.path, field.clone(), m))?;
                if out.len() != n {
                    return Err(IoError::parse(
                        &self.path,
                        field,
                        format!("{} points, expected {n}", out.len()),
                    ));
                }
            }
        }
        self.next += 1;
        Ok(())
    }
}

/// A USD mesh's polygons from its `faceVertexCounts` and `faceVertexIndices`, which must agree.
pub(crate) fn usd_polygons(
    counts: &[u32],
    indices: &[u32],
) -> std::result::Result<Vec<Vec<u32>>, String> {
    let total: u64 = counts.iter().map(|&n| n as u64).sum();
    if total != indices.len() as u64 {
        return Err(format!(
            "{} indices, faceVertexCounts add up to {total}",
            indices.len()
        ));
    }
    let mut faces = Vec::with_capacity(counts.len());
    let mut k = 0usize;
    for &n in counts {
        faces.push(indices[k..k + n as usize].to_vec());
        k += n as usize;
    }
    Ok(faces)
}

fn parse_int_list(v: &str) -> std::result::Result<Vec<u32>, String> {
    let inner = v
        .trim()
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or("expected [a, b, ...] on one line")?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<u32>()
                .map_err(|_| format!("bad integer {x:?}"))
        })
        .collect()
}

/// `T: [(x, y, z), ...],` → (T, number of points), without parsing the floats.
fn sample_header(t: &str) -> std::result::Result<(f64, usize), String> {
    let (time, rest) = t.split_once(':').ok_or("expected `time: [points]`")?;
    let time: f64 = time
        .trim()
        .parse()
        .map_err(|_| format!("bad time code {time:?}"))?;
    let rest = rest.trim();
    if !rest.starts_with('[') {
        return Err(format!("time code {time}: expected [points] on one line"));
    }
    Ok((time, rest.matches('(').count()))
}

fn parse_f32(x: &str) -> std::result::Result<f32, String> {
    match x.trim() {
        "nan" => Ok(f32::NAN),
        "inf" => Ok(f32::INFINITY),
        "-inf" => Ok(f32::NEG_INFINITY),
        t => t.parse::<f32>().map_err(|_| format!("bad number {t:?}")),
    }
}

fn parse_sample(t: &str, out: &mut Vec<Vec3>) -> std::result::Result<(), String> {
    let (time, rest) = t.split_once(':').ok_or("expected `time: [points]`")?;
    let body = rest
        .trim()
        .trim_end_matches(',')
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| format!("time code {}: expected [points] on one line", time.trim()))?;
    for tuple in body.split('(').skip(1) {
        let inner = tuple
            .split(')')
            .next()
            .ok_or_else(|| format!("time code {}: unclosed (", time.trim()))?;
        let mut it = inner.split(',');
        let mut c = [0.0f32; 3];
        for v in &mut c {
            *v = parse_f32(it.next().ok_or("a point needs 3 numbers")?)
                .map_err(|m| format!("time code {}: {m}", time.trim()))?;
        }
        if it.next().is_some() {
            return Err(format!(
                "time code {}: a point has more than 3 numbers",
                time.trim()
            ));
        }
        out.push(Vec3::from_array(c));
    }
    Ok(())
}
