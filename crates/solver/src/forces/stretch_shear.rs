//! In-plane stretch and shear of one triangle, BW §4.2, with condition damping (BW §4.5).
//!
//! Conditions (dimensionless, per unit rest area `a`): `c_u = |w_u| − b_u`, `c_v = |w_v| − b_v`,
//! `c_s = w_u · w_v`; energy `E = ½ k a c²` per condition (BW's `C = a c` with `k_BW = k/a`), force
//! `f_i = −k a c ∂c/∂x_i`, damping `d_i = −k_d a ∂c/∂x_i ċ` with `k_d = stretch_damping · k`.
//! For stretch `∂c/∂x_i = α_i ŵ` and `∂²c/∂x_i∂x_j = α_i α_j (I − ŵŵᵀ)/|w|`; for shear
//! `∂c/∂x_i = α_i w_v + β_i w_u`, `∂²c/∂x_i∂x_j = (α_i β_j + β_i α_j) I` (α = `du`, β = `dv`).

// Indices i, j run over several parallel per-vertex arrays (forces, blocks, gradients).
#![allow(clippy::needless_range_loop)]

use super::element::{outer, ElementForce};
use super::scalar::*;
use super::triangle_rest::TriangleRest;
use super::Jacobian;
use crate::material::Material;

/// Stretch (warp and weft) and shear forces of one triangle with their damping.
///
/// `x`: positions (m), `v`: velocities (m/s), `rest`: rest frame, `mat`: stiffnesses. Forces in N.
/// A direction collapsed to zero length (`|w| = 0`) has no defined stretch direction and
/// contributes nothing.
#[inline]
pub fn stretch_shear(
    x: &[V3; 3],
    v: &[V3; 3],
    rest: &TriangleRest,
    mat: &Material,
    jac: Jacobian,
) -> ElementForce<3> {
    let (al, be) = (&rest.du, &rest.dv);
    let (wu, wv) = rest.w_wide(x);
    let v = [wide(v[0]), wide(v[1]), wide(v[2])];
    let wu_dot = v[0] * al[0] + v[1] * al[1] + v[2] * al[2];
    let wv_dot = v[0] * be[0] + v[1] * be[1] + v[2] * be[2];
    let a = rest.area;
    let damping = r(mat.stretch_damping);
    let ka_u = r(mat.stretch[0]) * a;
    let ka_v = r(mat.stretch[1]) * a;
    let su = Stretch::new(wu, wu_dot, ka_u, damping * ka_u, r(mat.rest_scale[0]), jac);
    let sv = Stretch::new(wv, wv_dot, ka_v, damping * ka_v, r(mat.rest_scale[1]), jac);

    // Shear c = w_u·w_v: ∂c/∂x_i = α_i w_v + β_i w_u.
    let ka_s = r(mat.shear) * a;
    let kda_s = damping * ka_s;
    let g = [
        wv * al[0] + wu * be[0],
        wv * al[1] + wu * be[1],
        wv * al[2] + wu * be[2],
    ];
    let c_s = wu.dot(wv);
    let c_s_dot = wv.dot(wu_dot) + wu.dot(wv_dot);
    let s_s = -(ka_s * c_s + kda_s * c_s_dot);

    let mut out = ElementForce::<3>::ZERO;
    for i in 0..3 {
        out.f[i] = narrow(su.dir * (su.s * al[i]) + sv.dir * (sv.s * be[i]) + g[i] * s_s);
    }
    // Blocks: stretch ∝ α_iα_j, β_iβ_j; shear Gauss–Newton part ∝ g_i g_jᵀ. Symmetric so far
    // (the Exact-only terms below are added to every block): compute i ≤ j, mirror the rest.
    let mut kx = [[M3A::ZERO; 3]; 3];
    for i in 0..3 {
        for j in i..3 {
            let (aa, bb) = (al[i] * al[j], be[i] * be[j]);
            let ggt = outer(g[i], g[j]);
            let bx = su.kx * aa + sv.kx * bb - ggt * ka_s;
            let bv = su.kv * aa + sv.kv * bb - ggt * kda_s;
            kx[i][j] = bx;
            out.dfdv[i][j] = narrow_m(bv);
            if i != j {
                kx[j][i] = bx.transpose();
                out.dfdv[j][i] = narrow_m(bv.transpose());
            }
        }
    }
    if jac == Jacobian::Exact {
        // Unsymmetric damping terms of stretch, −k_d a α_iα_j ŵ (P ẇ)ᵀ; shear second-derivative
        // terms ∂²c/∂x_i∂x_j = (α_iβ_j + β_iα_j) I, and the shear damping term
        // −k_d a ∂c/∂x_i (∂ċ/∂x_j)ᵀ with ∂ċ/∂x_j = β_j ẇ_u + α_j ẇ_v.
        for i in 0..3 {
            for j in 0..3 {
                let h = al[i] * be[j] + be[i] * al[j];
                let dcdot_dx = wu_dot * be[j] + wv_dot * al[j];
                kx[i][j] += su.kx_damp * (al[i] * al[j])
                    + sv.kx_damp * (be[i] * be[j])
                    + M3A::from_diagonal(V3::splat(s_s * h))
                    - outer(g[i], dcdot_dx) * kda_s;
            }
        }
    }
    for i in 0..3 {
        for j in 0..3 {
            out.dfdx[i][j] = narrow_m(kx[i][j]);
        }
    }
    out
}

/// One stretch condition `c = |w| − b`, `∂c/∂x_i = α_i ŵ`: force direction and scale, and the
/// 3×3 matrices that multiply `α_i α_j` in the blocks (`ka = k a`, `kda = k_d a`).
struct Stretch {
    /// ŵ (zero if |w| = 0).
    dir: V3A,
    /// `−(k a c + k_d a ċ)`: `f_i = s α_i ŵ`.
    s: Real,
    /// Symmetric part of `∂f_i/∂x_j`: `kx α_i α_j`.
    kx: M3A,
    /// Unsymmetric damping part of `∂f_i/∂x_j` (Exact only): `kx_damp α_i α_j`.
    kx_damp: M3A,
    /// `∂f_i/∂v_j = kv α_i α_j`.
    kv: M3A,
}

impl Stretch {
    #[inline(always)]
    fn new(w: V3A, w_dot: V3A, ka: Real, kda: Real, b: Real, jac: Jacobian) -> Self {
        let len = w.length();
        if len <= Real::EPSILON {
            return Self {
                dir: V3A::ZERO,
                s: 0.0,
                kx: M3A::ZERO,
                kx_damp: M3A::ZERO,
                kv: M3A::ZERO,
            };
        }
        let n = w / len;
        let c = len - b;
        let c_dot = n.dot(w_dot);
        let s = -(ka * c + kda * c_dot);
        let nn = outer(n, n);
        let mut kx_damp = M3A::ZERO;
        let kx = match jac {
            // −k a (ŵŵᵀ + c P) − k_d a (ċ P + ŵ (P ẇ)ᵀ), P = (I − ŵŵᵀ)/|w| = ∂ŵ/∂w.
            Jacobian::Exact => {
                let p = (M3A::IDENTITY - nn) * (1.0 / len);
                kx_damp = outer(n, p * w_dot) * (-kda);
                nn * (-ka) + p * s
            }
            // Keep the curvature term only while stretched (Choi & Ko 2002, Kang 2003 eq. 4.11):
            // −k a (ŵŵᵀ + c (I − ŵŵᵀ)/|w|) = −k a ((1 − c/|w|) ŵŵᵀ + (c/|w|) I).
            Jacobian::Stabilized if c > 0.0 => {
                let q = c / len;
                nn * (-ka * (1.0 - q)) - M3A::from_diagonal(V3::splat(ka * q))
            }
            Jacobian::Stabilized => nn * (-ka),
        };
        Self {
            dir: n,
            s,
            kx,
            kx_damp,
            kv: nn * (-kda),
        }
    }
}

/// Largest stretch strain of a triangle: `max(| |w_u|/b_u − 1 |, | |w_v|/b_v − 1 |)`
/// (dimensionless), for the adaptive step (BW §5.3-style stretch monitoring) and reports.
#[inline]
pub fn strain(x: &[V3; 3], rest: &TriangleRest, mat: &Material) -> Real {
    let (wu, wv) = rest.w(x);
    let su = (wu.length() / r(mat.rest_scale[0]) - 1.0).abs();
    let sv = (wv.length() / r(mat.rest_scale[1]) - 1.0).abs();
    su.max(sv)
}
