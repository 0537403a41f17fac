//! The simulation state: everything the next substep reads before it writes it (warp.sim `State`).
//!
//! A bake can be saved after any substep and resumed from the saved [`State`] with the same
//! [`crate::Model`] and settings, and the continuation is bit-identical to an uninterrupted run;
//! a rejected substep is undone by restoring a copy of it. What can be rebuilt from the model
//! (matrix pattern, preconditioner, collision candidates, CG vectors) lives in
//! [`crate::workspace::Workspace`] instead.

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::constraints::ContactMemory;
use crate::pins::PinTargets;

/// Version of the [`State`] layout; a saved state of another version cannot be resumed.
pub const STATE_VERSION: u32 = 5;

/// Where the simulation is in time.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Clock {
    /// Simulated time since the start (s): the sum of accepted substep lengths.
    pub time: f64,
    /// Frames completed by [`crate::Simulation::step_frame`].
    pub frames: u64,
    /// Position inside the current frame on the substep grid (units of `1 / (substeps ·
    /// 2^max_halvings)` of a frame); 0 at a frame boundary. Non-zero only after a frame was stopped
    /// between substeps ([`crate::SimError::Stopped`]); the next `step_frame` continues from it.
    pub substep_pos: u64,
}

/// The adaptive step-size controller (BW §6): halve a rejected substep, grow back after
/// [`crate::sim::GROW_AFTER`] accepted ones in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StepController {
    /// Substeps are `2^-h_scale` of the nominal size.
    pub h_scale: u32,
    /// Substeps accepted since the last rejection or growth.
    pub accepted_in_row: u32,
    /// `preconditioner = "auto"` resolved to IC(0): whether (and from when) the solve uses AMG
    /// instead ([`crate::linalg::choice::AutoWatch`]).
    pub auto_preconditioner: crate::linalg::choice::AutoWatch,
    /// The diagonal shift IC(0) tries first ([`crate::linalg::ic_shift::ShiftMemory`]).
    pub ic_shift: crate::linalg::ic_shift::ShiftMemory,
    /// The next IC(0) solves deflate the aggregates' translations (on from the first slow plain
    /// solve, [`crate::linalg::deflation::deflate_next`]). Absent from checkpoints written before
    /// it existed: off.
    #[serde(default)]
    pub deflate: bool,
}

/// Everything the next substep depends on, as flat arrays over the model's global vertex indices.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct State {
    /// Positions (m).
    pub x: Vec<Vec3>,
    /// Velocities (m/s).
    pub v: Vec<Vec3>,
    /// Velocity change of the last accepted linear solve (m/s): the MPCG warm start (Boxerman 2003
    /// §3.2: x = S·x_prev + (I−S)·z); zeroed after a rejected substep.
    pub dv: Vec<Vec3>,
    /// Per vertex: the friction mode and release flag its collider contact had at the end of the
    /// last accepted substep (BW §5.2).
    pub contacts: Vec<ContactMemory>,
    /// Pin targets at the start and end of the current frame (m).
    pub pins: PinTargets,
    /// BDF2 history (Choi & Ko 2002; [`crate::integrator::method`]): positions (m) and velocities
    /// (m/s) at the start of the last accepted substep, and its length `prev_h` (s). Empty (and
    /// `prev_h` = 0) under backward Euler and before the first accepted substep.
    pub prev_x: Vec<Vec3>,
    pub prev_v: Vec<Vec3>,
    pub prev_h: f32,
    pub clock: Clock,
    pub controller: StepController,
}

impl State {
    /// At rest at `x` at time 0, with pin targets `pins`.
    pub fn at_rest(x: &[Vec3], pins: PinTargets) -> Self {
        let n = x.len();
        State {
            x: x.to_vec(),
            v: vec![Vec3::ZERO; n],
            dv: vec![Vec3::ZERO; n],
            contacts: vec![ContactMemory::default(); n],
            pins,
            prev_x: Vec::new(),
            prev_v: Vec::new(),
            prev_h: 0.0,
            clock: Clock::default(),
            controller: StepController::default(),
        }
    }

    /// Copies `other` into `self` without reallocating once sized.
    pub fn copy_from(&mut self, other: &State) {
        self.x.clone_from(&other.x);
        self.v.clone_from(&other.v);
        self.dv.clone_from(&other.dv);
        self.contacts.clone_from(&other.contacts);
        self.pins.copy_from(&other.pins);
        self.prev_x.clone_from(&other.prev_x);
        self.prev_v.clone_from(&other.prev_v);
        self.prev_h = other.prev_h;
        self.clock = other.clock;
        self.controller = other.controller;
    }

    /// The same state in a frame moved by −`d` (m): every position (x, the BDF2 history's, the
    /// pin targets) moves by `d`; velocities, contacts and the clock are unchanged. The forces
    /// depend on positions only through their differences, so the motion is the same (each
    /// position rounded once more). Collider shapes and pin targets passed afterwards must be in
    /// the new frame too.
    pub fn translate(&mut self, d: Vec3) {
        for p in self.x.iter_mut().chain(self.prev_x.iter_mut()) {
            *p += d;
        }
        self.pins.translate(d);
    }

    /// Vertex count.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether the state has no vertices.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}
