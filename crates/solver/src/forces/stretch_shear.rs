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
    let (wu, wv) = rest.w_wide(&x.map(wide));
    // ẇ from the velocity differences, as w from the edges: exactly zero in a uniform motion.
    let (wu_dot, wv_dot) = rest.w_wide(&v.map(wide));
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

/// One triangle's stretch and shear terms of the backward-Euler system (BW eqs. 15–18) with the
/// stabilized Jacobian, in compact form. With α = `du`, β = `dv` of the rest frame, the triangle adds
/// `α_a α_b U + β_a β_b V + q_a q_bᵀ` to block (a, b) of `A = M − h ∂f/∂v − h² ∂f/∂x` and `g_a` to
/// `b`: the blocks of [`stretch_shear`] (`Jacobian::Stabilized`) are exactly of this form (stretch
/// `∝ α_a α_b`, `β_a β_b`; shear Gauss–Newton `∝ g_a g_bᵀ`), so five 3×3 quantities replace nine
/// blocks and the matrix products of [`stretch_shear`]'s `dfdx·w` collapse to three.
/// `V`: the vector type of `g`, the API vector ([`stretch_shear_system`]) or the SIMD one
/// ([`stretch_shear_system_wide`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleSystem<V = V3> {
    /// `h f_a + Σ_b ∂f_a/∂x_b · w_b` (N·s).
    pub g: [V; 3],
    /// `−(h k_v + h² k_x)` of the warp (u) and weft (v) stretch (kg): symmetric PSD.
    pub u: M3A,
    pub v: M3A,
    /// `√(h k_d a + h² k a) ∂c_s/∂x_a` of the shear (√kg).
    pub q: [V3A; 3],
    /// The triangle's [`stretch`] at `x` (dimensionless), from the same |w_u|, |w_v| the stretch
    /// terms use: bit-identical to a separate [`stretch`] call, without its second pass over the
    /// corners.
    pub stretch: Real,
}

/// [`TriangleSystem`] of one triangle at positions `x` (m) and velocities `v` (m/s) for a substep
/// of `h` seconds; `w_b` (m) is the position term the Jacobian multiplies
/// (`h² v0_b + h y_b` in BW §5.3's notation).
#[inline]
pub fn stretch_shear_system(
    x: &[V3; 3],
    v: &[V3; 3],
    w: &[V3; 3],
    rest: &TriangleRest,
    mat: &Material,
    h: Real,
) -> TriangleSystem {
    let s = stretch_shear_system_wide(&x.map(wide), &v.map(wide), &w.map(wide), rest, mat, h);
    TriangleSystem {
        g: s.g.map(narrow),
        u: s.u,
        v: s.v,
        q: s.q,
        stretch: s.stretch,
    }
}

/// [`stretch_shear_system`] in the working (SIMD) vectors, bit-identical to it: what the assembly
/// calls per triangle and substep (BW §4.2 stretch and shear, §4.5 damping, into eqs. 15–18).
#[inline(always)]
pub fn stretch_shear_system_wide(
    x: &[V3A; 3],
    v: &[V3A; 3],
    w: &[V3A; 3],
    rest: &TriangleRest,
    mat: &Material,
    h: Real,
) -> TriangleSystem<V3A> {
    let (al, be) = (&rest.du, &rest.dv);
    let (wu, wv) = rest.w_wide(x);
    let stretch = positive_stretch(wu.length(), wv.length(), mat);
    // ẇ = Σ_b α_b v_b from the differences v_b − v_0 (Σ_b α_b = 0), as w from the edges: a
    // uniform motion gives exactly zero, whatever its speed ([`TriangleRest::w_wide`]).
    let (wu_dot, wv_dot) = rest.w_wide(v);
    let a = rest.area;
    let damping = r(mat.stretch_damping);
    let ka_u = r(mat.stretch[0]) * a;
    let ka_v = r(mat.stretch[1]) * a;
    let jac = Jacobian::Stabilized;
    let su = Stretch::new(wu, wu_dot, ka_u, damping * ka_u, r(mat.rest_scale[0]), jac);
    let sv = Stretch::new(wv, wv_dot, ka_v, damping * ka_v, r(mat.rest_scale[1]), jac);
    let ka_s = r(mat.shear) * a;
    let kda_s = damping * ka_s;
    let gs = [
        wv * al[0] + wu * be[0],
        wv * al[1] + wu * be[1],
        wv * al[2] + wu * be[2],
    ];
    let c_s = wu.dot(wv);
    let c_s_dot = wv.dot(wu_dot) + wu.dot(wv_dot);
    let s_s = -(ka_s * c_s + kda_s * c_s_dot);
    // Σ_b ∂f_a/∂x_b w_b = α_a k_x,u (Σ α_b w_b) + β_a k_x,v (Σ β_b w_b) − k a g_a (Σ g_b·w_b),
    // with Σ g_b·w_b = w_v·(Σ α_b w_b) + w_u·(Σ β_b w_b); the sums from the differences
    // w_b − w_0, so a uniform w (cloth moving as a whole: h²·v0) adds exactly nothing. Summed
    // term by term, the f32 rounding of α_b·h²v0 was a noise in b proportional to the speed: on a
    // 65k-vertex sheet in free fall (small masses, so small b) it was a quarter of b.
    let (aw, bw) = rest.w_wide(w);
    let kw_u = su.kx * aw;
    let kw_v = sv.kx * bw;
    let gw = ka_s * (wv.dot(aw) + wu.dot(bw));
    let mut g = [V3A::ZERO; 3];
    for i in 0..3 {
        let f = su.dir * (su.s * al[i]) + sv.dir * (sv.s * be[i]) + gs[i] * s_s;
        g[i] = f * h + kw_u * al[i] + kw_v * be[i] - gs[i] * gw;
    }
    let root = (h * kda_s + h * h * ka_s).sqrt();
    TriangleSystem {
        g,
        u: -(su.kv * h + su.kx * (h * h)),
        v: -(sv.kv * h + sv.kx * (h * h)),
        q: gs.map(|gi| gi * root),
        stretch,
    }
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
    stretch_strain(wu.length(), wv.length(), mat)
}

/// [`strain`] from the lengths |w_u|, |w_v|.
#[inline(always)]
fn stretch_strain(len_u: Real, len_v: Real, mat: &Material) -> Real {
    let su = (len_u / r(mat.rest_scale[0]) - 1.0).abs();
    let sv = (len_v / r(mat.rest_scale[1]) - 1.0).abs();
    su.max(sv)
}

/// Stretch of a triangle, the positive part of its strain: `max(|w_u|/b_u − 1, |w_v|/b_v − 1, 0)`
/// (dimensionless). What the adaptive step judges (BW §6 discard a step in which a triangle
/// "undergoes a drastic change in stretch"): a compressed triangle (0 here, |·| in [`strain`]) is
/// cloth buckling into a fold, or pressed there by a collision correction, not a step coming
/// apart.
#[inline]
pub fn stretch(x: &[V3; 3], rest: &TriangleRest, mat: &Material) -> Real {
    let (wu, wv) = rest.w(x);
    positive_stretch(wu.length(), wv.length(), mat)
}

/// [`stretch`] at positions in the working (SIMD) vectors (the same bits).
#[inline(always)]
pub fn stretch_wide(x: &[V3A; 3], rest: &TriangleRest, mat: &Material) -> Real {
    let (wu, wv) = rest.w_wide(x);
    positive_stretch(wu.length(), wv.length(), mat)
}

/// [`strain`] and [`stretch`] of a triangle from one evaluation of |w_u|, |w_v|.
#[inline]
pub fn strain_and_stretch(x: &[V3; 3], rest: &TriangleRest, mat: &Material) -> (Real, Real) {
    let (wu, wv) = rest.w(x);
    let (lu, lv) = (wu.length(), wv.length());
    (stretch_strain(lu, lv, mat), positive_stretch(lu, lv, mat))
}

/// [`strain_and_stretch`] at positions in the working (SIMD) vectors (the same bits): what the
/// step's judge calls per triangle, with the corners loaded straight into SIMD registers.
#[inline(always)]
pub fn strain_and_stretch_wide(x: &[V3A; 3], rest: &TriangleRest, mat: &Material) -> (Real, Real) {
    let (wu, wv) = rest.w_wide(x);
    let (lu, lv) = (wu.length(), wv.length());
    (stretch_strain(lu, lv, mat), positive_stretch(lu, lv, mat))
}

/// [`stretch`] from the lengths |w_u|, |w_v|.
#[inline(always)]
fn positive_stretch(len_u: Real, len_v: Real, mat: &Material) -> Real {
    let su = len_u / r(mat.rest_scale[0]) - 1.0;
    let sv = len_v / r(mat.rest_scale[1]) - 1.0;
    su.max(sv).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compact system equals the blocks and right-hand side built from [`stretch_shear`]'s
    /// stabilized Jacobians: −(h ∂f/∂v + h² ∂f/∂x) and h f + ∂f/∂x·w, stretched and compressed.
    /// The assembly takes a triangle's stretch from its system instead of calling [`stretch`]: the
    /// two must agree to the bit (the step-size controller and the caches depend on it).
    #[test]
    fn system_stretch_is_bit_identical_to_stretch() {
        let mut unit = crate::fixtures::unit_random(0x9e37_79b9_7f4a_7c15u64);
        let mut rnd = || unit() as Real - 0.5;
        let mat = Material {
            rest_scale: [1.02, 0.97],
            ..Material::default()
        };
        let mut checked = 0;
        for _ in 0..2000 {
            let p = [0, 1, 2].map(|_| V3::new(rnd(), rnd(), rnd()) * 0.04);
            let Some(rest) = TriangleRest::from_positions(p) else {
                continue;
            };
            let x = p.map(|q| q * (1.0 + 0.3 * rnd()) + V3::new(rnd(), rnd(), rnd()) * 0.01);
            let zero = [V3::ZERO; 3];
            let sys = stretch_shear_system(&x, &zero, &zero, &rest, &mat, 1.0 / 120.0);
            assert_eq!(sys.stretch.to_bits(), stretch(&x, &rest, &mat).to_bits());
            let (s, t) = strain_and_stretch(&x, &rest, &mat);
            assert_eq!(s.to_bits(), strain(&x, &rest, &mat).to_bits());
            assert_eq!(t.to_bits(), sys.stretch.to_bits());
            let xw = x.map(wide);
            let (sw, tw) = strain_and_stretch_wide(&xw, &rest, &mat);
            assert_eq!((sw.to_bits(), tw.to_bits()), (s.to_bits(), t.to_bits()));
            assert_eq!(stretch_wide(&xw, &rest, &mat).to_bits(), t.to_bits());
            checked += 1;
        }
        assert!(checked > 1900, "{checked}");
    }

    #[test]
    fn compact_system_matches_the_stabilized_blocks() {
        let rest = TriangleRest::from_positions([
            V3::new(0.0, 0.0, 0.0),
            V3::new(0.02, 0.001, 0.0),
            V3::new(0.003, 0.018, 0.0),
        ])
        .unwrap();
        let mat = Material::default();
        let h: Real = 1.0 / 120.0;
        for scale in [1.08, 0.93] {
            let x = [
                V3::new(0.0, 0.0, 0.001),
                V3::new(0.021, 0.002, 0.0) * scale,
                V3::new(0.001, 0.019, 0.004) * scale,
            ];
            let v = [
                V3::new(0.1, -0.3, 0.2),
                V3::new(-0.2, 0.1, 0.05),
                V3::new(0.3, 0.2, -0.1),
            ];
            let w = [
                V3::new(1e-4, -2e-4, 3e-5),
                V3::new(-5e-5, 1e-4, 2e-4),
                V3::new(2e-4, 5e-5, -1e-4),
            ];
            let ef = stretch_shear(&x, &v, &rest, &mat, Jacobian::Stabilized);
            let sys = stretch_shear_system(&x, &v, &w, &rest, &mat, h);
            let (al, be) = (rest.du, rest.dv);
            let mut scale_m: Real = 0.0;
            let mut worst_m: Real = 0.0;
            let mut worst_g: Real = 0.0;
            let mut scale_g: Real = 0.0;
            for a in 0..3 {
                let mut g = ef.f[a] * h;
                for b in 0..3 {
                    g += ef.dfdx[a][b] * w[b];
                    let want = -(ef.dfdv[a][b] * h + ef.dfdx[a][b] * (h * h));
                    let got = sys.u * (al[a] * al[b])
                        + sys.v * (be[a] * be[b])
                        + outer(sys.q[a], sys.q[b]);
                    let got: M3 = narrow_m(got);
                    for c in 0..3 {
                        let d = (got.col(c) - want.col(c)).abs().max_element();
                        worst_m = worst_m.max(d);
                        scale_m = scale_m.max(want.col(c).abs().max_element());
                    }
                }
                worst_g = worst_g.max((sys.g[a] - g).abs().max_element());
                scale_g = scale_g.max(g.abs().max_element());
            }
            assert!(worst_m <= 1e-5 * scale_m, "blocks: {worst_m} of {scale_m}");
            assert!(worst_g <= 1e-5 * scale_g, "rhs: {worst_g} of {scale_g}");
        }
    }
}

#[cfg(test)]
mod stretch_tests {
    use super::*;

    /// Stretch is the positive part of the strain: a triangle shrunk by 10 % has strain 0.1 and no
    /// stretch; one grown by 10 % has both equal; sheared without a length change, neither.
    #[test]
    fn stretch_ignores_compression() {
        let p = [V3::ZERO, V3::new(0.02, 0.0, 0.0), V3::new(0.0, 0.02, 0.0)];
        let rest = TriangleRest::from_positions(p).unwrap();
        let mat = Material::default();
        let shrunk = p.map(|q| q * 0.9);
        assert!((strain(&shrunk, &rest, &mat) - 0.1).abs() < 1e-5);
        assert_eq!(stretch(&shrunk, &rest, &mat), 0.0);
        let grown = p.map(|q| q * 1.1);
        assert!((stretch(&grown, &rest, &mat) - 0.1).abs() < 1e-5);
        assert_eq!(stretch(&grown, &rest, &mat), strain(&grown, &rest, &mat));
        // One direction compressed, the other stretched: the stretch is the stretched one.
        let mixed = [V3::ZERO, V3::new(0.018, 0.0, 0.0), V3::new(0.0, 0.021, 0.0)];
        assert!((stretch(&mixed, &rest, &mat) - 0.05).abs() < 1e-5);
        assert!((strain(&mixed, &rest, &mat) - 0.1).abs() < 1e-5);
    }
}
