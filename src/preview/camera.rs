//! The contact sheet's fixed camera: orthographic, one view and one scale for every tile, fitted
//! once to the bounds of everything drawn in every chosen frame.
//!
//! The view direction is the one of 24 candidates (12 azimuths 30° apart around the vertical, 0° =
//! the front, +Z as glTF characters face; elevations 25° and 50°) that sees the most cloth: the
//! largest projected cloth area summed over the chosen frames, Σ ½|(b − a) × (c − a) · v|. The
//! default three-quarter front view (30° right, 25° up) needs to lose by 5 % (other azimuths) or
//! 15 % (the high views) to be replaced, and ties go to the azimuth nearest it: a skirt is seen
//! from the front right, a flat panel facing the front from the front, a cape from behind.

use glam::{Vec2, Vec3};

/// Candidate directions from the scene towards the camera (world, Y up) with their preference
/// weights, the default (front right, 25° up) first.
fn candidates() -> impl Iterator<Item = (Vec3, f32)> {
    // Azimuths (degrees) by their distance from the default's 30°: 30, 0, 60, 330, 90, ..., 210.
    const AZIMUTHS: [f32; 12] = [
        30.0, 0.0, 60.0, 330.0, 90.0, 300.0, 120.0, 270.0, 150.0, 240.0, 180.0, 210.0,
    ];
    [(25f32, 1.0f32), (50.0, 0.85)]
        .into_iter()
        .flat_map(|(elev, w)| {
            AZIMUTHS.iter().enumerate().map(move |(k, az)| {
                let (az, el) = (az.to_radians(), elev.to_radians());
                let dir = Vec3::new(az.sin() * el.cos(), el.sin(), az.cos() * el.cos());
                (dir, if k == 0 { w } else { w * 0.95 })
            })
        })
}

/// The view direction (scene → camera, unit) that sees the most of the triangles' area vectors
/// `(b − a) × (c − a)` (see the module docs); the default view when there are none.
pub fn choose_view(area_vectors: impl Iterator<Item = Vec3> + Clone) -> Vec3 {
    let mut best = (f32::NEG_INFINITY, Vec3::ZERO);
    for (dir, weight) in candidates() {
        let seen: f32 = area_vectors
            .clone()
            .map(|n| n.dot(dir).abs())
            .filter(|v| v.is_finite())
            .sum();
        let score = seen * weight;
        if score > best.0 {
            best = (score, dir);
        }
    }
    best.1
}

/// Orthographic camera mapping world points (m) to tile pixels (x right, y down) and depth.
#[derive(Debug, Clone, Copy)]
pub struct Camera {
    right: Vec3,
    up: Vec3,
    forward: Vec3,
    /// World point shown at `center_px`.
    target: Vec3,
    /// Pixels per metre.
    scale: f32,
    center_px: Vec2,
}

impl Camera {
    /// Fits the view to `points` (each with a radius: 0 for cloth vertices, the radius for a
    /// sphere or capsule end), leaving `margin` pixels inside a `width`×`height` viewport whose
    /// top-left corner is at (0, `top`).
    /// `view_from` is the direction from the scene towards the camera (not vertical).
    pub fn fit(
        view_from: Vec3,
        points: &[(Vec3, f32)],
        width: f32,
        height: f32,
        top: f32,
        margin: f32,
    ) -> Self {
        let forward = -view_from.normalize();
        let right = forward.cross(Vec3::Y).normalize();
        let up = right.cross(forward);
        let (mut lo, mut hi) = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
        let mut centre = Vec3::ZERO;
        for &(p, r) in points {
            let s = Vec2::new(p.dot(right), p.dot(up));
            lo = lo.min(s - r);
            hi = hi.max(s + r);
            centre += p;
        }
        if points.is_empty() || !lo.is_finite() || !hi.is_finite() {
            (lo, hi) = (Vec2::splat(-1.0), Vec2::splat(1.0));
        } else {
            centre /= points.len() as f32;
        }
        let size = (hi - lo).max(Vec2::splat(1e-3));
        let scale = ((width - 2.0 * margin) / size.x).min((height - 2.0 * margin) / size.y);
        let mid = (lo + hi) * 0.5;
        // The target is the middle of the projected bounds; its depth only shifts depth values.
        let along = centre.dot(forward);
        let target = right * mid.x + up * mid.y + forward * along;
        Self {
            right,
            up,
            forward,
            target,
            scale,
            center_px: Vec2::new(width * 0.5, top + height * 0.5),
        }
    }

    /// Pixel position (x right, y down) and depth (m, larger = farther) of a world point.
    pub fn project(&self, p: Vec3) -> (Vec2, f32) {
        let d = p - self.target;
        (
            Vec2::new(
                self.center_px.x + d.dot(self.right) * self.scale,
                self.center_px.y - d.dot(self.up) * self.scale,
            ),
            d.dot(self.forward),
        )
    }

    /// Pixels per metre.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Unit vector from the scene towards the camera.
    pub fn toward_viewer(&self) -> Vec3 {
        -self.forward
    }

    /// The camera's up and right axes (world).
    pub fn axes(&self) -> (Vec3, Vec3) {
        (self.right, self.up)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitted_bounds_fill_the_viewport_inside_the_margin() {
        let pts: Vec<(Vec3, f32)> = [
            Vec3::new(-1.0, 0.0, -1.0),
            Vec3::new(1.0, 2.0, 1.0),
            Vec3::new(1.0, 0.0, -1.0),
            Vec3::new(-1.0, 2.0, 1.0),
        ]
        .iter()
        .map(|&p| (p, 0.0))
        .collect();
        let cam = Camera::fit(Vec3::new(0.5, 0.4, 1.0), &pts, 200.0, 180.0, 20.0, 10.0);
        let (mut lo, mut hi) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
        for (p, _) in &pts {
            let (s, _) = cam.project(*p);
            lo = lo.min(s);
            hi = hi.max(s);
        }
        // The tighter axis touches the margins exactly; the other is centred inside them.
        assert!(lo.x >= 10.0 - 1e-3 && hi.x <= 190.0 + 1e-3, "{lo} {hi}");
        assert!(lo.y >= 30.0 - 1e-3 && hi.y <= 190.0 + 1e-3, "{lo} {hi}");
        let touches_x = (lo.x - 10.0).abs() < 1e-3 && (hi.x - 190.0).abs() < 1e-3;
        let touches_y = (lo.y - 30.0).abs() < 1e-3 && (hi.y - 190.0).abs() < 1e-3;
        assert!(touches_x || touches_y, "{lo} {hi}");
        assert!(((lo + hi) * 0.5 - Vec2::new(100.0, 110.0)).length() < 1e-3);
        // Higher world points are higher on screen (smaller y); the front (+Z) is nearer.
        assert!(cam.project(Vec3::Y).0.y < cam.project(Vec3::ZERO).0.y);
        assert!(cam.project(Vec3::Z).1 < cam.project(Vec3::ZERO).1);
    }

    #[test]
    fn view_sees_the_most_cloth() {
        let default = candidates().next().map(|c| c.0).unwrap_or_default();
        // Nothing to see: the default.
        assert_eq!(choose_view(std::iter::empty()), default);
        // Cloth seen equally from every azimuth (a skirt: a cylinder of panels): the default.
        let ring = (0..36).map(|k| {
            let a = (k as f32 * 10.0).to_radians();
            Vec3::new(a.sin(), 0.0, a.cos())
        });
        assert_eq!(choose_view(ring), default);
        // A vertical panel facing the front: seen from the front (|n·v| = cos 25° = 0.906, × 0.95,
        // against cos 30° · cos 25° = 0.785 at the default), not from behind (the same area).
        let v = choose_view([Vec3::Z].into_iter());
        assert!(v.z > 0.9 && v.x.abs() < 1e-6, "{v}");
        // A horizontal sheet (a cape streaming out): a 50° view, |n·v| = sin 50° = 0.77 against
        // sin 25° = 0.42 at the default.
        let v = choose_view([Vec3::Y].into_iter());
        assert!((v.y - 50f32.to_radians().sin()).abs() < 1e-6, "{v}");
        // A sheet facing +X (seen edge-on from the front): a side view.
        let v = choose_view([Vec3::X].into_iter());
        assert!(v.x.abs() > 0.8, "{v}");
    }
}
