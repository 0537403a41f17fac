//! Sphere proxy: signed distance, motion bound and material transfer.

use glam::Vec3;

/// Signed distance φ(p) = |p − c| − r (m) and outward unit normal (p − c)/|p − c|.
/// At the centre itself the normal is +Y (any direction is equally near; fixed for determinism).
#[inline]
pub fn sphere_distance(center: Vec3, radius: f32, p: Vec3) -> (f32, Vec3) {
    let d = p - center;
    let len = d.length();
    let n = if len > 0.0 { d / len } else { Vec3::Y };
    (len - radius, n)
}

/// Upper bound (m per unit substep time) of |dφ/dt| for a vertex moving x0→x1 while the centre
/// moves c0→c1 and the radius r0→r1 linearly: |d/dt(|x − c| − r)| ≤ |Δx − Δc| + |Δr|.
#[inline]
pub fn sphere_rate_bound(c0: Vec3, c1: Vec3, r0: f32, r1: f32, x0: Vec3, x1: Vec3) -> f32 {
    ((x1 - x0) - (c1 - c0)).length() + (r1 - r0).abs()
}

/// The material point of sphere `from` = (c, r) nearest `p` (direction n̂ from the centre), carried
/// to sphere `to`: c_to + r_to·n̂ (translation and uniform scaling; spin is not represented by the
/// proxy and is ignored). Returns (position, outward normal).
#[inline]
pub fn sphere_transfer(from: (Vec3, f32), to: (Vec3, f32), p: Vec3) -> (Vec3, Vec3) {
    let (_, n) = sphere_distance(from.0, from.1, p);
    (to.0 + to.1 * n, n)
}
