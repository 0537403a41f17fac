//! The fuzz targets: each reads one (possibly broken) file the way clothbake does, uses what it
//! got (a loaded scene is evaluated at a few frames), and checks that an error names the file.
//! Each returns whether the input was accepted.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use clothbake_io::cache_usdc::UsdcWriter;
use clothbake_io::gltf_mesh::read_mesh_node;
use clothbake_io::gltf_rig::GltfRig;
use clothbake_io::obj_mesh::read_obj;
use clothbake_io::proxies_auto::auto_proxies;
use clothbake_io::proxies_marked::marked_proxies;
use clothbake_io::{
    load_scene, read_checkpoint, read_mdd, read_pc2, write_checkpoint, IoError, MddWriter,
    Pc2Writer, Space, Up,
};
use glam::Vec3;

/// The solver's material presets (the io crate does not depend on the solver).
const PRESETS: &[&str] = &[
    "cotton", "silk", "denim", "leather", "jersey", "knit", "wool",
];

/// An error must name a file inside `dir` (the input or the scene that refers to it).
fn names_file(e: &IoError, dir: &Path) {
    let text = e.to_string();
    assert!(
        e.file.starts_with(dir) && text.contains(&e.file.display().to_string()),
        "error does not name the file: {text}"
    );
    assert!(!text.contains("panicked"), "{text}");
}

fn folder(p: &Path) -> &Path {
    p.parent().unwrap_or(Path::new(""))
}

/// Seeds written by clothbake's own writers.
pub struct CacheSeeds {
    pub pc2: Vec<Vec<u8>>,
    pub mdd: Vec<Vec<u8>>,
    /// Binary USD layers (the sections compressed, the topology compressed from 16 ints on).
    pub usdc: Vec<Vec<u8>>,
    pub checkpoint: Vec<Vec<u8>>,
}

pub fn cache_seeds() -> &'static CacheSeeds {
    static SEEDS: OnceLock<CacheSeeds> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let frames = |points: usize, n: usize| -> Vec<Vec<Vec3>> {
            (0..n)
                .map(|f| {
                    (0..points)
                        .map(|i| Vec3::new(i as f32, f as f32 * 0.5, -(i as f32) * 0.25))
                        .collect()
                })
                .collect()
        };
        let mut pc2 = Vec::new();
        let mut mdd = Vec::new();
        for (points, n) in [(1, 1), (3, 2), (7, 5), (0, 0)] {
            let p = tmp.path().join(format!("s{points}-{n}.pc2"));
            let mut w = Pc2Writer::create(&p, points, 1.0, 1.0).unwrap();
            for f in frames(points, n) {
                w.write_frame(&f).unwrap();
            }
            w.finish().unwrap();
            pc2.push(std::fs::read(&p).unwrap());
            let p = tmp.path().join(format!("s{points}-{n}.mdd"));
            let mut w = MddWriter::create(&p, points, &MddWriter::scene_times(1, n, 24.0)).unwrap();
            for f in frames(points, n) {
                w.write_frame(&f).unwrap();
            }
            w.finish().unwrap();
            mdd.push(std::fs::read(&p).unwrap());
        }
        let mut usdc = Vec::new();
        for (points, n, quads) in [(4, 2, 1), (9, 3, 4), (25, 2, 16)] {
            let p = tmp.path().join(format!("s{points}-{n}.usdc"));
            let side = (points as f64).sqrt() as u32;
            let faces: Vec<Vec<u32>> = (0..quads as u32)
                .map(|q| {
                    let (i, j) = (q % (side - 1), q / (side - 1));
                    let a = j * side + i;
                    vec![a, a + 1, a + side + 1, a + side]
                })
                .collect();
            let info = clothbake_io::UsdLayerInfo {
                frame_start: 3,
                num_frames: n,
                fps: 24.0,
                up: Up::Y,
            };
            let mut w = UsdcWriter::create(&p, "sheet", points, &faces, info).unwrap();
            for f in frames(points, n) {
                w.write_frame(&f).unwrap();
            }
            w.finish().unwrap();
            usdc.push(std::fs::read(&p).unwrap());
        }
        let mut checkpoint = Vec::new();
        for payload in [
            &b""[..],
            b"{\"frame\": 12, \"state\": {\"x\": [[0.0, 1.0, 2.0]]}}",
        ] {
            let p = tmp.path().join("checkpoint");
            write_checkpoint(&p, payload).unwrap();
            checkpoint.push(std::fs::read(&p).unwrap());
        }
        CacheSeeds {
            pc2,
            mdd,
            usdc,
            checkpoint,
        }
    })
}

/// The streaming reader (`convert`, `inspect`) over the same bytes: every frame read, or an error
/// naming the file; never a panic or an allocation sized by an unchecked header.
fn check_stream(p: &Path) {
    match clothbake_io::cache_stream::CacheStream::open(p) {
        Ok(mut s) => {
            let mut frame = Vec::new();
            for _ in 0..s.num_frames {
                if let Err(e) = s.next_frame(&mut frame) {
                    names_file(&e, folder(p));
                    return;
                }
                assert_eq!(frame.len(), s.num_points);
            }
        }
        Err(e) => names_file(&e, folder(p)),
    }
}

/// A binary USD layer through the streaming reader; whether it was accepted.
pub fn check_usdc(p: &Path) -> bool {
    check_stream(p);
    clothbake_io::cache_stream::CacheStream::open(p).is_ok()
}

pub fn check_pc2(p: &Path) -> bool {
    check_stream(p);
    match read_pc2(p) {
        Ok(c) => {
            assert!(c.frames.iter().all(|f| f.len() == c.num_points));
            assert!(c.frames.iter().flatten().all(|x| x.is_finite()));
            true
        }
        Err(e) => {
            names_file(&e, folder(p));
            false
        }
    }
}

pub fn check_mdd(p: &Path) -> bool {
    check_stream(p);
    match read_mdd(p) {
        Ok(c) => {
            assert_eq!(c.times.len(), c.frames.len());
            assert!(c.frames.iter().all(|f| f.len() == c.num_points));
            assert!(c.frames.iter().flatten().all(|x| x.is_finite()));
            true
        }
        Err(e) => {
            names_file(&e, folder(p));
            false
        }
    }
}

pub fn check_checkpoint(p: &Path) -> bool {
    match read_checkpoint(p) {
        Ok(_) => true,
        Err(e) => {
            names_file(&e, folder(p));
            false
        }
    }
}

pub fn check_obj(p: &Path) -> bool {
    match read_obj(p) {
        Ok(m) => {
            let n = m.positions.len();
            assert!(m
                .triangles
                .iter()
                .flatten()
                .chain(m.faces.iter().flatten())
                .all(|&i| (i as usize) < n));
            true
        }
        Err(e) => {
            names_file(&e, folder(p));
            false
        }
    }
}

/// Opens a glTF file as a character and as garment meshes: every mesh node, every animation, both
/// kinds of proxies, and the node graph posed at a few times.
pub fn check_gltf(p: &Path) -> bool {
    let dir = folder(p);
    let rig = match GltfRig::open(p) {
        Ok(r) => r,
        Err(e) => {
            names_file(&e, dir);
            return false;
        }
    };
    // Accepted: the file opens, and its animations and meshes read (pin attributes and proxies
    // are optional).
    let mut accepted = true;
    for i in 0..rig.animation_names().len() {
        if let Err(e) = rig.read_animation(i) {
            names_file(&e, dir);
            accepted = false;
        }
    }
    for node in rig.doc.document.nodes() {
        if node.mesh().is_some() {
            for pin in [None, Some("_PIN"), Some("COLOR_0")] {
                if let Err(e) = read_mesh_node(&rig.doc, &node, pin) {
                    names_file(&e, dir);
                    accepted &= pin.is_some();
                }
            }
        }
    }
    if let Err(e) = marked_proxies(&rig, 0.01) {
        names_file(&e, dir);
    }
    if let Err(e) = auto_proxies(&rig, None, 0.0) {
        names_file(&e, dir);
    }
    let mut m = Vec::new();
    for t in [-1.0, 0.0, 0.37, 1e6] {
        rig.world_matrices(t, &mut m);
    }
    accepted
}

/// Loads a scene (and everything it references) and evaluates colliders, pins and output frames
/// at the first frames, as `check` and `bake` would.
pub fn check_scene(p: &Path) -> bool {
    let mut scene = match load_scene(p, PRESETS) {
        Ok(s) => s,
        Err(e) => {
            names_file(&e, folder(p));
            return false;
        }
    };
    // The frame arithmetic must not have wrapped (release builds do not check overflow).
    let (start, end) = (scene.frame_start as i64, scene.frame_end as i64);
    assert!(end >= start, "frame_end {end} < frame_start {start}");
    assert_eq!(scene.num_frames() as i64, end - start + 1);
    assert_eq!(
        scene.first_simulated_frame() as i64,
        start - scene.preroll.frames as i64
    );
    let first = scene.first_simulated_frame();
    let last = scene.frame_end.min(first.saturating_add(3));
    let mut shapes = Vec::new();
    let mut pins = Vec::new();
    let mut out = Vec::new();
    let _ = scene.num_frames();
    for frame in first..=last {
        scene.colliders.shapes_at(frame as f32, &mut shapes);
        for g in &scene.garments {
            g.pin_targets(frame as f32, &mut pins);
            let sim: Vec<Vec3> = g.rest_shape().to_vec();
            g.output_frame(&sim, Vec3::ZERO, frame, Space::World, Up::Y, &mut out);
            g.output_frame(&sim, Vec3::ZERO, frame, Space::Local, Up::Z, &mut out);
        }
    }
    true
}

/// A copy of a sample's folder in a temporary folder, with a small driver cache (`drv.pc2`,
/// `drv.mdd`) a damaged scene may point at.
pub struct SampleCopy {
    tmp: tempfile::TempDir,
}

impl SampleCopy {
    pub fn new(sample: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../samples")
            .join(sample);
        for entry in std::fs::read_dir(&src).unwrap() {
            let p = entry.unwrap().path();
            std::fs::copy(&p, tmp.path().join(p.file_name().unwrap())).unwrap();
        }
        let seeds = cache_seeds();
        std::fs::write(tmp.path().join("drv.pc2"), &seeds.pc2[2]).unwrap();
        std::fs::write(tmp.path().join("drv.mdd"), &seeds.mdd[2]).unwrap();
        SampleCopy { tmp }
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.tmp.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    pub fn scene(&self) -> PathBuf {
        self.tmp.path().join("scene.toml")
    }
}

/// Runs `f` on an input; if it panics and `CLOTHBAKE_FUZZ_DUMP` names a folder, the input is kept
/// there as `<name>` first (the last one written is the shrunk input proptest reports), ready to
/// be added to the corpus.
pub fn guarded(name: &str, bytes: &[u8], f: impl FnOnce()) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    if let Err(panic) = r {
        if let Some(dir) = std::env::var_os("CLOTHBAKE_FUZZ_DUMP") {
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(Path::new(&dir).join(name), bytes);
        }
        std::panic::resume_unwind(panic);
    }
}
