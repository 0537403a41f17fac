//! `clothbake convert IN OUT`: a point cache from one format to another (PC2, MDD, OBJ sequence,
//! USD), streamed frame by frame. OBJ and USD outputs need a topology: the input's own (OBJ
//! sequence, USD), `--mesh` (OBJ or glTF with one mesh node) or a scene's garment. Bad input exits
//! 2 with the file and element named; the output appears only when complete (atomic writers).

use std::path::{Path, PathBuf};

use clothbake_io::cache_obj_seq::ObjSeqWriter;
use clothbake_io::cache_stream::obj_sequence_parts;
use clothbake_io::cache_usdc::UsdcWriter;
use clothbake_io::gltf_document::GltfDocument;
use clothbake_io::gltf_mesh::read_mesh_node;
use clothbake_io::obj_mesh::read_obj;
use clothbake_io::{
    load_scene, CacheKind, CacheStream, IoError, MddWriter, Pc2Writer, Up, UsdLayerInfo, UsdWriter,
};
use glam::Vec3;
use serde_json::json;

use crate::cli::ConvertArgs;
use crate::error::{CliError, Result};
use crate::scene_to_solver::material_presets;

/// Where the output goes.
enum Target {
    Pc2(PathBuf),
    Mdd(PathBuf),
    Usd(PathBuf),
    Usdc(PathBuf),
    /// Folder and garment name of `<name>.<frame:04>.obj` files.
    Obj(PathBuf, String),
}

/// A topology and where it came from (for messages).
struct Topology {
    faces: Vec<Vec<u32>>,
    num_points: usize,
    from: PathBuf,
}

enum Writer {
    Pc2(Pc2Writer),
    Mdd(MddWriter),
    Usd(UsdWriter),
    Usdc(UsdcWriter),
    Obj(ObjSeqWriter, i32),
}

fn input_err(e: IoError) -> CliError {
    CliError::Input(e.to_string())
}

fn output_err(e: IoError) -> CliError {
    CliError::Output(e.to_string())
}

fn stem(path: &Path) -> String {
    let s = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("garment");
    // `name.####` (a pattern) or `name.0001` keeps only `name`.
    s.split('.').next().unwrap_or(s).to_string()
}

fn target(out: &Path, input: &Path, garment: Option<&str>) -> Result<Target> {
    let s = out.to_string_lossy();
    if s.contains('#') {
        let (dir, prefix, suffix) = obj_sequence_parts(out).map_err(input_err)?;
        let hashes = s.chars().filter(|&c| c == '#').count();
        let name = prefix.strip_suffix('.').filter(|n| !n.is_empty());
        return match (name, suffix.as_str(), hashes) {
            (Some(name), ".obj", 4) => Ok(Target::Obj(dir, name.to_string())),
            _ => Err(CliError::input(
                out,
                "an OBJ sequence output is written as NAME.####.obj (four #) or a folder",
            )),
        };
    }
    if out.is_dir() || s.ends_with('/') {
        let name = garment.map_or_else(|| stem(input), str::to_string);
        return Ok(Target::Obj(out.to_path_buf(), name));
    }
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "pc2" => Ok(Target::Pc2(out.to_path_buf())),
        "mdd" => Ok(Target::Mdd(out.to_path_buf())),
        "usda" | "usd" => Ok(Target::Usd(out.to_path_buf())),
        "usdc" => Ok(Target::Usdc(out.to_path_buf())),
        _ => Err(CliError::input(
            out,
            "unknown output type (expected .pc2, .mdd, .usda/.usd, .usdc, NAME.####.obj or a folder/)",
        )),
    }
}

/// The topology of `--mesh`: an OBJ's polygons, or a glTF's single mesh node.
fn mesh_topology(mesh: &Path) -> Result<Topology> {
    let ext = mesh
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let source = match ext.as_str() {
        "obj" => read_obj(mesh).map_err(input_err)?,
        "glb" | "gltf" => {
            let doc = GltfDocument::open(mesh).map_err(input_err)?;
            let nodes: Vec<_> = doc
                .document
                .nodes()
                .filter(|n| n.mesh().is_some())
                .collect();
            if nodes.len() != 1 {
                return Err(CliError::input(
                    mesh,
                    format!(
                        "{} nodes with a mesh: --mesh needs exactly one (use --scene SCENE --garment NAME)",
                        nodes.len()
                    ),
                ));
            }
            read_mesh_node(&doc, &nodes[0], None)
                .map_err(input_err)?
                .source
        }
        _ => {
            return Err(CliError::input(
                mesh,
                "--mesh: expected an .obj, .glb or .gltf file",
            ))
        }
    };
    Ok(Topology {
        num_points: source.positions.len(),
        faces: source.faces,
        from: mesh.to_path_buf(),
    })
}

pub fn run(args: &ConvertArgs) -> Result<()> {
    let mut input = CacheStream::open(&args.input).map_err(input_err)?;
    let target = target(&args.output, &args.input, args.garment.as_deref())?;

    // Settings a scene gives: fps, up and the garment's topology.
    let mut scene_fps = None;
    let mut scene_up = None;
    let mut topology = None;
    if let Some(mesh) = &args.mesh {
        topology = Some(mesh_topology(mesh)?);
    }
    if let (Some(scene_path), Some(name)) = (&args.scene, &args.garment) {
        let scene = load_scene(scene_path, &material_presets()).map_err(input_err)?;
        let g = scene
            .garments
            .iter()
            .find(|g| &g.spec.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = scene
                    .garments
                    .iter()
                    .map(|g| g.spec.name.as_str())
                    .collect();
                CliError::input(
                    scene_path,
                    format!(
                        "--garment {name:?}: no such garment (the scene has {})",
                        names.join(", ")
                    ),
                )
            })?;
        scene_fps = Some(scene.clock.fps as f64);
        scene_up = Some(scene.file.output.up);
        topology = Some(Topology {
            faces: g.source_faces.clone(),
            num_points: g.num_source_vertices(),
            from: scene_path.clone(),
        });
    }
    if topology.is_none() {
        if let Some(faces) = input.faces.take() {
            topology = Some(Topology {
                faces,
                num_points: input.num_points,
                from: args.input.clone(),
            });
        }
    }
    if let Some(t) = &topology {
        if t.num_points != input.num_points {
            return Err(CliError::input(
                &t.from,
                format!(
                    "the topology has {} vertices, the cache {} has {} points",
                    t.num_points,
                    args.input.display(),
                    input.num_points
                ),
            ));
        }
    }
    let fps = args
        .fps
        .map(f64::from)
        .or(scene_fps)
        .or(input.fps)
        .unwrap_or(24.0);
    let up = match args.up.as_deref() {
        Some("z") => Up::Z,
        Some(_) => Up::Y,
        None => scene_up.or(input.up).unwrap_or(Up::Y),
    };
    let n = input.num_points;
    let frames = input.num_frames;
    let whole_frames = input.frame_step == 1.0 && input.frame_start.fract() == 0.0;
    let needs_topology = |what: &str| -> Result<&Topology> {
        topology.as_ref().ok_or_else(|| {
            CliError::input(
                &args.input,
                format!(
                    "has no topology: {what} output needs one (--mesh MESH or --scene SCENE --garment NAME)"
                ),
            )
        })
    };
    let whole = |what: &str| -> Result<i32> {
        if !whole_frames || input.frame_start.abs() > 1e9 {
            return Err(CliError::input(
                &args.input,
                format!(
                    "starts at frame {} with {} frames per sample: {what} output needs whole frames",
                    input.frame_start, input.frame_step
                ),
            ));
        }
        Ok(input.frame_start as i32)
    };
    match &target {
        Target::Usd(_) | Target::Usdc(_) => {
            needs_topology("USD")?;
            whole("USD")?;
        }
        Target::Obj(..) => {
            needs_topology("OBJ")?;
            whole("OBJ")?;
        }
        _ => {}
    }
    // The output's folder, created like bake's (after every input check).
    let out_dir = match &target {
        Target::Pc2(p) | Target::Mdd(p) | Target::Usd(p) | Target::Usdc(p) => {
            p.parent().map(Path::to_path_buf)
        }
        Target::Obj(dir, _) => Some(dir.clone()),
    };
    if let Some(dir) = out_dir.filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(&dir).map_err(|e| CliError::Write {
            path: dir.clone(),
            source: e,
        })?;
    }
    // A USD layer's topology, header values and prim name.
    let usd_target = |p: &Path| -> Result<(&Topology, UsdLayerInfo, String)> {
        let info = UsdLayerInfo {
            frame_start: whole("USD")?,
            num_frames: frames,
            fps: fps as f32,
            up,
        };
        let name = args.garment.clone().unwrap_or_else(|| stem(p));
        Ok((needs_topology("USD")?, info, name))
    };
    let mut writer = match &target {
        Target::Pc2(p) => Writer::Pc2(
            Pc2Writer::create(p, n, input.frame_start as f32, input.frame_step as f32)
                .map_err(output_err)?,
        ),
        Target::Mdd(p) => {
            let times: Vec<f32> = match (&input.times, args.fps) {
                (Some(t), None) => t.clone(),
                _ => (0..frames)
                    .map(|i| ((input.frame_start + i as f64 * input.frame_step) / fps) as f32)
                    .collect(),
            };
            Writer::Mdd(MddWriter::create(p, n, &times).map_err(output_err)?)
        }
        Target::Usd(p) => {
            let (t, info, name) = usd_target(p)?;
            Writer::Usd(UsdWriter::create(p, &name, n, &t.faces, info).map_err(output_err)?)
        }
        Target::Usdc(p) => {
            let (t, info, name) = usd_target(p)?;
            Writer::Usdc(UsdcWriter::create(p, &name, n, &t.faces, info).map_err(output_err)?)
        }
        Target::Obj(dir, name) => {
            let t = needs_topology("OBJ")?;
            let start = whole("OBJ")?;
            Writer::Obj(ObjSeqWriter::new(dir, name, n, &t.faces), start)
        }
    };
    let mut buf: Vec<Vec3> = Vec::with_capacity(n);
    for _ in 0..frames {
        input.next_frame(&mut buf).map_err(input_err)?;
        match &mut writer {
            Writer::Pc2(w) => w.write_frame(&buf),
            Writer::Mdd(w) => w.write_frame(&buf),
            Writer::Usd(w) => w.write_frame(&buf),
            Writer::Usdc(w) => w.write_frame(&buf),
            Writer::Obj(w, next) => {
                *next += 1;
                w.write_frame(*next - 1, &buf)
            }
        }
        .map_err(output_err)?;
    }
    let files: Vec<PathBuf> = match writer {
        Writer::Pc2(w) => vec![w.finish().map_err(output_err)?],
        Writer::Mdd(w) => vec![w.finish().map_err(output_err)?],
        Writer::Usd(w) => vec![w.finish().map_err(output_err)?],
        Writer::Usdc(w) => vec![w.finish().map_err(output_err)?],
        Writer::Obj(w, _) => w.finish().map_err(output_err)?,
    };
    let out_kind = match target {
        Target::Pc2(_) => CacheKind::Pc2.name(),
        Target::Mdd(_) => CacheKind::Mdd.name(),
        Target::Usd(_) => CacheKind::Usd.name(),
        Target::Usdc(_) => CacheKind::Usdc.name(),
        Target::Obj(..) => CacheKind::ObjSeq.name(),
    };
    if args.json {
        outln!(
            "{}",
            json!({
                "event": "convert",
                "input": args.input.display().to_string(),
                "input_format": input.kind.name(),
                "output": args.output.display().to_string(),
                "output_format": out_kind,
                "points": n,
                "frames": frames,
                "frame_start": input.frame_start,
                "fps": fps,
                "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            })
        );
    } else {
        outln!(
            "converted {} ({}, {frames} frames × {n} points) to {} ({}, {} file(s))",
            args.input.display(),
            input.kind.name(),
            args.output.display(),
            out_kind,
            files.len()
        );
    }
    Ok(())
}
