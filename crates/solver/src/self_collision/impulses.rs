//! Velocity impulses applied after the implicit solve (BFA02 §7): proximity repulsion with Coulomb
//! friction and the inelastic impulse of a continuous-collision event. Applied Gauss–Seidel in the
//! fixed (sorted) contact order, which keeps the result deterministic. Pinned vertices and vertices
//! pressed against a body are respected through [`Mobility`].

use super::contact::{Contact, Mobility};
use glam::Vec3;

/// Fraction of the thickness overlap that the repulsion removes per substep (BFA02 §7.2 caps the
/// spring impulse so the normal velocity reaches at most 0.1·d/Δt).
pub const REPULSION_RATE: f32 = 0.1;

/// Separation, as a fraction of the thickness, that a continuous-collision impulse leaves at the
/// end of the substep (the inelastic impulse of BFA02 §7.3 plus a small margin so that the same
/// pair is not found again through round-off).
pub const CCD_GAP_FRACTION: f32 = 0.1;

/// Proximity repulsion of one contact (BFA02 §7.2): the relative normal velocity is raised to at
/// least `REPULSION_RATE · (thickness − gap) / h` (inelastic part + capped spring part), then the
/// tangential relative velocity is reduced by Coulomb friction μ·Δv_n (at most to sticking).
/// Returns true if an impulse was applied. `h`: substep (s).
pub fn repel(c: &Contact, v: &mut [Vec3], mob: &Mobility, h: f32) -> bool {
    let vn = c.relative(v).dot(c.normal);
    let overlap = (c.thickness - c.gap).max(0.0);
    let dvn = REPULSION_RATE * overlap / h - vn;
    if dvn.is_nan() || dvn <= 0.0 || !c.push(v, mob, c.normal, dvn) {
        return false;
    }
    if c.friction > 0.0 {
        let u = c.relative(v);
        let vt = u - u.dot(c.normal) * c.normal;
        let len = vt.length();
        if len > 0.0 {
            // A friction impulse the stencil cannot take without amplification is skipped.
            c.push(v, mob, -vt / len, (c.friction * dvn).min(len));
        }
    }
    true
}

/// Inelastic continuous-collision impulse (BFA02 §7.3): the relative normal velocity becomes at
/// least `(CCD_GAP_FRACTION · thickness − gap) / h`, so that the pair, separated by `gap` along
/// the normal at the start of the substep, ends it at least that far apart. Returns false if the
/// stencil cannot take the impulse (then the impact zones handle it).
pub fn stop(c: &Contact, v: &mut [Vec3], mob: &Mobility, h: f32) -> bool {
    let vn = c.relative(v).dot(c.normal);
    let dvn = (CCD_GAP_FRACTION * c.thickness - c.gap) / h - vn;
    dvn.is_nan() || dvn <= 0.0 || c.push(v, mob, c.normal, dvn)
}
