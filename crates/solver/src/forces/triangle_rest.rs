//! Rest state of one triangle in its 2D material (u, v) frame (BW §4.2).

use super::scalar::*;

/// Rest-state data of one triangle for the BW §4.2 stretch/shear conditions.
///
/// With rest plane coordinates `(u_i, v_i)` and `D = [Δu₁ Δu₂; Δv₁ Δv₂]` (`Δu_k = u_k − u₀`), the
/// deformation gradient columns are `[w_u w_v] = [Δx₁ Δx₂] D⁻¹` (BW eq. 9). Since `w_u`, `w_v` are
/// linear in the positions, `w_u = Σ_i du[i] x_i`, `w_v = Σ_i dv[i] x_i`; `du`, `dv` hold the
/// entries of `D⁻¹` (with `du[0] = −du[1] − du[2]`), so `∂w_u/∂x_i = du[i] I`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleRest {
    /// Rest area `a`, m².
    pub area: Real,
    /// `∂w_u/∂x_i` (1/m): first column of `D⁻¹` extended to the three vertices.
    pub du: [Real; 3],
    /// `∂w_v/∂x_i` (1/m): second column of `D⁻¹` extended to the three vertices.
    pub dv: [Real; 3],
}

impl TriangleRest {
    /// From rest plane coordinates in metres (u = warp, v = weft). `None` if degenerate
    /// (zero area relative to its edges, or non-finite).
    pub fn from_plane(uv: [V2; 3]) -> Option<Self> {
        let d1 = uv[1] - uv[0];
        let d2 = uv[2] - uv[0];
        let det = d1.x * d2.y - d2.x * d1.y;
        let scale = d1.length_squared() + d2.length_squared();
        let min_det: Real = 64.0 * Real::EPSILON * scale;
        if !det.is_finite() || !scale.is_finite() || det.abs() <= min_det {
            return None;
        }
        let inv = 1.0 / det;
        // D⁻¹ = 1/det [Δv₂ −Δu₂; −Δv₁ Δu₁]; w_u = Δx₁ D⁻¹₀₀ + Δx₂ D⁻¹₁₀, w_v = Δx₁ D⁻¹₀₁ + Δx₂ D⁻¹₁₁.
        let du1 = d2.y * inv;
        let du2 = -d1.y * inv;
        let dv1 = -d2.x * inv;
        let dv2 = d1.x * inv;
        Some(Self {
            area: 0.5 * det.abs(),
            du: [-(du1 + du2), du1, du2],
            dv: [-(dv1 + dv2), dv1, dv2],
        })
    }

    /// From texture coordinates scaled by `metres_per_uv` (m per UV unit); the UV axes are the
    /// warp/weft directions. `None` if degenerate or `metres_per_uv` is not finite and > 0.
    pub fn from_uv(uv: [V2; 3], metres_per_uv: f32) -> Option<Self> {
        let s = r(metres_per_uv);
        if !(s.is_finite() && s > 0.0) {
            return None;
        }
        Self::from_plane([uv[0] * s, uv[1] * s, uv[2] * s])
    }

    /// Isometric flattening of a rest triangle (m) into its own plane, warp along the edge
    /// `p[0] → p[1]`. Use [`Self::from_positions_oriented`] to align warp across a garment.
    pub fn from_positions(p: [V3; 3]) -> Option<Self> {
        Self::from_positions_oriented(p, p[1] - p[0])
    }

    /// Isometric flattening with the warp (u) axis along `warp` projected into the triangle's
    /// plane. Where `warp` is within ≈6° of the triangle's normal, the projection of
    /// `warp.any_orthonormal_vector()` is used instead (the same fallback axis for every triangle of
    /// that orientation, so anisotropy stays consistent across a sheet); a zero `warp` uses the edge
    /// `p[0] → p[1]`. The weft (v) axis is `n × u` with `n` the normal of `(p₀, p₁, p₂)`.
    pub fn from_positions_oriented(p: [V3; 3], warp: V3) -> Option<Self> {
        let e1 = p[1] - p[0];
        let e2 = p[2] - p[0];
        let n = e1.cross(e2).try_normalize()?;
        let project = |a: V3| a - n * a.dot(n);
        let t = match warp.try_normalize() {
            None => e1,
            Some(w) if project(w).length_squared() > 0.01 => project(w),
            Some(w) => project(w.any_orthonormal_vector()),
        };
        let t = t.try_normalize()?;
        let b = n.cross(t);
        Self::from_plane([
            V2::ZERO,
            V2::new(e1.dot(t), e1.dot(b)),
            V2::new(e2.dot(t), e2.dot(b)),
        ])
    }

    /// Deformation gradient columns `(w_u, w_v)` (dimensionless) at positions `x` (m).
    #[inline(always)]
    pub fn w(&self, x: &[V3; 3]) -> (V3, V3) {
        let (wu, wv) = self.w_wide(&x.map(wide));
        (narrow(wu), narrow(wv))
    }

    /// [`Self::w`] in the working (SIMD) types (the same bits).
    #[inline(always)]
    pub(super) fn w_wide(&self, x: &[V3A; 3]) -> (V3A, V3A) {
        let x0 = x[0];
        let e1 = x[1] - x0;
        let e2 = x[2] - x0;
        (
            e1 * self.du[1] + e2 * self.du[2],
            e1 * self.dv[1] + e2 * self.dv[2],
        )
    }
}
