//! Projected air damping (`[scene] damping_projection = true`): the linear air damping
//! f_i = −c·A_i·(v_i − v_air) acts only on the non-rigid part of the velocity, so free fall and
//! rigid rotation are not slowed by it.
//!
//! Boxerman (2003, §3.3) replaces damping that resists *all* relative motion (eq. 3.12) or all
//! motion (eq. 3.13, "worse still … damping all motion") by damping projected onto the direction
//! that deforms the cloth (eq. 3.14), which does not damp rigid-body motion; §4.2.4 shows that the
//! projected form lets a large damping constant remove the "bouncy" in-plane oscillation while the
//! total energy decays as without damping. BW's condition damping (§4.5, `stretch_damping`,
//! `bend_damping`) is already of that kind: it acts along ∂C/∂x on the rate Ċ, which is zero for
//! any rigid motion. The one damping force of the model that is of Boxerman's eq. 3.13 kind is
//! the linear air damping, and that is what this option projects: each connected piece of cloth's
//! velocity is decomposed into its rigid part — the centre-of-mass velocity v_c plus ω×(x − x_c)
//! with ω = I⁻¹·L, the velocity field with the piece's linear and angular momentum — and the
//! non-rigid rest r_i = v_i − v_c − ω×(x_i − x_c), and only r is damped, implicitly over the
//! substep: v_i ← v_c + ω×(x_i − x_c) + r_i / (1 + h·c·A_i/m_i), after the linear solve (a
//! first-order splitting of backward Euler for the damping term), with x_i moved by the same
//! change times the step's position coefficient (x1 = x0 + h·v1 + y). With one material per
//! piece c·A_i/m_i = c/density is the same for every vertex, so the damping keeps the piece's
//! linear and angular momentum exactly. Constrained directions (pins, contacts: the MPCG filter
//! S_i) are left as the solve made them; pinned vertices still count in the rigid fit, so a sheet
//! swinging rigidly about its pins is not damped either.
//!
//! The rigid part of the *numerical* damping of the one-Newton-step implicit integrators (a
//! rigidly spinning sheet loses angular momentum ∝ h², tests/rigid_motion.rs) is not a damping
//! force and is untouched by this option.

use glam::{DMat3, DVec3, Vec3};
use rayon::prelude::*;

use crate::linalg::Filter;
use crate::model::Model;

/// Connected pieces of cloth and their per-substep rigid fit.
#[derive(Debug, Clone, Default)]
pub struct ProjectedDamping {
    /// Per vertex: its piece (connected component of the mesh edges), numbered by first vertex.
    piece: Vec<u32>,
    /// Per piece: mass, Σm·x, Σm·v, Σm·x×v, Σm·x·xᵀ (f64, summed in vertex order).
    sums: Vec<Moments>,
    /// Per piece: (x_c, v_c, ω).
    rigid: Vec<(Vec3, Vec3, Vec3)>,
}

#[derive(Debug, Clone, Copy)]
struct Moments {
    m: f64,
    mx: DVec3,
    mv: DVec3,
    mxv: DVec3,
    mxx: DMat3,
}

impl Default for Moments {
    /// All zero (glam's `DMat3::default()` is the identity).
    fn default() -> Self {
        Moments {
            m: 0.0,
            mx: DVec3::ZERO,
            mv: DVec3::ZERO,
            mxv: DVec3::ZERO,
            mxx: DMat3::ZERO,
        }
    }
}

impl ProjectedDamping {
    /// Labels the pieces of `model` if not done yet (once per simulation).
    pub fn prepare(&mut self, model: &Model) {
        let n = model.vertex_count();
        if self.piece.len() == n {
            return;
        }
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn root(p: &mut [u32], mut i: u32) -> u32 {
            while p[i as usize] != i {
                p[i as usize] = p[p[i as usize] as usize];
                i = p[i as usize];
            }
            i
        }
        for e in &model.edges {
            let (a, b) = (root(&mut parent, e[0]), root(&mut parent, e[1]));
            // The smaller index becomes the root: labels do not depend on the edge order.
            let (lo, hi) = (a.min(b), a.max(b));
            parent[hi as usize] = lo;
        }
        let mut label = vec![u32::MAX; n];
        let mut pieces = 0u32;
        self.piece = (0..n as u32)
            .map(|i| {
                let r = root(&mut parent, i) as usize;
                if label[r] == u32::MAX {
                    label[r] = pieces;
                    pieces += 1;
                }
                label[r]
            })
            .collect();
        self.sums = vec![Moments::default(); pieces as usize];
        self.rigid = vec![(Vec3::ZERO, Vec3::ZERO, Vec3::ZERO); pieces as usize];
    }

    /// Damps the non-rigid part of the end-of-solve velocities `v` (positions `x`) with air damping
    /// `c` (kg/(m²·s)) over a substep of `h` seconds; `hx` is the position update's coefficient
    /// of v1 (h, or 2h/3 in a BDF2 substep). Only the free directions of `filter` change.
    #[allow(clippy::too_many_arguments)]
    pub fn apply(
        &mut self,
        model: &Model,
        filter: &[Filter],
        c: f32,
        h: f32,
        hx: f32,
        x: &mut [Vec3],
        v: &mut [Vec3],
    ) {
        self.prepare(model);
        self.sums.fill(Moments::default());
        // Sequential sums in vertex order: the same to the bit at any thread count.
        for i in 0..x.len() {
            let (m, p, u) = (model.mass[i] as f64, x[i].as_dvec3(), v[i].as_dvec3());
            let s = &mut self.sums[self.piece[i] as usize];
            s.m += m;
            s.mx += m * p;
            s.mv += m * u;
            s.mxv += m * p.cross(u);
            s.mxx += DMat3::from_cols(p * p.x, p * p.y, p * p.z) * m;
        }
        for (s, r) in self.sums.iter().zip(self.rigid.iter_mut()) {
            *r = if s.m > 0.0 {
                let (xc, vc) = (s.mx / s.m, s.mv / s.m);
                // About the centre: L = Σm·x×v − M·x_c×v_c, Σm·r·rᵀ = Σm·x·xᵀ − M·x_c·x_cᵀ.
                let l = s.mxv - s.m * xc.cross(vc);
                let rr = s.mxx - DMat3::from_cols(xc * xc.x, xc * xc.y, xc * xc.z) * s.m;
                let inertia =
                    DMat3::from_diagonal(DVec3::splat(rr.x_axis.x + rr.y_axis.y + rr.z_axis.z))
                        - rr;
                let trace = inertia.x_axis.x + inertia.y_axis.y + inertia.z_axis.z;
                // A piece too thin to have a well-defined rotation (a single vertex, a line of
                // vertices) keeps only its translation as the rigid part.
                let omega = if inertia.determinant() > 1e-9 * trace * trace * trace {
                    inertia.inverse() * l
                } else {
                    DVec3::ZERO
                };
                (xc.as_vec3(), vc.as_vec3(), omega.as_vec3())
            } else {
                (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO)
            };
        }
        let (piece, rigid) = (&self.piece, &self.rigid);
        x.par_iter_mut()
            .zip(v.par_iter_mut())
            .enumerate()
            .for_each(|(i, (x, v))| {
                let m = model.mass[i];
                if m <= 0.0 {
                    return;
                }
                let (xc, vc, omega) = rigid[piece[i] as usize];
                let u = vc + omega.cross(*x - xc);
                let keep = 1.0 / (1.0 + h * c * model.area[i] / m);
                let change = filter[i].apply((*v - u) * (keep - 1.0));
                *v += change;
                *x += hx * change;
            });
    }
}
