//! Per-substep velocity constraints and implicit per-vertex terms of the backward-Euler system
//! (Baraff & Witkin §5): hard pins and collider contacts become MPCG filters (S, z) with BW's
//! position alteration y (§5.3: Δx = h(v0 + Δv) + y); goal springs are added implicitly to the
//! diagonal. Contact friction and release follow the constraint force recovered from the solve
//! residual (BW §5.2: the force a constraint applies is the part of A·Δv − b the filter removed):
//! a new contact sticks if the impact's impulses are inside Coulomb's cone, else it slides;
//! sticking contacts are ndof 0 while |f_t| <= μs·f_n; sliding ones feel μk·f_n against their
//! slip as an implicit tangential damping force inside the solve (BW §5, the normal force of the
//! previous substep; [`Constraints::implicit_friction`]), which never reverses the slip. Without
//! a remembered normal force they lose at most μk·f_n·h/m of tangential velocity after the solve
//! instead (Coulomb friction as a bounded velocity change, Bridson, Fedkiw & Anderson 2002 §7.2).

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
/// Latest first contact, as a fraction of the substep, at which a new contact the cloth's own
/// motion makes (found along the free flight x0 → x0 + h·v0) is constrained in the solve; later
/// ones are left to the projection after it (stage 5). The solve moves a vertex by h·(v0 + Δv),
/// not h·v0: a contact the free flight only reaches late is often not reached at all, and
/// constraining it holds the vertex on the body against its neighbours (its recovered normal
/// force is attractive). On the 128² sheet falling on a sphere every strain-jump rejection of the
/// draping frames was a triangle with such a vertex (first contact at 0.75–0.99 of the substep;
/// at 65k vertices also 0.6–0.7). Four CG tolerances each, tries and the output's largest edge
/// stretch: 1.0 (every contact) 181.0 / 0.119, 0.8 135.2 / 0.057, 0.7 118.8 / 0.055, 0.6 118.2 /
/// 0.051, 0.5 105.2 / 0.050; the 256² sheet 0.7 163.2 / 0.068, 0.5 116.8 / 0.063 (BENCHMARKS.md,
/// "New contacts"). A contact the body makes ([`BODY_MADE_FRACTION`]) is constrained whenever it
/// is reached.
pub const FRESH_CONTACT_LATEST_TOI: f32 = 0.5;
/// A new contact is the body's when the collider surface's own normal speed towards the vertex is
/// at least this fraction of the closing speed (surface's plus the cloth's inward free-flight
/// speed): the solve changes the cloth's velocity, not the body's, so the body reaches the vertex
/// whatever the solve does, and leaving such a contact to the projection flings the cloth (a rod
/// at 5 m/s caught a free sheet late in the substep and threw it 18 mm ahead with every new
/// contact after 0.5 unconstrained; `collide_sim_tunnel.rs`).
pub const BODY_MADE_FRACTION: f32 = 0.5;
/// Slip speed (m/s) below which the implicit kinetic friction's damping stops growing
/// ([`Constraints::implicit_friction`]): c = μk·f_n / max(|slip|, this).
const FRICTION_SLIP_FLOOR: f32 = 0.01;

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
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ContactMemory {
    pub mode: FrictionMode,
    /// The normal force was attractive: release the contact.
    pub released: bool,
    /// The contact's normal force (N, >= 0) recovered after that substep's solve: the normal
    /// force of the next substep's implicit kinetic friction ([`Constraints::implicit_friction`]).
    pub normal_force: f32,
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
    /// Tangential damping c (kg/s) that carries this sliding contact's kinetic friction inside
    /// the implicit solve ([`Constraints::implicit_friction`]); 0: none (not sliding, or no
    /// normal force expected).
    pub damping: f32,
    /// Normal force (N) the impact implies for a contact that is new in this substep and slides,
    /// m·v_in/h ([`Constraints::add_contacts`]); the normal force of its kinetic friction inside
    /// the solve, where a held contact takes the remembered one. 0 otherwise.
    pub fresh_normal_force: f32,
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
    /// Clears every per-vertex term for an `n`-vertex model (no allocation after the first call):
    /// one pass over the five arrays, on the thread pool only from
    /// [`crate::linalg::reduce::PARALLEL_FROM`] vertices (below that a dispatch costs more than
    /// the stores).
    pub fn begin(&mut self, n: usize) {
        self.filter.resize(n, Filter::Free);
        self.z.resize(n, Vec3::ZERO);
        self.y.resize(n, Vec3::ZERO);
        self.diag.resize(n, Mat3::ZERO);
        self.rhs.resize(n, Vec3::ZERO);
        if crate::linalg::reduce::parallel(n) {
            const C: usize = crate::linalg::reduce::CHUNK;
            self.filter
                .par_chunks_mut(C)
                .zip(self.z.par_chunks_mut(C))
                .zip(self.y.par_chunks_mut(C))
                .zip(self.diag.par_chunks_mut(C))
                .zip(self.rhs.par_chunks_mut(C))
                .for_each(|((((f, z), y), d), r)| {
                    f.fill(Filter::Free);
                    z.fill(Vec3::ZERO);
                    y.fill(Vec3::ZERO);
                    d.fill(Mat3::ZERO);
                    r.fill(Vec3::ZERO);
                });
        } else {
            self.filter.fill(Filter::Free);
            self.z.fill(Vec3::ZERO);
            self.y.fill(Vec3::ZERO);
            self.diag.fill(Mat3::ZERO);
            self.rhs.fill(Vec3::ZERO);
        }
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
    /// contact tolerance, so a vertex resting exactly at the thickness stays constrained) and the
    /// free flight reaches the thickness within the first [`FRESH_CONTACT_LATEST_TOI`] of the
    /// substep or the body's motion makes it ([`BODY_MADE_FRACTION`]); a contact held in the
    /// previous substep stays while its force pushes out, and is released once it turned
    /// attractive. Normal: Δv·n = (v_s − v0)·n and y·n moves the vertex to
    /// the thickness (BW §5.3).
    ///
    /// A new contact sticks (ndof 0, following the surface) only inside Coulomb's cone of the
    /// impact's impulses: |v_t| <= μs·v_in, with v_t the slip against the surface at v0 and v_in
    /// the normal speed the contact removes (the inward relative speed plus h times gravity's
    /// inward part); otherwise it slides (ndof 2) with the kinetic friction of the normal force
    /// the impact implies, m·v_in/h, inside the solve ([`Self::implicit_friction`]): the
    /// tangential velocity loses at most μk·v_in, the friction impulse bound of Bridson, Fedkiw &
    /// Anderson 2002 §7.2. Held contacts keep the mode the previous substep decided
    /// ([`Self::apply_friction`]). `memory`: the state's contact memory; `gravity` (m/s²).
    #[allow(clippy::too_many_arguments)]
    pub fn add_contacts(
        &mut self,
        contacts: &[VertexContact],
        memory: &[ContactMemory],
        model: &Model,
        x0: &[Vec3],
        v0: &[Vec3],
        h: f32,
        gravity: Vec3,
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
            let fresh = !held || mem.released;
            let active = if held && mem.released {
                c.distance < REGRAB_FRACTION * thickness
            } else {
                held || c.distance
                    < thickness * (1.0 + CONTACT_TOLERANCE_REL) + CONTACT_TOLERANCE_ABS
            };
            let n = c.normal;
            let vs = c.surface_velocity;
            let body_in = vs.dot(n);
            let closing = body_in + (-v0[i].dot(n)).max(0.0);
            let body_made = body_in > 0.0 && body_in >= BODY_MADE_FRACTION * closing;
            if !active || (fresh && c.toi > FRESH_CONTACT_LATEST_TOI && !body_made) {
                continue;
            }
            let fr = model.friction[i];
            let mut fresh_normal_force = 0.0;
            let mode = if fr.static_ <= 0.0 {
                FrictionMode::Slide
            } else if fresh {
                let rel = v0[i] - vs;
                let inward = (-rel.dot(n)).max(0.0) + h * (-gravity.dot(n)).max(0.0);
                let slip = (rel - n * rel.dot(n)).length();
                if slip <= fr.static_ * inward {
                    FrictionMode::Stick
                } else {
                    if h > 0.0 {
                        fresh_normal_force = model.mass[i] * inward / h;
                    }
                    FrictionMode::Slide
                }
            } else {
                mem.mode
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
                damping: 0.0,
                fresh_normal_force,
            });
        }
    }

    /// Kinetic friction of the sliding contacts inside the implicit solve, after assembly and before
    /// the solve (BW §5: "for high sliding velocities apply a dissipative tangential force opposite
    /// the relative sliding direction proportional to the normal force", with its velocity
    /// derivative in eq. 15). The force f = −c·P_t·(v − v_s) (P_t = I − n·nᵀ, v_s the surface
    /// velocity) with c = μk·f_n / max(|slip0|, `FRICTION_SLIP_FLOOR`) is μk·f_n against the slip
    /// at the start velocity and never reverses it; linearised implicitly (BW eq. 15) it adds
    /// h·c·P_t to the vertex's diagonal block of A and −h·c·P_t·(v0 − v_s) to b (and to `diag`,
    /// `rhs`, which further Newton iterations re-assemble from). The normal force f_n is the one
    /// BW §5.2 recovered for the contact in the previous accepted substep (`memory`, lagged by one
    /// substep: a contact only slides after it was held; predicting it from the solve's warm start
    /// instead was off by 10× and often of the wrong sign, h²·∂f/∂x amplifying the warm start's
    /// error).
    ///
    /// Applied after the solve instead ([`Self::apply_friction`], the earlier scheme) the same
    /// friction moved a sliding vertex by up to μk·f_n·h²/m while its neighbours stayed, and the
    /// strain that made was the most frequent cause of rejected substeps on walking characters
    /// (bpy skirt-walk 38 of 63 strain-jump rejections, dress-walk 50 of 84; BENCHMARKS.md,
    /// "Step-size controller"); inside the solve the neighbours are dragged along.
    #[allow(clippy::too_many_arguments)]
    pub fn implicit_friction(
        &mut self,
        model: &Model,
        memory: &[ContactMemory],
        a: &mut BlockMatrix,
        b: &mut [Vec3],
        v0: &[Vec3],
        h: f32,
    ) {
        if h <= 0.0 {
            return;
        }
        for c in self.active.iter_mut() {
            let i = c.vertex as usize;
            let mu = model.friction[i].kinetic;
            if c.mode != FrictionMode::Slide || mu <= 0.0 {
                continue;
            }
            let n = c.normal;
            let f_n = if c.fresh_normal_force > 0.0 {
                c.fresh_normal_force
            } else {
                memory[i].normal_force
            };
            let rel = v0[i] - c.surface_velocity;
            let slip = rel - n * rel.dot(n);
            let damping = mu * f_n / slip.length().max(FRICTION_SLIP_FLOOR);
            if !(damping > 0.0 && damping.is_finite()) {
                continue;
            }
            let p_t = Mat3::IDENTITY - Mat3::from_cols(n * n.x, n * n.y, n * n.z);
            let block = p_t * (h * damping);
            let force = -(h * damping) * slip;
            a.diag[i] += glam::Mat3A::from(block);
            b[i] += force;
            self.diag[i] += block;
            self.rhs[i] += force;
            c.damping = damping;
        }
    }

    /// After the solve: recovers each active contact's constraint force f_c = (A·Δv − b)/h (N),
    /// applies kinetic friction to sliding vertices that did not get it inside the solve (no
    /// normal force remembered: the slip relative to the surface shrinks by at most μk·f_n·h/m,
    /// moving x1 with it) and decides the next friction mode: a sticking vertex
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
                if c.damping > 0.0 {
                    // Friction acted inside the solve. The contact sticks when the slip it would
                    // have had without friction, (1 + h·c/m)·|slip| for the vertex alone, is
                    // within what the explicit rule below removes (μk·f_n·h/m), as that rule
                    // decides; the slip left is taken from v1 only (x1 stays where the solve put
                    // it with its neighbours: the next substep holds the vertex on the surface).
                    let undamped = speed * (1.0 + h * c.damping / model.mass[i]);
                    if undamped <= max_dv && fr.static_ > 0.0 {
                        c.next_mode = FrictionMode::Stick;
                        v1[i] -= slip;
                    }
                    continue;
                }
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
                normal_force: if f_n.is_finite() { f_n.max(0.0) } else { 0.0 },
            };
        }
    }
}
