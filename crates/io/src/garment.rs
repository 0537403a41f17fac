//! A garment ready for the solver: welded simulation mesh in world coordinates at the first
//! simulated frame (and its rest shape when that differs), maps back to the source vertex order
//! for the caches, pins, and its motion over time.

use glam::{Mat4, Vec2, Vec3};

use crate::axes::world_to_output;
use crate::driver::Driver;
use crate::garment_motion::{GarmentMotion, Pose};
use crate::pins::Pins;
use crate::preroll::Preroll;
use crate::scene::{Follow, GarmentSpec, Space, Up};
use crate::weld::{Welded, NO_VERTEX};

/// One garment of a loaded scene.
pub struct Garment {
    /// The scene entry (material, thickness, friction, self-collision settings).
    pub spec: GarmentSpec,
    /// Simulation vertices, world frame (Y up, m), at the first simulated frame: the initial state.
    pub positions: Vec<Vec3>,
    /// The rest shape (world, m, parallel to `positions`) when it differs from the initial state:
    /// a garment with a `driver` starts from the driver's shape, its rest shape is the mesh file's;
    /// a skinned glTF garment starts skinned, its rest shape is its bind-pose mesh carried by its
    /// node on the rig without animation.
    pub rest_positions: Option<Vec<Vec3>>,
    /// Simulation triangles.
    pub triangles: Vec<[u32; 3]>,
    /// Per-triangle corner UVs (parallel to `triangles`), if the mesh has UVs.
    pub tri_uvs: Option<Vec<[Vec2; 3]>>,
    /// Source-order ↔ simulation maps.
    pub welded: Welded,
    /// Source polygons (source indices), for OBJ sequences.
    pub source_faces: Vec<Vec<u32>>,
    /// Pinned simulation vertices.
    pub pins: Pins,
    /// World positions of all source vertices at the first simulated frame (unused ones stay there).
    pub(crate) source_rest: Vec<Vec3>,
    /// The source vertex of each pinned vertex (parallel to `pins.vertices`).
    pub(crate) pin_sources: Vec<u32>,
    pub(crate) motion: GarmentMotion,
    pub(crate) driver: Option<Driver>,
    pub(crate) preroll: Preroll,
}

impl Garment {
    /// Number of vertices in the caches (the source mesh's vertex count).
    pub fn num_source_vertices(&self) -> usize {
        self.welded.source_to_sim.len()
    }

    /// The garment's Y-up local frame → world at (fractional) scene frame `frame`.
    pub fn local_to_world(&self, frame: f32) -> Mat4 {
        self.motion.local_to_world(Pose::Frame(frame))
    }

    /// The garment's driver cache, if it has one.
    pub fn driver(&self) -> Option<&Driver> {
        self.driver.as_ref()
    }

    /// The rest shape (world, m): `rest_positions`, else `positions`.
    pub fn rest_shape(&self) -> &[Vec3] {
        self.rest_positions.as_deref().unwrap_or(&self.positions)
    }

    /// Pin targets (world, m) at scene frame `frame`, parallel to `pins.vertices`:
    /// `follow = "rest"`: initial positions; `"node"`: carried by the garment node's animated
    /// transform (or the OBJ's keyed transform); `"skin"`: linear blend skinning of the pinned
    /// vertices with the garment's skin; `"cache"`: the driver, linear between its samples.
    /// At pre-roll frames with `preroll_from = "rest"`: `lerp(rest shape, targets(frame_start), w)`
    /// with `w` from [`Preroll::rest_weight`].
    pub fn pin_targets(&self, frame: f32, out: &mut Vec<Vec3>) {
        match self.preroll.rest_weight(frame) {
            Some(w) => {
                self.targets_at(self.preroll.frame_start as f32, out);
                let rest = self.rest_shape();
                for (t, &v) in out.iter_mut().zip(&self.pins.vertices) {
                    *t = rest[v as usize].lerp(*t, w);
                }
            }
            None => self.targets_at(frame, out),
        }
    }

    fn targets_at(&self, frame: f32, out: &mut Vec<Vec3>) {
        out.clear();
        match self.pins.follow {
            Follow::Rest => out.extend(
                self.pins
                    .vertices
                    .iter()
                    .map(|&v| self.positions[v as usize]),
            ),
            Follow::Node | Follow::Skin => self.motion.positions_at(
                self.pins.follow,
                Pose::Frame(frame),
                &self.pin_sources,
                out,
            ),
            Follow::Cache => match &self.driver {
                Some(d) => {
                    let m = match d.space {
                        crate::scene::DriverSpace::World => Mat4::IDENTITY,
                        crate::scene::DriverSpace::Local => self.local_to_world(frame),
                    };
                    d.positions_at(frame, m, self.pin_sources.iter().copied(), out);
                }
                // Rejected by the scene parser; pins then stay where they start.
                None => out.extend(
                    self.pins
                        .vertices
                        .iter()
                        .map(|&v| self.positions[v as usize]),
                ),
            },
        }
    }

    /// With a driver: the simulation starts from the driver's shape at the first simulated frame,
    /// and the loaded shape (the mesh file's, or a skinned garment's bind pose) is the rest shape.
    pub(crate) fn start_from_driver(&mut self) {
        let Some(d) = &self.driver else { return };
        let frame = self.preroll.first_simulated() as f32;
        let m = match d.space {
            crate::scene::DriverSpace::World => Mat4::IDENTITY,
            crate::scene::DriverSpace::Local => self.local_to_world(frame),
        };
        let mut source = Vec::with_capacity(self.source_rest.len());
        d.positions_at(frame, m, 0..self.source_rest.len() as u32, &mut source);
        let start: Vec<Vec3> = self
            .welded
            .sim_to_source
            .iter()
            .map(|&s| source[s as usize])
            .collect();
        let loaded = std::mem::replace(&mut self.positions, start);
        self.rest_positions = Some(self.rest_positions.take().unwrap_or(loaded));
        self.source_rest = source;
    }

    /// One cache frame: simulation positions (world minus `sim_origin`, m) → source order →
    /// output coordinates (`space`, `up`; see [`crate::axes::world_to_output`]) at scene frame
    /// `frame`, computed in f64 and rounded once.
    pub fn output_frame(
        &self,
        sim_positions: &[Vec3],
        sim_origin: Vec3,
        frame: i32,
        space: Space,
        up: Up,
        out: &mut Vec<Vec3>,
    ) {
        let m = world_to_output(space, up, self.local_to_world(frame as f32));
        let origin = sim_origin.as_dvec3();
        out.clear();
        out.extend(
            self.welded
                .source_to_sim
                .iter()
                .zip(&self.source_rest)
                .map(|(&s, rest)| {
                    let world = if s == NO_VERTEX {
                        rest.as_dvec3()
                    } else {
                        sim_positions[s as usize].as_dvec3() + origin
                    };
                    m.transform_point3(world).as_vec3()
                }),
        );
    }
}
