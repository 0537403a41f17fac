//! Air drag and lift on one triangle (Kang 2003 §5.1, eqs. 5.1–5.4), relative to the wind.
//!
//! With the cloth's velocity relative to the air `u = (v₀+v₁+v₂)/3 − w`, the triangle's area
//! vector `N = (x₁−x₀)×(x₂−x₀)` (`|N| = 2S`, `n̂ = N/|N|`) and `θ` the angle between `u` and the
//! surface (`sin θ = |n̂·û|`):
//! - drag `f_D = −½ρ C_D S |n̂·u| u`: opposite to `u`, magnitude `½ρ C_D |u|² S sin θ` (Kang eq. 5.1/5.3);
//! - lift `f_L = −½ρ C_L S (n̂·u)(|u|² n̂ − (n̂·u) u)/|u|`: perpendicular to `u` in the plane of
//!   `n̂` and `u`, on Kang's side (eq. 5.4), magnitude `½ρ C_L |u|² S sin θ cos θ` — the flat-plate
//!   lift, which vanishes when the flow is edge-on instead of jumping there as Kang's `cos θ` does.
//!
//! In terms of `N` and `q = u·N` this is `f_D = −¼ρC_D |q| u`, `f_L = −¼ρC_L q (|u|²N − q u)/(|N||u|)`.
//! The total is shared equally by the three vertices.

// Indices i, j run over several parallel per-vertex arrays (forces, blocks, gradients).
#![allow(clippy::needless_range_loop)]

use super::element::{outer3, skew, ElementForce};
use super::scalar::*;
use super::Jacobian;

/// Wind and air parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wind {
    /// Air velocity, m/s (zero: still air, drag still opposes the cloth's own motion).
    pub velocity: V3,
    /// Air density, kg/m³ (1.2 at sea level, 20 °C).
    pub air_density: Real,
    /// Drag coefficient `C_D` (dimensionless; ≈1–2 for a flat plate face-on).
    pub drag: Real,
    /// Lift coefficient `C_L` (dimensionless; 0 disables lift).
    pub lift: Real,
}

/// Drag (and lift) of one triangle. `x`: positions (m), `v`: velocities (m/s); forces in N.
/// `Jacobian::Stabilized` returns `dfdx = 0` and, for `dfdv`, only the negative definite part
/// `−¼ρC_D |q| (I + n̂n̂ᵀ)` of the drag (spread over the vertices); `Exact` the full derivatives.
#[inline]
pub fn aero(x: &[V3; 3], v: &[V3; 3], wind: &Wind, jac: Jacobian) -> ElementForce<3> {
    let mut out = ElementForce::<3>::ZERO;
    let e1 = x[1] - x[0];
    let e2 = x[2] - x[0];
    let n = e1.cross(e2);
    let m2 = n.length_squared();
    let u = (v[0] + v[1] + v[2]) * (1.0 / 3.0) - wind.velocity;
    let r2 = u.length_squared();
    if m2 == 0.0 || r2 == 0.0 {
        return out;
    }
    let cd = 0.25 * wind.air_density * wind.drag;
    let cl = 0.25 * wind.air_density * wind.lift;
    let q = u.dot(n);
    let sq = if q >= 0.0 { 1.0 } else { -1.0 };
    let (m, rr) = (m2.sqrt(), r2.sqrt());
    let g = n * (q * r2) - u * (q * q);
    let inv_mr = 1.0 / (m * rr);
    let f = u * (-cd * q.abs()) - g * (cl * inv_mr);
    for fi in out.f.iter_mut() {
        *fi = f * (1.0 / 3.0);
    }
    match jac {
        Jacobian::Exact => {
            // ∂f/∂u
            let dg_du = outer3(n, n) * r2 + outer3(n, u) * (2.0 * q)
                - M3::IDENTITY * (q * q)
                - outer3(u, n) * (2.0 * q);
            let dfu = (M3::IDENTITY * q.abs() + outer3(u, n) * sq) * (-cd)
                - (dg_du * inv_mr - outer3(g, u) * (inv_mr / r2)) * cl;
            // ∂f/∂N
            let dg_dn = (outer3(n, u) + M3::IDENTITY * q) * r2 - outer3(u, u) * (2.0 * q);
            let dfn =
                outer3(u, u) * (-cd * sq) - (dg_dn * inv_mr - outer3(g, n) * (inv_mr / m2)) * cl;
            // ∂N/∂x_j
            let dn = [skew(e2 - e1), -skew(e2), skew(e1)];
            let dfx = dn.map(|d| dfn * d * (1.0 / 3.0));
            let dfv = dfu * (1.0 / 9.0);
            for i in 0..3 {
                out.dfdx[i] = dfx;
                out.dfdv[i] = [dfv; 3];
            }
        }
        Jacobian::Stabilized => {
            let nn = outer3(n, n) * (1.0 / m2);
            let dfv = (M3::IDENTITY + nn) * (-cd * q.abs() / 9.0);
            for i in 0..3 {
                out.dfdv[i] = [dfv; 3];
            }
        }
    }
    out
}
