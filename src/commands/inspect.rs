//! `clothbake inspect FILE`: counts, frames, bounds, skins, animations and detected body proxies of a
//! .glb/.gltf/.obj/.pc2/.mdd file, or the frame range (with pre-roll), garments (pins, drivers, keyed
//! transforms) and colliders of a .toml scene, as text or (`--json`) one JSON object.

use std::path::Path;

use clothbake_io::gltf_mesh::read_mesh_node;
use clothbake_io::gltf_rig::GltfRig;
use clothbake_io::obj_mesh::read_obj;
use clothbake_io::proxies_auto::auto_proxies;
use clothbake_io::proxies_marked::marked_proxies;
use clothbake_io::{load_scene, read_mdd, read_pc2, Shape};
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
    if !path.is_file() {
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
        "pc2" => {
            let c = read_pc2(path).map_err(io)?;
            info.add("format", "pc2");
            info.add("points", c.num_points);
            info.add("frames", c.frames.len());
            info.add("start_frame", c.start_frame);
            info.add("sample_rate", c.sample_rate);
            cache_stats(&c.frames, &mut info);
        }
        "mdd" => {
            let c = read_mdd(path).map_err(io)?;
            info.add("format", "mdd");
            info.add("points", c.num_points);
            info.add("frames", c.frames.len());
            info.add("first_time", c.times.first().copied());
            info.add("last_time", c.times.last().copied());
            cache_stats(&c.frames, &mut info);
        }
        "toml" => inspect_scene(path, &mut info).map_err(io)?,
        _ => {
            return Err(CliError::input(
                path,
                "unknown file type (expected .glb, .gltf, .obj, .pc2, .mdd or a .toml scene)",
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
    let garments: Vec<Value> = scene
        .garments
        .iter()
        .map(|g| {
            json!({
                "name": g.spec.name,
                "mesh": g.spec.mesh.display().to_string(),
                "vertices": g.num_source_vertices(),
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

fn cache_stats(frames: &[Vec<Vec3>], info: &mut Inspection) {
    let non_finite = frames.iter().flatten().filter(|p| !p.is_finite()).count();
    info.add("non_finite_values", non_finite);
    info.add("bounds", bounds(frames.iter().flatten().copied()));
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
