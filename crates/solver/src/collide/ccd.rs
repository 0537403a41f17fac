//! Continuous vertex–proxy detection by conservative advancement on the signed distance.
//!
//! Over one substep the vertex moves linearly x(t) = x0 + t(x1 − x0) while the proxy shape S(t)
//! interpolates linearly (t ∈ [0, 1]). f(t) = φ(S(t), x(t)) − thickness is Lipschitz in t with a
//! per-shape constant K ([`MovingCollider::rate_bound`]), so f cannot reach 0 before
//! t + f(t)/K: stepping by exactly that amount never skips a crossing, however fast or thin the
//! proxy (Mirtich's conservative advancement, with an exact distance and an exact bound).

use glam::Vec3;

use super::contact::VertexContact;
use super::moving::MovingCollider;

/// A vertex counts as touching once within `thickness + tolerance` (m); the tolerance keeps the
/// advancement from creeping towards a grazing minimum.
pub const CONTACT_TOLERANCE_ABS: f32 = 1.0e-6;
/// Relative part of the tolerance (fraction of the thickness).
pub const CONTACT_TOLERANCE_REL: f32 = 1.0e-3;
/// Advancement steps before giving up; a vertex still hovering within reach after this many
/// steps is reported as touching (conservative: never a missed contact).
pub const MAX_ADVANCEMENT_STEPS: u32 = 128;

/// The end-of-substep nearest side counts as the first-contact side when its normal is within
/// ~45° of the normal at first contact (a sliding vertex, or a proxy turning with a limb, turns far
/// less within one substep); beyond that the vertex went deep inside or through.
pub const SAME_SIDE_COSINE: f32 = 0.7;

/// First time of contact of one vertex with one moving proxy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CcdHit {
    /// Substep fraction of first contact.
    pub toi: f32,
    /// Signed distance (m) to S(toi) at x(toi).
    pub distance: f32,
    /// Outward unit normal of S(toi) nearest x(toi).
    pub normal: Vec3,
    /// Advancement steps taken.
    pub steps: u32,
}

/// Earliest t ∈ [0, 1] with φ(S(t), x(t)) < thickness (+ tolerance), or None if there is none.
/// Returns None for non-finite input (the caller reports non-finite state itself).
pub fn earliest_contact(c: &MovingCollider, x0: Vec3, x1: Vec3, thickness: f32) -> Option<CcdHit> {
    let k = c.rate_bound(x0, x1);
    let tol = CONTACT_TOLERANCE_ABS + CONTACT_TOLERANCE_REL * thickness.max(0.0);
    let mut t = 0.0f32;
    let mut steps = 0;
    loop {
        let (distance, normal) = c.at(t).distance(x0 + (x1 - x0) * t);
        let f = distance - thickness;
        if f.is_nan() {
            return None;
        }
        steps += 1;
        if f < tol || steps >= MAX_ADVANCEMENT_STEPS {
            return Some(CcdHit {
                toi: t,
                distance,
                normal,
                steps,
            });
        }
        if !(k > 0.0 && k.is_finite()) {
            return None;
        }
        t += f / k;
        if t > 1.0 {
            return None;
        }
    }
}

/// Full contact record for vertex `vertex` against collider `collider` over a substep of `h` s,
/// or None when the vertex stays farther than `thickness` (m) throughout.
///
/// The side is chosen at first contact: if the end-of-substep nearest normal turns more than ~45°
/// from the normal at `toi` (the vertex went inside towards the axis or right through), the
/// material point under the vertex at `toi` is carried to the end pose and the contact uses the
/// supporting plane of the end shape there, so `target` is outside the convex proxy on the entry
/// side.
pub fn vertex_contact(
    c: &MovingCollider,
    collider: u32,
    vertex: u32,
    h: f32,
    x0: Vec3,
    x1: Vec3,
    thickness: f32,
) -> Option<VertexContact> {
    let hit = earliest_contact(c, x0, x1, thickness)?;
    let end = c.end;
    let (d1, n1) = end.distance(x1);
    let (normal, distance, surface_point) = if n1.dot(hit.normal) >= SAME_SIDE_COSINE {
        (n1, d1, x1 - d1 * n1)
    } else {
        let xc = x0 + (x1 - x0) * hit.toi;
        let (qc, nc) = c.at(hit.toi).transfer(&end, xc)?;
        let y = qc + nc * (thickness.max(0.0) + end.min_radius());
        let (dy, ny) = end.distance(y);
        let q = y - dy * ny;
        (ny, (x1 - q).dot(ny), q)
    };
    Some(VertexContact {
        vertex,
        collider,
        normal,
        surface_velocity: c.surface_velocity(h, surface_point),
        target: x1 + (thickness - distance) * normal,
        toi: hit.toi,
        distance,
    })
}
