//! A cloth–cloth contact as a 4-point stencil (BFA02 §7.1): the relative position of the two
//! closest points is Δ = Σ_k w_k x_k, with w = (1, −α1, −α2, −α3) for vertex–triangle and
//! (1−s, s, −(1−u), −u) for edge–edge; `normal` points from the second primitive to the first.

use glam::Vec3;

/// Largest ratio |Δv_k| / |Δu| an impulse may cause at one stencil vertex. A stencil whose only
/// movable vertices have tiny weights (a vertex–triangle pair whose free vertex sits at a far
/// corner of the triangle, or everything else pinned or held by a body) would otherwise need a
/// velocity change of |Δu|/w at that vertex (1e7 m/s was seen); such contacts are left to the
/// impact zones.
pub const MAX_AMPLIFICATION: f32 = 10.0;

/// How each vertex may be moved by cloth–cloth impulses: inverse mass (1/kg, 0 = pinned) and the
/// outward unit normal of the body it rests on (zero if none). A vertex in body contact has
/// infinite mass along its body normal for impulses that would push it into the body (the body
/// contact is a one-sided constraint, BW §5); it still moves freely away from the body and along
/// it.
#[derive(Clone, Copy, Debug)]
pub struct Mobility<'a> {
    pub inv_mass: &'a [f32],
    /// Per vertex, or empty when no vertex touches a body.
    pub body_normal: &'a [Vec3],
}

impl Mobility<'_> {
    /// Outward normal of the body vertex `i` rests on (zero if none).
    #[inline]
    pub fn body_normal(&self, i: usize) -> Vec3 {
        self.body_normal.get(i).copied().unwrap_or(Vec3::ZERO)
    }
}

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
    /// Where the normal's direction came from.
    pub normal_from: NormalFrom,
}

/// How a contact's normal was chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NormalFrom {
    /// The closest points' separation, or the geometry at the collision time (CCD).
    #[default]
    Separation,
    /// Touching vertex and triangle (no separation to take it from): the triangle normal, turned
    /// against the stencil's relative motion over the substep.
    MotionVertexTriangle,
    /// Touching edges: their common normal, turned against the relative motion.
    MotionEdgeEdge,
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

    /// Changes the relative velocity along the unit direction `d` by `mag` > 0 (m/s) with one
    /// impulse j·d spread over the stencil: Δv_k = w_k j M_k⁻¹ d, j = mag / Σ w_k² dᵀM_k⁻¹d (the
    /// mass-weighted form of BFA02 §7.1), where M_k⁻¹ = m_k⁻¹ I, or m_k⁻¹ (I − n nᵀ) for a vertex on a
    /// body (normal n) that the impulse would push into it. Returns false and changes nothing if
    /// the stencil cannot move along `d` or only with an amplification above
    /// [`MAX_AMPLIFICATION`].
    pub fn push(&self, v: &mut [Vec3], mob: &Mobility, d: Vec3, mag: f32) -> bool {
        if mag.is_nan() || mag <= 0.0 {
            return false;
        }
        let mut a = [Vec3::ZERO; 4];
        let mut e = 0.0f32;
        for ((ak, &i), &w) in a.iter_mut().zip(&self.idx).zip(&self.w) {
            let n = mob.body_normal(i as usize);
            let dn = d.dot(n);
            let dir = if w * dn < 0.0 { d - dn * n } else { d };
            *ak = mob.inv_mass[i as usize] * dir;
            e += w * w * d.dot(*ak);
        }
        if e.is_nan() || e <= 0.0 {
            return false;
        }
        let j = mag / e;
        let worst = (0..4).fold(0.0f32, |m, k| m.max((self.w[k] * j * a[k]).length()));
        if worst.is_nan() || worst > MAX_AMPLIFICATION * mag {
            return false;
        }
        for k in 0..4 {
            v[self.idx[k] as usize] += (self.w[k] * j) * a[k];
        }
        true
    }
}
