//! `clothbake check SCENE`: load and validate a scene and everything it references (meshes,
//! characters, proxies, materials, pins, the solver model and the colliders at every frame) without
//! baking or writing anything.

use clothbake_solver::MovingCollider;
use serde_json::json;

use crate::bake_setup::PreparedBake;
use crate::cli::CheckArgs;
use crate::error::{CliError, Result};
use crate::scene_to_solver::collider_shape;

pub fn run(args: &CheckArgs) -> Result<()> {
    let path = &args.scene;
    let PreparedBake { mut scene, sim, .. } = PreparedBake::load(path)?;
    // Every collider must be a valid shape at every frame of the bake.
    let mut shapes = Vec::new();
    for frame in scene.first_simulated_frame()..=scene.frame_end {
        scene.colliders.shapes_at(frame as f32, &mut shapes);
        for (k, s) in shapes.iter().enumerate() {
            let c = collider_shape(s);
            let moving = MovingCollider { start: c, end: c };
            moving.validate(k).map_err(|e| {
                CliError::Input(format!(
                    "{}: {} at frame {frame}: {e}",
                    path.display(),
                    scene.colliders.names()[k]
                ))
            })?;
        }
    }
    let garments: Vec<_> = scene
        .garments
        .iter()
        .zip(&sim.model().garments)
        .map(|(g, r)| {
            json!({"name": g.spec.name, "vertices": g.num_source_vertices(),
                   "simulated_vertices": r.vertices.len(), "triangles": r.triangles.len(),
                   "pinned": g.pins.vertices.len(), "follow": g.pins.follow.name(),
                   "driver": g.driver().map(|d| json!({"file": d.path.display().to_string(),
                        "samples": d.len(), "frame_start": d.frame_start, "frame_end": d.frame_end()}))})
        })
        .collect();
    let preroll_from = scene.preroll.from.name();
    if args.json {
        let ev = json!({"event": "check", "ok": true, "scene": path.display().to_string(),
            "frame_start": scene.frame_start, "frame_end": scene.frame_end,
            "preroll": scene.preroll.frames, "preroll_from": preroll_from,
            "first_simulated_frame": scene.first_simulated_frame(),
            "integrator": scene.file.settings.integrator.name(),
            "garments": garments, "colliders": scene.colliders.names()});
        outln!("{ev}");
    } else {
        outln!(
            "{}: ok: frames {}..{} at {} fps, {} collider(s), integrator {}",
            path.display(),
            scene.frame_start,
            scene.frame_end,
            scene.clock.fps,
            scene.colliders.len(),
            scene.file.settings.integrator.name()
        );
        if scene.preroll.frames > 0 {
            outln!(
                "  pre-roll: {} frame(s) from {} (simulated from frame {}, not written)",
                scene.preroll.frames,
                preroll_from,
                scene.first_simulated_frame()
            );
        }
        for g in &garments {
            outln!(
                "  garment {}: {} vertices ({} simulated), {} triangles, {} pinned",
                g["name"].as_str().unwrap_or(""),
                g["vertices"],
                g["simulated_vertices"],
                g["triangles"],
                g["pinned"]
            );
            if let Some(d) = g["driver"].as_object() {
                outln!(
                    "    driver {}: {} samples, frames {}..{}",
                    d["file"].as_str().unwrap_or(""),
                    d["samples"],
                    d["frame_start"],
                    d["frame_end"]
                );
            }
        }
    }
    Ok(())
}
