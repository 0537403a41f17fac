//! A garment ready for the solver: welded simulation mesh in world coordinates at the rest frame,
//! maps back to the source vertex order for the caches, pins, and its motion over time.

use glam::{Mat4, Vec2, Vec3};

use crate::axes::world_to_output;
use crate::clock::Clock;
use crate::garment_motion::GarmentMotion;
use crate::pins::Pins;
use crate::scene::{Follow, GarmentSpec, Space, Up};
use crate::weld::{Welded, NO_VERTEX};

/// One garment of a loaded scene.
pub struct Garment {
    /// The scene entry (material, thickness, friction, self-collision settings).
    pub spec: GarmentSpec,
    /// Simulation vertices, world frame (Y up, m), at the scene's first frame.
    pub positions: Vec<Vec3>,
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
    /// World positions of all source vertices at the rest frame (unused ones stay there).
    pub(crate) source_rest: Vec<Vec3>,
    /// The source vertex of each pinned vertex (parallel to `pins.vertices`).
    pub(crate) pin_sources: Vec<u32>,
    pub(crate) motion: GarmentMotion,
    pub(crate) clock: Clock,
}

impl Garment {
    /// Number of vertices in the caches (the source mesh's vertex count).
    pub fn num_source_vertices(&self) -> usize {
        self.welded.source_to_sim.len()
    }

    /// The garment's Y-up local frame → world at (fractional) scene frame `frame`.
    pub fn local_to_world(&self, frame: f32) -> Mat4 {
        self.motion.local_to_world(self.clock.time(frame))
    }

    /// Pin targets (world, m) at scene frame `frame`, parallel to `pins.vertices`:
    /// `follow = "rest"`: rest positions; `"node"`: carried by the garment node's animated
    /// transform; `"skin"`: linear blend skinning of the pinned vertices with the garment's skin.
    pub fn pin_targets(&self, frame: f32, out: &mut Vec<Vec3>) {
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
                self.clock.time(frame),
                &self.pin_sources,
                out,
            ),
        }
    }

    /// One cache frame: simulation positions (world) → source order → output coordinates
    /// (`space`, `up`; see [`crate::axes::world_to_output`]) at scene frame `frame`.
    pub fn output_frame(
        &self,
        sim_positions: &[Vec3],
        frame: i32,
        space: Space,
        up: Up,
        out: &mut Vec<Vec3>,
    ) {
        let m = world_to_output(space, up, self.local_to_world(frame as f32));
        out.clear();
        out.extend(
            self.welded
                .source_to_sim
                .iter()
                .zip(&self.source_rest)
                .map(|(&s, rest)| {
                    let p = if s == NO_VERTEX {
                        *rest
                    } else {
                        sim_positions[s as usize]
                    };
                    m.transform_point3(p)
                }),
        );
    }
}
