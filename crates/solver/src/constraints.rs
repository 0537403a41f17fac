//! Per-substep velocity constraints and implicit per-vertex terms of the backward-Euler system
//! (Baraff & Witkin §5): hard pins and collider contacts become MPCG filters (S, z) with BW's
//! position alteration y (§5.3: Δx = h(v0 + Δv) + y); goal springs are added implicitly to the
//! diagonal. Contact friction and release follow the constraint force recovered from the solve
//! residual (BW §5.2: the force a constraint applies is the part of A·Δv − b the filter removed):
//! sticking contacts are ndof 0 while |f_t| <= μs·f_n; sliding ones lose at most μk·f_n·h/m of
//! tangential velocity after the solve (Coulomb friction as a bounded velocity change, Bridson,
//! Fedkiw & Anderson 2002 §7.2), so friction never reverses the slip.

use crate::collide::ccd::{CONTACT_TOLERANCE_ABS, CONTACT_TOLERANCE_REL};
use crate::collide::VertexContact;
use crate::linalg::{BlockMatrix, Filter};
use crate::model::Model;
use glam::{Mat3, Vec3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// A contact released because its force turned attractive is re-grabbed only deeper than this
/// fraction of the thickness.
const REGRAB_FRACTION: f32 = 0.5;

/// Friction state of a vertex in contact, kept from one substep to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum FrictionMode {
    #[default]
    None,
    /// Normal dof constrained; kinetic friction μk·f_n against the slip after the solve.
    Slide,
    /// Static friction: all three dofs follow the surface (ndof 0).
    Stick,
}

/// What the previous accepted substep learned about a vertex's contact (part of
/// [`crate::State`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContactMemory {
    pub mode: FrictionMode,
    /// The normal force was attractive: release the contact.
    pub released: bool,
}

/// A contact constrained in the current substep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActiveContact {
    pub vertex: u32,
    pub normal: Vec3,
    pub surface_velocity: Vec3,
    pub mode: FrictionMode,
    /// Constraint force (N) recovered after the solve.
    pub force: Vec3,
    /// Friction mode for the next substep, decided after the solve.
    pub next_mode: FrictionMode,
}

/// Filters, prescribed velocity changes, position alterations and extra implicit terms of one substep.
#[derive(Debug, Clone, Default)]
pub struct Constraints {
    pub filter: Vec<Filter>,
    /// Prescribed velocity change (m/s) in the constrained directions.
    pub z: Vec<Vec3>,
    /// Position alteration (m): Δx = h(v0 + Δv) + y.
    pub y: Vec<Vec3>,
    /// Added to the diagonal block of A (kg).
    pub diag: Vec<Mat3>,
    /// Added to b (N·s).
    pub rhs: Vec<Vec3>,
    pub active: Vec<ActiveContact>,
}

impl Constraints {
    /// Clears every per-vertex term for an `n`-vertex model (no allocation after the first call).
    pub fn begin(&mut self, n: usize) {
        self.filter.resize(n, Filter::Free);
        self.z.resize(n, Vec3::ZERO);
        self.y.resize(n, Vec3::ZERO);
        self.diag.resize(n, Mat3::ZERO);
        self.rhs.resize(n, Vec3::ZERO);
        self.filter.par_iter_mut().for_each(|f| *f = Filter::Free);
        self.z.par_iter_mut().for_each(|z| *z = Vec3::ZERO);
        self.y.par_iter_mut().for_each(|y| *y = Vec3::ZERO);
        self.diag.par_iter_mut().for_each(|d| *d = Mat3::ZERO);
        self.rhs.par_iter_mut().for_each(|r| *r = Vec3::ZERO);
        self.active.clear();
    }

    /// Hard pin (ndof 0): the vertex ends the substep on `target` (m) with the target's velocity
    /// `target_velocity` (m/s), however far it was: z = v_t − v0, y = target − (x0 + h·v_t).
    pub fn hard_pin(
        &mut self,
        i: usize,
        target: Vec3,
        target_velocity: Vec3,
        x0: Vec3,
        v0: Vec3,
        h: f32,
    ) {
        self.filter[i] = Filter::Fixed;
        self.z[i] = target_velocity - v0;
        self.y[i] = target - (x0 + h * target_velocity);
    }

    /// Goal spring f = k(target − x) (k in N/m) towards `target`, the end-of-substep target (m),
    /// linearised implicitly: A += h²k I, b += h·k(target − x0 − y) − h²k·v0.
    pub fn goal_spring(&mut self, i: usize, k: f32, target: Vec3, x0: Vec3, v0: Vec3, h: f32) {
        self.diag[i] += Mat3::from_diagonal(Vec3::splat(h * h * k));
        self.rhs[i] += h * k * (target - x0 - self.y[i]) - h * h * k * v0;
    }

    /// Turns the detector's contacts (sorted by vertex) into constraints. Per vertex the deepest
    /// contact is used. Vertices already fixed (hard pins) are skipped. A new contact is constrained
    /// when its predicted end-of-substep distance is inside the thickness (plus the detector's
    /// contact tolerance, so a vertex resting exactly at the thickness stays constrained); a contact
    /// held in the previous substep stays while its force pushes out, and is released once it turned
    /// attractive. Normal: Δv·n = (v_s − v0)·n and y·n moves the vertex to the thickness (BW §5.3).
    /// New contacts start sticking (if μs > 0): ndof 0 following the surface; sliding ones are ndof 2
    /// and get kinetic friction in [`Self::apply_friction`]. `memory`: the state's contact memory.
    pub fn add_contacts(
        &mut self,
        contacts: &[VertexContact],
        memory: &[ContactMemory],
        model: &Model,
        x0: &[Vec3],
        v0: &[Vec3],
        h: f32,
    ) {
        let mut k = 0;
        while k < contacts.len() {
            let vertex = contacts[k].vertex;
            let mut c = contacts[k];
            k += 1;
            while k < contacts.len() && contacts[k].vertex == vertex {
                if contacts[k].distance < c.distance {
                    c = contacts[k];
                }
                k += 1;
            }
            let i = vertex as usize;
            if self.filter[i] == Filter::Fixed {
                continue;
            }
            let thickness = model.thickness[i];
            let mem = memory[i];
            let held = mem.mode != FrictionMode::None;
            let active = if held && mem.released {
                c.distance < REGRAB_FRACTION * thickness
            } else {
                held || c.distance
                    < thickness * (1.0 + CONTACT_TOLERANCE_REL) + CONTACT_TOLERANCE_ABS
            };
            if !active {
                continue;
            }
            let n = c.normal;
            let vs = c.surface_velocity;
            let fr = model.friction[i];
            let mode = match mem.mode {
                _ if mem.released => FrictionMode::Stick,
                FrictionMode::None => FrictionMode::Stick,
                m => m,
            };
            let mode = if fr.static_ > 0.0 {
                mode
            } else {
                FrictionMode::Slide
            };
            // Normal: reach `target`'s normal coordinate with the surface's normal velocity.
            let y_n = (c.target - x0[i]).dot(n) - h * vs.dot(n);
            self.y[i] = n * y_n;
            match mode {
                FrictionMode::Stick => {
                    self.filter[i] = Filter::Fixed;
                    self.z[i] = vs - v0[i];
                }
                _ => {
                    self.filter[i] = Filter::Plane(n);
                    self.z[i] = n * (vs - v0[i]).dot(n);
                }
            }
            self.active.push(ActiveContact {
                vertex,
                normal: n,
                surface_velocity: vs,
                mode,
                force: Vec3::ZERO,
                next_mode: mode,
            });
        }
    }

    /// After the solve: recovers each active contact's constraint force f_c = (A·Δv − b)/h (N),
    /// applies kinetic friction to sliding vertices (the slip relative to the surface shrinks by at
    /// most μk·f_n·h/m, moving x1 with it) and decides the next friction mode: a sticking vertex
    /// slides once |f_t| > μs·f_n; a sliding vertex that friction stopped sticks.
    #[allow(clippy::too_many_arguments)]
    pub fn apply_friction(
        &mut self,
        model: &Model,
        a: &BlockMatrix,
        b: &[Vec3],
        dv: &[Vec3],
        h: f32,
        x1: &mut [Vec3],
        v1: &mut [Vec3],
    ) {
        for c in self.active.iter_mut() {
            let i = c.vertex as usize;
            let f = (a.row_mul(i, dv) - b[i]) / h;
            c.force = f;
            let f_n = f.dot(c.normal);
            let fr = model.friction[i];
            c.next_mode = match c.mode {
                FrictionMode::Stick if (f - c.normal * f_n).length() > fr.static_ * f_n => {
                    FrictionMode::Slide
                }
                m => m,
            };
            if c.mode == FrictionMode::Slide && f_n > 0.0 && model.mass[i] > 0.0 {
                let rel = v1[i] - c.surface_velocity;
                let slip = rel - c.normal * rel.dot(c.normal);
                let speed = slip.length();
                let max_dv = fr.kinetic * f_n * h / model.mass[i];
                let dv_t = if speed <= max_dv {
                    if fr.static_ > 0.0 {
                        c.next_mode = FrictionMode::Stick;
                    }
                    -slip
                } else {
                    -slip * (max_dv / speed)
                };
                v1[i] += dv_t;
                x1[i] += h * dv_t;
            }
        }
    }

    /// Commits an accepted substep: the contacts' forces and next modes become the memory used by
    /// the next substep (an attractive normal force releases the contact); vertices not in contact
    /// forget their history. `memory`: the state's contact memory.
    pub fn commit(&self, memory: &mut [ContactMemory]) {
        memory.fill(ContactMemory::default());
        for c in &self.active {
            let f_n = c.force.dot(c.normal);
            memory[c.vertex as usize] = ContactMemory {
                mode: c.next_mode,
                released: f_n < 0.0,
            };
        }
    }
}
