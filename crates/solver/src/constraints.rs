//! Per-substep velocity constraints and implicit per-vertex terms of the backward-Euler system
//! (Baraff & Witkin §5): hard pins and collider contacts become MPCG filters (S, z) with BW's
//! position alteration y (§5.3: Δx = h(v0 + Δv) + y); goal springs and kinetic friction are added
//! implicitly to the diagonal. Contact friction and release follow the constraint force recovered from
//! the solve residual (BW §5.2: the force a constraint applies is the part of A·Δv − b the filter
//! removed).

use crate::collide::VertexContact;
use crate::linalg::mpcg::outer;
use crate::linalg::{BlockMatrix, Filter};
use crate::model::Model;
use glam::{Mat3, Vec3};
use rayon::prelude::*;

/// Tangential slip speed (m/s) below which a sliding contact sticks (static friction takes over).
pub const STICK_SPEED: f32 = 2e-3;
/// Smallest slip speed (m/s) used to linearise kinetic friction as damping (avoids 1/0).
const MIN_SLIP: f32 = 1e-4;
/// A contact released because its force turned attractive is re-grabbed only deeper than this
/// fraction of the thickness.
const REGRAB_FRACTION: f32 = 0.5;

/// Friction state of a vertex in contact, kept from one substep to the next.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FrictionMode {
    #[default]
    None,
    /// Kinetic friction μk·f_n against the slip (implicit damping), normal dof constrained.
    Slide,
    /// Static friction: all three dofs follow the surface (ndof 0).
    Stick,
}

/// What the previous substep learned about a vertex's contact.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct ContactMemory {
    mode: FrictionMode,
    /// Normal constraint force (N), > 0 pushing out.
    normal_force: f32,
    /// The normal force was attractive: release the contact.
    released: bool,
}

/// A contact constrained in the current substep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActiveContact {
    pub vertex: u32,
    pub normal: Vec3,
    pub surface_velocity: Vec3,
    pub mode: FrictionMode,
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
    memory: Vec<ContactMemory>,
    next_memory: Vec<ContactMemory>,
}

impl Constraints {
    /// Clears every per-vertex term for an `n`-vertex model (no allocation after the first call).
    pub fn begin(&mut self, n: usize) {
        self.filter.resize(n, Filter::Free);
        self.z.resize(n, Vec3::ZERO);
        self.y.resize(n, Vec3::ZERO);
        self.diag.resize(n, Mat3::ZERO);
        self.rhs.resize(n, Vec3::ZERO);
        self.memory.resize(n, ContactMemory::default());
        self.next_memory.resize(n, ContactMemory::default());
        self.filter.par_iter_mut().for_each(|f| *f = Filter::Free);
        self.z.par_iter_mut().for_each(|z| *z = Vec3::ZERO);
        self.y.par_iter_mut().for_each(|y| *y = Vec3::ZERO);
        self.diag.par_iter_mut().for_each(|d| *d = Mat3::ZERO);
        self.rhs.par_iter_mut().for_each(|r| *r = Vec3::ZERO);
        self.active.clear();
    }

    /// Forgets all contact history (e.g. after a rejected substep is retried nothing changes, but a
    /// teleport of the state should call this).
    pub fn forget_contacts(&mut self) {
        self.memory
            .iter_mut()
            .for_each(|m| *m = ContactMemory::default());
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
    /// when its predicted end-of-substep distance is inside the thickness; a contact held in the
    /// previous substep stays while its force pushes out, and is released once it turned attractive.
    /// Normal: Δv·n = (v_s − v0)·n and y·n moves the vertex to the thickness (BW §5.3).
    /// Sticking vertices (static friction) get ndof 0 following the surface; sliding ones ndof 2 with
    /// kinetic friction μk·f_n (f_n from the previous substep) as implicit damping against the slip.
    pub fn add_contacts(
        &mut self,
        contacts: &[VertexContact],
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
            let mem = self.memory[i];
            let held = mem.mode != FrictionMode::None;
            let active = if held && mem.released {
                c.distance < REGRAB_FRACTION * thickness
            } else {
                held || c.distance < thickness
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
                    let slip = (v0[i] - vs) - n * (v0[i] - vs).dot(n);
                    let c_damp =
                        fr.kinetic * mem.normal_force.max(0.0) / slip.length().max(MIN_SLIP);
                    if c_damp > 0.0 {
                        let pt = Mat3::IDENTITY - outer(n, n);
                        self.diag[i] += pt * (h * c_damp);
                        self.rhs[i] -= h * c_damp * slip;
                    }
                }
            }
            self.active.push(ActiveContact {
                vertex,
                normal: n,
                surface_velocity: vs,
                mode,
            });
        }
    }

    /// After the solve: recovers each active contact's constraint force f_c = (A·Δv − b)/h (N) and
    /// decides the next substep's friction mode: stick while |f_t| <= μs·f_n, slide otherwise; a
    /// sliding vertex whose slip fell below [`STICK_SPEED`] sticks; an attractive normal force
    /// releases the contact. Vertices not in contact forget their history.
    pub fn after_solve(
        &mut self,
        model: &Model,
        a: &BlockMatrix,
        b: &[Vec3],
        dv: &[Vec3],
        v1: &[Vec3],
        h: f32,
    ) {
        for m in self.next_memory.iter_mut() {
            *m = ContactMemory::default();
        }
        for c in &self.active {
            let i = c.vertex as usize;
            let f = (a.row_mul(i, dv) - b[i]) / h;
            let f_n = f.dot(c.normal);
            let f_t = (f - c.normal * f_n).length();
            let fr = model.friction[i];
            let slip = {
                let r = v1[i] - c.surface_velocity;
                (r - c.normal * r.dot(c.normal)).length()
            };
            let mode = match c.mode {
                FrictionMode::Stick if f_t > fr.static_ * f_n => FrictionMode::Slide,
                FrictionMode::Slide if slip < STICK_SPEED && fr.static_ > 0.0 => {
                    FrictionMode::Stick
                }
                m => m,
            };
            self.next_memory[i] = ContactMemory {
                mode,
                normal_force: f_n,
                released: f_n < 0.0,
            };
        }
        std::mem::swap(&mut self.memory, &mut self.next_memory);
    }
}
