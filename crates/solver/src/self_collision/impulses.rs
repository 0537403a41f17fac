//! Velocity impulses applied after the implicit solve (BFA02 §7): proximity repulsion with Coulomb
//! friction and the inelastic impulse of a continuous-collision event. Applied Gauss–Seidel in the
//! fixed (sorted) contact order, which keeps the result deterministic.

use super::contact::Contact;
use glam::Vec3;

/// Fraction of the thickness overlap that the repulsion removes per substep (BFA02 §7.2 caps the
/// spring impulse so the normal velocity reaches at most 0.1·d/Δt).
pub const REPULSION_RATE: f32 = 0.1;

/// Separation, as a fraction of the thickness, that a continuous-collision impulse leaves at the
/// end of the substep (the inelastic impulse of BFA02 §7.3 plus a small margin so that the same
/// pair is not found again through round-off).
pub const CCD_GAP_FRACTION: f32 = 0.1;

/// Proximity repulsion of one contact (BFA02 §7.2): the relative normal velocity is raised to at
/// least `REPULSION_RATE · (thickness − gap) / h` (inelastic part + capped spring part), and the
/// tangential relative velocity is reduced by Coulomb friction μ·Δv_n (clamped at sticking).
/// Returns true if an impulse was applied. `h`: substep (s).
pub fn repel(c: &Contact, v: &mut [Vec3], inv_mass: &[f32], h: f32) -> bool {
    let im = c.inverse_mass(inv_mass);
    if im <= 0.0 {
        return false;
    }
    let u = c.relative(v);
    let vn = u.dot(c.normal);
    let overlap = (c.thickness - c.gap).max(0.0);
    let target = vn.max(REPULSION_RATE * overlap / h);
    let dvn = target - vn;
    if dvn <= 0.0 {
        return false;
    }
    let vt = u - vn * c.normal;
    let vt_len = vt.length();
    let mut du = dvn * c.normal;
    if vt_len > 0.0 && c.friction > 0.0 {
        let keep = (1.0 - c.friction * dvn / vt_len).max(0.0);
        du += (keep - 1.0) * vt;
    }
    c.apply(v, inv_mass, du, im);
    true
}

/// Inelastic continuous-collision impulse (BFA02 §7.3): the relative normal velocity becomes at
/// least `(CCD_GAP_FRACTION · thickness − gap) / h`, so that the pair, separated by `gap` along
/// the normal at the start of the substep, ends it at least that far apart. Returns false if both
/// primitives are immovable (all inverse masses zero).
pub fn stop(c: &Contact, v: &mut [Vec3], inv_mass: &[f32], h: f32) -> bool {
    let im = c.inverse_mass(inv_mass);
    if im <= 0.0 {
        return false;
    }
    let vn = c.relative(v).dot(c.normal);
    let target = vn.max((CCD_GAP_FRACTION * c.thickness - c.gap) / h);
    let dvn = target - vn;
    if dvn > 0.0 {
        c.apply(v, inv_mass, dvn * c.normal, im);
    }
    true
}
