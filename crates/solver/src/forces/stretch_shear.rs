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
    let mut out = ElementForce::<3>::ZERO;
    let (wu, wv) = rest.w(x);
    let wu_dot = v[0] * rest.du[0] + v[1] * rest.du[1] + v[2] * rest.du[2];
    let wv_dot = v[0] * rest.dv[0] + v[1] * rest.dv[1] + v[2] * rest.dv[2];
    let a = rest.area;
    let damping = r(mat.stretch_damping);
    for (w, w_dot, alpha, k, b) in [
        (wu, wu_dot, &rest.du, mat.stretch[0], mat.rest_scale[0]),
        (wv, wv_dot, &rest.dv, mat.stretch[1], mat.rest_scale[1]),
    ] {
        let ka = r(k) * a;
        add_stretch(&mut out, w, w_dot, alpha, ka, damping * ka, r(b), jac);
    }
    let ka = r(mat.shear) * a;
    if ka > 0.0 {
        add_shear(
            &mut out,
            rest,
            (wu, wv),
            (wu_dot, wv_dot),
            ka,
            damping * ka,
            jac,
        );
    }
    out
}

/// One stretch condition `c = |w| − b` with `∂w/∂x_i = alpha[i] I`; `ka = k a`, `kda = k_d a`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn add_stretch(
    out: &mut ElementForce<3>,
    w: V3,
    w_dot: V3,
    alpha: &[Real; 3],
    ka: Real,
    kda: Real,
    b: Real,
    jac: Jacobian,
) {
    let len = w.length();
    if len <= Real::EPSILON {
        return;
    }
    let n = w / len;
    let c = len - b;
    let c_dot = n.dot(w_dot);
    let s = -(ka * c + kda * c_dot);
    for i in 0..3 {
        out.f[i] += n * (s * alpha[i]);
    }
    let nn = outer(n, n);
    // (I − ŵŵᵀ)/|w|: ∂ŵ/∂w, the curvature of |w|.
    let p = (M3::IDENTITY - nn) * (1.0 / len);
    let kx = match jac {
        Jacobian::Exact => {
            // −k a (ŵŵᵀ + c P) − k_d a (ċ P + ŵ (P ẇ)ᵀ)
            nn * (-ka) + p * (-(ka * c + kda * c_dot)) - outer(n, p * w_dot) * kda
        }
        Jacobian::Stabilized => {
            if c > 0.0 {
                nn * (-ka) - p * (ka * c)
            } else {
                nn * (-ka)
            }
        }
    };
    let kv = nn * (-kda);
    for i in 0..3 {
        for j in 0..3 {
            let aa = alpha[i] * alpha[j];
            out.dfdx[i][j] += kx * aa;
            out.dfdv[i][j] += kv * aa;
        }
    }
}

/// Shear condition `c = w_u · w_v`; `ka = k a`, `kda = k_d a`.
#[inline(always)]
fn add_shear(
    out: &mut ElementForce<3>,
    rest: &TriangleRest,
    (wu, wv): (V3, V3),
    (wu_dot, wv_dot): (V3, V3),
    ka: Real,
    kda: Real,
    jac: Jacobian,
) {
    let (al, be) = (&rest.du, &rest.dv);
    let g = [
        wv * al[0] + wu * be[0],
        wv * al[1] + wu * be[1],
        wv * al[2] + wu * be[2],
    ];
    let c = wu.dot(wv);
    let c_dot = wv.dot(wu_dot) + wu.dot(wv_dot);
    let s = -(ka * c + kda * c_dot);
    for i in 0..3 {
        out.f[i] += g[i] * s;
    }
    // Coefficient of the identity in ∂²c/∂x_i∂x_j is (α_i β_j + β_i α_j).
    let hess_scale = -(ka * c + kda * c_dot);
    for i in 0..3 {
        for j in 0..3 {
            let ggt = outer(g[i], g[j]);
            out.dfdv[i][j] -= ggt * kda;
            let gn = ggt * (-ka);
            out.dfdx[i][j] += match jac {
                Jacobian::Exact => {
                    let h = al[i] * be[j] + be[i] * al[j];
                    // ∂ċ/∂x_j = β_j ẇ_u + α_j ẇ_v
                    let dcdot_dx = wu_dot * be[j] + wv_dot * al[j];
                    gn + M3::from_diagonal(V3::splat(hess_scale * h)) - outer(g[i], dcdot_dx) * kda
                }
                Jacobian::Stabilized => gn,
            };
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
