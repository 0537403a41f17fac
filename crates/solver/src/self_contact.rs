//! The cloth–cloth collision hook of the step: after the implicit solve and the body projection,
//! as the last thing that moves x1, the self-collision stage corrects the substep's effective
//! velocities (x1 − x0)/h so that the motion x0 → x1 has no cloth crossings (Bridson, Fedkiw &
//! Anderson 2002). Hard-pinned vertices have infinite mass, and vertices held by a body cannot be
//! pushed into it. Present only when some garment enables self-collision; garments collide with
//! each other then.

use crate::collide::{Aabb, MovingCollider};
use crate::error::ModelError;
use crate::linalg::{BlockMatrix, Filter};
use crate::model::Model;
use crate::self_collision::{
    Contact, SelfCollision, SelfCollisionParams, SelfCollisionReport, SelfCollisionTimes,
    SelfCollisionTopology, REPULSION_RATE,
};
use glam::{Mat3, Mat3A, Vec3};
use rayon::prelude::*;

/// Vertices closer than this many collider thicknesses to a body are treated as resting on it by
/// the cloth–cloth impulses (a vertex just above the thickness could otherwise be pushed into the
/// body by cloth landing on it).
const BODY_BAND: f32 = 2.0;

/// Self-collision stage with its per-vertex inputs and scratch.
#[derive(Debug)]
pub struct SelfContact {
    stage: SelfCollision,
    /// Per garment (layer); garments without self-collision still collide with other garments using
    /// their collider thickness and the default friction.
    params: Vec<SelfCollisionParams>,
    /// 1/kg, 0 for hard-pinned vertices.
    inv_mass: Vec<f32>,
    /// Outward unit normal of the body each vertex rests on this substep (zero if none).
    body_normal: Vec<Vec3>,
    /// Collider thickness per vertex (m) and its maximum.
    body_thickness: Vec<f32>,
    max_body_thickness: f32,
    /// Per collider: end-of-substep box inflated by the body band (reused scratch).
    body_boxes: Vec<Aabb>,
    v_eff: Vec<Vec3>,
    v_orig: Vec<Vec3>,
    /// Predicted end positions for [`Self::prepare`] (m).
    x_pred: Vec<Vec3>,
}

impl SelfContact {
    /// `None` when no garment enables self-collision.
    pub fn new(model: &Model) -> Result<Option<Self>, ModelError> {
        if model.self_collision.iter().all(Option::is_none) {
            return Ok(None);
        }
        let n = model.vertex_count();
        let mut layer = vec![0u32; n];
        for (g, r) in model.garments.iter().enumerate() {
            layer[r.vertices.clone()]
                .iter_mut()
                .for_each(|l| *l = g as u32);
        }
        let topology = SelfCollisionTopology {
            triangles: model.triangles.clone(),
            vertex_layer: layer,
            layer_self_collide: model.self_collision.iter().map(Option::is_some).collect(),
            rest_positions: Some(model.rest_positions.clone()),
        };
        let err = |g: usize, e: &dyn std::fmt::Display| ModelError::SelfCollision {
            garment: model
                .garments
                .get(g)
                .map_or(String::new(), |r| r.name.clone()),
            message: e.to_string(),
        };
        let mut stage = SelfCollision::new(&topology).map_err(|e| err(0, &e))?;
        let params: Vec<SelfCollisionParams> = model
            .self_collision
            .iter()
            .zip(&model.garments)
            .map(|(p, r)| {
                p.unwrap_or(SelfCollisionParams {
                    thickness: model.thickness[r.vertices.start],
                    ..Default::default()
                })
            })
            .collect();
        for (g, p) in params.iter().enumerate() {
            p.validate().map_err(|e| err(g, &e))?;
        }
        let inv_mass = model
            .mass
            .iter()
            .zip(&model.hard_pinned)
            .map(|(&m, &pinned)| if pinned || m <= 0.0 { 0.0 } else { 1.0 / m })
            .collect::<Vec<f32>>();
        // Pairs of hard-pinned vertices only are no candidates: nothing in the stage moves them.
        let immovable: Vec<bool> = inv_mass.iter().map(|&w| w == 0.0).collect();
        stage.set_immovable(&immovable);
        Ok(Some(SelfContact {
            stage,
            params,
            inv_mass,
            body_normal: vec![Vec3::ZERO; n],
            body_thickness: model.thickness.clone(),
            max_body_thickness: model.thickness.iter().copied().fold(0.0, f32::max),
            body_boxes: Vec::new(),
            v_eff: vec![Vec3::ZERO; n],
            v_orig: vec![Vec3::ZERO; n],
            x_pred: vec![Vec3::ZERO; n],
        }))
    }

    /// Finds the proximity contacts at `x0` (m) ahead of the solve ([`SelfCollision::prepare`]),
    /// sweeping the candidate boxes to the free-flight prediction x0 + h·(v0 + h·g) (`v0` m/s,
    /// `h` s, `gravity` m/s²). Returns the time spent per part.
    pub fn prepare(
        &mut self,
        x0: &[Vec3],
        v0: &[Vec3],
        h: f32,
        gravity: Vec3,
    ) -> SelfCollisionTimes {
        self.x_pred
            .par_iter_mut()
            .zip(x0.par_iter().zip(v0.par_iter()))
            .for_each(|(p, (x, v))| *p = *x + h * (*v + h * gravity));
        self.stage.prepare(x0, &self.x_pred, &self.params)
    }

    /// Adds the implicit normal damping of the approaching proximity contacts prepared by the last
    /// [`Self::prepare`] to the system A·Δv = b of the step (`a`, `b`) and to the constraint terms
    /// further Newton iterations re-assemble from (`extra_diag`, `extra_rhs`); see
    /// `contact_damping`. `v0`, `h`: the step's base velocities (m/s) and step (s); `filter`, `z` the
    /// substep's constraints (a hard-pinned vertex moves by its prescribed Δv = z). Returns the
    /// number of contacts damped.
    #[allow(clippy::too_many_arguments)]
    pub fn implicit_damping(
        &self,
        mass: &[f32],
        beta: f32,
        (v0, h): (&[Vec3], f32),
        constraints: (&[Filter], &[Vec3]),
        a: &mut BlockMatrix,
        b: &mut [Vec3],
        extra: (&mut [Mat3], &mut [Vec3]),
    ) -> u32 {
        let (filter, z) = constraints;
        let inputs = DampingInputs {
            mass,
            inv_mass: &self.inv_mass,
            v0,
            h,
            fixed_dv: |i: usize| (filter[i] == Filter::Fixed).then_some(z[i]),
        };
        let mut count = 0;
        for c in self.stage.prepared_contacts() {
            if let Some(terms) = contact_damping(c, &inputs, beta) {
                for (i, block, force) in terms.iter().flatten().copied() {
                    a.diag[i] += Mat3A::from(block);
                    b[i] += force;
                    extra.0[i] += block;
                    extra.1[i] += force;
                }
                count += 1;
            }
        }
        count
    }

    /// Makes x0 → x1 crossing-free: x1 = x0 + h·v_eff with corrected v_eff, the same correction added
    /// to `v1`. Vertices held by a collider this substep (`held[i]`) or ending within twice their
    /// collider thickness of one get the outward normal of the nearest collider at the end of the
    /// substep (`colliders`), along which cloth–cloth impulses and impact zones never push them
    /// inwards: cloth pressed onto other cloth lying on a body moves away from the body instead.
    pub fn apply(
        &mut self,
        x0: &[Vec3],
        x1: &mut [Vec3],
        v1: &mut [Vec3],
        h: f32,
        held: &[bool],
        colliders: &[MovingCollider],
    ) -> SelfCollisionReport {
        let thickness = &self.body_thickness;
        let band = BODY_BAND * self.max_body_thickness;
        self.body_boxes.clear();
        self.body_boxes
            .extend(colliders.iter().map(|c| c.end.aabb().inflate(band)));
        let boxes = &self.body_boxes;
        let x1r: &[Vec3] = x1;
        self.body_normal
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, bn)| {
                let p = Aabb {
                    min: x1r[i],
                    max: x1r[i],
                };
                *bn = colliders
                    .iter()
                    .zip(boxes)
                    .filter(|(_, b)| b.overlaps(&p))
                    .map(|(c, _)| c.end.distance(x1r[i]))
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .filter(|&(d, _)| held[i] || d < BODY_BAND * thickness[i])
                    .map_or(Vec3::ZERO, |(_, n)| n);
            });
        for i in 0..x0.len() {
            self.v_eff[i] = (x1[i] - x0[i]) / h;
            self.v_orig[i] = self.v_eff[i];
        }
        let report = self.stage.resolve_with_bodies(
            x0,
            &mut self.v_eff,
            h,
            &self.inv_mass,
            &self.body_normal,
            &self.params,
        );
        // x1 exactly as `resolve` checked it (x0 + h·v in f32) for every vertex.
        for i in 0..x0.len() {
            x1[i] = x0[i] + h * self.v_eff[i];
            v1[i] += self.v_eff[i] - self.v_orig[i];
        }
        report
    }
}

/// What [`contact_damping`] reads per vertex.
struct DampingInputs<'a, F: Fn(usize) -> Option<Vec3>> {
    /// kg.
    mass: &'a [f32],
    /// 1/kg, 0 for hard-pinned vertices.
    inv_mass: &'a [f32],
    /// Base velocities of the step (m/s) and its step h (s).
    v0: &'a [Vec3],
    h: f32,
    /// The prescribed velocity change (m/s) of a vertex whose motion the solve cannot change.
    fixed_dv: F,
}

/// One stencil vertex's implicit terms: (vertex, block added to A's diagonal (kg), force impulse
/// added to b (N·s)).
type DampingTerm = (usize, Mat3, Vec3);

/// The implicit normal damping of one cloth–cloth proximity contact, or None if its two sides do
/// not approach at the base velocities u (relative normal velocity Σ w_k n·u_k below BFA02 §7.2's
/// repulsion target `REPULSION_RATE · overlap / h` is an approach) or no stencil vertex can move.
///
/// Every movable stencil vertex k (weight w_k ≠ 0) gets the damping force
/// f_k = −c_k·n nᵀ·(v_k − t·n), h·c_k = β·|w_k|·m_k, linearised implicitly as BW eq. 15 does
/// damping: h·c_k·n nᵀ on A's diagonal block and −h·c_k·n·(n·u_k − t) in b. The common normal
/// velocity t is the stencil's mean, t = Σ ω_k n·u_k / Σ ω_k with ω_k = |w_k|·m_k / (1 + β·|w_k|):
/// alone, each vertex ends at n·v_k = (n·u_k + β|w_k| t)/(1 + β|w_k|), which keeps the stencil's
/// normal momentum Σ m_k n·v_k and takes the approach towards zero monotonically in β (two equal
/// vertices: the relative velocity is divided by 1 + β). Damping each vertex towards the other
/// side's velocity instead (the partner explicit, the momentum-conserving Jacobi split of the
/// stencil's damper) overshoots into a bounce for β > 1. A hard-pinned vertex cannot give way: if
/// the stencil has one, t is the mean normal velocity of its pinned vertices (|w_k|-weighted, at
/// their prescribed u_k + Δv_k). Inside the solve the stretch stiffness makes the neighbours of a
/// vertex being stopped slow down with it; the post-solve repulsion then has little left to do.
fn contact_damping<F: Fn(usize) -> Option<Vec3>>(
    c: &Contact,
    inp: &DampingInputs<F>,
    beta: f32,
) -> Option<[Option<DampingTerm>; 4]> {
    let n = c.normal;
    let u = |k: usize| n.dot(inp.v0[c.idx[k] as usize]);
    let approach: f32 = (0..4).map(|k| c.w[k] * u(k)).sum();
    let overlap = (c.thickness - c.gap).max(0.0);
    // Not an approach (or not a number): nothing to damp.
    if approach.partial_cmp(&(REPULSION_RATE * overlap / inp.h)) != Some(std::cmp::Ordering::Less) {
        return None;
    }
    let (mut free, mut fixed) = ((0.0f32, 0.0f32), (0.0f32, 0.0f32));
    for k in 0..4 {
        let (i, w) = (c.idx[k] as usize, c.w[k].abs());
        if w == 0.0 {
            continue;
        }
        if inp.inv_mass[i] <= 0.0 {
            let dv = (inp.fixed_dv)(i).unwrap_or(Vec3::ZERO);
            fixed.0 += w * n.dot(inp.v0[i] + dv);
            fixed.1 += w;
        } else {
            let omega = w * inp.mass[i] / (1.0 + beta * w);
            free.0 += omega * u(k);
            free.1 += omega;
        }
    }
    if free.1 <= 0.0 {
        return None;
    }
    let t = if fixed.1 > 0.0 {
        fixed.0 / fixed.1
    } else {
        free.0 / free.1
    };
    if !t.is_finite() {
        return None;
    }
    let nn = Mat3::from_cols(n * n.x, n * n.y, n * n.z);
    let mut terms = [None; 4];
    for (k, term) in terms.iter_mut().enumerate() {
        let (i, w) = (c.idx[k] as usize, c.w[k].abs());
        if w == 0.0 || inp.inv_mass[i] <= 0.0 {
            continue;
        }
        let hc = beta * w * inp.mass[i];
        *term = Some((i, nn * hc, n * (-hc * (u(k) - t))));
    }
    Some(terms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::self_collision::NormalFrom;

    /// A vertex–triangle contact (vertex 0 over triangle 1, 2, 3 with barycentric weights `alpha`),
    /// normal +y, 1 mm apart with 5 mm thickness.
    fn contact(alpha: [f32; 3]) -> Contact {
        Contact {
            idx: [0, 1, 2, 3],
            w: [1.0, -alpha[0], -alpha[1], -alpha[2]],
            normal: Vec3::Y,
            gap: 0.001,
            thickness: 0.005,
            friction: 0.0,
            normal_from: NormalFrom::Separation,
        }
    }

    /// Normal velocities after the damping alone: (m_k + h·c_k)·Δv = f_k per vertex (the
    /// blocks are n nᵀ multiples, so the normal component decouples).
    fn damped(
        c: &Contact,
        mass: [f32; 4],
        inv: [f32; 4],
        u: [f32; 4],
        beta: f32,
    ) -> Option<[f32; 4]> {
        let v0: Vec<Vec3> = u.iter().map(|&y| Vec3::new(0.3, y, -0.2)).collect();
        let inp = DampingInputs {
            mass: &mass,
            inv_mass: &inv,
            v0: &v0,
            h: 0.01,
            fixed_dv: |_| Some(Vec3::ZERO),
        };
        let terms = contact_damping(c, &inp, beta)?;
        let mut v = u;
        for (i, block, force) in terms.iter().flatten().copied() {
            assert_eq!(
                block * Vec3::X,
                Vec3::ZERO,
                "only the normal direction is damped"
            );
            assert_eq!(force.x, 0.0);
            v[i] += force.y / (mass[i] + block.y_axis.y);
        }
        Some(v)
    }

    fn approach(c: &Contact, v: [f32; 4]) -> f32 {
        (0..4).map(|k| c.w[k] * v[k]).sum()
    }

    #[test]
    fn damping_keeps_the_normal_momentum_and_divides_the_approach() {
        let free = [1.0 / 0.002; 4];
        // Vertex over a triangle corner: a two-body contact; equal masses, the vertex falls at 1 m/s.
        let c = contact([1.0, 0.0, 0.0]);
        let (mass, u) = ([0.002; 4], [-1.0, 0.0, 0.0, 0.0]);
        for beta in [0.5, 1.0, 4.0, 20.0] {
            let v = damped(&c, mass, free, u, beta).expect("approaching");
            let after = approach(&c, v);
            assert!(
                (after - (-1.0 / (1.0 + beta))).abs() < 1e-6,
                "β {beta}: {after}"
            );
            let p: f32 = (0..4).map(|k| mass[k] * v[k]).sum();
            assert!((p - (-0.002)).abs() < 1e-9, "momentum {p}");
        }
        // Uneven weights and masses: momentum kept, the approach shrinks monotonically in β and
        // never reverses into a bounce.
        let c = contact([0.5, 0.3, 0.2]);
        let (mass, u) = ([0.001, 0.003, 0.002, 0.004], [-1.5, 0.2, -0.1, 0.4]);
        let inv = mass.map(|m| 1.0 / m);
        let p0: f32 = (0..4).map(|k| mass[k] * u[k]).sum();
        let mut last = approach(&c, u);
        assert!(last < 0.0);
        for beta in [0.5, 1.0, 4.0, 20.0, 1000.0] {
            let v = damped(&c, mass, inv, u, beta).expect("approaching");
            let p: f32 = (0..4).map(|k| mass[k] * v[k]).sum();
            assert!((p - p0).abs() < 1e-8, "β {beta}: momentum {p} vs {p0}");
            let now = approach(&c, v);
            assert!(
                now > last && now <= 0.0,
                "β {beta}: approach {now} after {last}"
            );
            last = now;
        }
        assert!(
            last > -0.01,
            "a stiff damper all but stops the approach: {last}"
        );
    }

    #[test]
    fn separating_contacts_are_left_alone_and_pinned_sides_do_not_give_way() {
        let mass = [0.002; 4];
        let free = [500.0; 4];
        let c = contact([0.2, 0.3, 0.5]);
        // Moving apart faster than the repulsion asks for (0.1 × 4 mm overlap / 10 ms = 0.04 m/s).
        assert!(damped(&c, mass, free, [0.05, 0.0, 0.0, 0.0], 4.0).is_none());
        assert!(damped(&c, mass, free, [0.03, 0.0, 0.0, 0.0], 4.0).is_some());
        // The triangle is pinned (moving up at 0.1 m/s): the vertex is pulled towards the
        // triangle's velocity, the triangle gets no term.
        let pinned = [500.0, 0.0, 0.0, 0.0];
        let v = damped(&c, mass, pinned, [-1.0, 0.1, 0.1, 0.1], 4.0).expect("approaching");
        assert_eq!(&v[1..], &[0.1, 0.1, 0.1]);
        assert!((v[0] - (-1.0 + 4.0 * 0.1) / 5.0).abs() < 1e-6, "{}", v[0]);
        // Nothing movable: nothing to damp.
        assert!(damped(&c, mass, [0.0; 4], [-1.0, 0.0, 0.0, 0.0], 4.0).is_none());
    }
}
