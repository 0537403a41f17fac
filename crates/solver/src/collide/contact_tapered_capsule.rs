//! Tapered capsule proxy: the convex hull of two balls B(a, r_a) and B(b, r_b), i.e. the cone
//! tangent to both end spheres plus the two spherical caps (NvCloth's "cone" collision shape,
//! `SwCollision::generateCones`: slope = (r_a − r_b)/|b − a|, cone radius scaled by 1/cos).
//!
//! Equivalently the union of the balls B(c(w), r(w)), c(w) = a + w(b − a), r(w) = r_a + w(r_b − r_a),
//! w ∈ [0, 1]: a Minkowski combination (1−w)B_a + wB_b is exactly that ball. Outside the shape
//! φ(p) = min_w |p − c(w)| − r(w), which gives the motion bound used by the continuous test.

use glam::{Quat, Vec3};

use super::contact_sphere::sphere_distance;

/// Exact signed distance to a tapered capsule and where the nearest surface point lies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapsuleClosest {
    /// Signed distance (m): negative inside.
    pub distance: f32,
    /// Outward unit normal at the nearest surface point.
    pub normal: Vec3,
    /// Axis parameter w ∈ [0, 1] of the ball B(c(w), r(w)) touching the surface there
    /// (0 on the cap of `a`, 1 on the cap of `b`, in between on the cone).
    pub w: f32,
}

/// Exact signed distance from `p` to the hull of B(a, ra) and B(b, rb) (radii > 0, m).
///
/// In the meridian half-plane through `p` (axial s, radial r ≥ 0 from `a`), the cone side is the
/// line with outward normal n = (sin α, cos α), sin α = (r_a − r_b)/L, touching ball a at r_a·n and
/// ball b at (L, 0) + r_b·n. With q = s cos α − r sin α the coordinate along that line: q ≤ 0 → the
/// cap of `a` (|p − a| − r_a), q ≥ L cos α → the cap of `b`, otherwise s sin α + r cos α − r_a.
/// Exact inside too (the convex support-function argument; see the module tests). When one ball
/// contains the other (L ≤ |r_a − r_b|) the shape is the larger ball.
pub fn tapered_capsule_closest(a: Vec3, b: Vec3, ra: f32, rb: f32, p: Vec3) -> CapsuleClosest {
    let axis = b - a;
    let len = axis.length();
    if len <= (ra - rb).abs() || len == 0.0 {
        let (center, radius, w) = if ra >= rb { (a, ra, 0.0) } else { (b, rb, 1.0) };
        let (distance, normal) = sphere_distance(center, radius, p);
        return CapsuleClosest {
            distance,
            normal,
            w,
        };
    }
    let u = axis / len;
    let sin = (ra - rb) / len;
    let cos = (1.0 - sin * sin).max(0.0).sqrt();
    let ap = p - a;
    let s = ap.dot(u);
    let radial = ap - s * u;
    let r = radial.length();
    let q = s * cos - r * sin;
    let cone_len = len * cos;
    if q <= 0.0 {
        let (distance, normal) = sphere_distance(a, ra, p);
        CapsuleClosest {
            distance,
            normal,
            w: 0.0,
        }
    } else if q >= cone_len {
        let (distance, normal) = sphere_distance(b, rb, p);
        CapsuleClosest {
            distance,
            normal,
            w: 1.0,
        }
    } else {
        let e = if r > 0.0 {
            radial / r
        } else {
            u.any_orthonormal_vector()
        };
        CapsuleClosest {
            distance: s * sin + r * cos - ra,
            normal: sin * u + cos * e,
            w: q / cone_len,
        }
    }
}

/// Upper bound (m per unit substep time) of |dφ/dt| for a vertex moving x0→x1 while the end
/// points and radii move linearly: from φ = min_w |x − c(w)| − r(w) and c, r linear in w,
/// |dφ/dt| ≤ max(|Δx − Δa|, |Δx − Δb|) + max(|Δr_a|, |Δr_b|). The same bound holds inside (the
/// support function h(n) = max_w c(w)·n + r(w) has the same rate).
pub fn tapered_capsule_rate_bound(
    start: (Vec3, Vec3, f32, f32),
    end: (Vec3, Vec3, f32, f32),
    x0: Vec3,
    x1: Vec3,
) -> f32 {
    let dx = x1 - x0;
    let rel_a = (dx - (end.0 - start.0)).length();
    let rel_b = (dx - (end.1 - start.1)).length();
    rel_a.max(rel_b) + (end.2 - start.2).abs().max((end.3 - start.3).abs())
}

/// The material point of capsule `from` nearest `p`, carried to capsule `to`.
///
/// Approximation (documented): a surface point is c(w) + r(w)·n̂ on the ball of axis parameter w;
/// it keeps w, follows the axis point c(w) and the interpolated radius r(w), and its direction n̂
/// turns with the shortest rotation of the axis direction (twist about the axis is not represented
/// by the proxy). Exact for caps and for rigid motion without twist; on the cone it ignores the
/// small change of slope when the radii change. Returns (position, outward normal).
pub fn tapered_capsule_transfer(
    from: (Vec3, Vec3, f32, f32),
    to: (Vec3, Vec3, f32, f32),
    p: Vec3,
) -> (Vec3, Vec3) {
    let closest = tapered_capsule_closest(from.0, from.1, from.2, from.3, p);
    let (uf, ut) = (
        (from.1 - from.0).normalize_or_zero(),
        (to.1 - to.0).normalize_or_zero(),
    );
    let rot = if uf == Vec3::ZERO || ut == Vec3::ZERO {
        Quat::IDENTITY
    } else {
        Quat::from_rotation_arc(uf, ut)
    };
    let n = (rot * closest.normal).normalize_or_zero();
    let w = closest.w;
    let center = to.0 + w * (to.1 - to.0);
    let radius = to.2 + w * (to.3 - to.2);
    (center + radius * n, n)
}
