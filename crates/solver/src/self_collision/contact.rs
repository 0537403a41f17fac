//! A cloth–cloth contact as a 4-point stencil (BFA02 §7.1): the relative position of the two
//! closest points is Δ = Σ_k w_k x_k, with w = (1, −α1, −α2, −α3) for vertex–triangle and
//! (1−s, s, −(1−u), −u) for edge–edge; `normal` points from the second primitive to the first.

use glam::Vec3;

/// One proximity contact or continuous-collision event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Vertex indices of the stencil.
    pub idx: [u32; 4],
    /// Stencil weights (see module doc).
    pub w: [f32; 4],
    /// Unit normal, from the second primitive towards the first.
    pub normal: Vec3,
    /// Separation along `normal` at the start of the substep (m).
    pub gap: f32,
    /// Required separation: mean thickness of the two garments (m).
    pub thickness: f32,
    /// Coulomb friction coefficient (mean of the two garments).
    pub friction: f32,
}

impl Contact {
    /// Relative velocity u = Σ w_k v_k (m/s).
    #[inline]
    pub fn relative(&self, v: &[Vec3]) -> Vec3 {
        let mut u = Vec3::ZERO;
        for k in 0..4 {
            u += self.w[k] * v[self.idx[k] as usize];
        }
        u
    }

    /// Σ w_k² / m_k (1/kg): the inverse effective mass of the stencil.
    #[inline]
    pub fn inverse_mass(&self, inv_mass: &[f32]) -> f32 {
        let mut s = 0.0;
        for k in 0..4 {
            s += self.w[k] * self.w[k] * inv_mass[self.idx[k] as usize];
        }
        s
    }

    /// Changes the relative velocity by `du` (m/s): Δv_k = w_k m_k⁻¹ du / Σ w_j² m_j⁻¹
    /// (mass-weighted form of BFA02 eq. for Ĩ = 2I/(1+Σw²)).
    #[inline]
    pub fn apply(&self, v: &mut [Vec3], inv_mass: &[f32], du: Vec3, inverse_mass: f32) {
        let scale = du / inverse_mass;
        for k in 0..4 {
            let i = self.idx[k] as usize;
            v[i] += (self.w[k] * inv_mass[i]) * scale;
        }
    }
}
