//! What a frame (and each of its substeps) did: solver statistics, strain, contacts, stage times.

use crate::linalg::CgResult;
use crate::self_collision::SelfCollisionTimes;

/// Wall-clock seconds spent per stage.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StageTimes {
    /// Force/Jacobian evaluation and matrix assembly.
    pub assemble: f64,
    /// MPCG solve.
    pub solve: f64,
    /// Collider detection, constraint setup and post-solve projection.
    pub collide: f64,
    /// Cloth–cloth collision.
    pub self_collide: f64,
    /// Everything else (state copies, strain checks, pins).
    pub other: f64,
    /// Wall time of the cloth–cloth work per part (broad phase, proximity, CCD, impact zones).
    /// Includes `self_ahead`, so the parts can add up to more than `self_collide`.
    pub self_parts: SelfCollisionTimes,
    /// Cloth–cloth proximity work done on another thread while the linear solve ran (s; 0 when
    /// the solve itself runs in parallel). Only the time the step waited for it after the solve
    /// is in `self_collide`.
    pub self_ahead: f64,
}

impl StageTimes {
    pub fn add(&mut self, o: &StageTimes) {
        self.assemble += o.assemble;
        self.solve += o.solve;
        self.collide += o.collide;
        self.self_collide += o.self_collide;
        self.other += o.other;
        self.self_parts.add(&o.self_parts);
        self.self_ahead += o.self_ahead;
    }

    pub fn total(&self) -> f64 {
        self.assemble + self.solve + self.collide + self.self_collide + self.other
    }
}

/// One attempted substep.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SubstepReport {
    /// Substep length (s).
    pub h: f32,
    pub cg: CgResult,
    /// Largest triangle stretch strain at the end of the substep (dimensionless).
    pub max_strain: f32,
    /// The (global) triangle with `max_strain`.
    pub worst_triangle: u32,
    /// Largest strain at the start of the substep.
    pub start_strain: f32,
    /// The substep's strain jump (dimensionless): the most a triangle's strain rose above the
    /// start's largest strain and, at pins, above what the pins' motion imposes (what the adaptive
    /// step compares with [`crate::SimSettings::strain_jump`]; `step/accept.rs`, `judge`).
    pub strain_jump: f32,
    /// Largest strain right after the linear solve, before friction, the projection out of the
    /// colliders and cloth–cloth collision; measured only with
    /// [`crate::SimSettings::stage_strains`] (a strain pass over every triangle).
    pub solve_strain: Option<f32>,
    /// Largest strain after the projection out of the colliders, before cloth–cloth collision
    /// (= `solve_strain` without colliders); measured only with
    /// [`crate::SimSettings::stage_strains`].
    pub projected_strain: Option<f32>,
    /// Vertices constrained by collider contacts.
    pub contacts: u32,
    /// Smallest vertex–collider signed distance after projection (m); +inf without colliders.
    pub min_collider_distance: f32,
    /// Cloth–cloth contacts handled.
    pub self_contacts: u32,
    /// Cloth–cloth collisions the self-collision stage could not resolve (left when its impact
    /// zones gave up, e.g. pins or body contacts that admit no rigid motion); 0 = crossing-free.
    pub unresolved: u32,
    /// Why the substep was rejected, if it was.
    pub rejected: Option<&'static str>,
    /// AIMEX's split of the substep (explicit triangles, hinges and decoupled vertices); zero
    /// under the other integrators.
    pub aimex: crate::integrator::SplitCounts,
    pub times: StageTimes,
}

/// Summary of one frame over its accepted substeps (rejected ones are only counted and timed).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameReport {
    pub substeps: u32,
    pub rejected_substeps: u32,
    /// CG iterations summed over accepted substeps.
    pub cg_iterations: u32,
    /// Largest final relative residual of an accepted substep.
    pub cg_max_residual: f32,
    /// Accepted substeps whose CG did not reach the tolerance (only after `max_halvings`, or with
    /// adaptive stepping off).
    pub cg_failures: u32,
    pub max_strain: f32,
    /// Largest number of contact-constrained vertices in one substep.
    pub contacts: u32,
    pub min_collider_distance: f32,
    /// Cloth–cloth proximity contacts and continuous-collision events summed over the accepted
    /// substeps.
    pub self_contacts: u32,
    /// Unresolved cloth–cloth collisions summed over the accepted substeps (0 = the frame's
    /// cloth motion is crossing-free; see [`SubstepReport::unresolved`]).
    pub unresolved: u32,
    /// Smallest substep length used (s).
    pub min_h: f32,
    /// Why the last rejected substep was rejected.
    pub last_rejection: Option<&'static str>,
    /// AIMEX: vertices solved explicitly (outside the MPCG), summed over the accepted substeps
    /// (divide by `substeps` and the vertex count for the fraction); 0 under other integrators.
    pub explicit_vertices: u64,
    pub times: StageTimes,
}

impl FrameReport {
    pub(crate) fn new() -> Self {
        FrameReport {
            min_collider_distance: f32::INFINITY,
            min_h: f32::INFINITY,
            ..Default::default()
        }
    }

    pub(crate) fn accept(&mut self, s: &SubstepReport) {
        self.substeps += 1;
        self.cg_iterations += s.cg.iterations;
        self.cg_max_residual = self.cg_max_residual.max(s.cg.residual);
        self.cg_failures += u32::from(!s.cg.converged);
        self.max_strain = self.max_strain.max(s.max_strain);
        self.contacts = self.contacts.max(s.contacts);
        self.min_collider_distance = self.min_collider_distance.min(s.min_collider_distance);
        self.self_contacts += s.self_contacts;
        self.unresolved += s.unresolved;
        self.min_h = self.min_h.min(s.h);
        self.explicit_vertices += s.aimex.explicit_vertices as u64;
        self.times.add(&s.times);
    }

    pub(crate) fn reject(&mut self, s: &SubstepReport) {
        self.rejected_substeps += 1;
        self.last_rejection = s.rejected;
        self.times.add(&s.times);
    }
}
