//! What a frame (and each of its substeps) did: solver statistics, strain, contacts, stage times.

use crate::linalg::{CgResult, SolveTimes};
use crate::self_collision::SelfCollisionTimes;

/// Wall-clock seconds spent per stage.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct StageTimes {
    /// Force/Jacobian evaluation and matrix assembly.
    pub assemble: f64,
    /// MPCG solve.
    pub solve: f64,
    /// Wall time of the MPCG solves per phase (preconditioner, coarse system, start,
    /// iterations): they add up to `solve` but for bookkeeping; all 0 under Kang's integrator
    /// (its own fixed-iteration solve).
    pub solve_parts: SolveTimes,
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
        self.solve_parts.add(&o.solve_parts);
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
    /// Largest triangle strain |len/rest − 1| at the end of the substep (dimensionless,
    /// [`crate::forces::strain`]).
    pub max_strain: f32,
    /// The (global) triangle with `max_strain`.
    pub worst_triangle: u32,
    /// Largest triangle stretch at the end of the substep (the positive part of the strain,
    /// [`crate::forces::stretch`]): what the strain jump is measured on.
    pub max_stretch: f32,
    /// Largest stretch at the start of the substep.
    pub start_strain: f32,
    /// The substep's strain jump (dimensionless): the most a triangle's stretch rose above the
    /// start's largest strain and, at pins, above what the pins' motion imposes (what the adaptive
    /// step compares with [`crate::SimSettings::strain_jump`]; `step/accept.rs`, `judge`).
    pub strain_jump: f32,
    /// Largest stretch right after the linear solve, before friction, the projection out of the
    /// colliders and cloth–cloth collision; measured in every substep with
    /// [`crate::SimSettings::stage_strains`] (a strain pass over every triangle), otherwise only
    /// in substeps rejected for a strain jump.
    pub solve_strain: Option<f32>,
    /// Largest stretch after the projection out of the colliders, before cloth–cloth collision
    /// (= `solve_strain` without colliders); measured as `solve_strain` is.
    pub projected_strain: Option<f32>,
    /// Vertices constrained by collider contacts.
    pub contacts: u32,
    /// Smallest vertex–collider signed distance after projection (m); +inf without colliders or
    /// with [`crate::SimSettings::collider_distances`] off.
    pub min_collider_distance: f32,
    /// Cloth–cloth contacts handled.
    pub self_contacts: u32,
    /// Cloth–cloth collisions the self-collision stage could not resolve (left when its impact
    /// zones gave up, e.g. pins or body contacts that admit no rigid motion); 0 = crossing-free.
    pub unresolved: u32,
    /// Why the substep was rejected, if it was.
    pub rejected: Option<Rejection>,
    /// AIMEX's split of the substep (explicit triangles, hinges and decoupled vertices); zero
    /// under the other integrators.
    pub aimex: crate::integrator::SplitCounts,
    pub times: StageTimes,
}

/// Why the step-size controller rejected a substep (BW §6; `step/accept.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Rejection {
    /// The linear solve's result was not finite.
    NonFiniteSolve,
    /// A position or velocity was not finite at the end of the substep.
    NonFiniteState,
    /// MPCG stopped at `cg_max_iterations` short of its tolerance.
    CgNotConverged,
    /// The largest triangle strain rose by more than `strain_jump`.
    StrainJump,
    /// Cloth–cloth collision stopped at its work bound
    /// ([`crate::self_collision::MAX_COLLISIONS_PER_VERTEX`]).
    CollisionWork,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::NonFiniteSolve => "non-finite solve",
            Rejection::NonFiniteState => "non-finite state",
            Rejection::CgNotConverged => "CG did not converge",
            Rejection::StrainJump => "strain jump",
            Rejection::CollisionWork => "cloth–cloth collision work",
        }
    }
}

/// Rejected substeps counted by cause. A strain jump is charged to the stage of the substep that
/// raised the largest stretch most: the linear solve (from the start's largest stretch to
/// [`SubstepReport::solve_strain`]), friction and the projection out of the colliders (to
/// [`SubstepReport::projected_strain`]) or cloth–cloth collision (to the end's `max_stretch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Rejections {
    pub non_finite: u32,
    pub cg_not_converged: u32,
    pub strain_jump_solve: u32,
    pub strain_jump_colliders: u32,
    pub strain_jump_self_collision: u32,
    /// Cloth–cloth collision stopped at its work bound (absent in reports of earlier versions).
    #[serde(default)]
    pub collision_work: u32,
}

/// A rejected substep's cause, as [`Rejections`] counts it: a strain jump charged to a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectionCause {
    NonFinite,
    CgNotConverged,
    StrainJumpSolve,
    StrainJumpColliders,
    StrainJumpSelfCollision,
    CollisionWork,
}

impl RejectionCause {
    /// The cause of substep `s`; None if it was accepted.
    pub fn of(s: &SubstepReport) -> Option<Self> {
        Some(match s.rejected? {
            Rejection::NonFiniteSolve | Rejection::NonFiniteState => Self::NonFinite,
            Rejection::CgNotConverged => Self::CgNotConverged,
            Rejection::CollisionWork => Self::CollisionWork,
            Rejection::StrainJump => {
                // Measured for every strain-jump rejection (step/mod.rs); absent, the solve.
                let after_solve = s.solve_strain.unwrap_or(s.max_stretch);
                let after_colliders = s.projected_strain.unwrap_or(after_solve);
                let solve = after_solve - s.start_strain;
                let colliders = after_colliders - after_solve;
                let cloth = s.max_stretch - after_colliders;
                if cloth > solve.max(colliders) {
                    Self::StrainJumpSelfCollision
                } else if colliders > solve {
                    Self::StrainJumpColliders
                } else {
                    Self::StrainJumpSolve
                }
            }
        })
    }

    /// The [`Rejections`] field that counts it (the name reports use).
    pub fn key(self) -> &'static str {
        match self {
            Self::NonFinite => "non_finite",
            Self::CgNotConverged => "cg_not_converged",
            Self::StrainJumpSolve => "strain_jump_solve",
            Self::StrainJumpColliders => "strain_jump_colliders",
            Self::StrainJumpSelfCollision => "strain_jump_self_collision",
            Self::CollisionWork => "collision_work",
        }
    }
}

impl Rejections {
    /// Counts `s` under its cause (nothing if it was not rejected).
    pub fn count(&mut self, s: &SubstepReport) {
        let Some(cause) = RejectionCause::of(s) else {
            return;
        };
        let slot = match cause {
            RejectionCause::NonFinite => &mut self.non_finite,
            RejectionCause::CgNotConverged => &mut self.cg_not_converged,
            RejectionCause::StrainJumpSolve => &mut self.strain_jump_solve,
            RejectionCause::StrainJumpColliders => &mut self.strain_jump_colliders,
            RejectionCause::StrainJumpSelfCollision => &mut self.strain_jump_self_collision,
            RejectionCause::CollisionWork => &mut self.collision_work,
        };
        *slot += 1;
    }

    pub fn add(&mut self, o: &Rejections) {
        self.non_finite += o.non_finite;
        self.cg_not_converged += o.cg_not_converged;
        self.strain_jump_solve += o.strain_jump_solve;
        self.strain_jump_colliders += o.strain_jump_colliders;
        self.strain_jump_self_collision += o.strain_jump_self_collision;
        self.collision_work += o.collision_work;
    }

    pub fn total(&self) -> u32 {
        self.non_finite
            + self.cg_not_converged
            + self.strain_jump_solve
            + self.strain_jump_colliders
            + self.strain_jump_self_collision
            + self.collision_work
    }
}

/// Summary of one frame over its accepted substeps (rejected ones are only counted and timed).
/// Serialisable so that a frame stopped between substeps can carry its report through a
/// checkpoint ([`crate::Simulation::unfinished_frame`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct FrameReport {
    pub substeps: u32,
    pub rejected_substeps: u32,
    /// CG iterations summed over accepted substeps.
    pub cg_iterations: u32,
    /// CG iterations summed over rejected substeps: solves that were paid for and thrown away
    /// (a "CG did not converge" rejection costs the whole iteration cap), so the linear-solve
    /// time per iteration is `times.solve / (cg_iterations + rejected_cg_iterations)`.
    pub rejected_cg_iterations: u32,
    /// Largest final relative residual of an accepted substep.
    pub cg_max_residual: f32,
    /// Accepted substeps whose CG did not reach the tolerance (only after `max_halvings`, or with
    /// adaptive stepping off).
    pub cg_failures: u32,
    pub max_strain: f32,
    /// Largest number of contact-constrained vertices in one substep.
    pub contacts: u32,
    /// +inf when no vertex came near a collider (serialised as null: JSON has no infinity).
    #[serde(with = "infinity_as_null")]
    pub min_collider_distance: f32,
    /// Cloth–cloth proximity contacts and continuous-collision events summed over the accepted
    /// substeps.
    pub self_contacts: u32,
    /// Unresolved cloth–cloth collisions summed over the accepted substeps (0 = the frame's
    /// cloth motion is crossing-free; see [`SubstepReport::unresolved`]).
    pub unresolved: u32,
    /// Smallest substep length used (s; +inf before the first substep, serialised as null).
    #[serde(with = "infinity_as_null")]
    pub min_h: f32,
    /// Why the last rejected substep was rejected.
    pub last_rejection: Option<Rejection>,
    /// The frame's rejected substeps by cause.
    pub rejections: Rejections,
    /// AIMEX: vertices solved explicitly (outside the MPCG), summed over the accepted substeps
    /// (divide by `substeps` and the vertex count for the fraction); 0 under other integrators.
    pub explicit_vertices: u64,
    pub times: StageTimes,
}

/// An `f32` that may be +inf as a JSON number or null (serde_json writes non-finite floats as
/// null and cannot read them back as a float).
mod infinity_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_some(v)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        Ok(Option::<f32>::deserialize(d)?.unwrap_or(f32::INFINITY))
    }
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
        self.rejected_cg_iterations += s.cg.iterations;
        self.last_rejection = s.rejected;
        self.rejections.count(s);
        self.times.add(&s.times);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(start: f32, solve: f32, projected: f32, end: f32) -> SubstepReport {
        SubstepReport {
            start_strain: start,
            solve_strain: Some(solve),
            projected_strain: Some(projected),
            max_stretch: end,
            rejected: Some(Rejection::StrainJump),
            ..Default::default()
        }
    }

    #[test]
    fn a_strain_jump_is_charged_to_the_stage_that_raised_the_strain_most() {
        let mut r = Rejections::default();
        r.count(&rejected(0.1, 0.2, 0.21, 0.22));
        r.count(&rejected(0.1, 0.11, 0.3, 0.3));
        r.count(&rejected(0.1, 0.1, 0.12, 0.5));
        r.count(&SubstepReport {
            rejected: Some(Rejection::CgNotConverged),
            ..Default::default()
        });
        r.count(&SubstepReport::default());
        let want = Rejections {
            non_finite: 0,
            cg_not_converged: 1,
            strain_jump_solve: 1,
            strain_jump_colliders: 1,
            strain_jump_self_collision: 1,
            collision_work: 0,
        };
        assert_eq!(r, want);
        assert_eq!(r.total(), 4);
    }
}
