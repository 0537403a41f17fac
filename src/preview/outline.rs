//! Collider outlines on a contact-sheet tile: what an orthographic view shows of each shape's
//! silhouette, in the proxy colour, dimmed where the cloth is in front (see [`Tile::line`]).

use glam::Vec3;

use super::camera::Camera;
use super::raster::Tile;
use super::{PLANE_COLOR, PROXY_COLOR};

/// Weight of the outline colour where the cloth hides it.
const HIDDEN: f32 = 0.3;

/// A sphere's silhouette: a circle of its radius around its centre, at the centre's depth (a
/// line within `radius + slack` m behind the cloth counts as visible).
pub fn sphere(tile: &mut Tile, cam: &Camera, center: Vec3, radius: f32, slack: f32) {
    let px = cam.scale();
    tile.circle(
        cam.project(center),
        radius * px,
        PROXY_COLOR,
        HIDDEN,
        radius + slack,
    );
}

/// A tapered capsule's silhouette: both end circles and the two lines tangent to them.
pub fn capsule(tile: &mut Tile, cam: &Camera, a: Vec3, b: Vec3, ra: f32, rb: f32, slack: f32) {
    let (pa, pb) = (cam.project(a), cam.project(b));
    let px = cam.scale();
    let (sa, sb) = (ra * px, rb * px);
    tile.circle(pa, sa, PROXY_COLOR, HIDDEN, ra + slack);
    tile.circle(pb, sb, PROXY_COLOR, HIDDEN, rb + slack);
    let d = pb.0 - pa.0;
    let len = d.length();
    if len <= (sa - sb).abs() + 1e-3 {
        return;
    }
    let u = d / len;
    let sin = (sa - sb) / len;
    let cos = (1.0 - sin * sin).max(0.0).sqrt();
    for side in [1.0, -1.0] {
        let m = u * sin + u.perp() * (cos * side);
        tile.line(
            (pa.0 + m * sa, pa.1),
            (pb.0 + m * sb, pb.1),
            PROXY_COLOR,
            HIDDEN,
            ra.max(rb) + slack,
        );
    }
}

/// A plane as a square grid (9 lines each way) around the point of the plane nearest the centre
/// of the cloth's bounds `lo..hi`, 1.5 × their diagonal across; hidden where the cloth is in front.
pub fn plane(tile: &mut Tile, cam: &Camera, point: Vec3, normal: Vec3, lo: Vec3, hi: Vec3) {
    let n = normal.normalize_or_zero();
    if n == Vec3::ZERO {
        return;
    }
    let mid = (lo + hi) * 0.5;
    let centre = mid - n * (mid - point).dot(n);
    let half = 0.75 * (hi - lo).length().max(0.1);
    let t1 = n.any_orthonormal_vector();
    let t2 = n.cross(t1);
    let steps = 8;
    for i in 0..=steps {
        let f = (i as f32 / steps as f32) * 2.0 - 1.0;
        for (u, v) in [(t1, t2), (t2, t1)] {
            let a = centre + u * (f * half) - v * half;
            let b = centre + u * (f * half) + v * half;
            tile.line(cam.project(a), cam.project(b), PLANE_COLOR, 0.0, 0.005);
        }
    }
}
