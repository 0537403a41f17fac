//! Half-space proxy (ground, floors): signed distance, motion bound and material transfer.

use glam::{Quat, Vec3};

/// Signed distance φ(p) = (p − point)·n̂ (m) of `p` to the plane through `point` with outward
/// normal n̂ = normal/|normal|, and n̂ itself. Negative below the plane (inside the half-space).
#[inline]
pub fn plane_distance(point: Vec3, normal: Vec3, p: Vec3) -> (f32, Vec3) {
    let n = normal.normalize_or_zero();
    ((p - point).dot(n), n)
}

/// Upper bound (m per unit substep time) of |dφ/dt| for a vertex moving x0→x1 while the plane
/// moves linearly p0→p1 with a normalised-lerp normal n̂0→n̂1 (both unit, n̂0·n̂1 > 0):
/// dφ/dt = (Δx − Δp)·n̂ + (x − p)·dn̂/dt, |dn̂/dt| ≤ |Δn̂| / min_t|lerp(n̂0, n̂1, t)| = 2|Δn̂| / |n̂0 + n̂1|,
/// and |x − p| is convex in t so bounded by its endpoint values.
pub fn plane_rate_bound(p0: Vec3, p1: Vec3, n0: Vec3, n1: Vec3, x0: Vec3, x1: Vec3) -> f32 {
    let translation = ((x1 - x0) - (p1 - p0)).length();
    let dn = (n1 - n0).length();
    if dn == 0.0 {
        return translation;
    }
    let lever = (x0 - p0).length().max((x1 - p1).length());
    translation + lever * 2.0 * dn / (n0 + n1).length().max(f32::MIN_POSITIVE)
}

/// The material point of plane `from` nearest `p`, carried rigidly to plane `to` (translation of
/// `point` plus the shortest rotation n̂_from → n̂_to about it). Returns (position, outward normal).
pub fn plane_transfer(from: (Vec3, Vec3), to: (Vec3, Vec3), p: Vec3) -> (Vec3, Vec3) {
    let (pf, nf) = (from.0, from.1.normalize_or_zero());
    let (pt, nt) = (to.0, to.1.normalize_or_zero());
    let q = p - (p - pf).dot(nf) * nf;
    let rot = if nf == Vec3::ZERO || nt == Vec3::ZERO {
        Quat::IDENTITY
    } else {
        Quat::from_rotation_arc(nf, nt)
    };
    (pt + rot * (q - pf), nt)
}
