//! The bake report's record and progress event of each written frame, completed once the frame is
//! measured: the smallest signed distance (m) from any cloth vertex to any collider (None without
//! colliders; the solver's box-culled minimum, equal to the bit to the plain loop) and the
//! self-intersection count. The measurement runs on copies of the frame's positions and collider
//! shapes, for small systems beside the next frame's step ([`FrameRecords::complete`] is then one
//! side of a `rayon::join`), off the step's critical path.

use std::time::Instant;

use clothbake_solver::collide::{min_distance, min_distance_serial};
use clothbake_solver::self_collision::{count_intersections, count_intersections_serial};
use clothbake_solver::{ColliderShape, FrameReport};
use glam::Vec3;

use crate::progress::{FrameEvent, Reporter};
use crate::report::{BakeReport, FrameRecord, ShapeRecord, TryRecord};
use crate::stage_times::BakeStages;

/// A written frame whose record waits for its measurement.
pub struct Written {
    pub frame: i32,
    /// The solver's summary; None for the rest frame.
    pub stats: Option<FrameReport>,
    /// Its stages so far (`measurements`: copying the inputs).
    pub stages: BakeStages,
    /// Wall time from its start to its caches written and inputs copied (s).
    pub seconds: f64,
    /// Collider shapes at the end of the frame (only with `report_colliders`).
    pub colliders: Option<Vec<ShapeRecord>>,
    /// Its attempted substeps (only with `report_substeps`).
    pub tries: Option<Vec<TryRecord>>,
}

/// Completes the written frames' records, warnings and progress events, in frame order.
pub struct FrameRecords {
    /// The frame waiting for its measurement.
    waiting: Option<Written>,
    /// Its simulated positions (m) at the end of the frame.
    x: Vec<Vec3>,
    /// Its end-of-frame collider shapes.
    shapes: Vec<ColliderShape>,
    /// The cloth triangles (simulated vertex indices).
    triangles: Vec<[u32; 3]>,
    /// Frames completed, counting those a resumed checkpoint holds.
    done: usize,
    /// Frames this bake writes (`--frames`).
    total: usize,
    last: i32,
    bake_started: Instant,
}

impl FrameRecords {
    pub fn new(triangles: &[[u32; 3]], done: usize, total: usize, last: i32) -> Self {
        FrameRecords {
            waiting: None,
            x: Vec::new(),
            shapes: Vec::new(),
            triangles: triangles.to_vec(),
            done,
            total,
            last,
            bake_started: Instant::now(),
        }
    }

    /// Copies the frame's positions `x` (m) and end-of-frame collider `shapes` to measure later.
    pub fn copy_inputs(&mut self, x: &[Vec3], shapes: impl Iterator<Item = ColliderShape>) {
        self.x.clear();
        self.x.extend_from_slice(x);
        self.shapes.clear();
        self.shapes.extend(shapes);
    }

    /// Holds `frame` (its inputs copied) until [`Self::complete`].
    pub fn hold(&mut self, frame: Written) {
        debug_assert!(
            self.waiting.is_none(),
            "frame {} not completed",
            frame.frame
        );
        self.waiting = Some(frame);
    }

    /// Measures the waiting frame, if any, and completes its record (into `report`), its
    /// warnings and its progress event; the measurement's time (s) goes to its `measurements`.
    /// `beside` the next frame's step, the measurement runs on this thread alone: split over the
    /// pool, the step's thread could steal a piece of it while waiting for one of its own and come
    /// back late, and this thread could run step work inside the measurement's time.
    pub fn complete(&mut self, beside: bool, reporter: &Reporter, report: &mut BakeReport) {
        let Some(w) = self.waiting.take() else {
            return;
        };
        let clock = Instant::now();
        let (min_distance, self_intersections) = if beside {
            let d = (!self.shapes.is_empty() && !self.x.is_empty())
                .then(|| min_distance_serial(&self.x, &self.shapes, |s| s));
            (d, count_intersections_serial(&self.x, &self.triangles))
        } else {
            // Side by side: the distance fills the pool while the count makes and buckets its
            // cell entries.
            let (x, shapes, triangles) = (&self.x, &self.shapes, &self.triangles);
            rayon::join(
                || (!shapes.is_empty() && !x.is_empty()).then(|| min_distance(x, shapes, |s| s)),
                || count_intersections(x, triangles),
            )
        };
        let measured = clock.elapsed().as_secs_f64();
        let mut stages = w.stages;
        stages.measurements += measured;
        report.stage_totals.add(&stages);
        self.done += 1;
        let seconds = w.seconds + measured;
        let elapsed = self.bake_started.elapsed().as_secs_f64();
        let eta = elapsed / self.done as f64 * self.total.saturating_sub(self.done) as f64;
        let stats = w.stats;
        let frame = w.frame;
        let rec = FrameRecord {
            frame,
            seconds,
            substeps: stats.map_or(0, |s| s.substeps),
            rejected_substeps: stats.map_or(0, |s| s.rejected_substeps),
            rejections: stats.map_or(Default::default(), |s| s.rejections),
            cg_iterations: stats.map_or(0, |s| s.cg_iterations),
            rejected_cg_iterations: stats.map_or(0, |s| s.rejected_cg_iterations),
            cg_failures: stats.map_or(0, |s| s.cg_failures),
            max_strain: stats.map_or(0.0, |s| s.max_strain),
            contacts: stats.map_or(0, |s| s.contacts),
            min_distance,
            self_intersections: Some(self_intersections),
            self_contacts: stats.map_or(0, |s| s.self_contacts),
            unresolved: stats.map_or(0, |s| s.unresolved),
            explicit_vertices: stats.map_or(0, |s| s.explicit_vertices),
            colliders: w.colliders,
            tries: w.tries,
            stages,
        };
        if rec.cg_failures > 0 {
            reporter.warning(
                &format!(
                    "the linear solve did not converge in {} substep(s)",
                    rec.cg_failures
                ),
                Some(frame),
            );
        }
        if rec.unresolved > 0 {
            reporter.warning(
                &format!(
                    "self-collision left {} cloth-cloth collision(s) unresolved (pins or body \
                     contacts that admit no crossing-free motion); the cloth may intersect",
                    rec.unresolved
                ),
                Some(frame),
            );
        }
        reporter.frame(
            &FrameEvent {
                frame,
                done: self.done,
                total: self.total,
                substeps: rec.substeps,
                cg_iterations: rec.cg_iterations,
                max_strain: rec.max_strain,
                contacts: rec.contacts,
                min_distance: rec.min_distance,
                self_intersections: rec.self_intersections,
                unresolved: rec.unresolved,
                seconds,
                eta_seconds: eta,
            },
            self.last,
        );
        report.frames.push(rec);
    }
}
