//! The public simulation driver: frames split into substeps of one backward-Euler Newton step each,
//! with contacts, pins, optional cloth–cloth collision and adaptive substep halving (BW §6).

use crate::collide::{ContactDetector, MovingCollider, VertexContact};
use crate::constraints::Constraints;
use crate::error::{ModelError, SimError};
use crate::forces::{strain, Wind};
use crate::integrator::{Assembly, StepInputs};
use crate::linalg::{reduce, CgSettings, Mpcg, Preconditioner, Problem};
use crate::model::{GarmentDesc, Model};
use crate::pins::PinTargets;
use crate::report::{FrameReport, StageTimes, SubstepReport};
use crate::self_contact::SelfContact;
use crate::state::State;
use glam::Vec3;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Default of [`SimSettings::strain_jump`]. BW §6 reject a step whose strain changes by more than
/// 10 %; with that bound a 64×64 cotton sheet dropped on a sphere (5 substeps/frame) stretches to
/// 0.23–0.26 strain on impact in substeps that each stay below 0.1, against 0.10 with 4× smaller
/// steps. 0.03 keeps it at 0.09 for 27 % more substeps (BENCHMARKS.md, "what each change bought").
pub const DEFAULT_STRAIN_JUMP: f32 = 0.03;
/// Vertices farther than this (m) from every collider are left out of the reported minimum distance.
const REPORT_WITHIN: f32 = 0.05;
/// Upper bound of [`SimSettings::max_halvings`] (substeps down to 2⁻²⁰ of the nominal size).
pub const MAX_HALVINGS: u32 = 20;
/// After this many accepted substeps in a row a halved substep doubles again (up to the nominal size).
pub const GROW_AFTER: u32 = 4;
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
    /// Relative filtered residual at which MPCG stops (in the preconditioner's norm). Default 3e-4:
    /// with the incomplete Cholesky preconditioner a solve at 3e-4 is more accurate than one at 1e-4
    /// with block Jacobi (the earlier default); 1e-3 let a fast capsule push a sheet vertex through
    /// (tests/collide_sim_tunnel.rs). Measurements in BENCHMARKS.md.
    pub cg_tolerance: f32,
    pub cg_max_iterations: u32,
    /// Reject and halve substeps whose strain jumps or whose solve fails (BW §6).
    pub adaptive: bool,
    /// A substep is rejected when the largest triangle strain grows by more than this (absolute,
    /// dimensionless) within it. Default [`DEFAULT_STRAIN_JUMP`].
    pub strain_jump: f32,
    /// Most halvings of one substep before giving up (non-finite: error; otherwise accepted and
    /// reported as a CG failure).
    pub max_halvings: u32,
    /// Linear air damping c (kg/(m²·s) = N·s/m³): per-vertex drag f_i = −c·A_i·(v_i − v_air) with
    /// A_i the vertex's lumped rest area and v_air the wind velocity (zero without wind); Blender's
    /// "air viscosity". Default [`DEFAULT_AIR_DAMPING`].
    pub air_damping: f32,
    /// MPCG preconditioner (default block incomplete Cholesky).
    pub preconditioner: Preconditioner,
    /// Find the cloth–cloth proximity contacts of a substep on another thread while its linear
    /// solve runs, when the solve is small enough to run on one thread (default on). The result
    /// is the same to the bit either way; off, they are found after the solve.
    pub proximity_ahead: bool,
}

impl Default for SimSettings {
    fn default() -> Self {
        SimSettings {
            substeps: 5,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            wind: None,
            cg_tolerance: 3e-4,
            cg_max_iterations: 200,
            adaptive: true,
            strain_jump: DEFAULT_STRAIN_JUMP,
            max_halvings: 4,
            air_damping: DEFAULT_AIR_DAMPING,
            preconditioner: Preconditioner::default(),
            proximity_ahead: true,
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
        if self.max_halvings > MAX_HALVINGS {
            return bad("max_halvings", self.max_halvings as f64, "<= 20");
        }
        if self.cg_max_iterations == 0 {
            return bad("cg_max_iterations", 0.0, ">= 1");
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

/// The simulation: immutable model, changing state and every reusable workspace.
pub struct Simulation {
    model: Model,
    settings: SimSettings,
    state: State,
    /// State at the start of the current substep (restored on rejection).
    start: State,
    pins: PinTargets,
    assembly: Assembly,
    cg: Mpcg,
    constraints: Constraints,
    detector: ContactDetector,
    contacts: Vec<VertexContact>,
    sub_colliders: Vec<MovingCollider>,
    /// Velocity change of the last solve (MPCG warm start) and predicted positions.
    dv: Vec<Vec3>,
    predicted: Vec<Vec3>,
    self_contact: Option<SelfContact>,
    /// Per vertex: held by a collider this substep (contact or projection).
    held: Vec<bool>,
    /// Every substep attempted in the last frame (accepted and rejected), reused between frames.
    substep_log: Vec<SubstepReport>,
    /// Raised by another thread to stop the current frame before its next substep.
    stop: Option<Arc<AtomicBool>>,
    /// Substep size carried between frames by the adaptive step (s), and accepted-in-a-row count.
    h_scale: u32,
    accepted_in_row: u32,
    time: f64,
}

impl Simulation {
    /// Validates the garments (errors name garment and element) and builds the model.
    pub fn new(garments: Vec<GarmentDesc>, settings: SimSettings) -> Result<Self, ModelError> {
        settings.validate()?;
        let model = Model::new(&garments)?;
        let n = model.vertex_count();
        let state = State::at_rest(&model.initial_positions);
        Ok(Simulation {
            pins: PinTargets::new(&model),
            assembly: Assembly::new(&model),
            start: state.clone(),
            state,
            settings,
            cg: Mpcg::new(),
            constraints: Constraints::default(),
            detector: ContactDetector::new(),
            contacts: Vec::new(),
            sub_colliders: Vec::new(),
            dv: vec![Vec3::ZERO; n],
            predicted: vec![Vec3::ZERO; n],
            self_contact: SelfContact::new(&model)?,
            held: vec![false; n],
            substep_log: Vec::new(),
            stop: None,
            h_scale: 0,
            accepted_in_row: 0,
            time: 0.0,
            model,
        })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn settings(&self) -> &SimSettings {
        &self.settings
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// Simulated time (s) since the start.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// A flag another thread (a signal handler, a UI) can raise to stop a long frame early: the
    /// next substep of [`Self::step_frame`] does not start and the frame fails with
    /// [`SimError::Stopped`], leaving the state at the last accepted substep.
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
    /// state is left at the last accepted substep.
    pub fn step_frame(
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
        self.pins.begin_frame(&self.model, pin_targets)?;
        let mut report = FrameReport::new();
        self.substep_log.clear();
        let nominal = dt / self.settings.substeps as f32;
        // Frame fractions are integers over a power-of-two grid so substeps land exactly on dt.
        let grid = self.settings.substeps as u64 * (1u64 << self.settings.max_halvings);
        let full = grid / self.settings.substeps as u64;
        let mut pos: u64 = 0;
        while pos < grid {
            if self
                .stop
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
            {
                return Err(SimError::Stopped { time: self.time });
            }
            let step = (full >> self.h_scale).max(1).min(grid - pos);
            let (s0, s1) = (pos as f32 / grid as f32, (pos + step) as f32 / grid as f32);
            let h = nominal * step as f32 / full as f32;
            let sub = match self.substep(dt, h, s0, s1, colliders) {
                Ok(sub) => sub,
                Err(e) => {
                    self.state.copy_from(&self.start);
                    return Err(e);
                }
            };
            let non_finite = self.first_non_finite();
            let bad = non_finite.is_some() || (self.settings.adaptive && sub.rejected.is_some());
            if bad && self.settings.adaptive && self.h_scale < self.settings.max_halvings {
                let mut r = sub;
                r.rejected = r.rejected.or(Some("non-finite state"));
                report.reject(&r);
                self.substep_log.push(r);
                self.state.copy_from(&self.start);
                self.dv.iter_mut().for_each(|d| *d = Vec3::ZERO);
                self.h_scale += 1;
                self.accepted_in_row = 0;
                continue;
            }
            if let Some(vertex) = non_finite {
                self.state.copy_from(&self.start);
                self.dv.iter_mut().for_each(|d| *d = Vec3::ZERO);
                let garment = self.model.garment_of(vertex);
                let local = vertex - self.model.garments[garment].vertices.start;
                return Err(SimError::NonFinite {
                    garment,
                    vertex: local as u32,
                    time: self.time,
                });
            }
            if sub.cg.non_finite {
                // Even the smallest substep's solve is unusable (the velocities would silently keep
                // their start values): fail the frame instead of freezing the cloth.
                self.state.copy_from(&self.start);
                self.dv.iter_mut().for_each(|d| *d = Vec3::ZERO);
                return Err(SimError::SolveNonFinite {
                    time: self.time,
                    h,
                    halvings: self.h_scale,
                });
            }
            self.constraints.commit();
            // Accepted (possibly at the smallest size, or with adaptive stepping off): a CG failure
            // stays visible in `cg.converged` and the frame's `cg_failures`.
            let mut sub = sub;
            sub.rejected = None;
            report.accept(&sub);
            self.substep_log.push(sub);
            self.time += h as f64;
            pos += step;
            self.accepted_in_row += 1;
            if self.h_scale > 0 && self.accepted_in_row >= GROW_AFTER {
                self.h_scale -= 1;
                self.accepted_in_row = 0;
            }
        }
        Ok(report)
    }

    /// First vertex with a non-finite position or velocity.
    fn first_non_finite(&self) -> Option<usize> {
        self.state
            .x
            .par_iter()
            .zip(self.state.v.par_iter())
            .position_first(|(x, v)| !(x.is_finite() && v.is_finite()))
    }

    /// One backward-Euler Newton step of length `h` from frame fraction `s0` to `s1`. On return
    /// `self.state` holds the end state, `self.start` the start state.
    fn substep(
        &mut self,
        dt: f32,
        h: f32,
        s0: f32,
        s1: f32,
        colliders: &[MovingCollider],
    ) -> Result<SubstepReport, SimError> {
        let mut times = StageTimes::default();
        let mut clock = Instant::now();
        let mut lap = |slot: &mut f64| {
            let now = Instant::now();
            *slot += (now - clock).as_secs_f64();
            clock = now;
        };
        let n = self.model.vertex_count();
        self.start.copy_from(&self.state);
        let (x0, v0) = (&self.start.x, &self.start.v);
        self.constraints.begin(n);
        lap(&mut times.other);

        // Contacts against the colliders interpolated to this substep, predicted x0 + h·v0.
        self.sub_colliders.clear();
        for c in colliders {
            self.sub_colliders.push(MovingCollider {
                start: c.at(s0),
                end: c.at(s1),
            });
        }
        self.predicted
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, p)| *p = x0[i] + h * v0[i]);
        // Hard pins first (they override contacts), then contacts, then goal springs (which read y).
        for (k, pin) in self.model.pins.iter().enumerate() {
            if pin.weight >= 1.0 {
                let i = pin.vertex as usize;
                self.constraints.hard_pin(
                    i,
                    self.pins.at(k, s1),
                    self.pins.velocity(k, dt),
                    x0[i],
                    v0[i],
                    h,
                );
            }
        }
        if !self.sub_colliders.is_empty() {
            self.detector
                .detect(
                    &self.sub_colliders,
                    h,
                    x0,
                    &self.predicted,
                    &self.model.thickness,
                    &mut self.contacts,
                )
                .map_err(|e| SimError::Input(e.to_string()))?;
            self.constraints
                .add_contacts(&self.contacts, &self.model, x0, v0, h);
        }
        for (k, pin) in self.model.pins.iter().enumerate() {
            if pin.weight < 1.0 {
                let i = pin.vertex as usize;
                self.constraints.goal_spring(
                    i,
                    self.model.pin_spring[k],
                    self.pins.at(k, s1),
                    x0[i],
                    v0[i],
                    h,
                );
            }
        }
        lap(&mut times.collide);

        let inputs = StepInputs {
            x0,
            v0,
            h,
            gravity: self.settings.gravity,
            wind: self.settings.wind.as_ref(),
            air_damping: self.settings.air_damping,
        };
        let settings = CgSettings {
            tolerance: self.settings.cg_tolerance,
            max_iterations: self.settings.cg_max_iterations,
            velocity_floor: h * self.settings.gravity.length().max(1.0),
            preconditioner: self.settings.preconditioner,
        };
        let start_strain = self
            .assembly
            .assemble(&self.model, &inputs, &self.constraints);
        lap(&mut times.assemble);

        let problem = Problem {
            a: &self.assembly.matrix,
            b: &self.assembly.b,
            filter: &self.constraints.filter,
            z: &self.constraints.z,
            mass: &self.model.mass,
        };
        let (mpcg, dv) = (&mut self.cg, &mut self.dv);
        let mut solve = move || {
            let clock = Instant::now();
            let cg = mpcg.solve(&problem, dv, settings);
            (cg, clock.elapsed().as_secs_f64())
        };
        // A solve below the parallel size runs on one thread and leaves the others idle: the
        // cloth–cloth proximity contacts, which depend only on x0, are found meanwhile.
        let ahead = match &mut self.self_contact {
            Some(sc) if self.settings.proximity_ahead && !reduce::parallel(n) => Some(sc),
            _ => None,
        };
        let ((cg, solved), prepared) = match ahead {
            Some(sc) => {
                let gravity = self.settings.gravity;
                let (solve, prep) = rayon::join(solve, || sc.prepare(x0, v0, h, gravity));
                (solve, Some(prep))
            }
            None => (solve(), None),
        };
        let mut joined = 0.0;
        lap(&mut joined);
        times.solve += solved;
        if let Some(prep) = prepared {
            // Waiting for the proximity contacts after the solve counts as cloth–cloth time.
            times.self_collide += (joined - solved).max(0.0);
            times.self_ahead = prep.total();
            times.self_parts.add(&prep);
        }

        // v1 = v0 + Δv, x1 = x0 + h·v1 + y.
        let (dv, y) = (&self.dv, &self.constraints.y);
        self.state
            .v
            .par_iter_mut()
            .zip(self.state.x.par_iter_mut())
            .enumerate()
            .for_each(|(i, (v, x))| {
                *v = v0[i] + dv[i];
                *x = x0[i] + h * *v + y[i];
            });
        lap(&mut times.other);

        self.constraints.apply_friction(
            &self.model,
            &self.assembly.matrix,
            &self.assembly.b,
            &self.dv,
            h,
            &mut self.state.x,
            &mut self.state.v,
        );
        // Body projection first, then cloth–cloth collision with every vertex the bodies hold
        // (contacts and projected vertices) immovable, so nothing is pushed back through cloth.
        let mut min_distance = self.project_out_of_colliders(h)?;
        lap(&mut times.collide);
        let (self_contacts, unresolved) = match &mut self.self_contact {
            Some(sc) => {
                for c in &self.constraints.active {
                    self.held[c.vertex as usize] = true;
                }
                let r = sc.apply(
                    &self.start.x,
                    &mut self.state.x,
                    &mut self.state.v,
                    h,
                    &self.held,
                    &self.sub_colliders,
                );
                lap(&mut times.self_collide);
                times.self_parts.add(&r.times);
                min_distance = self.min_collider_distance();
                lap(&mut times.collide);
                (r.contacts + r.collisions, r.unresolved)
            }
            None => (0, 0),
        };

        let x1 = &self.state.x;
        let model = &self.model;
        let max_strain = (0..model.triangles.len())
            .into_par_iter()
            .map(|t| {
                let tri = model.triangles[t];
                let mat = &model.materials[model.triangle_material[t] as usize];
                strain(&tri.map(|i| x1[i as usize]), &model.triangle_rest[t], mat)
            })
            .reduce(|| 0.0, f32::max);
        let rejected = if cg.non_finite {
            Some("non-finite solve")
        } else if !cg.converged {
            Some("CG did not converge")
        } else if max_strain - start_strain > self.settings.strain_jump {
            Some("strain jump")
        } else {
            None
        };
        lap(&mut times.other);
        Ok(SubstepReport {
            h,
            cg,
            max_strain,
            start_strain,
            contacts: self.constraints.active.len() as u32,
            min_collider_distance: min_distance,
            self_contacts,
            unresolved,
            rejected,
            times,
        })
    }

    /// Post-solve projection (Kang-style correction, [`ContactDetector::project_out`]): any free
    /// vertex closer than its thickness to a collider's end-of-substep surface is moved out to the
    /// thickness (on its entry side if it tunnelled) and loses its inward velocity relative to the
    /// surface. Marks moved vertices in `held`. Returns the smallest distance left (m) among vertices
    /// within 5 cm of a collider (+inf if none).
    fn project_out_of_colliders(&mut self, h: f32) -> Result<f32, SimError> {
        self.held.par_iter_mut().for_each(|m| *m = false);
        if self.sub_colliders.is_empty() {
            return Ok(f32::INFINITY);
        }
        self.predicted.copy_from_slice(&self.state.x);
        let min = self
            .detector
            .project_out(
                &self.sub_colliders,
                h,
                &self.contacts,
                &self.start.x,
                &self.model.thickness,
                &self.model.hard_pinned,
                REPORT_WITHIN,
                &mut self.state.x,
                &mut self.state.v,
            )
            .map_err(|e| SimError::Input(e.to_string()))?;
        let before = &self.predicted;
        self.held
            .par_iter_mut()
            .zip(self.state.x.par_iter())
            .enumerate()
            .for_each(|(i, (m, x))| *m = *x != before[i]);
        Ok(min)
    }

    /// Smallest signed distance (m) of any vertex to any collider's end-of-substep surface.
    fn min_collider_distance(&self) -> f32 {
        let colliders = &self.sub_colliders;
        self.state
            .x
            .par_iter()
            .map(|&x| {
                colliders
                    .iter()
                    .map(|c| c.end.distance(x).0)
                    .fold(f32::INFINITY, f32::min)
            })
            .reduce(|| f32::INFINITY, f32::min)
    }
}
