//! Maps a loaded scene (clothbake-io) onto the solver (clothbake-solver): garments → `GarmentDesc`,
//! `[scene]`/`[wind]` → `SimSettings`, collider shapes → `ColliderShape`, and per frame the pin
//! targets of every garment as full-length arrays; garments and pin targets in the simulation
//! frame ([`crate::bake_origin`]).

use clothbake_io::{IntegratorName, LoadedScene, ModelName, PreconditionerName, Shape};
use clothbake_solver::{
    ColliderShape, ForceModel, Friction, GarmentDesc, Integrator, Material, Pin, Preconditioner,
    RestShape, SelfCollisionParams, SimSettings, Wind,
};
use glam::{Vec2, Vec3};

use crate::bake_origin::BakeOrigin;
use crate::error::{CliError, Result};
use crate::report::ShapeRecord;

/// Names of the solver's material presets (what `garment[i].material` may be).
pub fn material_presets() -> Vec<&'static str> {
    Material::presets().iter().map(|(name, _)| *name).collect()
}

/// Solver settings from `[scene]` and `[wind]`; unset tolerances keep the solver's defaults,
/// `scene.air_damping` is always given (its default equals the solver's).
pub fn sim_settings(scene: &LoadedScene) -> SimSettings {
    let s = &scene.file.settings;
    let defaults = SimSettings::default();
    SimSettings {
        substeps: s.substeps,
        gravity: Vec3::from(s.gravity),
        wind: scene.file.wind.as_ref().map(|w| Wind {
            velocity: Vec3::from(w.velocity),
            air_density: w.air_density,
            drag: w.drag,
            lift: w.lift,
        }),
        cg_tolerance: s.cg_tolerance.unwrap_or(defaults.cg_tolerance),
        cg_max_iterations: s.cg_max_iterations.unwrap_or(defaults.cg_max_iterations),
        strain_jump: s.strain_jump.unwrap_or(defaults.strain_jump),
        strain_jump_floor: s.strain_jump_floor.unwrap_or(defaults.strain_jump_floor),
        body_strain_allowance: s
            .body_strain_allowance
            .unwrap_or(defaults.body_strain_allowance),
        strain_limit: s.strain_limit.unwrap_or(defaults.strain_limit),
        self_contact_damping: s
            .self_contact_damping
            .unwrap_or(defaults.self_contact_damping),
        air_damping: s.air_damping,
        integrator: integrator(s.integrator),
        damping_projection: s.damping_projection,
        deflation: s.deflation,
        kang_iterations: s.kang_iterations.unwrap_or(defaults.kang_iterations),
        verlet_iterations: s.verlet_iterations.unwrap_or(defaults.verlet_iterations),
        preconditioner: match s.preconditioner {
            None => defaults.preconditioner,
            Some(PreconditionerName::Jacobi) => Preconditioner::BlockJacobi,
            Some(PreconditionerName::Ic) => Preconditioner::IncompleteCholesky,
            Some(PreconditionerName::Amg) => Preconditioner::Amg,
            Some(PreconditionerName::Auto) => Preconditioner::Auto,
        },
        // The bake measures each frame's distance to the colliders itself (its report).
        collider_distances: false,
        ..defaults
    }
}

/// The solver's integrator of a scene's `integrator` name.
fn integrator(name: IntegratorName) -> Integrator {
    match name {
        IntegratorName::Bw => Integrator::BackwardEuler,
        IntegratorName::Bdf2 => Integrator::Bdf2,
        IntegratorName::Aimex => Integrator::Aimex,
        IntegratorName::Kang => Integrator::Kang,
        IntegratorName::Verlet => Integrator::Verlet,
    }
}

/// Replaces `field` with the scene's override, if it gives one.
fn override_with<T>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

/// One `GarmentDesc` per garment. Errors name the scene file and `garment[i].<field>`.
/// The scene's garments for the solver, in the simulation frame of `origin`.
pub fn garment_descs(scene: &LoadedScene, origin: BakeOrigin) -> Result<Vec<GarmentDesc>> {
    let file = &scene.file.path;
    let mut out = Vec::with_capacity(scene.garments.len());
    for (i, g) in scene.garments.iter().enumerate() {
        let spec = &g.spec;
        let field = |k: &str| format!("{}: garment[{i}].{k}", file.display());
        let mut material = match &spec.material {
            Some(name) => Material::preset(name).ok_or_else(|| {
                CliError::Input(format!("{}: unknown preset {name:?}", field("material")))
            })?,
            None => Material::default(),
        };
        override_with(&mut material.density, spec.density);
        override_with(&mut material.stretch, spec.stretch);
        override_with(&mut material.shear, spec.shear);
        override_with(&mut material.bend, spec.bend);
        override_with(&mut material.stretch_damping, spec.stretch_damping);
        override_with(&mut material.bend_damping, spec.bend_damping);
        override_with(&mut material.rest_scale, spec.rest_scale);
        material
            .validate()
            .map_err(|e| CliError::Input(format!("{}: {e}", field("material"))))?;

        let uvs = vertex_uvs(g.positions.len(), &g.triangles, g.tri_uvs.as_deref());
        let rest = match spec.rest_shape {
            clothbake_io::RestShape::Mesh => RestShape::Positions,
            clothbake_io::RestShape::Uv => {
                if uvs.is_none() {
                    return Err(CliError::Input(format!(
                        "{}: \"uv\" needs a mesh with UVs and no UV seams inside the cloth ({} has {})",
                        field("rest_shape"),
                        spec.mesh.display(),
                        if g.tri_uvs.is_some() { "UV seams" } else { "no UVs" }
                    )));
                }
                RestShape::Uv {
                    metres_per_uv: spec.uv_scale,
                }
            }
        };
        let pins = g
            .pins
            .vertices
            .iter()
            .zip(&g.pins.weights)
            .map(|(&vertex, &weight)| Pin { vertex, weight })
            .collect();
        out.push(GarmentDesc {
            name: spec.name.clone(),
            positions: g.positions.iter().map(|&p| origin.to_sim(p)).collect(),
            rest_positions: g
                .rest_positions
                .as_ref()
                .map(|r| r.iter().map(|&p| origin.to_sim(p)).collect()),
            triangles: g.triangles.clone(),
            uvs,
            rest,
            material,
            model: match spec.model {
                ModelName::Bw => ForceModel::Bw,
                ModelName::Springs => ForceModel::Springs {
                    spring_stiffness: spec.spring_stiffness,
                },
            },
            thickness: spec.thickness,
            friction: Friction {
                static_: spec.static_friction(),
                kinetic: spec.friction,
            },
            self_collision: spec.self_collision.then_some(SelfCollisionParams {
                thickness: spec.self_thickness,
                friction: spec.self_friction,
            }),
            pins,
            pin_stiffness: g.pins.stiffness,
        });
    }
    Ok(out)
}

/// Per-vertex UVs from per-triangle corner UVs, or None when the mesh has none or a welded vertex
/// carries different UVs in different triangles (a seam inside the simulated cloth).
fn vertex_uvs(
    n: usize,
    triangles: &[[u32; 3]],
    tri_uvs: Option<&[[Vec2; 3]]>,
) -> Option<Vec<Vec2>> {
    let tri_uvs = tri_uvs?;
    let mut uv: Vec<Option<Vec2>> = vec![None; n];
    for (t, corners) in triangles.iter().zip(tri_uvs) {
        for (&v, &c) in t.iter().zip(corners) {
            match uv[v as usize] {
                None => uv[v as usize] = Some(c),
                Some(u) if (u - c).length_squared() <= 1e-12 => {}
                Some(_) => return None,
            }
        }
    }
    uv.into_iter()
        .map(|u| Some(u.unwrap_or(Vec2::ZERO)))
        .collect()
}

/// A scene shape as a solver collider shape.
pub fn collider_shape(s: &Shape) -> ColliderShape {
    match *s {
        Shape::Plane { point, normal } => ColliderShape::Plane { point, normal },
        Shape::Sphere { center, radius } => ColliderShape::Sphere { center, radius },
        Shape::Capsule {
            a,
            b,
            radius_a,
            radius_b,
        } => ColliderShape::Capsule {
            a,
            b,
            radius_a,
            radius_b,
        },
    }
}

/// A scene shape for the bake report.
pub fn shape_record(s: &Shape) -> ShapeRecord {
    match *s {
        Shape::Plane { point, normal } => ShapeRecord::Plane {
            point: point.to_array(),
            normal: normal.to_array(),
        },
        Shape::Sphere { center, radius } => ShapeRecord::Sphere {
            center: center.to_array(),
            radius,
        },
        Shape::Capsule {
            a,
            b,
            radius_a,
            radius_b,
        } => ShapeRecord::Capsule {
            a: a.to_array(),
            b: b.to_array(),
            radius_a,
            radius_b,
        },
    }
}

/// Full-length pin-target arrays for `Simulation::step_frame`, one per garment, reused every frame,
/// in the simulation frame of `origin`.
pub struct PinTargetBuffers {
    /// Per garment: Some(all-vertex target array) when its pins move, None when they stay at rest.
    full: Vec<Option<Vec<Vec3>>>,
    scratch: Vec<Vec3>,
    origin: BakeOrigin,
}

impl PinTargetBuffers {
    pub fn new(scene: &LoadedScene, origin: BakeOrigin) -> Self {
        let full = scene
            .garments
            .iter()
            .map(|g| {
                let moves = !g.pins.is_empty() && g.pins.follow != clothbake_io::Follow::Rest;
                moves.then(|| g.positions.iter().map(|&p| origin.to_sim(p)).collect())
            })
            .collect();
        PinTargetBuffers {
            full,
            scratch: Vec::new(),
            origin,
        }
    }

    /// From now on, targets in the simulation frame of `origin` (the frame moved between frames;
    /// the targets of garments whose pins stay at rest move with the solver's state).
    pub fn set_origin(&mut self, origin: BakeOrigin) {
        self.origin = origin;
    }

    /// Fills the targets for scene frame `frame` and returns them in `step_frame`'s form.
    pub fn at(&mut self, scene: &LoadedScene, frame: f32) -> Vec<Option<&[Vec3]>> {
        for (g, buf) in scene.garments.iter().zip(self.full.iter_mut()) {
            if let Some(buf) = buf {
                g.pin_targets(frame, &mut self.scratch);
                for (&v, &p) in g.pins.vertices.iter().zip(&self.scratch) {
                    buf[v as usize] = self.origin.to_sim(p);
                }
            }
        }
        self.full.iter().map(|b| b.as_deref()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scene_air_damping_default_is_the_solvers() {
        assert_eq!(
            clothbake_io::DEFAULT_AIR_DAMPING,
            clothbake_solver::DEFAULT_AIR_DAMPING
        );
        assert_eq!(
            clothbake_io::Settings::default().air_damping,
            SimSettings::default().air_damping
        );
    }

    /// Every scene integrator name maps onto the solver's integrator of the same name (all but the
    /// experimental midpoint), and the projection default is the solver's.
    #[test]
    fn scene_integrators_are_the_solvers() {
        for (name, integrator) in Integrator::ALL {
            if integrator == Integrator::Midpoint {
                continue; // the accuracy harness's experiment, not offered in scene files
            }
            let file: clothbake_io::Settings =
                toml::from_str(&format!("integrator = \"{name}\"")).unwrap();
            assert_eq!(file.integrator.name(), name);
            assert_eq!(super::integrator(file.integrator), integrator);
        }
        assert_eq!(
            clothbake_io::Settings::default().damping_projection,
            SimSettings::default().damping_projection
        );
        assert_eq!(
            clothbake_io::Settings::default().deflation,
            SimSettings::default().deflation
        );
    }

    #[test]
    fn vertex_uvs_detects_seams() {
        let tris = [[0, 1, 2], [0, 2, 3]];
        let a = Vec2::new(0.0, 0.0);
        let b = Vec2::new(1.0, 0.0);
        let c = Vec2::new(1.0, 1.0);
        let d = Vec2::new(0.0, 1.0);
        let ok = [[a, b, c], [a, c, d]];
        assert_eq!(vertex_uvs(4, &tris, Some(&ok)), Some(vec![a, b, c, d]));
        let seam = [[a, b, c], [Vec2::new(5.0, 5.0), c, d]];
        assert_eq!(vertex_uvs(4, &tris, Some(&seam)), None);
        assert_eq!(vertex_uvs(4, &tris, None), None);
    }
}
