//! Stage 7 of a substep: accept or reject it (BW §6: a substep whose strain jumps, or whose solve
//! fails, is redone at half the size; after [`GROW_AFTER`] accepted substeps in a row the size
//! doubles again, up to the nominal one, BW's "waits longer before retrying"). Rejection is a
//! restore of the start state. The strain jump is judged on the stretch (the positive part of the
//! strain, [`stretch`](crate::forces::stretch)) and against the pins' driven motion ([`judge`]).
//!
//! Stretch, not |strain|: BW §6 watch for "a drastic change in stretch". Until 2026-11-26 the
//! rule took |len/rest − 1|, so a triangle compressed by a collision correction (the cloth–cloth
//! repulsion stopping a hem vertex that swings into a fold: 25 of the 28 cloth–cloth rejections on
//! the dress-walk sample were compressed triangles, BENCHMARKS.md) rejected the substep as if the
//! cloth were coming apart. Judging the stretch alone, in one run each (main 4528a6e → this rule):
//! dress-walk export 448 (82) → 277 (33) substeps (rejected), the report's largest |strain| 0.204
//! → 0.169; bpy skirt-walk 311 (38) → 282 (29), 0.109 → 0.076; `twist` 407 (45) → 298 (8), 0.350
//! → 0.234; sheet-on-sphere 194 (3) → 192 (2), 0.047 → 0.024; cape and thin skirt unchanged.
//!
//! What rejects substeps on the character scenes (issue 14, measured 2026-11-25 with per-stage
//! strains; every report now counts the rejections by cause, [`crate::report::Rejections`]): on dress-walk, of 119
//! strain-jump rejections the largest rise came from the projection out of the colliders in 50,
//! from cloth–cloth collision in 65 and from the solve in 4; on the bpy skirt-walk 50 projection,
//! 11 solve; the thin skirt's are all "CG did not converge"; none came from pins. Measured apart,
//! most of the "projection" ones were the post-solve kinetic friction that precedes it (bpy skirt
//! 38 of 63, dress 50 of 84 at main 01b3628), now inside the solve
//! ([`crate::constraints::Constraints::implicit_friction`]). Not counting the
//! collision corrections took the dress from 713 tries to 450 but raised the output frames' max
//! edge strain from 0.19 to 0.53; a predictive size rule and redoing a substep with contacts found
//! along the solve's motion gave no net gain (BENCHMARKS.md, "Step-size controller").

use rayon::prelude::*;

use crate::forces::{strain_and_stretch_wide, stretch_wide, TriangleRest};
use crate::integrator::Integrator;
use crate::linalg::{reduce, CgResult, Filter};
use crate::material::Material;
use crate::model::Model;
use crate::report::Rejection;
use crate::sim::{SimSettings, GROW_AFTER};
use crate::state::State;
use crate::workspace::Workspace;
use glam::Vec3;

/// A position as the SIMD vector the strain terms compute in ([`stretch_wide`]).
#[inline(always)]
fn wide(p: glam::Vec3) -> glam::Vec3A {
    glam::Vec3A::from(p)
}

/// The largest triangle strain at x1, the triangle that has it, its largest stretch, the
/// substep's strain jump and why the substep should be rejected, if it should: a solve that is not
/// finite or did not converge, or a strain jump above [`SimSettings::strain_jump`].
///
/// BW §6 discard a step in which a triangle "undergoes a drastic change in stretch" ("an unstable
/// step invariably results in stretch changes that are quite large"); the earlier rule here was
/// `max s(x1) − max s(x0) > strain_jump`. It is now judged against the strain the pins' driven
/// motion imposes:
///
/// `jump = max_t s_t(x1) − max(max_t s_t(x0), max_{t at a pin} [s_t(x0) + (s_t(x_pin) −
/// s_t(x_free))⁺])`,
///
/// with `s` the stretch of [`stretch`](crate::forces::stretch) (a compressed triangle has none), x1 the end positions (after the collision
/// corrections), x0 the start, x_free = x0 + h·v0 the free flight and x_pin the pins' kinematic
/// prediction: every hard-pinned vertex on its end-of-substep target, every other vertex in free
/// flight (under BDF2 from the base x̂, v̂, 2h/3; [`crate::integrator::method`]), measured on the
/// triangles with a hard-pinned vertex. `s(x_pin) − s(x_free)` is the strain the pins add to the
/// cloth's own motion: a cloth whose own velocities tear it apart is not excused by it. A rig that drags its pinned cloth (pin velocities change at every frame start: targets
/// are interpolated linearly within a frame) imposes that strain whatever the step size, and the
/// solve spreads it from the pins' triangles into their neighbours, so up to that level a strain
/// is not held against the step; above it, or above the start's largest strain, a rise of more
/// than `strain_jump` still rejects the step. Without pins (or with pins at rest) the rule is
/// exactly the earlier one, which is what keeps impacts on bodies (sheet on sphere: 0.09 instead
/// of 0.23) and the collision corrections (projection out of the colliders, cloth–cloth
/// collision; most of the dress-walk sample's rejections) from stretching the cloth: halving
/// the step does reduce the strain those put into it (BENCHMARKS.md, "Step-size controller"), so
/// contact-constrained vertices are not part of x_pin. Verlet (no implicit pin terms z, y: it puts
/// the pins on their targets itself) is judged by the earlier rule.
///
/// A moving body's contacts are excused up to [`SimSettings::body_strain_allowance`] (the
/// issue-14 lever "a controller that does not reject a substep for strain imposed by pins and
/// bodies"): on the triangles with a vertex held by a collider contact (filter not free) and no
/// hard pin, the driven level is `max(s_t(x0), min(s_t(x0) + (s_t(x_body) − s_t(x_rest))⁺,
/// allowance))`, with x_body the held vertices on their prescribed motion x0 + h·(v0 + z) + y and
/// x_rest the same less h times the body's velocity in the constrained directions (the contact on
/// a body at rest), everything else in free flight. A body at rest excuses nothing (impacts keep
/// the rule above: tests/body_driven_step.rs checks the same bits with and without the
/// allowance); a leg dragging a hem is no longer halved for the first 0.15 of stretch it puts
/// into the hem's triangles (on the bpy skirt-walk 25 of 30 rejections were such).
/// Measurements: [`crate::sim::DEFAULT_BODY_STRAIN_ALLOWANCE`].
///
/// The projection out of the colliders (stage 5) is excused the same way where the body advanced
/// into the vertex: a vertex it moved rides the body by the bodies' share of its projection
/// ([`crate::collide::ContactDetector::body_pushes`]: along the normal, the lesser of the depth
/// and the surface's own advance h·v_s), x_body = x_rest + that push, x_rest the vertex's motion
/// without it (its contact's, or free flight). A body at rest pushes nothing (the same bits as
/// before). On the dress-walk export, eight CG tolerances 0.97–1.02e-3 (the rejections are
/// chaotic in the solve's bits), before → after: 256.2 (27.4) → 244.4 (22.0) substeps
/// (rejected), collider rejections 14.3 → 9.9, CG iterations −4.7 %, the output's largest edge
/// stretch 0.206 → 0.210 (draws 0.187–0.226 and 0.179–0.231); bpy skirt-walk 227.8 (14.9) →
/// 223.4 (13.2), stretch 0.135 → 0.141.
///
/// A substep whose largest stretch at x1 is at most [`SimSettings::strain_jump_floor`] is not
/// rejected for its jump: every triangle is still within that of its rest length, which is no
/// unstable step (BW §6's reason for the rule); the jump is still reported. Measurements:
/// [`crate::sim::DEFAULT_STRAIN_JUMP_FLOOR`].
///
/// `collision_work`: cloth–cloth collision stopped at its work bound
/// ([`crate::self_collision::MAX_COLLISIONS_PER_VERTEX`]); the substep is rejected for it unless
/// its solve already failed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn judge(
    model: &Model,
    settings: &SimSettings,
    state: &State,
    ws: &Workspace,
    h: f32,
    cg: &CgResult,
    start_max: f32,
    collision_work: bool,
) -> Judgement {
    // `start_max`: the largest stretch at x0 (the assembly's, or `max_stretch` of the start).
    let (bx, bv, bh) = ws.base.pick(&ws.start.x, &ws.start.v, h);
    let (c, pinned) = (&ws.constraints, &model.hard_pinned);
    let free = |i: u32| bx[i as usize] + bh * bv[i as usize];
    let x_pin = |i: u32| {
        let i = i as usize;
        if pinned[i] {
            bx[i] + bh * (bv[i] + c.z[i]) + c.y[i]
        } else {
            bx[i] + bh * bv[i]
        }
    };
    // Verlet has no implicit pin terms (z, y): it puts the pins on their targets itself.
    let any_pin = settings.integrator != Integrator::Verlet && !model.pins.is_empty();
    // Contacts with a moving body ([`SimSettings::body_strain_allowance`]): the vertex rides the
    // body (x_pin: its prescribed motion, as for a pin), against the same contact on a body at
    // rest (x_ref: x_pin less h times the body's velocity in the constrained directions).
    let allowance = settings.body_strain_allowance;
    // Vertices the projection out of the colliders moved because the body advanced into them
    // (stage 5, [`crate::collide::ContactDetector::body_pushes`]): ridden like a contact, by the
    // bodies' share of the projection.
    let pushes = &ws.body_push;
    let pushed = |i: usize| pushes[i] != Vec3::ZERO;
    let any_push = allowance > 0.0 && pushes.iter().any(|p| *p != Vec3::ZERO);
    let by_bodies = allowance > 0.0
        && settings.integrator != Integrator::Verlet
        && (!c.active.is_empty() || any_push);
    debug_assert!(c.active.windows(2).all(|w| w[0].vertex < w[1].vertex));
    let held = |i: usize| !pinned[i] && c.filter[i] != Filter::Free;
    let body_motion = |i: usize| match c.active.binary_search_by_key(&(i as u32), |a| a.vertex) {
        Ok(k) => {
            let vs = c.active[k].surface_velocity;
            vs - c.filter[i].apply(vs)
        }
        Err(_) => Vec3::ZERO,
    };
    let x_body_unpushed = |i: usize| {
        if held(i) {
            bx[i] + bh * (bv[i] + c.z[i]) + c.y[i]
        } else {
            bx[i] + bh * bv[i]
        }
    };
    let x_body = |i: u32| x_body_unpushed(i as usize) + pushes[i as usize];
    let x_rest = |i: u32| {
        let iu = i as usize;
        if held(iu) {
            x_body_unpushed(iu) - bh * body_motion(iu)
        } else {
            bx[iu] + bh * bv[iu]
        }
    };
    // (The projection never moves a hard-pinned vertex; triangles with one are the pins' rule.)
    let driven_vertex = |i: usize| held(i) || pushed(i);
    // Each triangle's stretch at the base x0 is the assembly's of this substep (the same
    // positions and the same bits, `forces::stretch_shear`'s
    // `system_stretch_is_bit_identical_to_stretch`), unless further Newton iterations assembled
    // again at their iterates: then it is evaluated here. On the dress-walk sample 4,440 of the
    // 20,128 triangles have a pinned vertex, each evaluated three times per substep before
    // (callgrind, the judge over 4 frames at one thread: 48.7M → 45.3M instructions).
    let base_stretch: Option<&[f32]> = (settings.newton_iterations == 1
        && settings.integrator != Integrator::Verlet
        && ws.assembly.stretch.len() == model.triangles.len())
    .then_some(&ws.assembly.stretch[..]);
    let stretch_at_base = |t: usize, rest: &TriangleRest, mat: &Material| match base_stretch {
        Some(s) => s[t],
        None => stretch_wide(&model.triangles[t].map(|i| wide(bx[i as usize])), rest, mat),
    };
    // A triangle held by a body and by no pin: its driven stretch, capped at the allowance.
    let body_driven_at = |t: usize| {
        let tri = model.triangles[t];
        if !tri.iter().any(|&i| driven_vertex(i as usize))
            || tri.iter().any(|&i| pinned[i as usize])
        {
            return 0.0;
        }
        let rest = &model.triangle_rest[t];
        let mat = &model.materials[model.triangle_material[t] as usize];
        let s_base = stretch_at_base(t, rest, mat);
        let s_body = stretch_wide(&tri.map(|i| wide(x_body(i))), rest, mat);
        let s_rest = stretch_wide(&tri.map(|i| wide(x_rest(i))), rest, mat);
        s_base.max((s_base + (s_body - s_rest).max(0.0)).min(allowance))
    };
    let x1 = &state.x;
    // Corners go straight into SIMD vectors ([`wide`]): an array of `Vec3` built on the stack and
    // then read back 16 bytes at a time stalled on store forwarding; loaded directly, the judge's
    // samples in a one-thread perf of the dress-walk bake fell from 271 to 82-92 of ~9000. The
    // same bits: every term below is lane-wise.
    let end = |t: usize| {
        let tri = model.triangles[t];
        let mat = &model.materials[model.triangle_material[t] as usize];
        let xs = tri.map(|i| wide(x1[i as usize]));
        let (s1, t1) = strain_and_stretch_wide(&xs, &model.triangle_rest[t], mat);
        ((s1, t as u32), t1)
    };
    // Only the triangles with a hard-pinned vertex ([`Workspace::pinned_triangles`], ascending)
    // can have a driven strain; every other triangle's is 0.
    let driven_at = |&t: &u32| {
        let t = t as usize;
        let tri = model.triangles[t];
        let rest = &model.triangle_rest[t];
        let mat = &model.materials[model.triangle_material[t] as usize];
        let s_base = stretch_at_base(t, rest, mat);
        let s_pin = stretch_wide(&tri.map(|i| wide(x_pin(i))), rest, mat);
        let s_free = stretch_wide(&tri.map(|i| wide(free(i))), rest, mat);
        s_base + (s_pin - s_free).max(0.0)
    };
    let pinned_triangles: &[u32] = if any_pin { &ws.pinned_triangles } else { &[] };
    // The triangles `range` and the pinned ones among them: (largest strain and its triangle,
    // largest stretch, largest driven strain).
    let over = |range: std::ops::Range<usize>| {
        let lo = pinned_triangles.partition_point(|&t| (t as usize) < range.start);
        let hi = pinned_triangles.partition_point(|&t| (t as usize) < range.end);
        let none: ((f32, u32), f32) = ((0.0, 0), 0.0);
        let by_body = if by_bodies {
            range.clone().map(body_driven_at).fold(0.0, f32::max)
        } else {
            0.0
        };
        let (max, stretch1) = range
            .map(end)
            .fold(none, |a, b| (larger(a.0, b.0), a.1.max(b.1)));
        let driven = pinned_triangles[lo..hi]
            .iter()
            .map(driven_at)
            .fold(by_body, f32::max);
        (max, stretch1, driven)
    };
    // All three are exact maxima (ties to the lower index), the same in any order.
    let triangles = model.triangles.len();
    let (max, stretch1, driven) = if parallel_triangles(triangles) {
        let chunks = triangles.div_ceil(reduce::CHUNK);
        (0..chunks)
            .into_par_iter()
            .map(|c| over(chunk_range(c, triangles)))
            .reduce(
                || ((0.0, 0), 0.0, 0.0),
                |a, b| (larger(a.0, b.0), a.1.max(b.1), a.2.max(b.2)),
            )
    } else {
        over(0..triangles)
    };
    let jump = stretch1 - start_max.max(driven);
    let rejected = if cg.non_finite {
        Some(Rejection::NonFiniteSolve)
    } else if !cg.converged {
        Some(Rejection::CgNotConverged)
    } else if collision_work {
        Some(Rejection::CollisionWork)
    } else if jump > settings.strain_jump && stretch1 > settings.strain_jump_floor {
        Some(Rejection::StrainJump)
    } else {
        None
    };
    Judgement {
        max_strain: max.0,
        worst_triangle: max.1,
        max_stretch: stretch1,
        jump,
        rejected,
    }
}

/// What [`judge`] found.
pub(crate) struct Judgement {
    /// Largest |strain| at x1 ([`crate::forces::strain`]) and its triangle: what reports show and
    /// [`SimSettings::strain_limit`] bounds.
    pub max_strain: f32,
    pub worst_triangle: u32,
    /// Largest stretch at x1: what the strain jump is measured on.
    pub max_stretch: f32,
    pub jump: f32,
    pub rejected: Option<Rejection>,
}

/// Deterministic argmax: the larger value, then the lower index.
fn larger(a: (f32, u32), b: (f32, u32)) -> (f32, u32) {
    if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
        b
    } else {
        a
    }
}

/// Whether a pass over `n` triangles runs on the thread pool, by fixed chunks of
/// [`reduce::CHUNK`]: from two chunks on. A triangle's strain costs far more than a vertex pass's
/// element, so the pass gains from the other thread long before [`reduce::PARALLEL_FROM`]: the
/// judge on one thread made the `solver_other` stage of the bpy skirt (6.9k triangles) 0.079 s
/// against 0.047 s in chunks on both (cape, 3.6k: 0.023 s against 0.017 s; means of 5 and 10
/// alternating bakes on a quiet machine).
fn parallel_triangles(n: usize) -> bool {
    n >= 2 * reduce::CHUNK
}

/// The largest triangle stretch ([`stretch`](crate::forces::stretch)) at positions `x` (corners loaded as in [`judge`]).
pub(crate) fn max_stretch(model: &Model, x: &[glam::Vec3]) -> f32 {
    let at = |t: usize| {
        let tri = model.triangles[t];
        let mat = &model.materials[model.triangle_material[t] as usize];
        stretch_wide(
            &tri.map(|i| wide(x[i as usize])),
            &model.triangle_rest[t],
            mat,
        )
    };
    let n = model.triangles.len();
    if parallel_triangles(n) {
        let chunk = |c: usize| chunk_range(c, n).map(at).fold(0.0, f32::max);
        let chunks = n.div_ceil(reduce::CHUNK);
        (0..chunks)
            .into_par_iter()
            .map(chunk)
            .reduce(|| 0.0, f32::max)
    } else {
        (0..n).map(at).fold(0.0, f32::max)
    }
}

/// Triangles `c·CHUNK..` of `n` ([`reduce::CHUNK`]): on the thread pool the passes go by fixed
/// chunks, each folded on one thread (per triangle, rayon's splitting cost 30 % of the judge's
/// instructions on the dress: 227M against 160M over its first 10 frames at one thread).
fn chunk_range(c: usize, n: usize) -> std::ops::Range<usize> {
    c * reduce::CHUNK..n.min((c + 1) * reduce::CHUNK)
}

/// First vertex with a non-finite position or velocity. On one thread at any size: six
/// comparisons per vertex cost less than waking the pool (on the 10k-vertex dress the parallel
/// search was 0.4 % of a bake's CPU samples).
pub(crate) fn first_non_finite(state: &State) -> Option<usize> {
    state
        .x
        .iter()
        .zip(&state.v)
        .position(|(x, v)| !(x.is_finite() && v.is_finite()))
}

/// Keeps an accepted substep of `step` grid units and `h` seconds: the contacts' friction modes
/// become the state's memory, the clock advances and the controller may grow the step; under BDF2
/// the substep's start becomes the history (x₋₁, v₋₁, its length).
pub(crate) fn accept(state: &mut State, ws: &Workspace, h: f32, step: u64, integrator: Integrator) {
    ws.constraints.commit(&mut state.contacts);
    if integrator.keeps_history() {
        state.prev_x.clone_from(&ws.start.x);
        state.prev_v.clone_from(&ws.start.v);
        state.prev_h = h;
    }
    state.clock.time += h as f64;
    state.clock.substep_pos += step;
    let c = &mut state.controller;
    c.accepted_in_row += 1;
    if c.h_scale > 0 && c.accepted_in_row >= GROW_AFTER {
        c.h_scale -= 1;
        c.accepted_in_row = 0;
    }
}

/// Undoes a substep: the state returns to its start, without the warm start (the solve that
/// produced it is discarded).
pub(crate) fn restore(state: &mut State, ws: &Workspace) {
    state.copy_from(&ws.start);
    reduce::for_each_indexed(&mut state.dv, |_, d| *d = glam::Vec3::ZERO);
}

/// Undoes a rejected substep and halves the next one.
pub(crate) fn reject(state: &mut State, ws: &Workspace) {
    restore(state, ws);
    state.controller.h_scale += 1;
    state.controller.accepted_in_row = 0;
}
