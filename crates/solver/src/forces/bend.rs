//! Bending across one interior edge (a hinge), BW §4.3, with condition damping (BW §4.5).
//!
//! Hinge vertices: `x₀, x₁` the shared edge `e = x₁ − x₀`, `x₂` opposite in triangle A, `x₃`
//! opposite in triangle B. With `a = x₂ − x₀`, `b = x₃ − x₀`, normals `N_A = e × a`,
//! `N_B = b × e` (parallel when flat and unfolded), the signed dihedral angle is
//! `θ = atan2((N_A × N_B)·ê, N_A·N_B) ∈ (−π, π]` — robust at every angle and independent of how
//! the mesh winds its triangles (only the hinge's own vertex order matters).
//!
//! Gradient (Bridson, Marino & Fedkiw 2003 §4 "bending modes"; Tamstorf & Grinspun 2013):
//! `∂θ/∂x₂ = −|e| N_A/|N_A|²`, `∂θ/∂x₃ = −|e| N_B/|N_B|²`,
//! `∂θ/∂x₁ = −(t_A ∂θ/∂x₂ + t_B ∂θ/∂x₃)` with `t_A = a·e/|e|²`, `t_B = b·e/|e|²`, and
//! `∂θ/∂x₀ = −(∂θ/∂x₁ + ∂θ/∂x₂ + ∂θ/∂x₃)`. The exact Hessian is obtained by differentiating these
//! expressions in the variables `(e, a, b)` (derivation in the comments of [`theta_hessian`]).
//!
//! Condition `C = θ − θ_rest` (wrapped to (−π, π]); energy `E = ½ k_e C²` with the per-hinge
//! stiffness `k_e = bend · |ē|²/(Ā_A + Ā_B)` (rest edge length and triangle areas): the
//! Discrete-Shells weighting (Grinspun et al. 2003), which makes `bend` a flexural rigidity in N·m
//! independent of mesh resolution (exact for a right-triangle grid rolled around a grid axis:
//! energy per area `½ bend κ²`). Damping `d = −k_d ∂θ/∂x Ċ`, `k_d = bend_damping · k_e`.

// Indices i, j run over several parallel per-vertex arrays (forces, blocks, gradients).
#![allow(clippy::needless_range_loop)]

use super::element::{outer3, skew, ElementForce};
use super::scalar::*;
use super::Jacobian;
use crate::material::Material;

/// Rest state of one hinge: rest dihedral angle and stiffness weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HingeRest {
    /// Rest dihedral angle `θ_rest`, rad, in (−π, π] (0 = flat). Pre-curved garments keep shape.
    pub angle: Real,
    /// `|ē|²/(Ā_A + Ā_B)` (dimensionless); per-hinge stiffness `k_e = bend · weight`.
    pub weight: Real,
}

impl HingeRest {
    /// From rest positions (m): `p[0], p[1]` the shared edge, `p[2], p[3]` the opposite vertices.
    /// `None` if the edge or either triangle is degenerate.
    pub fn from_positions(p: [V3; 4]) -> Option<Self> {
        let g = Geometry::new(&p.map(wide))?;
        let weight = g.e_len2 / (0.5 * (g.na_len2.sqrt() + g.nb_len2.sqrt()));
        weight.is_finite().then_some(Self {
            angle: g.theta(g.e_len2.sqrt()),
            weight,
        })
    }

    /// Flat rest state (θ_rest = 0) from texture coordinates scaled by `metres_per_uv`, same
    /// vertex order as [`Self::from_positions`]. `None` if degenerate.
    pub fn from_uv(uv: [V2; 4], metres_per_uv: f32) -> Option<Self> {
        let s = r(metres_per_uv);
        let p = uv.map(|q| V3::new(q.x * s, q.y * s, 0.0));
        let e_len2 = (p[1] - p[0]).length_squared();
        let area2 = |q: V3| (p[1] - p[0]).cross(q - p[0]).length();
        let (aa, ab) = (area2(p[2]), area2(p[3]));
        let min = 64.0 * Real::EPSILON * e_len2;
        if !(s.is_finite() && s > 0.0 && e_len2 > 0.0 && aa > min && ab > min) {
            return None;
        }
        let weight = e_len2 / (0.5 * (aa + ab));
        weight.is_finite().then_some(Self { angle: 0.0, weight })
    }
}

/// Hinge geometry shared by angle, gradient and Hessian, in the working (SIMD) vectors: glam's
/// SIMD `dot`, `cross`, products and quotients round lane by lane exactly as the scalar ones do,
/// so the results are the bits of the scalar code.
struct Geometry {
    e: V3A,
    a: V3A,
    b: V3A,
    na: V3A,
    nb: V3A,
    e_len2: Real,
    na_len2: Real,
    nb_len2: Real,
}

impl Geometry {
    #[inline(always)]
    fn new(x: &[V3A; 4]) -> Option<Self> {
        let e = x[1] - x[0];
        let a = x[2] - x[0];
        let b = x[3] - x[0];
        let na = e.cross(a);
        let nb = b.cross(e);
        let e_len2 = e.length_squared();
        let (na_len2, nb_len2) = (na.length_squared(), nb.length_squared());
        // Reject degenerate triangles (|N|² tiny relative to the edge lengths involved).
        let tol = 64.0 * Real::EPSILON * Real::EPSILON;
        let ok = e_len2 > 0.0
            && na_len2 > tol * e_len2 * a.length_squared()
            && nb_len2 > tol * e_len2 * b.length_squared()
            && na_len2.is_finite()
            && nb_len2.is_finite();
        ok.then_some(Self {
            e,
            a,
            b,
            na,
            nb,
            e_len2,
            na_len2,
            nb_len2,
        })
    }

    /// `θ = atan2((N_A × N_B)·ê, N_A·N_B)` with `ê = e/|e|`, given `|e|` (m).
    #[inline(always)]
    fn theta(&self, e_len: Real) -> Real {
        let e_hat = self.e / e_len;
        let sin = self.na.cross(self.nb).dot(e_hat);
        let cos = self.na.dot(self.nb);
        sin.atan2(cos)
    }
}

/// Wraps an angle difference into (−π, π].
#[inline(always)]
fn wrap_angle(d: Real) -> Real {
    if d > PI {
        d - 2.0 * PI
    } else if d <= -PI {
        d + 2.0 * PI
    } else {
        d
    }
}

/// `∂θ/∂x` of the four hinge vertices (1/m) and the intermediate terms the exact Hessian reuses.
struct ThetaGradient {
    g: [V3A; 4],
    e_len: Real,
    ga: V3A,
    gb: V3A,
    ta: Real,
    tb: Real,
}

#[inline(always)]
fn theta_gradient(geo: &Geometry) -> ThetaGradient {
    let e_len = geo.e_len2.sqrt();
    // Gradient in the variables (e, a, b) = (x₁−x₀, x₂−x₀, x₃−x₀).
    let ga = geo.na * (-e_len / geo.na_len2);
    let gb = geo.nb * (-e_len / geo.nb_len2);
    let inv_e2 = 1.0 / geo.e_len2;
    let ta = geo.a.dot(geo.e) * inv_e2;
    let tb = geo.b.dot(geo.e) * inv_e2;
    let ge = -(ga * ta + gb * tb);
    ThetaGradient {
        g: [-(ge + ga + gb), ge, ga, gb],
        e_len,
        ga,
        gb,
        ta,
        tb,
    }
}

/// A hinge's bending force in rank-one form, all that [`Jacobian::Stabilized`] keeps:
/// `f_i = s·g_i`, `∂f_i/∂x_j = −k_e g_i g_jᵀ`, `∂f_i/∂v_j = −k_d g_i g_jᵀ` with `g = ∂θ/∂x`
/// (Gauss–Newton, BW §4.3 and §4.5). Four vectors instead of 32 blocks, for the assembly.
/// `V`: the vector type of the gradient, the API vector ([`bend_gradient`]) or the SIMD one
/// ([`bend_gradient_wide`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HingeGradient<V = V3> {
    /// `∂θ/∂x_i`, 1/m.
    pub grad: [V; 4],
    /// `k_e`, N·m.
    pub stiffness: Real,
    /// `k_d`, N·m·s.
    pub damping: Real,
    /// `s = −(k_e C + k_d Ċ)`, N·m.
    pub scale: Real,
}

/// [`HingeGradient`] of one hinge; `None` when it contributes nothing (zero stiffness or
/// degenerate current geometry). `x`: positions (m), `v`: velocities (m/s).
#[inline]
pub fn bend_gradient(
    x: &[V3; 4],
    v: &[V3; 4],
    rest: &HingeRest,
    mat: &Material,
) -> Option<HingeGradient> {
    let g = bend_gradient_wide(&x.map(wide), &v.map(wide), rest, mat)?;
    Some(HingeGradient {
        grad: g.grad.map(narrow),
        stiffness: g.stiffness,
        damping: g.damping,
        scale: g.scale,
    })
}

/// [`bend_gradient`] in the working (SIMD) vectors, bit-identical to it: what the assembly calls
/// per hinge and substep. BW §4.3: `C = θ − θ_rest`, `f = −k_e C ∂C/∂x − k_d Ċ ∂C/∂x` (§4.5
/// damping, `Ċ = Σ_i ∂θ/∂x_i · v_i`).
#[inline(always)]
pub fn bend_gradient_wide(
    x: &[V3A; 4],
    v: &[V3A; 4],
    rest: &HingeRest,
    mat: &Material,
) -> Option<HingeGradient<V3A>> {
    let k = r(mat.bend) * rest.weight;
    if k <= 0.0 {
        return None;
    }
    let geo = Geometry::new(x)?;
    let kd = r(mat.bend_damping) * k;
    let t = theta_gradient(&geo);
    let g = t.g;
    let c = wrap_angle(geo.theta(t.e_len) - rest.angle);
    // Ċ from the velocity differences (Σ_i ∂θ/∂x_i = 0): exactly zero in a uniform motion.
    let c_dot = g[1].dot(v[1] - v[0]) + g[2].dot(v[2] - v[0]) + g[3].dot(v[3] - v[0]);
    Some(HingeGradient {
        grad: g,
        stiffness: k,
        damping: kd,
        scale: -(k * c + kd * c_dot),
    })
}

/// Bending force of one hinge with its damping. `x`: positions (m), `v`: velocities (m/s).
/// Degenerate current geometry (a collapsed triangle or edge) contributes nothing.
#[inline]
pub fn bend(
    x: &[V3; 4],
    v: &[V3; 4],
    rest: &HingeRest,
    mat: &Material,
    jac: Jacobian,
) -> ElementForce<4> {
    let mut out = ElementForce::<4>::ZERO;
    let Some(HingeGradient {
        grad: g,
        stiffness: k,
        damping: kd,
        scale: s,
    }) = bend_gradient(x, v, rest, mat)
    else {
        return out;
    };
    for i in 0..4 {
        out.f[i] = g[i] * s;
    }
    for i in 0..4 {
        for j in 0..4 {
            let ggt = outer3(g[i], g[j]);
            out.dfdv[i][j] = ggt * (-kd);
            out.dfdx[i][j] = ggt * (-k);
        }
    }
    if jac == Jacobian::Exact {
        let Some(geo) = Geometry::new(&x.map(wide)) else {
            return out;
        };
        let t = theta_gradient(&geo);
        let h = theta_hessian(&geo, t.e_len, narrow(t.ga), narrow(t.gb), t.ta, t.tb);
        // ∂Ċ/∂x_j = Σ_k H_jk v_k
        let mut dcdot = [V3::ZERO; 4];
        for (j, d) in dcdot.iter_mut().enumerate() {
            for (kk, vk) in v.iter().enumerate() {
                *d += h[j][kk] * *vk;
            }
        }
        for i in 0..4 {
            for j in 0..4 {
                out.dfdx[i][j] += h[i][j] * s - outer3(g[i], dcdot[j]) * kd;
            }
        }
    }
    out
}

/// Exact Hessian `∂²θ/∂x_i∂x_j` (4×4 blocks of 3×3).
///
/// With `g_A = −|e| N_A/|N_A|²` and `M_N = I/|N|² − 2NNᵀ/|N|⁴` (= `∂(N/|N|²)/∂N`):
/// `∂g_A/∂a = −|e| M_A [e]×`, `∂g_A/∂e = −N_A êᵀ/|N_A|² + |e| M_A [a]×`,
/// `∂g_B/∂b = |e| M_B [e]×`, `∂g_B/∂e = −N_B êᵀ/|N_B|² − |e| M_B [b]×`, `∂g_A/∂b = 0`;
/// for `g_e = −(t_A g_A + t_B g_B)`: `∂g_e/∂e = −Σ_p (g_p (∂t_p/∂e)ᵀ + t_p ∂g_p/∂e)` with
/// `∂t_p/∂e = p/|e|² − 2 t_p e/|e|²`, and `∂g_e/∂a = (∂g_A/∂e)ᵀ` by symmetry. The (e, a, b) blocks
/// are the x₁, x₂, x₃ blocks; row/column 0 follows from translation invariance.
// Not inlined: Exact-only, kept out of the hot Stabilized path. Also, with rustc 1.95 `--release`,
// inlining it into `bend` gave wrong Hessian entries in the f64 instantiation (correct at
// opt-level 1 and when not inlined; no unsafe code involved) — tests/force_gradients.rs catches it.
#[inline(never)]
fn theta_hessian(geo: &Geometry, e_len: Real, ga: V3, gb: V3, ta: Real, tb: Real) -> [[M3; 4]; 4] {
    let (e, a, b) = (narrow(geo.e), narrow(geo.a), narrow(geo.b));
    let (na, nb) = (narrow(geo.na), narrow(geo.nb));
    let e_hat = e / e_len;
    let inv_e2 = 1.0 / geo.e_len2;
    let m = |n: V3, n2: Real| M3::IDENTITY * (1.0 / n2) - outer3(n, n) * (2.0 / (n2 * n2));
    let ma = m(na, geo.na_len2);
    let mb = m(nb, geo.nb_len2);
    let h_aa = ma * skew(e) * (-e_len);
    let h_bb = mb * skew(e) * e_len;
    let h_ae = outer3(na, e_hat) * (-1.0 / geo.na_len2) + ma * skew(a) * e_len;
    let h_be = outer3(nb, e_hat) * (-1.0 / geo.nb_len2) - mb * skew(b) * e_len;
    let dta = (a - e * (2.0 * ta)) * inv_e2;
    let dtb = (b - e * (2.0 * tb)) * inv_e2;
    let h_ee = -(outer3(ga, dta) + h_ae * ta + outer3(gb, dtb) + h_be * tb);
    let inner = [
        [h_ee, h_ae.transpose(), h_be.transpose()],
        [h_ae, h_aa, M3::ZERO],
        [h_be, M3::ZERO, h_bb],
    ];
    let mut h = [[M3::ZERO; 4]; 4];
    for i in 0..3 {
        for j in 0..3 {
            h[i + 1][j + 1] = inner[i][j];
        }
    }
    for j in 1..4 {
        let col = h[1][j] + h[2][j] + h[3][j];
        h[0][j] = -col;
        h[j][0] = -(h[j][1] + h[j][2] + h[j][3]);
    }
    h[0][0] = -(h[0][1] + h[0][2] + h[0][3]);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hinge terms run in SIMD vectors ([`Geometry`], [`bend_gradient_wide`]) on the claim that
    /// glam's SIMD `dot`, `cross`, `length` and quotients round exactly as the scalar ones do (the
    /// baked caches kept their bits when the assembly moved to them): θ, ∂θ/∂x and the force scale
    /// of BW §4.3/§4.5 computed here in scalar `Vec3` arithmetic must agree to the bit, over random
    /// hinges folded both ways.
    #[test]
    fn wide_hinge_terms_are_bit_identical_to_scalar_arithmetic() {
        let mut unit = crate::fixtures::unit_random(0x2545_f491_4f6c_dd1du64);
        let mut rnd = || unit() as Real - 0.5;
        let mat = Material::default();
        let mut checked = 0;
        for _ in 0..4000 {
            let x: [V3; 4] = [0, 1, 2, 3].map(|_| V3::new(rnd(), rnd(), rnd()) * 0.05);
            let v: [V3; 4] = [0, 1, 2, 3].map(|_| V3::new(rnd(), rnd(), rnd()));
            let rest = HingeRest {
                angle: rnd(),
                weight: 1.0 + rnd(),
            };
            let Some(wide_g) = bend_gradient_wide(&x.map(wide), &v.map(wide), &rest, &mat) else {
                continue;
            };
            // Scalar reference: the module doc's formulas in `V3` arithmetic.
            let (e, a, b) = (x[1] - x[0], x[2] - x[0], x[3] - x[0]);
            let (na, nb) = (e.cross(a), b.cross(e));
            let (e_len2, na_len2, nb_len2) =
                (e.length_squared(), na.length_squared(), nb.length_squared());
            let e_len = e_len2.sqrt();
            let theta = na.cross(nb).dot(e / e_len).atan2(na.dot(nb));
            let ga = na * (-e_len / na_len2);
            let gb = nb * (-e_len / nb_len2);
            let inv_e2 = 1.0 / e_len2;
            let (ta, tb) = (a.dot(e) * inv_e2, b.dot(e) * inv_e2);
            let ge = -(ga * ta + gb * tb);
            let g = [-(ge + ga + gb), ge, ga, gb];
            let k = r(mat.bend) * rest.weight;
            let kd = r(mat.bend_damping) * k;
            let c = wrap_angle(theta - rest.angle);
            let c_dot = g[1].dot(v[1] - v[0]) + g[2].dot(v[2] - v[0]) + g[3].dot(v[3] - v[0]);
            let scale: Real = -(k * c + kd * c_dot);
            for i in 0..4 {
                assert_eq!(
                    narrow(wide_g.grad[i]).to_array().map(Real::to_bits),
                    g[i].to_array().map(Real::to_bits)
                );
            }
            assert_eq!(wide_g.scale.to_bits(), scale.to_bits());
            assert!(c != 0.0 && c_dot != 0.0);
            checked += 1;
        }
        assert!(checked > 3900, "{checked}");
    }
}
