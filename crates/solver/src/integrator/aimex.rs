//! Adaptive implicit–explicit integration, AIMEX (Boxerman 2003, MSc thesis, §4.4).
//!
//! The substep is the first-order IMEX step of Boxerman eq. (4.13): backward Euler (one Newton
//! step, BW eq. 15) for the stiff elements, forward–backward Euler (eq. 4.5) for the others,
//!
//!   v1 = v0 + h·M⁻¹·(g(x1, v1) + f(x0, v0)),   x1 = x0 + h·v1,
//!
//! where g collects the implicit elements, linearised as in BW, and f the explicit ones. As
//! §4.3.2 says, "handling a connection explicitly is as simple as dropping its contribution to the
//! Jacobian matrices": an explicit element adds h·f(x0, v0) to b and nothing to A (nor the
//! ∂f/∂x·(h²v0 + h·y) term of b). Which elements are explicit is decided afresh every substep
//! from the substep length, the masses and the stiffnesses (§4.4: "on the fly … locally in both
//! space and time"), so a halved substep can turn elements explicit and a grown one implicit.
//!
//! **Criterion.** Boxerman's stability bound for FB Euler on the cloth grid (eq. 4.8, von Neumann
//! analysis §4.1.3) is K = (h/m)(h·k_s + 2·k_d) < 1/2 per stretch spring (k_s, k_d its stiffness
//! and damping, m the particle mass), used with the margin 0.2 (§4.4.1). BW's elements are
//! triangles and hinges, not springs (Boxerman expects "the criterion for this model to be very
//! similar (only evaluated on a per-triangle basis)", §4.4.1), so the criterion is evaluated per
//! vertex on the sums of its elements' Jacobian diagonal blocks at rest,
//!
//!   K_i = (h/m_i)·(h·D_i + 2·Δ_i),   D_i = Σ_e κ_{e,i} (N/m),   Δ_i = Σ_e δ_{e,i} (N·s/m),
//!
//! with κ_{e,i} the largest stiffness element e puts on vertex i (triangle, BW §4.2:
//! a·(k_u α_i² + k_v β_i² + k_s(α_i² b_v² + β_i² b_u²)), α = `du`, β = `dv`; hinge, BW §4.3:
//! k_e·|∂θ/∂x_i|² at the rest positions) and δ the same with the damping coefficients (BW §4.5,
//! k_d = damping time · k). On Boxerman's grid a vertex has four stretch springs, D_i = 4·k_s, so
//! his per-spring 0.2 is 0.8 per vertex; it is split evenly between the two element kinds:
//! triangles are explicit at vertex i if K_i over its triangles is below [`THRESHOLD`] = 0.4, hinges
//! likewise over its hinges, and an element is explicit only if it is explicit at every one of its
//! vertices. The explicit elements at any vertex then add up to K < 0.8 (Boxerman's margin), and
//! the stretch/shear and bend splits are independent, as in Boxerman's Table 4.1 (with cloth
//! stiffnesses and steps the triangles are implicit and the hinges, soft, often explicit; he always
//! handles bend explicitly, §4.4.1, which is this criterion's answer for small enough steps).
//! Wind drag of an explicit triangle is explicit too (Boxerman §4.3.2: external forces evaluated at
//! the current state); per-vertex air damping, goal springs and constraints stay implicit (they are
//! diagonal).
//!
//! **Decoupled vertices.** A vertex all of whose elements are explicit has a diagonal row in A
//! (Boxerman §6.1.1, "mechanism 1: sparsity": the implicit-connection graph leaves it alone), so
//! it is solved directly — Δv_i = C_i⁻¹·b_i in its filtered space — and handed to the MPCG as
//! prescribed (S_i = 0, z_i = Δv_i, the filter machinery of BW §5.3), which then iterates only over
//! the coupled vertices. (Boxerman §6's further decomposition of the coupled vertices into
//! independent components, solved separately, is not done: one MPCG solves them all.) The
//! collider-contact filters of the substep are kept for everything else (friction reads the
//! residual of the real filters), so contacts, pins and goal springs work as under backward Euler.

use glam::{Mat3, Mat3A, Vec3};
use rayon::prelude::*;

use crate::constraints::Constraints;
use crate::forces::bend_gradient;
use crate::linalg::{BlockMatrix, Filter};
use crate::model::Model;

/// Per vertex and element kind: elements are explicit where K_i = (h/m_i)(h·D_i + 2·Δ_i) is below
/// this (dimensionless; see the module documentation: half of Boxerman's 0.2-per-spring margin
/// expressed per vertex).
pub const THRESHOLD: f32 = 0.4;

/// How many elements and vertices the last split made explicit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SplitCounts {
    pub explicit_triangles: u32,
    pub explicit_hinges: u32,
    /// Vertices with only explicit elements, solved outside the MPCG.
    pub explicit_vertices: u32,
}

/// The split of the current substep and the stiffness sums it is decided from.
#[derive(Debug, Clone, Default)]
pub struct Aimex {
    /// Per vertex: (D_i, Δ_i) of its triangles (N/m, N·s/m).
    triangle_sums: Vec<(f32, f32)>,
    /// Per vertex: (D_i, Δ_i) of its hinges.
    hinge_sums: Vec<(f32, f32)>,
    /// Per vertex: triangles / hinges are explicit at it.
    vertex_triangles_explicit: Vec<bool>,
    vertex_hinges_explicit: Vec<bool>,
    /// Per element: handled explicitly this substep.
    pub triangle_explicit: Vec<bool>,
    pub hinge_explicit: Vec<bool>,
    /// The MPCG's filter and prescribed Δv: the substep's constraints, with the decoupled vertices
    /// fixed at their direct solution.
    pub filter: Vec<Filter>,
    pub z: Vec<Vec3>,
    decoupled: Vec<bool>,
    /// The substep length the split was last made for (s; 0 = none yet): the split depends only on
    /// it and the model, so an unchanged step reuses it.
    split_h: f32,
    pub counts: SplitCounts,
}

impl Aimex {
    /// Builds the per-vertex stiffness sums of `model` if they are not built yet (once per
    /// simulation; sums in element order, so the same at any thread count).
    pub fn prepare(&mut self, model: &Model) {
        let n = model.vertex_count();
        if self.triangle_sums.len() == n {
            return;
        }
        self.triangle_sums = vec![(0.0, 0.0); n];
        self.hinge_sums = vec![(0.0, 0.0); n];
        for (t, tri) in model.triangles.iter().enumerate() {
            let rest = &model.triangle_rest[t];
            let mat = &model.materials[model.triangle_material[t] as usize];
            let (bu2, bv2) = (mat.rest_scale[0].powi(2), mat.rest_scale[1].powi(2));
            for (a, &i) in tri.iter().enumerate() {
                let (al2, be2) = (rest.du[a] * rest.du[a], rest.dv[a] * rest.dv[a]);
                let kappa = rest.area
                    * (mat.stretch[0] * al2
                        + mat.stretch[1] * be2
                        + mat.shear * (al2 * bv2 + be2 * bu2));
                let s = &mut self.triangle_sums[i as usize];
                s.0 += kappa;
                s.1 += mat.stretch_damping * kappa;
            }
        }
        for (k, hinge) in model.hinges.iter().enumerate() {
            let xs = hinge.map(|i| model.rest_positions[i as usize]);
            let mat = &model.materials[model.hinge_material[k] as usize];
            if let Some(g) = bend_gradient(&xs, &[Vec3::ZERO; 4], &model.hinge_rest[k], mat) {
                for (gi, &i) in g.grad.iter().zip(hinge) {
                    let g2 = gi.length_squared();
                    let s = &mut self.hinge_sums[i as usize];
                    s.0 += g.stiffness * g2;
                    s.1 += g.damping * g2;
                }
            }
        }
        self.vertex_triangles_explicit = vec![false; n];
        self.vertex_hinges_explicit = vec![false; n];
        self.triangle_explicit = vec![false; model.triangles.len()];
        self.hinge_explicit = vec![false; model.hinges.len()];
        self.decoupled = vec![false; n];
    }

    /// Decides which elements are explicit for a substep of `h` seconds (Boxerman §4.4.1).
    pub fn split(&mut self, model: &Model, h: f32) {
        self.prepare(model);
        if h == self.split_h {
            return;
        }
        self.split_h = h;
        let explicit =
            |m: f32, (d, delta): (f32, f32)| m > 0.0 && h / m * (h * d + 2.0 * delta) < THRESHOLD;
        let mass = &model.mass;
        let (ts, hs) = (&self.triangle_sums, &self.hinge_sums);
        self.vertex_triangles_explicit
            .par_iter_mut()
            .zip(self.vertex_hinges_explicit.par_iter_mut())
            .enumerate()
            .for_each(|(i, (t, k))| {
                *t = explicit(mass[i], ts[i]);
                *k = explicit(mass[i], hs[i]);
            });
        let (vt, vh) = (
            &self.vertex_triangles_explicit,
            &self.vertex_hinges_explicit,
        );
        self.triangle_explicit
            .par_iter_mut()
            .zip(model.triangles.par_iter())
            .for_each(|(e, tri)| *e = tri.iter().all(|&i| vt[i as usize]));
        self.hinge_explicit
            .par_iter_mut()
            .zip(model.hinges.par_iter())
            .for_each(|(e, hinge)| *e = hinge.iter().all(|&i| vh[i as usize]));
        self.counts = SplitCounts {
            explicit_triangles: self.triangle_explicit.iter().filter(|&&e| e).count() as u32,
            explicit_hinges: self.hinge_explicit.iter().filter(|&&e| e).count() as u32,
            explicit_vertices: 0,
        };
    }

    /// After the assembly: finds the vertices whose row of `a` has no off-diagonal block (all their
    /// elements explicit), solves them directly and fills [`Self::filter`] and [`Self::z`] for the
    /// MPCG (Boxerman §6.1.1). Returns false, doing nothing, when no triangle is explicit (every
    /// vertex then has an implicit triangle): the MPCG takes the substep's own filter and z.
    pub fn decouple(&mut self, a: &BlockMatrix, b: &[Vec3], cons: &Constraints) -> bool {
        if self.counts.explicit_triangles == 0 {
            self.counts.explicit_vertices = 0;
            return false;
        }
        let p = &a.pattern;
        let zero = |s: usize| a.off[s] == Mat3A::ZERO;
        self.decoupled
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, d)| {
                let upper = p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize;
                let lower = p.lower_ptr[i] as usize..p.lower_ptr[i + 1] as usize;
                *d = upper.into_iter().all(zero)
                    && p.lower_slot[lower].iter().all(|&s| zero(s as usize));
            });
        let n = b.len();
        self.filter.resize(n, Filter::Free);
        self.z.resize(n, Vec3::ZERO);
        let decoupled = &self.decoupled;
        self.filter
            .par_iter_mut()
            .zip(self.z.par_iter_mut())
            .enumerate()
            .for_each(|(i, (f, z))| {
                let (cf, cz) = (cons.filter[i], cons.z[i]);
                if decoupled[i] {
                    *f = Filter::Fixed;
                    *z = solve_row(Mat3::from(a.diag[i]), b[i], cf, cz);
                } else {
                    *f = cf;
                    *z = cz;
                }
            });
        self.counts.explicit_vertices = decoupled.iter().filter(|&&d| d).count() as u32;
        true
    }
}

/// The solution of a decoupled row C·Δv = b under the filter `s` with prescribed part `z`:
/// S·C·Δv = S·b, (I − S)·Δv = (I − S)·z (BW §5.3 for a single vertex).
fn solve_row(c: Mat3, b: Vec3, s: Filter, z: Vec3) -> Vec3 {
    let dv = match s {
        Filter::Free => c.inverse() * b,
        Filter::Fixed => z,
        _ => {
            let sm = s.matrix();
            let prescribed = z - s.apply(z);
            let lhs = sm * c * sm + (Mat3::IDENTITY - sm);
            s.apply(lhs.inverse() * s.apply(b - c * prescribed)) + prescribed
        }
    };
    if dv.is_finite() {
        dv
    } else {
        // A singular row (zero mass) is left to the MPCG's own handling: prescribe nothing new.
        z - s.apply(z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filtered direct solve satisfies S·(C·Δv − b) = 0 and (I − S)·Δv = (I − S)·z.
    #[test]
    fn direct_row_solve_meets_the_filter() {
        let c = Mat3::from_cols(
            Vec3::new(2.0, 0.3, 0.1),
            Vec3::new(0.3, 1.5, -0.2),
            Vec3::new(0.1, -0.2, 1.8),
        );
        let b = Vec3::new(0.4, -1.0, 0.7);
        let z = Vec3::new(0.05, 0.2, -0.1);
        let n = Vec3::new(1.0, 2.0, 2.0) / 3.0;
        for s in [
            Filter::Free,
            Filter::Plane(n),
            Filter::Line(n),
            Filter::Fixed,
        ] {
            let dv = solve_row(c, b, s, z);
            let r = s.apply(c * dv - b);
            let p = (dv - s.apply(dv)) - (z - s.apply(z));
            assert!(r.length() < 1e-5, "{s:?}: residual {r}");
            assert!(p.length() < 1e-6, "{s:?}: prescribed part off by {p}");
        }
    }
}
