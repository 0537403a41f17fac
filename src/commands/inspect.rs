//! `clothbake inspect FILE`: counts, frames, bounds, skins, animations and detected body proxies of a
//! .glb/.gltf/.obj/.pc2/.mdd file, or the frame range (with pre-roll), garments (pins, drivers, keyed
//! transforms) and colliders of a .toml scene, as text or (`--json`) one JSON object.

use std::path::Path;

use clothbake_io::cache_stream::is_obj_sequence;
use clothbake_io::gltf_mesh::read_mesh_node;
use clothbake_io::gltf_rig::GltfRig;
use clothbake_io::obj_mesh::read_obj;
use clothbake_io::proxies_auto::auto_proxies;
use clothbake_io::proxies_marked::marked_proxies;
use clothbake_io::{load_scene, CacheKind, CacheStream, Shape};
use glam::{Mat4, Vec3};
use serde_json::{json, Value};

use crate::cli::InspectArgs;
use crate::error::{CliError, Result};
use crate::scene_to_solver::{material_presets, shape_record};

/// What `inspect` found, as ordered key/value pairs (text output keeps this order).
struct Inspection(Vec<(&'static str, Value)>);

impl Inspection {
    fn add(&mut self, key: &'static str, value: impl Into<Value>) {
        self.0.push((key, value.into()));
    }
}

pub fn run(args: &InspectArgs) -> Result<()> {
    let path = &args.file;
    let sequence = is_obj_sequence(path);
    if !path.is_file() && !sequence {
        return Err(CliError::input(path, "file not found"));
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut info = Inspection(vec![("file", json!(path.display().to_string()))]);
    let io = CliError::File;
    match ext.as_str() {
        _ if sequence => inspect_cache(path, &mut info).map_err(io)?,
        "glb" | "gltf" => inspect_gltf(path, &mut info).map_err(io)?,
        "obj" => {
            let m = read_obj(path).map_err(io)?;
            info.add("format", "obj");
            info.add("vertices", m.positions.len());
            info.add("faces", m.faces.len());
            info.add("triangles", m.triangles.len());
            info.add("uvs", m.tri_uvs.is_some());
            info.add("bounds", bounds(m.positions.iter().copied()));
        }
        "pc2" | "mdd" | "usda" | "usd" | "usdc" => inspect_cache(path, &mut info).map_err(io)?,
        "toml" => inspect_scene(path, &mut info).map_err(io)?,
        _ => {
            return Err(CliError::input(
                path,
                "unknown file type (expected .glb, .gltf, .obj, .pc2, .mdd, .usda, .usdc, an OBJ sequence folder or NAME.####.obj, or a .toml scene)",
            ))
        }
    }
    if args.json {
        let obj: serde_json::Map<String, Value> = info
            .0
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        outln!("{}", Value::Object(obj));
    } else {
        for (_, v) in info.0.iter_mut() {
            round_floats(v);
        }
        for (k, v) in &info.0 {
            match v {
                Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => {
                    outln!("{k}:");
                    for item in items {
                        outln!("  {item}");
                    }
                }
                Value::String(s) => outln!("{k}: {s}"),
                _ => outln!("{k}: {v}"),
            }
        }
    }
    Ok(())
}

/// A scene file: what a bake of it simulates and writes (see docs/scene-format.md).
fn inspect_scene(path: &Path, info: &mut Inspection) -> clothbake_io::Result<()> {
    let scene = load_scene(path, &material_presets())?;
    info.add("format", "scene");
    info.add("fps", scene.clock.fps);
    info.add("frame_start", scene.frame_start);
    info.add("frame_end", scene.frame_end);
    info.add("frames", scene.num_frames());
    info.add("preroll", scene.preroll.frames);
    info.add("preroll_from", scene.preroll.from.name());
    info.add("first_simulated_frame", scene.first_simulated_frame());
    info.add("integrator", scene.file.settings.integrator.name());
    info.add(
        "preconditioner",
        scene
            .file
            .settings
            .preconditioner
            .map_or("auto", |p| p.name()),
    );
    info.add("damping_projection", scene.file.settings.damping_projection);
    info.add("deflation", scene.file.settings.deflation);
    let garments: Vec<Value> = scene
        .garments
        .iter()
        .map(|g| {
            json!({
                "name": g.spec.name,
                "mesh": g.spec.mesh.display().to_string(),
                "vertices": g.num_source_vertices(),
                "model": g.spec.model.name(),
                "pinned": g.pins.vertices.len(),
                "follow": g.pins.follow.name(),
                "driver": g.driver().map(|d| json!({
                    "file": d.path.display().to_string(),
                    "samples": d.len(),
                    "frame_start": d.frame_start,
                    "frame_end": d.frame_end(),
                })),
                "transform_keys": g.spec.transform_keys.as_ref().map(Vec::len),
            })
        })
        .collect();
    info.add("garments", garments);
    info.add("colliders", scene.colliders.names().to_vec());
    Ok(())
}

/// Rounds every non-integer number to 0.1 mm / 4 decimals for the text output (JSON keeps full f32).
fn round_floats(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(x) = n.as_f64() {
                *v = json!((x * 1e4).round() / 1e4);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(round_floats),
        Value::Object(map) => map.values_mut().for_each(round_floats),
        _ => {}
    }
}

/// Non-finite values listed at most (the count is always complete).
const MAX_NON_FINITE_LISTED: usize = 100;

/// A coordinate as JSON: a number, or "NaN"/"inf"/"-inf".
fn coord(x: f32) -> Value {
    if x.is_finite() {
        json!(x)
    } else if x.is_nan() {
        json!("NaN")
    } else if x > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

/// A point cache of any format, read frame by frame: its header, each frame's bounding box
/// (finite values) and number of non-finite points, the non-finite points themselves (frame,
/// point, position; the first 100) and the bounds of all frames.
fn inspect_cache(path: &Path, info: &mut Inspection) -> clothbake_io::Result<()> {
    let mut c = CacheStream::open(path)?;
    info.add("format", c.kind.name());
    info.add("points", c.num_points);
    info.add("frames", c.num_frames);
    match c.kind {
        CacheKind::Pc2 => {
            info.add("start_frame", c.frame_start);
            info.add("sample_rate", c.frame_step);
        }
        CacheKind::Mdd => {
            let times = c.times.clone().unwrap_or_default();
            info.add("first_time", times.first().copied());
            info.add("last_time", times.last().copied());
            info.add("fps", c.fps);
        }
        CacheKind::Usd | CacheKind::Usdc | CacheKind::ObjSeq => {
            info.add("frame_start", c.frame_start);
            if c.kind != CacheKind::ObjSeq {
                info.add("fps", c.fps);
                info.add(
                    "up",
                    c.up.map(|u| if u == clothbake_io::Up::Z { "z" } else { "y" }),
                );
            }
            info.add("faces", c.faces.as_ref().map(Vec::len));
        }
    }
    let mut frame = Vec::with_capacity(c.num_points);
    let mut per_frame = Vec::with_capacity(c.num_frames);
    let mut listed = Vec::new();
    let mut non_finite = 0usize;
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for k in 0..c.num_frames {
        c.next_frame(&mut frame)?;
        let number = c.frame_start + k as f64 * c.frame_step;
        let mut bad = 0usize;
        for (i, p) in frame.iter().enumerate() {
            if !p.is_finite() {
                bad += 1;
                if listed.len() < MAX_NON_FINITE_LISTED {
                    listed.push(json!({
                        "frame": number,
                        "point": i,
                        "position": p.to_array().map(coord),
                    }));
                }
            }
        }
        non_finite += bad;
        let b = bounds(frame.iter().copied());
        if let (Some(min), Some(max)) = (b.get("min"), b.get("max")) {
            let v = |x: &Value, i: usize| x[i].as_f64().unwrap_or(0.0) as f32;
            lo = lo.min(Vec3::new(v(min, 0), v(min, 1), v(min, 2)));
            hi = hi.max(Vec3::new(v(max, 0), v(max, 1), v(max, 2)));
        }
        per_frame.push(json!({
            "frame": number,
            "min": b.get("min"),
            "max": b.get("max"),
            "non_finite": bad,
        }));
    }
    info.add("non_finite_values", non_finite);
    info.add("non_finite", listed);
    info.add(
        "bounds",
        if lo.x > hi.x {
            Value::Null
        } else {
            json!({"min": lo.to_array(), "max": hi.to_array()})
        },
    );
    info.add("frame_bounds", per_frame);
    Ok(())
}

/// `{"min": [..], "max": [..]}` over the finite points, or null when there are none.
fn bounds(points: impl Iterator<Item = Vec3>) -> Value {
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    for p in points.filter(|p| p.is_finite()) {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if lo.x > hi.x {
        return Value::Null;
    }
    json!({"min": lo.to_array(), "max": hi.to_array()})
}

fn inspect_gltf(path: &Path, info: &mut Inspection) -> clothbake_io::Result<()> {
    let rig = GltfRig::open(path)?;
    let doc = &rig.doc.document;
    info.add(
        "format",
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("glb"))
        {
            "glb"
        } else {
            "gltf"
        },
    );
    info.add("nodes", doc.nodes().count());
    let t0 = rig.time_range().map_or(0.0, |(start, _)| start);
    let mut world = Vec::new();
    rig.world_matrices(t0, &mut world);
    let joint_mats: Vec<Vec<Mat4>> = rig
        .skins
        .iter()
        .map(|s| {
            let mut m = Vec::new();
            s.joint_matrices(&world, &mut m);
            m
        })
        .collect();
    let mut meshes = Vec::new();
    let mut posed = Vec::new();
    for node in doc.nodes().filter(|n| n.mesh().is_some()) {
        let m = read_mesh_node(&rig.doc, &node, None)?;
        let skinned = m.skin.zip(m.influences.as_ref());
        for (v, &p) in m.source.positions.iter().enumerate() {
            posed.push(match skinned {
                Some((s, inf)) => inf.skin_point(v, p, &joint_mats[s]),
                None => world[node.index()].transform_point3(p),
            });
        }
        meshes.push(json!({
            "node": node.name().unwrap_or(""),
            "vertices": m.source.positions.len(),
            "triangles": m.source.triangles.len(),
            "skin": m.skin,
        }));
    }
    info.add("meshes", meshes);
    info.add("bounds", bounds(posed.into_iter()));
    info.add("bounds_time", t0);
    let skins: Vec<Value> = doc
        .skins()
        .map(|s| {
            json!({
                "name": s.name().unwrap_or(""),
                "joints": s.joints().count(),
            })
        })
        .collect();
    info.add("skins", skins);
    // Every animation a scene's `animation` key can select (by name or index); the first is the
    // default.
    let mut animations: Vec<Value> = Vec::new();
    for a in doc.animations() {
        let seconds = rig.read_animation(a.index())?.time_range();
        animations.push(json!({
            "index": a.index(),
            "name": a.name(),
            "channels": a.channels().count(),
            "seconds": seconds.map(|(s, e)| [s, e]),
        }));
    }
    info.add("animations", animations);
    if let Some((start, end)) = rig.time_range() {
        info.add("animation_seconds", json!([start, end]));
    }
    let describe = |proxies: &[clothbake_io::proxy::Proxy]| -> Vec<Value> {
        proxies
            .iter()
            .map(|p| {
                let shape: Shape = p.shape_at(&world, &joint_mats);
                json!({"name": p.name, "shape": serde_json::to_value(shape_record(&shape)).unwrap_or(Value::Null)})
            })
            .collect()
    };
    let marked = marked_proxies(&rig, 0.0)?;
    info.add("marked_proxies", describe(&marked));
    if doc
        .nodes()
        .any(|n| n.mesh().is_some() && n.skin().is_some())
    {
        let auto = auto_proxies(&rig, None, 0.0)?;
        info.add("auto_proxies", describe(&auto));
    }
    Ok(())
}
