//! Per-element force and Jacobian blocks.

use super::scalar::*;

/// Forces on the `N` vertices of one element and their derivatives (3×3 blocks):
/// `dfdx[i][j] = ∂f_i/∂x_j` (N/m), `dfdv[i][j] = ∂f_i/∂v_j` (N·s/m). `f` in newtons.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElementForce<const N: usize> {
    /// Force on each vertex, N.
    pub f: [V3; N],
    /// `∂f_i/∂x_j`, N/m.
    pub dfdx: [[M3; N]; N],
    /// `∂f_i/∂v_j`, N·s/m.
    pub dfdv: [[M3; N]; N],
}

impl<const N: usize> ElementForce<N> {
    /// All forces and blocks zero.
    pub const ZERO: Self = Self {
        f: [V3::ZERO; N],
        dfdx: [[M3::ZERO; N]; N],
        dfdv: [[M3::ZERO; N]; N],
    };
}

/// Outer product `a bᵀ` (working precision/SIMD types).
#[inline(always)]
pub(super) fn outer(a: V3A, b: V3A) -> M3A {
    M3A::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Outer product `a bᵀ` (scalar API types).
#[inline(always)]
pub(super) fn outer3(a: V3, b: V3) -> M3 {
    M3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Cross-product matrix `[a]×` with `[a]× b = a × b` (scalar API types).
#[inline(always)]
pub(super) fn skew(a: V3) -> M3 {
    M3::from_cols(
        V3::new(0.0, a.z, -a.y),
        V3::new(-a.z, 0.0, a.x),
        V3::new(a.y, -a.x, 0.0),
    )
}
