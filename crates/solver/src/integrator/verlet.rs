//! Explicit Verlet integration with constraint relaxation (Jakobsen 2001, "Advanced Character
//! Physics", as described by Vasilovici 2013 §3–4 and Berka's slides): no linear solve.
//!
//! One substep of length h:
//!
//! 1. **Position Verlet** (Vasilovici §3: x' = 2x − x* + a·h², i.e. x' = x + (x − x*) + a·h²):
//!    x1 = x0 + h·v0 + h²·a(x0, v0), with the velocity v0 = (x0 − x*)/h carried in the state
//!    instead of the previous position x* (the same update at a constant step; it also stays valid
//!    when the step-size controller halves or doubles h). The forces a = f/m are the soft ones:
//!    gravity, the material's dihedral bending with its damping (BW §4.3, evaluated explicitly:
//!    bending is weak enough for an explicit step), linear air damping and wind.
//! 2. **Pins**: hard pins are put on their end-of-substep target and never moved again (infinite
//!    mass); a goal spring of stiffness k pulls its vertex by the backward-Euler step of that
//!    spring alone, x ← (m·x + h²k·t)/(m + h²k) (unconditionally stable for any k).
//! 3. **Relaxation** (Jakobsen; Vasilovici §4.1): every mesh edge is a stiff distance constraint
//!    of its rest length (stretch and shear: "infinitely stiff springs"); each of `iterations`
//!    passes visits the edges in a fixed order and moves both ends along the edge by the length
//!    error split by inverse mass (Gauss–Seidel; Vasilovici's pseudo-code with mass weighting and
//!    Jakobsen's square-root-free form), then projects the vertices out of the colliders
//!    ("collisions by projection", Jakobsen §5) when any vertex came near one.
//! 4. The velocity is what the positions say: v1 = (x1 − x0)/h; a last projection out of the
//!    colliders then also removes the inward velocity relative to the surface
//!    (`step::body_contact::release`), and cloth–cloth collision runs as for the
//!    implicit integrators.
//!
//! The edge constraints move pairs of vertices by equal and opposite momenta along the edge, so
//! free fall and rigid rotation are not damped. Stretch and shear stiffness of the material are
//! not used (the cloth is as inextensible as the relaxation makes it; the residual stretch
//! shrinks with more iterations); no contact friction (the projection keeps the tangential
//! motion). Serial Gauss–Seidel over edges: the result does not depend on the thread count.

use glam::{Mat2, Vec2, Vec3};
use rayon::prelude::*;

use crate::error::SimError;
use crate::forces::{aero, bend_gradient, Jacobian};
use crate::linalg::CgResult;
use crate::model::Model;
use crate::pins::PinTargets;
use crate::report::{StageTimes, SubstepReport};
use crate::sim::SimSettings;
use crate::state::State;
use crate::step::{accept, body_contact, predict, self_collision, Substep};
use crate::stopwatch::Lap;
use crate::workspace::Workspace;

/// Default relaxation passes per substep (Vasilovici 2013 §4 satisfies each constraint 3 times;
/// Jakobsen: often 1 suffices in games). A baker wants little stretch: on a 0.6 m cotton sheet
/// hanging from its top corners the largest edge strain after 3 s is 0.132 at 5 substeps × 10
/// passes, 0.068 at 5 × 20, 0.027 at 5 × 50, 0.018 at 10 × 20 and below 0.01 at 20 × 20
/// (tests/integrators.rs): substeps help more than passes.
pub const DEFAULT_ITERATIONS: u32 = 20;

/// One distance constraint: vertices and rest length (m).
#[derive(Debug, Clone, Copy)]
struct Edge {
    a: u32,
    b: u32,
    rest: f32,
}

/// Topology-derived data and per-substep scratch of the Verlet step (built on first use).
#[derive(Debug, Default, Clone)]
pub struct VerletScratch {
    edges: Vec<Edge>,
    /// 1/m, 0 for hard-pinned vertices (kg⁻¹).
    inv_mass: Vec<f32>,
    /// Force per vertex (N).
    force: Vec<Vec3>,
    /// Displacement over the substep x1 − x0 (m).
    u: Vec<Vec3>,
    /// Velocity scratch for the projections inside the relaxation loop (m/s).
    v_scratch: Vec<Vec3>,
}

impl VerletScratch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the edge list from the rest triangles (rest lengths in the rest plane, as the
    /// stretch model sees them) once.
    fn prepare(&mut self, model: &Model) {
        let n = model.vertex_count();
        if self.inv_mass.len() == n && (!self.edges.is_empty() || model.triangles.is_empty()) {
            return;
        }
        let mut edges: Vec<(u32, u32, f32)> = Vec::with_capacity(3 * model.triangles.len());
        for (tri, rest) in model.triangles.iter().zip(&model.triangle_rest) {
            // D⁻¹ has rows (du_k, dv_k) for k = 1, 2; D = [d1 d2] are the rest edge vectors.
            let dinv = Mat2::from_cols(
                Vec2::new(rest.du[1], rest.du[2]),
                Vec2::new(rest.dv[1], rest.dv[2]),
            );
            let d = dinv.inverse();
            let (d1, d2) = (d.x_axis, d.y_axis);
            for (i, j, len) in [
                (tri[0], tri[1], d1.length()),
                (tri[0], tri[2], d2.length()),
                (tri[1], tri[2], (d2 - d1).length()),
            ] {
                edges.push((i.min(j), i.max(j), len));
            }
        }
        // One constraint per edge (the first triangle's rest length), in (a, b) order.
        edges.sort_by_key(|e| (e.0, e.1));
        edges.dedup_by_key(|e| (e.0, e.1));
        self.edges = edges
            .into_iter()
            .filter(|e| e.2.is_finite())
            .map(|(a, b, rest)| Edge { a, b, rest })
            .collect();
        self.inv_mass = (0..n)
            .map(|i| {
                let m = model.mass[i];
                if model.hard_pinned[i] || m.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
                {
                    0.0
                } else {
                    1.0 / m
                }
            })
            .collect();
        self.force = vec![Vec3::ZERO; n];
        self.u = vec![Vec3::ZERO; n];
        self.v_scratch = vec![Vec3::ZERO; n];
    }
}

/// One Verlet substep (the Verlet counterpart of [`crate::step::substep`]): the start state is
/// kept and the colliders interpolated ([`predict`]), contacts are detected on the free flight
/// x0 + h·v0, then [`integrate`], the collider projection ([`body_contact::release`]),
/// cloth–cloth collision and the strain check, as in the implicit substep. The report's `cg`
/// holds the relaxation passes as iterations.
pub(crate) fn substep(
    model: &Model,
    settings: &SimSettings,
    state: &mut State,
    ws: &mut Workspace,
    sub: Substep,
) -> Result<SubstepReport, SimError> {
    let mut times = StageTimes::default();
    let mut clock = Lap::start();
    let mut lap = |slot: &mut f64| clock.lap(slot);
    predict::run(state, ws, sub, settings.integrator);
    lap(&mut times.other);
    let h = sub.h;
    if !ws.sub_colliders.is_empty() {
        ws.detector
            .detect(
                &ws.sub_colliders,
                h,
                &ws.start.x,
                &ws.predicted,
                &model.thickness,
                &mut ws.contacts,
            )
            .map_err(|e| SimError::Input(e.to_string()))?;
    } else {
        ws.contacts.clear();
    }
    lap(&mut times.collide);
    let start_strain = accept::max_stretch(model, &ws.start.x);
    let State { x, v, pins, .. } = state;
    let iterations = integrate(model, settings, ws, h, pins, sub.s1, x, v)
        .map_err(|e| SimError::Input(e.to_string()))?;
    lap(&mut times.solve);
    let solve_strain = settings
        .stage_strains
        .then(|| accept::max_stretch(model, &state.x));
    let distances = settings.collider_distances;
    let mut min_distance = body_contact::release(model, state, ws, h, distances)?;
    let projected_strain = if ws.sub_colliders.is_empty() {
        solve_strain
    } else {
        settings
            .stage_strains
            .then(|| accept::max_stretch(model, &state.x))
    };
    lap(&mut times.collide);
    let outcome = self_collision::run(state, ws, h, &mut times);
    let (self_contacts, unresolved, over_budget) = match outcome {
        Some(r) => {
            lap(&mut times.self_collide);
            if distances {
                min_distance = body_contact::min_collider_distance(state, ws);
            }
            lap(&mut times.collide);
            r
        }
        None => (0, 0, false),
    };
    let non_finite = accept::first_non_finite(state).is_some();
    let cg = CgResult {
        iterations,
        residual: 0.0,
        converged: !non_finite,
        non_finite,
        ic_shift: None,
    };
    let judged = accept::judge(
        model,
        settings,
        state,
        ws,
        h,
        &cg,
        start_strain,
        over_budget,
    );
    lap(&mut times.other);
    Ok(SubstepReport {
        h,
        cg,
        max_strain: judged.max_strain,
        max_stretch: judged.max_stretch,
        worst_triangle: judged.worst_triangle,
        start_strain,
        strain_jump: judged.jump,
        solve_strain,
        projected_strain,
        contacts: ws.contacts.len() as u32,
        min_collider_distance: min_distance,
        self_contacts,
        unresolved,
        rejected: judged.rejected,
        aimex: Default::default(),
        times,
    })
}

/// Stage 3–4 of a Verlet substep (after [`crate::step::predict`] and the pin/collider set-up):
/// the explicit forces, the Verlet prediction into `x`, pins, and the relaxation with collider
/// projections. `x0`, `v0`: the start state; `x`, `v`: written with the end positions and the
/// velocities (x − x0)/h. Returns the relaxation passes run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn integrate(
    model: &Model,
    settings: &SimSettings,
    ws: &mut Workspace,
    h: f32,
    pins: &PinTargets,
    s1: f32,
    x: &mut [Vec3],
    v: &mut [Vec3],
) -> Result<u32, crate::collide::CollideError> {
    let sc = &mut ws.verlet;
    sc.prepare(model);
    let (x0, v0) = (&ws.start.x, &ws.start.v);
    let n = x0.len();
    // Per-vertex forces: gravity and air damping (parallel, per vertex).
    let v_air = settings.wind.as_ref().map_or(Vec3::ZERO, |w| w.velocity);
    sc.force.par_iter_mut().enumerate().for_each(|(i, f)| {
        *f = model.mass[i] * settings.gravity
            - settings.air_damping * model.area[i] * (v0[i] - v_air);
    });
    // Element forces (serial scatter: fixed order, thread-count independent).
    if let Some(w) = &settings.wind {
        for tri in &model.triangles {
            let xs = tri.map(|i| x0[i as usize]);
            let vs = tri.map(|i| v0[i as usize]);
            let ef = aero(&xs, &vs, w, Jacobian::Stabilized);
            for (k, &i) in tri.iter().enumerate() {
                sc.force[i as usize] += ef.f[k];
            }
        }
    }
    for (k, hinge) in model.hinges.iter().enumerate() {
        let xs = hinge.map(|i| x0[i as usize]);
        let vs = hinge.map(|i| v0[i as usize]);
        let mat = &model.materials[model.hinge_material[k] as usize];
        if let Some(g) = bend_gradient(&xs, &vs, &model.hinge_rest[k], mat) {
            for (a, &i) in hinge.iter().enumerate() {
                sc.force[i as usize] += g.grad[a] * g.scale;
            }
        }
    }
    // Position Verlet in velocity form, on the displacement u = x1 − x0 (m): the velocity is
    // u/h, never a difference of positions. (Computed as (x1 − x0)/h, the rounding of x1 — an
    // h²·g of 4e-5 m added to positions of ~1 m — enters the velocity every substep with a bias:
    // measured, free fall lost 5e-4 of g per substep at h = 1/480 s.)
    let (force, inv_mass) = (&sc.force, &sc.inv_mass);
    let u = &mut sc.u;
    u.par_iter_mut().enumerate().for_each(|(i, u)| {
        *u = h * v0[i] + (h * h * inv_mass[i]) * force[i];
    });
    // Pins: hard ones on target; goal springs by their own backward-Euler step.
    for (k, pin) in model.pins.iter().enumerate() {
        let i = pin.vertex as usize;
        let to_target = pins.at(k, s1) - x0[i];
        if pin.weight >= 1.0 {
            u[i] = to_target;
        } else {
            let (m, kh) = (model.mass[i], h * h * model.pin_spring[k]);
            if m + kh > 0.0 {
                u[i] = (m * u[i] + kh * to_target) / (m + kh);
            }
        }
    }
    // Relaxation: Gauss–Seidel over the edges, then the collider projection, `iterations` times.
    let iterations = settings.verlet_iterations;
    for _ in 0..iterations {
        for e in &sc.edges {
            let (a, b) = (e.a as usize, e.b as usize);
            let (wa, wb) = (sc.inv_mass[a], sc.inv_mass[b]);
            let w = wa + wb;
            if w <= 0.0 {
                continue;
            }
            // Jakobsen's square-root-free correction (Vasilovici §4: the first-order expansion
            // of |d| about the rest length r): (|d| − r)/|d| ≈ (d·d − r²)/(d·d + r²).
            let d = (x0[b] - x0[a]) + (u[b] - u[a]);
            let (dd, r2) = (d.length_squared(), e.rest * e.rest);
            if dd + r2 <= 0.0 {
                continue;
            }
            let corr = d * ((dd - r2) / ((dd + r2) * w));
            u[a] += corr * wa;
            u[b] -= corr * wb;
        }
        // Inside the loop only when the detector found vertices near a collider on the predicted
        // motion (the last projection, in `body_contact::release`, always runs).
        if !ws.contacts.is_empty() {
            // Project x0 + u; only the vertices the projection moved take u = x − x0.
            let before = &mut ws.predicted;
            for (i, (p, x)) in before.iter_mut().zip(x.iter_mut()).enumerate() {
                *x = x0[i] + u[i];
                *p = *x;
            }
            sc.v_scratch.copy_from_slice(&v[..n]);
            ws.detector.project_out(
                &ws.sub_colliders,
                h,
                &ws.contacts,
                x0,
                &model.thickness,
                &model.hard_pinned,
                crate::collide::DistanceReport::Within(0.0),
                x,
                &mut sc.v_scratch,
            )?;
            for (i, u) in u.iter_mut().enumerate() {
                if x[i] != ws.predicted[i] {
                    *u = x[i] - x0[i];
                }
            }
        }
    }
    let u = &sc.u;
    v.par_iter_mut()
        .zip(x.par_iter_mut())
        .enumerate()
        .for_each(|(i, (v, x))| {
            *v = u[i] / h;
            *x = x0[i] + u[i];
        });
    Ok(iterations)
}

/// Largest relative edge-length error |l − l_rest| / l_rest at positions `x` (for tests and
/// reports).
pub fn max_edge_strain(model: &Model, x: &[Vec3]) -> f32 {
    let mut sc = VerletScratch::new();
    sc.prepare(model);
    sc.edges
        .iter()
        .map(|e| {
            let l = (x[e.b as usize] - x[e.a as usize]).length();
            (l - e.rest).abs() / e.rest
        })
        .fold(0.0, f32::max)
}
