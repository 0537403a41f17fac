//! The public simulation driver: frames split into substeps of one backward-Euler Newton step each
//! (the stages are in `step/`), with adaptive substep halving (BW §6). It holds the
//! immutable [`Model`], the [`State`] (everything the next substep depends on: it can be saved and
//! restored) and a [`Workspace`] of scratch that can be dropped at any time without changing the
//! result.

use crate::collide::MovingCollider;
use crate::error::{ModelError, SimError};
use crate::forces::Wind;
use crate::integrator::Integrator;
use crate::linalg::Preconditioner;
use crate::model::{GarmentDesc, Model};
use crate::pins::PinTargets;
use crate::report::{FrameReport, Rejection, SubstepReport};
use crate::state::{State, STATE_VERSION};
use crate::step::{self, accept, Substep};
use crate::workspace::Workspace;
use glam::Vec3;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Default of [`SimSettings::strain_jump`]. BW §6 reject a step whose strain changes by more than
/// 10 %; with that bound a 64×64 cotton sheet dropped on a sphere (5 substeps/frame) stretches to
/// 0.23–0.26 strain on impact in substeps that each stay below 0.1, against 0.10 with 4× smaller
/// steps. 0.03 keeps it at 0.09 for 27 % more substeps (BENCHMARKS.md, "what each change bought").
pub const DEFAULT_STRAIN_JUMP: f32 = 0.03;
/// Default of [`SimSettings::strain_jump_floor`]. BW §6 look for a drastic change in stretch
/// because "an unstable step invariably results in stretch changes that are quite large"; a
/// substep that leaves every triangle within 8 % of its rest length is not one, however fast
/// its stretch rose. Below that level the jump rule only cost substeps at impacts: the first
/// contact of the 256² sheet-on-sphere bench jumps 0.24 / 0.14 / 0.06 / 0.025 at h, h/2, h/4,
/// h/8 (halved three times); on the 64² sheet 4 of the 10 rejections ended with the largest
/// stretch at 0.051–0.070. Tries (accepted + rejected) and the output's largest edge stretch, mean
/// (max) over four CG tolerances 0.97–1.06 × 1e-2 (three on the 256² sheet), floor 0 → 0.08
/// (BENCHMARKS.md, "A floor under the strain-jump rule"): 64² sheet 153.2 → 132.8, 0.044
/// (0.049) → 0.040 (0.040); 128² 105.2 → 97.8, 0.050 (0.074) → 0.066 (0.090); 256² 113.3 →
/// 98.7, 0.060 (0.069) → 0.057 (0.059); dress-walk export 282.2 → 255.2, 0.151 (0.172) → 0.156
/// (0.169); skirt-walk 233.0 → 226.0, 0.123 (0.143) → 0.118 (0.143); cape-run 196.2 → 190.2,
/// 0.037 (0.044) → 0.049 (0.054); Blender's own cloth stretches the same sheets 0.65–1.37 and
/// the dress 1.8. At 0.1 the 64² sheet's largest stretch reached 0.12 and the dress's 0.27.
pub const DEFAULT_STRAIN_JUMP_FLOOR: f32 = 0.08;
/// Default of [`SimSettings::cg_tolerance`]. 3e-4 until 2026-11-26 (with the incomplete Cholesky
/// preconditioner more accurate than block Jacobi at 1e-4, the first default; 1e-3 then let a
/// fast capsule push a sheet vertex through, which contact handling no longer allows:
/// tests/collide_sim_tunnel.rs bakes it at 1e-3 and 1e-2), 1e-3 and then 3e-3 until 2026-11-27.
/// 1e-2 is the ε of Blender's own cloth CG (`cg_filtered`), which measures the plain residual
/// against the plain right-hand side; here the residual is measured in the IC(0)
/// preconditioner's norm, close to the error's energy norm, which holds the smooth part of Δv
/// (what a garment's swing is made of) much more tightly than the plain norm does. Against 3e-3,
/// means over 4–10 tolerances each (BENCHMARKS.md, "CG tolerance 1e-2"): 23–40 % fewer CG
/// iterations on the character exports and the sheets, 6–29 % less CPU, no vertex inside a
/// proxy, no self-intersection, and the output's largest edge stretch dress 0.203 → 0.200, cape
/// 0.045 → 0.037, rigged figure 0.034 → 0.029, 128² sheet 0.096 → 0.091, skirt 0.173 → 0.186
/// (its single bakes range over 0.12–0.22 and 0.08–0.28; Blender's 1.4). Near rest the reference
/// impulse, not the right-hand side, sets the accuracy; its floor ([`REST_VELOCITY_FLOOR`])
/// keeps a hanging sheet as still as at 1e-3.
pub const DEFAULT_CG_TOLERANCE: f32 = 1e-2;
/// The reference velocity change of a solve near rest, as a fraction of the velocity gravity
/// gives in one nominal substep (h·|g|, |g| at least 1 m/s²): MPCG stops when the residual is
/// below [`SimSettings::cg_tolerance`] times the larger of the right-hand side and the impulse
/// m_i·REST_VELOCITY_FLOOR·h·|g| per vertex
/// ([`crate::linalg::mpcg::CgSettings::velocity_floor`], set in `step/solve.rs`). Near rest
/// (b ≈ 0) the floor alone sets the accuracy, and errors there keep the cloth moving: the
/// largest speed of a sheet hanging from two corners, over each 2 s from 4 to 24 s, stays at
/// 0.6 mm/s with tolerance × floor = 3e-4 (1e-3 × 0.3 and 3e-3 × 0.1, earlier defaults; 1e-2 ×
/// 0.03: 0.65 mm/s) and at 1.9 mm/s with 3e-3 × 0.3; at 1.0 with 1e-3 it moved at 1.1–2.1 mm/s
/// after 6–24 s.
pub const REST_VELOCITY_FLOOR: f32 = 0.03;
/// Default of [`SimSettings::body_strain_allowance`]. A leg swinging into a hem drags the vertex
/// it meets at the leg's speed (1.3–1.7 m/s on the bpy skirt-walk) while its neighbours lag; the
/// stretch that puts into the hem's triangles within one substep falls with the step (0.44 at
/// h = 1/96 s, 0.25 at h/2, 0.05 at h/4 in one such event), so the earlier rule (0 here) halved
/// the step at nearly every such contact: 25 of the skirt's 30 rejections. Accepted up to 0.15,
/// the next substeps relax it. Substeps (rejected) at 0 / 0.1 / 0.15 / 0.2 / unbounded: bpy
/// skirt-walk 280 (30) / 247 (21) / 240 (16) / 227 (14) / 220 (12), dress-walk 297 (40) / 293 (38)
/// / 253 (25) / 265 (27) / 265 (27). The output frames' largest edge stretch stays below 0.1 on
/// both up to 0.15 (as at 0); at 0.2 two dress hem edges reach 0.21 and 0.23 for a frame, and
/// unbounded one skirt hem edge 0.60 (BENCHMARKS.md, "Strain the bodies' motion imposes").
pub const DEFAULT_BODY_STRAIN_ALLOWANCE: f32 = 0.15;
/// Default of [`SimSettings::strain_limit`]. Woven cloth tears long before it doubles in length;
/// past ten times its rest length a triangle says the simulation is being torn apart (measured on
/// the dress-walk sample with pins left at rest while the figure walks away: strain 1.3 at frame
/// 10, 13 at frame 13, 58 at frame 17, after which the cloth–cloth broad phase's candidates (and
/// memory, 1 GB and climbing) explode).
pub const DEFAULT_STRAIN_LIMIT: f32 = 10.0;
/// Upper bound of [`SimSettings::max_halvings`] (substeps down to 2⁻²⁰ of the nominal size).
pub const MAX_HALVINGS: u32 = 20;
/// After this many accepted substeps in a row a halved substep doubles again (up to the nominal size).
pub const GROW_AFTER: u32 = 4;
/// Default of [`SimSettings::self_contact_damping`]: with β = 4 a two-vertex contact's approach is
/// divided by 5 within the solve. On the `twist` sample (48 frames) β = 0 / 1 / 2 / 4 / 8 gave
/// 945 / 741 / 664 / 407 / 384 accepted substeps with 175 / 143 / 112 / 45 / 41 rejected for
/// cloth–cloth strain; on the dress-walk scene of the character benchmark 539 (96) → 391 (64)
/// substeps (rejected) at β = 4, max strain 0.248 → 0.185 (BENCHMARKS.md, "Cloth–cloth contacts
/// inside the solve").
pub const DEFAULT_SELF_CONTACT_DAMPING: f32 = 4.0;
/// Default linear air damping (kg/(m²·s)); see [`SimSettings::air_damping`]. The smallest of
/// 0.01/0.02/0.05 that brings a 1 m² cotton sheet hanging from two corners to rest (KE < 1e-6 J
/// after 10 s) at h = 1/600 s (0.01: 1.3e-6 J, 0.02: 4.2e-7 J). Physically small: a 1 m² cotton
/// sheet (0.15 kg) moving at 1 m/s feels 0.02 N, 1.4 % of its 1.47 N weight.
pub const DEFAULT_AIR_DAMPING: f32 = 0.02;

/// Solver settings (SI units).
#[derive(Debug, Clone, PartialEq)]
pub struct SimSettings {
    /// Nominal substeps per frame (>= 1).
    pub substeps: u32,
    /// m/s².
    pub gravity: Vec3,
    pub wind: Option<Wind>,
    /// Relative filtered residual at which MPCG stops (in the preconditioner's norm), relative to
    /// the larger of the right-hand side and a reference impulse near rest
    /// ([`REST_VELOCITY_FLOOR`]). Default [`DEFAULT_CG_TOLERANCE`].
    pub cg_tolerance: f32,
    pub cg_max_iterations: u32,
    /// Reject and halve substeps whose strain jumps or whose solve fails (BW §6).
    pub adaptive: bool,
    /// A substep is rejected when the largest triangle stretch (the positive part of the strain,
    /// [`crate::forces::stretch`]: compression does not count) grows by more than this (absolute,
    /// dimensionless) within it, over both the start's largest stretch and the stretch the hard
    /// pins' motion adds to the triangles at the pins (a rig dragging its cloth is not held
    /// against the step; see `step/accept.rs`, `judge`) and, up to
    /// [`Self::body_strain_allowance`], the stretch a moving body's contacts add. Stretch from
    /// impacts and collision corrections still counts: smaller steps do reduce it. Default
    /// [`DEFAULT_STRAIN_JUMP`].
    pub strain_jump: f32,
    /// Stretch (dimensionless, >= 0; 0 = none) at or below which a substep's largest triangle
    /// stretch at its end is not held against [`Self::strain_jump`]: a substep that leaves every
    /// triangle within this is not rejected for how fast its stretch rose. Default
    /// [`DEFAULT_STRAIN_JUMP_FLOOR`]; see `step/accept.rs`, `judge`.
    pub strain_jump_floor: f32,
    /// Stretch (dimensionless, >= 0; 0 = none) up to which the motion of the bodies a vertex is in
    /// contact with may stretch that vertex's triangles without holding it against the step:
    /// like the pins' driven motion in [`Self::strain_jump`]'s rule, the strain a moving body's
    /// contacts add to their triangles (against the same contacts on a body at rest) is not
    /// held against the step up to this level, and so is the body's share of the projection out
    /// of it (the surface's own advance into a vertex). Impacts on bodies at rest are judged as
    /// before.
    /// Default [`DEFAULT_BODY_STRAIN_ALLOWANCE`]; see `step/accept.rs`, `judge`.
    pub body_strain_allowance: f32,
    /// Most halvings of one substep before giving up (non-finite: error; otherwise accepted and
    /// reported as a CG failure).
    pub max_halvings: u32,
    /// Linear air damping c (kg/(m²·s) = N·s/m³): per-vertex drag f_i = −c·A_i·(v_i − v_air) with
    /// A_i the vertex's lumped rest area and v_air the wind velocity (zero without wind); Blender's
    /// "air viscosity". Default [`DEFAULT_AIR_DAMPING`].
    pub air_damping: f32,
    /// A substep that ends with a triangle stretched beyond this strain (dimensionless; 10 = eleven
    /// times its rest length), even at the smallest substep, fails the frame with
    /// [`SimError::Torn`]. Default [`DEFAULT_STRAIN_LIMIT`].
    pub strain_limit: f32,
    /// MPCG preconditioner. Default [`Preconditioner::Auto`]: resolved by [`Simulation::new`]
    /// from the rest mesh ([`crate::linalg::choice::resolve`]); [`Simulation::settings`] shows the
    /// choice.
    pub preconditioner: Preconditioner,
    /// Deflate the translations of vertex aggregates on a coarse system inside the IC(0) solve
    /// ([`crate::linalg::deflation`]; default on): far fewer CG iterations on garments.
    pub deflation: bool,
    /// Find the cloth–cloth proximity contacts of a substep on another thread while its linear
    /// solve runs, when the solve is small enough to run on one thread (default on). The result
    /// is the same to the bit either way; off, they are found after the solve. With
    /// [`Self::self_contact_damping`], which needs them before the solve, they are found beside
    /// it when the last substep damped no approaching contact, and the solve is repeated with the
    /// damping if some contact now approaches (the same bits again).
    pub proximity_ahead: bool,
    /// Time integrator of the substeps (default backward Euler; see
    /// [`crate::integrator::method`]).
    pub integrator: Integrator,
    /// Projected air damping (Boxerman 2003 §3.3): `air_damping` acts only on the non-rigid part
    /// of each piece of cloth's velocity, so free fall and rigid rotation are not slowed by it
    /// ([`crate::integrator::projected_damping`]). Default off.
    pub damping_projection: bool,
    /// Newton iterations of the implicit stage per substep (default 1, as BW; 2..=8 experimental:
    /// see `step/newton.rs`).
    pub newton_iterations: u32,
    /// Kang's updates per substep k under `integrator = kang` (odd, >= 1; Kang 2003 eq. 4.8–4.9,
    /// default [`crate::integrator::kang::DEFAULT_ITERATIONS`]).
    pub kang_iterations: u32,
    /// Relaxation passes per substep under `integrator = verlet` (>= 1; default
    /// [`crate::integrator::verlet::DEFAULT_ITERATIONS`]).
    pub verlet_iterations: u32,
    /// Cloth–cloth contacts inside the implicit solve: every proximity contact (closer than the
    /// thickness at the start of the substep, BFA02 §6.1) whose two sides approach gets a normal
    /// damper pulling each stencil vertex's normal velocity towards the stencil's common one, with
    /// h·c = β·|w_k|·m_k (dimensionless β; [`crate::self_contact::SelfContact::implicit_damping`]),
    /// so the solve slows the neighbours of a vertex that is about to be stopped instead of the
    /// post-solve repulsion stopping it alone. 0 = off (the repulsion after the solve does it all,
    /// and the contacts are found beside the solve, [`Self::proximity_ahead`]). Default
    /// [`DEFAULT_SELF_CONTACT_DAMPING`].
    pub self_contact_damping: f32,
    /// Measure the largest strain after the solve and after the projection out of the colliders
    /// in every substep report (`SubstepReport::solve_strain`, `projected_strain`: which stage
    /// raised the strain the step-size controller judges). Diagnostics only, off by default: two
    /// strain passes over every triangle per substep, 2–3 % of a dress bake's CPU time.
    pub stage_strains: bool,
    /// Measure the smallest vertex–collider distance of every substep
    /// (`SubstepReport::min_collider_distance` and the frame's minimum of it; default on).
    /// Diagnostics only: off, those are +inf and the substep skips the distance evaluations only
    /// they need: a pass over every vertex after cloth–cloth collision, and in the projection
    /// out of the colliders the pairs only the distance needs (the same vertices move to the same
    /// bits, [`crate::collide::DistanceReport::Unreported`]). The bake command
    /// measures its frames' distances itself and turns it off.
    pub collider_distances: bool,
}

impl Default for SimSettings {
    fn default() -> Self {
        SimSettings {
            substeps: 5,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            wind: None,
            cg_tolerance: DEFAULT_CG_TOLERANCE,
            cg_max_iterations: 200,
            adaptive: true,
            strain_jump: DEFAULT_STRAIN_JUMP,
            strain_jump_floor: DEFAULT_STRAIN_JUMP_FLOOR,
            body_strain_allowance: DEFAULT_BODY_STRAIN_ALLOWANCE,
            max_halvings: 4,
            air_damping: DEFAULT_AIR_DAMPING,
            strain_limit: DEFAULT_STRAIN_LIMIT,
            preconditioner: Preconditioner::default(),
            deflation: true,
            proximity_ahead: true,
            integrator: Integrator::default(),
            damping_projection: false,
            newton_iterations: 1,
            kang_iterations: crate::integrator::kang::DEFAULT_ITERATIONS,
            verlet_iterations: crate::integrator::verlet::DEFAULT_ITERATIONS,
            stage_strains: false,
            collider_distances: true,
            self_contact_damping: DEFAULT_SELF_CONTACT_DAMPING,
        }
    }
}

impl SimSettings {
    fn validate(&self) -> Result<(), ModelError> {
        let bad = |field, value: f64, expected| {
            Err(ModelError::Settings {
                field,
                value,
                expected,
            })
        };
        if self.substeps == 0 {
            return bad("substeps", 0.0, ">= 1");
        }
        if !self.gravity.is_finite() {
            return bad("gravity", f64::NAN, "finite");
        }
        if !(self.cg_tolerance.is_finite() && self.cg_tolerance > 0.0) {
            return bad("cg_tolerance", self.cg_tolerance as f64, "finite and > 0");
        }
        if !(self.strain_jump.is_finite() && self.strain_jump > 0.0) {
            return bad("strain_jump", self.strain_jump as f64, "finite and > 0");
        }
        if !(self.strain_jump_floor.is_finite() && self.strain_jump_floor >= 0.0) {
            return bad(
                "strain_jump_floor",
                self.strain_jump_floor as f64,
                "finite and >= 0",
            );
        }
        if !(self.body_strain_allowance.is_finite() && self.body_strain_allowance >= 0.0) {
            return bad(
                "body_strain_allowance",
                self.body_strain_allowance as f64,
                "finite and >= 0",
            );
        }
        if !(self.self_contact_damping.is_finite() && self.self_contact_damping >= 0.0) {
            return bad(
                "self_contact_damping",
                self.self_contact_damping as f64,
                "finite and >= 0",
            );
        }
        if self.max_halvings > MAX_HALVINGS {
            return bad("max_halvings", self.max_halvings as f64, "<= 20");
        }
        if !(1..=8).contains(&self.newton_iterations) {
            return bad("newton_iterations", self.newton_iterations as f64, "1..=8");
        }
        if self.newton_iterations > 1
            && matches!(
                self.integrator,
                Integrator::Aimex | Integrator::Kang | Integrator::Verlet
            )
        {
            // AIMEX's explicit elements are evaluated once at the substep's start (further Newton
            // iterations would re-linearise them too); Kang approximates the one linear solve and
            // Verlet has none.
            return bad(
                "newton_iterations",
                self.newton_iterations as f64,
                "1 with integrator aimex, kang or verlet",
            );
        }
        if self.kang_iterations.is_multiple_of(2) {
            return bad(
                "kang_iterations",
                self.kang_iterations as f64,
                "odd: Kang 2003 §4.2, small even counts are unstable",
            );
        }
        if self.damping_projection && self.integrator == Integrator::Verlet {
            // Verlet applies air damping as an explicit force inside its own substep.
            return bad("damping_projection", 1.0, "false with integrator verlet");
        }
        if self.verlet_iterations == 0 {
            return bad("verlet_iterations", 0.0, ">= 1");
        }
        if self.cg_max_iterations == 0 {
            return bad("cg_max_iterations", 0.0, ">= 1");
        }
        if !(self.strain_limit.is_finite() && self.strain_limit > 0.0) {
            return bad("strain_limit", self.strain_limit as f64, "finite and > 0");
        }
        if !(self.air_damping.is_finite() && self.air_damping >= 0.0) {
            return bad("air_damping", self.air_damping as f64, "finite and >= 0");
        }
        if let Some(w) = &self.wind {
            if !(w.velocity.is_finite()
                && w.air_density.is_finite()
                && w.air_density >= 0.0
                && w.drag.is_finite()
                && w.lift.is_finite())
            {
                return bad("wind", f64::NAN, "finite, air_density >= 0");
            }
        }
        Ok(())
    }
}

/// The simulation: immutable model, the state, and the reusable workspace.
pub struct Simulation {
    model: Model,
    settings: SimSettings,
    state: State,
    ws: Workspace,
    /// Every substep attempted in the last frame (accepted and rejected), reused between frames.
    substep_log: Vec<SubstepReport>,
    /// Raised by another thread to stop the current frame before its next substep.
    stop: Option<Arc<AtomicBool>>,
    /// `preconditioner = "auto"` resolved to IC(0): the solves are watched and may move to AMG
    /// ([`crate::linalg::choice::AutoWatch`]).
    watch_preconditioner: bool,
    /// The report of the substeps a stop interrupted the current frame after
    /// ([`SimError::Stopped`] inside a frame): the call that continues the frame adds to it, so
    /// its report counts every substep of the frame. Not part of [`State`]: no result depends on it.
    unfinished: Option<FrameReport>,
}

/// Why a saved [`State`] cannot be restored into a simulation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RestoreError {
    #[error("state version {found}, this build reads version {expected}")]
    Version { found: u32, expected: u32 },
    #[error("the state's {field} has {found} entries, the model needs {expected}")]
    Size {
        field: &'static str,
        found: usize,
        expected: usize,
    },
    #[error("the state's {field} is not finite")]
    NonFinite { field: &'static str },
    /// A clock or controller value these settings can never produce.
    #[error("the state's {field} is {found}, these settings allow at most {limit}")]
    Range {
        field: &'static str,
        found: u64,
        limit: u64,
    },
}

impl Simulation {
    /// Validates the garments (errors name garment and element) and builds the model.
    pub fn new(garments: Vec<GarmentDesc>, settings: SimSettings) -> Result<Self, ModelError> {
        settings.validate()?;
        let model = Model::new(&garments)?;
        let mut settings = settings;
        let requested = settings.preconditioner;
        settings.preconditioner =
            crate::linalg::choice::resolve(requested, &model.rest_positions, &model.triangles);
        let watch_preconditioner = requested == Preconditioner::Auto
            && settings.preconditioner == Preconditioner::IncompleteCholesky;
        let state = State::at_rest(&model.initial_positions, PinTargets::new(&model));
        Ok(Simulation {
            ws: Workspace::new(&model)?,
            state,
            settings,
            substep_log: Vec::new(),
            stop: None,
            watch_preconditioner,
            unfinished: None,
            model,
        })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn settings(&self) -> &SimSettings {
        &self.settings
    }

    /// Everything the next substep depends on (clone it to save the simulation).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The report so far of a frame stopped between its substeps ([`SimError::Stopped`] with the
    /// state inside the frame), which the next [`Self::step_frame`] continues; None otherwise.
    /// Saved beside the state, it lets a resumed bake report that frame whole.
    pub fn unfinished_frame(&self) -> Option<&FrameReport> {
        self.unfinished.as_ref()
    }

    /// Restores [`Self::unfinished_frame`] (after [`Self::restore_state`] of a state inside a
    /// frame). Ignored when the state is at a frame boundary.
    pub fn restore_unfinished_frame(&mut self, report: FrameReport) {
        self.unfinished = (self.state.clock.substep_pos > 0).then_some(report);
    }

    /// Continues from a saved state of `version` (that of the build that saved it,
    /// [`STATE_VERSION`]): the next frames are bit-identical to those of the simulation it was
    /// saved from. Checked against the model's sizes; the workspace is kept (it does not affect
    /// the result).
    pub fn restore_state(&mut self, state: State, version: u32) -> Result<(), RestoreError> {
        if version != STATE_VERSION {
            return Err(RestoreError::Version {
                found: version,
                expected: STATE_VERSION,
            });
        }
        let n = self.model.vertex_count();
        let pins = self.model.pins.len();
        for (field, found, expected) in [
            ("x", state.x.len(), n),
            ("v", state.v.len(), n),
            ("dv", state.dv.len(), n),
            ("contacts", state.contacts.len(), n),
            ("pins", state.pins.len(), pins),
        ] {
            if found != expected {
                return Err(RestoreError::Size {
                    field,
                    found,
                    expected,
                });
            }
        }
        if !state.pins.is_consistent() {
            return Err(RestoreError::Size {
                field: "pins (frame-start targets)",
                found: state.pins.start_len(),
                expected: pins,
            });
        }
        // The substep grid and the step size controller of these settings (see `step_frame`): a
        // state from other settings, or a damaged one, would shift past the grid or never end
        // its frame.
        let max_halvings = self.settings.max_halvings;
        let grid = self.settings.substeps as u64 * (1u64 << max_halvings);
        for (field, found, limit) in [
            (
                "controller.h_scale",
                state.controller.h_scale as u64,
                max_halvings as u64,
            ),
            ("clock.substep_pos", state.clock.substep_pos, grid - 1),
        ] {
            if found > limit {
                return Err(RestoreError::Range {
                    field,
                    found,
                    limit,
                });
            }
        }
        for (field, found) in [
            ("prev_x", state.prev_x.len()),
            ("prev_v", state.prev_v.len()),
        ] {
            if found != 0 && found != n {
                return Err(RestoreError::Size {
                    field,
                    found,
                    expected: n,
                });
            }
        }
        let finite = |v: &[Vec3]| v.iter().all(|p| p.is_finite());
        for (field, ok) in [
            ("x", finite(&state.x)),
            ("v", finite(&state.v)),
            ("dv", finite(&state.dv)),
            ("prev_x", finite(&state.prev_x)),
            ("prev_v", finite(&state.prev_v)),
            ("prev_h", state.prev_h.is_finite()),
            ("pins", state.pins.is_finite()),
            ("clock", state.clock.time.is_finite()),
            (
                "contacts (normal force)",
                state.contacts.iter().all(|c| c.normal_force.is_finite()),
            ),
        ] {
            if !ok {
                return Err(RestoreError::NonFinite { field });
            }
        }
        self.state = state;
        // A report of another state's frame does not continue into this one.
        self.unfinished = None;
        Ok(())
    }

    /// Moves the simulation frame by −`d` (m): every position of the state moves by `d`
    /// ([`State::translate`]) and the workspace, which may hold positions of the old frame, is
    /// rebuilt. A caller that keeps cloth far from its origin this way (f32 positions lose
    /// resolution with distance) passes colliders and pin targets in the new frame from then on.
    pub fn translate(&mut self, d: Vec3) -> Result<(), ModelError> {
        self.state.translate(d);
        self.rebuild_workspace()
    }

    /// Drops the workspace and builds a new one (no effect on the result; frees nothing that is
    /// not rebuilt at once, so it is for tests and for callers that want to prove that).
    pub fn rebuild_workspace(&mut self) -> Result<(), ModelError> {
        self.ws = Workspace::new(&self.model)?;
        Ok(())
    }

    /// Simulated time (s) since the start.
    pub fn time(&self) -> f64 {
        self.state.clock.time
    }

    /// A flag another thread (a signal handler, a UI) can raise to stop a long frame early: the
    /// next substep of [`Self::step_frame`] does not start and the frame fails with
    /// [`SimError::Stopped`], leaving the state at the last accepted substep (calling
    /// `step_frame` again with the same inputs finishes the frame). A frame is stopped before it
    /// begins or once one of its substeps is accepted, never in between (its pin targets are
    /// then already in the state and a new call could not tell).
    pub fn set_stop_flag(&mut self, flag: Arc<AtomicBool>) {
        self.stop = Some(flag);
    }

    /// Reports of every substep attempted during the last [`Self::step_frame`] (in order; rejected
    /// ones have `rejected` set).
    pub fn substep_reports(&self) -> &[SubstepReport] {
        &self.substep_log
    }

    /// Current positions (m) of garment `g` (empty if out of range).
    pub fn garment_positions(&self, g: usize) -> &[Vec3] {
        self.model
            .garments
            .get(g)
            .map_or(&[], |r| &self.state.x[r.vertices.clone()])
    }

    /// Current velocities (m/s) of garment `g`.
    pub fn garment_velocities(&self, g: usize) -> &[Vec3] {
        self.model
            .garments
            .get(g)
            .map_or(&[], |r| &self.state.v[r.vertices.clone()])
    }

    /// Advances one frame of `dt` seconds. `colliders[k]` gives collider k's shape at the start and end
    /// of the frame; `pin_targets[g]` the end-of-frame targets of garment g's vertices (only pinned
    /// ones are read; `None` = pins stay). The state lands exactly on the frame time. On error the
    /// state is left at the last accepted substep. A frame stopped between substeps
    /// ([`SimError::Stopped`]) continues where it stopped when called again with the same inputs
    /// (its pin targets are then already in the state).
    pub fn step_frame(
        &mut self,
        dt: f32,
        colliders: &[MovingCollider],
        pin_targets: &[Option<&[Vec3]>],
    ) -> Result<FrameReport, SimError> {
        // The same bits either way; the pool's other worker stays awake between the passes.
        crate::spinning_partner::with_partner_spinning(|| {
            self.step_frame_alone(dt, colliders, pin_targets)
        })
    }

    /// [`Self::step_frame`] without the spinning partner.
    fn step_frame_alone(
        &mut self,
        dt: f32,
        colliders: &[MovingCollider],
        pin_targets: &[Option<&[Vec3]>],
    ) -> Result<FrameReport, SimError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(SimError::Input(format!(
                "frame length dt = {dt} s must be finite and > 0"
            )));
        }
        for (k, c) in colliders.iter().enumerate() {
            c.validate(k).map_err(|e| SimError::Input(e.to_string()))?;
        }
        // A frame that has begun (its pin targets are in the state) stops only once a substep of
        // it is accepted (substep_pos > 0): stopped at position 0, the call that continues it
        // would begin it again and shift the targets twice.
        let stopped = |stop: &Option<Arc<AtomicBool>>| {
            stop.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
        };
        let unfinished = self.unfinished.take();
        if self.state.clock.substep_pos == 0 {
            if stopped(&self.stop) {
                return Err(SimError::Stopped {
                    time: self.state.clock.time,
                });
            }
            self.state.pins.begin_frame(&self.model, pin_targets)?;
        }
        let mut report = match unfinished {
            Some(r) if self.state.clock.substep_pos > 0 => r,
            _ => FrameReport::new(),
        };
        self.substep_log.clear();
        let settings = &self.settings;
        let nominal = dt / settings.substeps as f32;
        // Frame fractions are integers over a power-of-two grid so substeps land exactly on dt.
        let grid = settings.substeps as u64 * (1u64 << settings.max_halvings);
        let full = grid / settings.substeps as u64;
        let (state, ws) = (&mut self.state, &mut self.ws);
        while state.clock.substep_pos < grid {
            if state.clock.substep_pos > 0 && stopped(&self.stop) {
                self.unfinished = Some(report);
                return Err(SimError::Stopped {
                    time: state.clock.time,
                });
            }
            let pos = state.clock.substep_pos;
            let step = (full >> state.controller.h_scale).max(1).min(grid - pos);
            let sub = Substep {
                dt,
                h: nominal * step as f32 / full as f32,
                s0: pos as f32 / grid as f32,
                s1: (pos + step) as f32 / grid as f32,
                colliders,
            };
            let mut r = match step::substep(&self.model, settings, state, ws, sub) {
                Ok(r) => r,
                Err(e) => {
                    state.copy_from(&ws.start);
                    return Err(e);
                }
            };
            let non_finite = accept::first_non_finite(state);
            let bad = non_finite.is_some() || (settings.adaptive && r.rejected.is_some());
            if bad && settings.adaptive && state.controller.h_scale < settings.max_halvings {
                r.rejected = r.rejected.or(Some(Rejection::NonFiniteState));
                report.reject(&r);
                accept::reject(state, ws);
                if self.watch_preconditioner && r.rejected == Some(Rejection::CgNotConverged) {
                    let frames = state.clock.frames as u32;
                    let watch = &mut state.controller.auto_preconditioner;
                    watch.count(false, frames);
                }
                self.substep_log.push(r);
                continue;
            }
            if let Some(vertex) = non_finite {
                accept::restore(state, ws);
                let garment = self.model.garment_of(vertex);
                let local = vertex - self.model.garments[garment].vertices.start;
                return Err(SimError::NonFinite {
                    garment,
                    vertex: local as u32,
                    time: state.clock.time,
                });
            }
            if r.cg.non_finite {
                // Even the smallest substep's solve is unusable (the velocities would silently keep
                // their start values): fail the frame instead of freezing the cloth.
                accept::restore(state, ws);
                return Err(SimError::SolveNonFinite {
                    time: state.clock.time,
                    h: sub.h,
                    halvings: state.controller.h_scale,
                });
            }
            if r.max_strain > settings.strain_limit {
                accept::restore(state, ws);
                let t = r.worst_triangle as usize;
                let garment = self.model.garment_of(self.model.triangles[t][0] as usize);
                let first = self.model.garments[garment].triangles.start;
                return Err(SimError::Torn {
                    garment,
                    triangle: (t - first) as u32,
                    strain: r.max_strain,
                    limit: settings.strain_limit,
                    time: state.clock.time,
                });
            }
            // Accepted (possibly at the smallest size, or with adaptive stepping off): a CG failure
            // stays visible in `cg.converged` and the frame's `cg_failures`.
            r.rejected = None;
            report.accept(&r);
            self.substep_log.push(r);
            accept::accept(state, ws, sub.h, step, settings.integrator);
            if self.watch_preconditioner {
                let frames = state.clock.frames as u32;
                let watch = &mut state.controller.auto_preconditioner;
                watch.count(r.cg.converged, frames);
            }
        }
        state.clock.substep_pos = 0;
        state.clock.frames += 1;
        Ok(report)
    }
}
