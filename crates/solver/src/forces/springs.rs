//! Mass-spring forces: one axial spring between two vertices (Provot 1995, as described in Kang
//! 2003 §3.1 and Boxerman 2003 §3.2), with axial damping, the buckling bend response of Choi & Ko
//! 2002 and Kang's stabilised Jacobian.
//!
//! Vertex 0 is `i`, vertex 1 is `j`; `d = x_j − x_i`, `l = |d|`, `d̂ = d/l`, rest length `L`.
//! The force on `i` is `f_i = F(l) d̂ + k_d (d̂·(v_j − v_i)) d̂`, `f_j = −f_i`:
//!
//! - **Linear** springs (structural, shear): `F = k (l − L)` (Hooke, Kang eq. 3.1), in tension and
//!   in compression.
//! - **Buckling** springs (bend/flexion, Choi & Ko 2002 as given by Boxerman 2003 eqs. 3.8–3.9):
//!   no force when `l ≥ L`; when compressed the spring is taken to have buckled into a circular
//!   arc of length `L` and chord `l`, and resists with `C = (k_b/L²)·P(l/L)` (`k_b` the beam's
//!   flexural rigidity, N·m²). `P(s) = 46.164 s⁴ − 136.772 s³ + 156.332 s² − 92.464 s + 38.852`
//!   is 4 × Boxerman's eq. 3.9 polynomial (his normalisation); it matches the exact arc law
//!   `4φ²/(sin φ/φ − cos φ)` with `sin φ/φ = s` (φ = κL/2; 12 at `s → 1`, 4π² at `s = 0`) to 1.5 %
//!   over `s ∈ [0, 1)`. Near `s = 1` the arc law jumps from 0 to the critical load
//!   `(k_b/L²)·P(1)`; as Choi & Ko (Boxerman footnote 2) we use a linear spring there:
//!   `C = min(k_lin (L − l), (k_b/L²)·P(l/L))` with `k_lin = (k_b/L²)·P(1)/(L·ε_b)`, the line
//!   reaching the critical load at the compression [`BUCKLE_STRAIN`]. `F = −C`.
//!
//! Damping `k_d` acts along the spring only (a dashpot on the rate of length change, like BW §4.5
//! condition damping on `C = l − L`), so rigid motion is not damped; a buckling spring damps only
//! while compressed.
//!
//! Jacobian, with `P⊥ = I − d̂d̂ᵀ`: `∂f_i/∂x_j = F'(l) d̂d̂ᵀ + (F_tot/l) P⊥ + (k_d/l) d̂ uᵀP⊥`
//! (`u = v_j − v_i`, `F_tot` the force including damping) — Kang eq. 4.10 plus the damping terms;
//! `∂f_i/∂v_j = k_d d̂d̂ᵀ`; `∂f_i/∂x_i = −∂f_i/∂x_j`, `∂f_j/∂x_j = −∂f_i/∂x_j`,
//! `∂f_j/∂x_i = ∂f_i/∂x_j`.
//!
//! [`Jacobian::Stabilized`] is Kang's stabilised derivative (Kang 2003 §4.3, eq. 4.11): when the
//! spring is compressed (`l ≤ L`) the transverse term is dropped, leaving `k d̂d̂ᵀ`; in general we
//! keep `max(F', 0) d̂d̂ᵀ + max(F/l, 0) P⊥` (elastic part only, the damping's geometric terms
//! dropped as in BW §5), which is Kang's rule for linear springs and Boxerman's eq. 3.10 ("a term
//! has been dropped to ensure its positive definiteness") for buckling springs. Each spring's
//! block is then positive semi-definite, so `M − h ∂f/∂v − h² ∂f/∂x` stays positive definite.

use super::element::ElementForce;
use super::scalar::*;
use super::Jacobian;

/// Compression (fraction of the rest length) at which a buckling spring's linear start reaches the
/// critical load `(k_b/L²)·P(1)` (Choi & Ko's linear model for small deformations).
pub const BUCKLE_STRAIN: f32 = 0.01;

/// How a spring responds to a change of length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpringLaw {
    /// Hooke in tension and compression; `stiffness` is `k`, N/m.
    Linear,
    /// Choi & Ko buckling (compression only); `stiffness` is the flexural rigidity `k_b`, N·m².
    Buckling,
}

/// Rest state and constants of one spring.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringRest {
    /// Rest length `L`, m (> 0).
    pub length: Real,
    /// `k` (N/m) for [`SpringLaw::Linear`], `k_b` (N·m²) for [`SpringLaw::Buckling`].
    pub stiffness: Real,
    /// Axial damping coefficient `k_d`, N·s/m.
    pub damping: Real,
    pub law: SpringLaw,
}

/// Choi & Ko's buckled-arc force in units of `k_b/L²` (see the module documentation), and its
/// derivative with respect to `s = l/L`.
#[inline(always)]
fn arc(s: Real) -> (Real, Real) {
    let p = (((46.164 * s - 136.772) * s + 156.332) * s - 92.464) * s + 38.852;
    let dp = ((184.656 * s - 410.316) * s + 312.664) * s - 92.464;
    (p, dp)
}

/// Critical load `P(1)` of [`arc`] (units of `k_b/L²`).
const P1: Real = 46.164 - 136.772 + 156.332 - 92.464 + 38.852;

/// Elastic force `F(l)` (N, positive = tension) and `F'(l)` (N/m).
#[inline(always)]
fn elastic(l: Real, rest: &SpringRest) -> (Real, Real) {
    let big_l = rest.length;
    match rest.law {
        SpringLaw::Linear => (rest.stiffness * (l - big_l), rest.stiffness),
        SpringLaw::Buckling => {
            if l >= big_l {
                return (0.0, 0.0);
            }
            let scale = rest.stiffness / (big_l * big_l);
            let k_lin = scale * P1 / (big_l * r(BUCKLE_STRAIN));
            let lin = k_lin * (big_l - l);
            let (p, dp) = arc(l / big_l);
            let curve = scale * p;
            if lin <= curve {
                (-lin, k_lin)
            } else {
                // F = −scale·P(l/L), F' = −scale·P'(s)/L (P' < 0 on [0, 1]).
                (-curve, -scale * dp / big_l)
            }
        }
    }
}

/// The compact stabilised form the assembly uses: force on vertex 0 (`f_j = −f`) and the two
/// symmetric blocks `k = ∂f_i/∂x_j`, `d = ∂f_i/∂v_j` ([`Jacobian::Stabilized`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringSystem {
    /// Force on vertex 0, N.
    pub f: V3,
    /// `∂f_i/∂x_j` (stabilised, symmetric PSD), N/m.
    pub k: M3,
    /// `∂f_i/∂v_j = k_d d̂d̂ᵀ`, N·s/m.
    pub d: M3,
}

/// Shared evaluation; `None` for a collapsed spring (`l = 0`: no direction), which contributes
/// nothing.
#[inline(always)]
fn evaluate(x: &[V3; 2], v: &[V3; 2], rest: &SpringRest, jac: Jacobian) -> Option<SpringSystem> {
    let d = x[1] - x[0];
    let l = d.length();
    if !(l > 0.0 && l.is_finite()) {
        return None;
    }
    let n = d / l;
    let u = v[1] - v[0];
    let (fe, dfe) = elastic(l, rest);
    // A buckling spring damps only while compressed.
    let kd = match rest.law {
        SpringLaw::Buckling if l >= rest.length => 0.0,
        _ => rest.damping,
    };
    let rate = n.dot(u);
    let f_tot = fe + kd * rate;
    let nnt = M3::from_cols(n * n.x, n * n.y, n * n.z);
    let perp = M3::IDENTITY - nnt;
    let k = match jac {
        Jacobian::Stabilized => nnt * dfe.max(0.0) + perp * (fe / l).max(0.0),
        Jacobian::Exact => {
            let pu = perp * u; // P⊥ is symmetric: uᵀP⊥ = (P⊥u)ᵀ.
            let dut = M3::from_cols(n * pu.x, n * pu.y, n * pu.z);
            nnt * dfe + perp * (f_tot / l) + dut * (kd / l)
        }
    };
    Some(SpringSystem {
        f: n * f_tot,
        k,
        d: nnt * kd,
    })
}

/// [`SpringSystem`] of one spring (stabilised); all zero for a collapsed spring.
/// `x`: positions (m), `v`: velocities (m/s).
#[inline]
pub fn spring_system(x: &[V3; 2], v: &[V3; 2], rest: &SpringRest) -> SpringSystem {
    evaluate(x, v, rest, Jacobian::Stabilized).unwrap_or(SpringSystem {
        f: V3::ZERO,
        k: M3::ZERO,
        d: M3::ZERO,
    })
}

/// Force and Jacobian blocks of one spring on its two vertices. `x`: positions (m), `v`:
/// velocities (m/s).
#[inline]
pub fn spring(x: &[V3; 2], v: &[V3; 2], rest: &SpringRest, jac: Jacobian) -> ElementForce<2> {
    let mut out = ElementForce::<2>::ZERO;
    let Some(s) = evaluate(x, v, rest, jac) else {
        return out;
    };
    out.f = [s.f, -s.f];
    out.dfdx = [[-s.k, s.k], [s.k, -s.k]];
    out.dfdv = [[-s.d, s.d], [s.d, -s.d]];
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Compiled in f32 and f64: the casts are no-ops in one of them.
    #[allow(clippy::unnecessary_cast)]
    #[test]
    fn arc_polynomial_matches_the_exact_arc_law() {
        // Exact: 4φ²/(sin φ/φ − cos φ) with sin φ/φ = s; bisection for φ.
        for k in 0..100 {
            let s = k as f64 / 100.0;
            let (mut lo, mut hi) = (1e-9f64, core::f64::consts::PI);
            for _ in 0..200 {
                let m = 0.5 * (lo + hi);
                if m.sin() / m > s {
                    lo = m
                } else {
                    hi = m
                }
            }
            let phi = 0.5 * (lo + hi);
            let exact = 4.0 * phi * phi / (phi.sin() / phi - phi.cos());
            let (p, dp) = arc(s as Real);
            let rel = (p as f64 - exact).abs() / exact;
            assert!(rel < 0.016, "s {s}: P {p} vs exact {exact}");
            assert!(
                dp < 0.0,
                "P must fall with s (force grows with compression): s {s}"
            );
        }
    }

    #[test]
    fn buckling_force_is_continuous_and_grows_with_compression() {
        let rest = SpringRest {
            length: 0.1,
            stiffness: 1e-6,
            damping: 0.0,
            law: SpringLaw::Buckling,
        };
        assert_eq!(elastic(0.1, &rest), (0.0, 0.0));
        assert_eq!(elastic(0.2, &rest), (0.0, 0.0));
        let mut prev = 0.0;
        for k in 1..1000 {
            let l = 0.1 * (1.0 - k as Real / 1000.0);
            let (f, df) = elastic(l, &rest);
            assert!(f < prev && df > 0.0, "l {l}: F {f} after {prev}, F' {df}");
            assert!(prev - f < 2e-4, "jump at l {l}: {prev} → {f}");
            prev = f;
        }
        // The critical load P(1)·k_b/L² is reached at 1 % compression.
        let (f, _) = elastic(0.1 * (1.0 - r(BUCKLE_STRAIN)), &rest);
        assert!((f / (P1 * 1e-4) + 1.0).abs() < 1e-4, "{f}");
    }
}
