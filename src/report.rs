//! The bake report (JSON): per frame the wall time, substeps, CG iterations, max strain, contacts and
//! the smallest cloth-to-collider distance, the wall time per stage; optionally the collider shapes, so anyone can check a cache
//! against its colliders, and every attempted substep (where a slow frame's time went).

use std::path::Path;

use clothbake_solver::{RejectionCause, Rejections, SubstepReport};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::fs_util::write_atomic;
use crate::stage_times::BakeStages;

#[derive(Debug, Serialize)]
pub struct BakeReport {
    pub clothbake_version: &'static str,
    pub scene: String,
    pub fps: f32,
    pub frame_start: i32,
    pub frame_end: i32,
    /// Frames simulated before `frame_start` and not written (see the `start` event).
    pub preroll_frames: u32,
    pub threads: usize,
    /// The MPCG preconditioner used (`[scene] preconditioner`, "auto" resolved from the mesh):
    /// `"ic"`, `"amg"`, `"jacobi"`, or `"ic, amg from frame N"` when `auto` moved to AMG during
    /// the bake because an IC(0) solve did not converge.
    pub preconditioner: String,
    /// Where the simulation frame's origin is in the world (m) at the first frame this run
    /// simulates: zero, or on the axes where the garments start farther than 16 m from the world
    /// origin, their centre in whole metres (`src/bake_origin.rs`).
    pub simulation_origin: [f32; 3],
    /// The frame following the cloth during this run: from `frame` on, its origin is `origin`.
    pub simulation_origin_moves: Vec<OriginMove>,
    pub garments: Vec<GarmentRecord>,
    /// Collider names in the order of `frames[].colliders`.
    pub colliders: Vec<String>,
    pub frames: Vec<FrameRecord>,
    /// Wall time of the whole bake (s), scene loading included.
    pub total_seconds: f64,
    /// Wall time of this run's frame loop (s): from the start of its first simulated frame
    /// (pre-roll included) until the last frame's record is complete, checkpoints included;
    /// loading, the preview and the caches' finishing excluded. The frames' `seconds` can sum to
    /// more: each frame's count its measurements, which below 8,192 vertices run beside the next
    /// frame's step, inside that frame's time too.
    pub frame_loop_seconds: f64,
    /// `frames[].stages` summed over the bake (s).
    pub stage_totals: BakeStages,
    /// Substeps and CG iterations summed over the bake, and the rejected substeps by cause.
    pub substep_totals: SubstepTotals,
}

/// The simulation frame moved with the cloth ([`BakeReport::simulation_origin_moves`]).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct OriginMove {
    /// The first frame simulated in the moved frame.
    pub frame: i32,
    /// The new origin in the world (m).
    pub origin: [f32; 3],
}

/// The bake's substeps: what the step-size controller accepted, and what it rejected and why.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SubstepTotals {
    pub accepted: u64,
    pub rejected: u64,
    /// CG iterations of the accepted substeps.
    pub cg_iterations: u64,
    /// CG iterations of the rejected substeps.
    pub rejected_cg_iterations: u64,
    pub rejections: Rejections,
}

impl SubstepTotals {
    pub fn add(&mut self, f: &FrameRecord) {
        self.accepted += f.substeps as u64;
        self.rejected += f.rejected_substeps as u64;
        self.cg_iterations += f.cg_iterations as u64;
        self.rejected_cg_iterations += f.rejected_cg_iterations as u64;
        self.rejections.add(&f.rejections);
    }

    /// One line for the terminal, e.g. `substeps: 405 accepted, 65 rejected (strain jump after
    /// the solve 11, the colliders 50, cloth–cloth collision 4; CG not converged 0)`.
    pub fn summary(&self) -> String {
        let r = &self.rejections;
        let mut line = format!(
            "substeps: {} accepted, {} rejected",
            self.accepted, self.rejected
        );
        if self.rejected > 0 {
            line += &format!(
                " (strain jump after the solve {}, the colliders {}, cloth–cloth collision {}; \
                 CG not converged {}",
                r.strain_jump_solve,
                r.strain_jump_colliders,
                r.strain_jump_self_collision,
                r.cg_not_converged
            );
            if r.non_finite > 0 {
                line += &format!("; non-finite {}", r.non_finite);
            }
            if r.collision_work > 0 {
                line += &format!("; cloth–cloth collision work {}", r.collision_work);
            }
            line += ")";
        }
        if self.accepted > 0 {
            line += &format!(
                "; {:.1} CG iterations per substep",
                self.cg_iterations as f64 / self.accepted as f64
            );
        }
        line
    }
}

#[derive(Debug, Serialize)]
pub struct GarmentRecord {
    pub name: String,
    /// Vertices in the cache (source order, before welding).
    pub vertices: usize,
    /// Simulated (welded) vertices.
    pub simulated_vertices: usize,
    pub triangles: usize,
    pub pinned: usize,
}

/// One attempted substep of a frame (the report's `tries`, with `report_substeps`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TryRecord {
    /// Substep length (s).
    pub h: f32,
    /// Why the step-size controller rejected it (a key of `rejections`); null if accepted.
    pub rejected: Option<String>,
    /// CG iterations of its linear solve.
    pub cg_iterations: u32,
    /// The solve's final relative residual (null if not finite).
    pub cg_residual: Option<f32>,
    /// Largest triangle stretch at its start and end (dimensionless), and its strain jump, which
    /// the controller compares with `strain_jump`.
    pub start_stretch: f32,
    pub max_stretch: f32,
    pub strain_jump: f32,
    /// Vertices held by collider contacts, and the cloth–cloth contacts handled.
    pub contacts: u32,
    pub self_contacts: u32,
    /// Wall time of its stages (s).
    pub seconds: f64,
}

impl TryRecord {
    pub fn of(s: &SubstepReport) -> Self {
        TryRecord {
            h: s.h,
            rejected: RejectionCause::of(s).map(|c| c.key().to_string()),
            cg_iterations: s.cg.iterations,
            cg_residual: s.cg.residual.is_finite().then_some(s.cg.residual),
            start_stretch: s.start_strain,
            max_stretch: s.max_stretch,
            strain_jump: s.strain_jump,
            contacts: s.contacts,
            self_contacts: s.self_contacts,
            seconds: s.times.total(),
        }
    }
}

/// One frame of the bake. The first record is the rest frame (`substeps` 0).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameRecord {
    pub frame: i32,
    /// Wall time (s) of the frame's laps plus its `measurements`, which may run beside the next
    /// frame's step (so the frames' `seconds` may add up to more than the bake's).
    pub seconds: f64,
    /// Accepted substeps.
    pub substeps: u32,
    /// Substeps the step-size controller rejected and redid at half the size.
    pub rejected_substeps: u32,
    /// `rejected_substeps` by cause: non-finite, CG not converged, or a strain jump charged to the
    /// stage that raised the strain most (solve, colliders, self-collision).
    #[serde(default)]
    pub rejections: Rejections,
    /// CG iterations of the accepted substeps.
    pub cg_iterations: u32,
    /// CG iterations of the rejected substeps (solved, then thrown away with the substep).
    #[serde(default)]
    pub rejected_cg_iterations: u32,
    pub cg_failures: u32,
    /// Largest stretch strain of any triangle (dimensionless).
    pub max_strain: f32,
    pub contacts: u32,
    /// Smallest signed distance (m) from any cloth vertex to any collider surface at the end of the
    /// frame, measured on the written positions; null without colliders.
    pub min_distance: Option<f32>,
    /// Intersecting cloth triangle pairs at the end of the frame; null when not counted.
    pub self_intersections: Option<usize>,
    /// Cloth–cloth contacts handled in this frame: proximity contacts and continuous-collision
    /// events, summed over its accepted substeps (0 without self-collision).
    pub self_contacts: u32,
    /// Cloth–cloth collisions the self-collision stage could not resolve in this frame (summed over
    /// its substeps; 0 = every substep's cloth motion was crossing-free, and always 0 without
    /// self-collision). Nonzero also prints a warning.
    pub unresolved: u32,
    /// `integrator = "aimex"`: vertices solved explicitly (all their elements below Boxerman's
    /// stability bound), summed over the frame's accepted substeps; 0 under other integrators.
    #[serde(default)]
    pub explicit_vertices: u64,
    /// Collider shapes at the end of the frame, world frame (only with `report_colliders`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colliders: Option<Vec<ShapeRecord>>,
    /// Every substep the frame attempted, in order (only with `report_substeps`; a frame that a
    /// checkpoint split has its tries before the stop from the checkpoint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tries: Option<Vec<TryRecord>>,
    /// Wall time of this frame per stage (s); all zero but `cache_writing` and `measurements` for
    /// the rest frame.
    pub stages: BakeStages,
}

/// A collider shape in the report (world frame, metres).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ShapeRecord {
    Plane {
        point: [f32; 3],
        normal: [f32; 3],
    },
    Sphere {
        center: [f32; 3],
        radius: f32,
    },
    Capsule {
        a: [f32; 3],
        b: [f32; 3],
        radius_a: f32,
        radius_b: f32,
    },
}

impl BakeReport {
    /// Writes the report as pretty JSON (temporary file, then rename).
    pub fn write(&self, path: &Path) -> Result<()> {
        let text =
            serde_json::to_string_pretty(self).map_err(|e| crate::error::CliError::Write {
                path: path.to_path_buf(),
                source: std::io::Error::other(e),
            })?;
        write_atomic(path, text.as_bytes())
    }
}
