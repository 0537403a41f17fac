//! Reusable scratch of the substep pipeline (warp.sim-style `Workspace`): everything here is
//! rebuilt from the [`Model`] or overwritten before it is read in a substep, so dropping it
//! between any two substeps and building a new one leaves the result unchanged to the bit
//! (tests/state_workspace.rs checks this).

use glam::Vec3;

use crate::collide::{ContactDetector, MovingCollider, VertexContact};
use crate::constraints::Constraints;
use crate::error::ModelError;
use crate::integrator::{Aimex, Assembly, KangSolve, ProjectedDamping, StepBase, VerletScratch};
use crate::linalg::Mpcg;
use crate::model::Model;
use crate::self_contact::SelfContact;
use crate::state::State;

/// Scratch buffers of one simulation; sized once, no allocation per substep afterwards.
pub struct Workspace {
    /// Copy of the state at the start of the current substep: x0, v0 for the stages, and what a
    /// rejected substep is rolled back to.
    pub(crate) start: State,
    /// What the backward-Euler stages step from: (x0, v0, h), or BDF2's (x̂, v̂, 2h/3).
    pub(crate) base: StepBase,
    /// Sparse system matrix (pattern built once from the topology), right-hand side, element scratch.
    pub(crate) assembly: Assembly,
    /// MPCG vectors and the preconditioner's factor.
    pub(crate) cg: Mpcg,
    /// Per-vertex filters, prescribed velocity changes z and position alterations y of the substep.
    pub(crate) constraints: Constraints,
    /// Collider contact detection (swept tests against the substep's moving colliders).
    pub(crate) detector: ContactDetector,
    /// Contacts found this substep, sorted by vertex.
    pub(crate) contacts: Vec<VertexContact>,
    /// The frame's colliders interpolated to this substep's start and end.
    pub(crate) sub_colliders: Vec<MovingCollider>,
    /// Free-flight prediction x0 + h·v0 (m).
    pub(crate) predicted: Vec<Vec3>,
    /// Positions right after the solve and after the collider corrections (m): a rejected
    /// substep's strain jump is charged to the stage that raised it ([`crate::report::Rejections`])
    /// without a strain pass in every accepted substep.
    pub(crate) after_solve: Vec<Vec3>,
    pub(crate) after_colliders: Vec<Vec3>,
    /// Cloth–cloth collision (broad phase, candidates, impact zones); None without self-collision.
    pub(crate) self_contact: Option<SelfContact>,
    /// Warm start of a solve that may be repeated ([`crate::step::solve::run`]), m/s.
    pub(crate) warm_dv: Vec<Vec3>,
    /// The last substep damped some approaching cloth–cloth contact inside its solve: a hint for
    /// where the next one looks for them (before its solve or beside it), which changes only the
    /// speed ([`crate::step::self_contact_damping::run`]).
    pub(crate) damped_last: bool,
    /// Per vertex: held by a collider this substep (contact or projection).
    pub(crate) held: Vec<bool>,
    /// Per vertex: the bodies' part of its projection this substep (m, [`crate::collide::ContactDetector::body_pushes`]).
    pub(crate) body_push: Vec<glam::Vec3>,
    /// The triangles with a hard-pinned vertex, ascending: the only ones whose strain the pins'
    /// motion can excuse ([`crate::step::accept::judge`]).
    pub(crate) pinned_triangles: Vec<u32>,
    /// AIMEX's per-vertex stiffness sums and the substep's implicit/explicit split (empty unless
    /// the integrator is AIMEX).
    pub(crate) aimex: Aimex,
    /// The cloth's pieces and their rigid fit for projected air damping (empty unless on).
    pub(crate) projected: ProjectedDamping,
    /// Scratch of the extra Newton iterations ([`crate::SimSettings::newton_iterations`]).
    pub(crate) newton: crate::step::newton::NewtonScratch,
    /// Kang's approximate solve (used by `integrator = "kang"` only; sized on first use).
    pub(crate) kang: KangSolve,
    /// Edge constraints and forces of the Verlet step (`integrator = "verlet"` only).
    pub(crate) verlet: VerletScratch,
}

impl Workspace {
    /// Scratch for `model` (the errors are the self-collision set-up's, see [`SelfContact::new`]).
    ///
    /// The system's pattern and gather lists and the self-collision set-up are built side by side
    /// on the thread pool: they are independent, and together most of the set-up before the first
    /// frame (on the dress-walk sample 21 and 14 ms of one thread, perf).
    pub fn new(model: &Model) -> Result<Self, ModelError> {
        let n = model.vertex_count();
        let (assembly, self_contact) =
            rayon::join(|| Assembly::new(model), || SelfContact::new(model));
        Ok(Workspace {
            start: State::default(),
            base: StepBase::default(),
            assembly,
            cg: Mpcg::new(),
            constraints: Constraints::default(),
            detector: ContactDetector::new(),
            contacts: Vec::new(),
            sub_colliders: Vec::new(),
            predicted: vec![Vec3::ZERO; n],
            after_solve: vec![Vec3::ZERO; n],
            after_colliders: vec![Vec3::ZERO; n],
            self_contact: self_contact?,
            warm_dv: Vec::new(),
            damped_last: false,
            held: vec![false; n],
            body_push: vec![glam::Vec3::ZERO; n],
            pinned_triangles: (0..model.triangles.len() as u32)
                .filter(|&t| {
                    let tri = model.triangles[t as usize];
                    tri.iter().any(|&i| model.hard_pinned[i as usize])
                })
                .collect(),
            aimex: Aimex::default(),
            projected: ProjectedDamping::default(),
            newton: Default::default(),
            kang: KangSolve::new(),
            verlet: VerletScratch::new(),
        })
    }
}
