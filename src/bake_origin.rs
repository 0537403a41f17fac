//! The simulation's frame: the world shifted by a whole-metre `origin` near the garments when they
//! start far from the world's origin. The solver keeps positions in f32, whose resolution falls
//! with the distance from its origin (about 1.9 µm at 16 m, 7.6 µm at 100 m, 61 µm at 1 km); the
//! rounding of each substep's x + h·v at 100–1000 m shows as stretch noise and extra CG iterations
//! (BENCHMARKS.md, "A shot far from the world origin"). Shifting every input by the same whole
//! metres (garments, pin targets, colliders) changes no distance between them, and the caches get
//! the origin added back (in f64, `clothbake_io::Garment::output_frame`). The frame follows the
//! cloth between frames ([`BakeOrigin::follow`]), so a garment carried hundreds of metres within
//! one bake stays near its origin too. Scenes near the origin are simulated in world coordinates,
//! with the same bits as before the shift existed.

use clothbake_io::{LoadedScene, Shape};
use glam::{DVec3, Vec3};

/// On an axis where the garments' starting bounding box is centred within this distance (m) of the
/// world origin, the simulation frame is not shifted.
pub const SHIFT_FROM: f32 = 16.0;

/// The simulation frame's origin in the world (m); zero for scenes near the world origin.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BakeOrigin(pub Vec3);

impl BakeOrigin {
    /// The origin for a scene: on each axis, the centre of its garments' starting bounding box
    /// rounded to whole metres where it lies farther than [`SHIFT_FROM`] from the world origin,
    /// else 0.
    pub fn of_scene(scene: &LoadedScene) -> Self {
        Self::for_points(
            scene
                .garments
                .iter()
                .flat_map(|g| g.positions.iter().copied()),
        )
    }

    /// [`Self::of_scene`] for the garments' starting positions `points` (world, m).
    pub fn for_points(points: impl Iterator<Item = Vec3>) -> Self {
        BakeOrigin(far_centre(points))
    }

    /// Where the frame should move once the cloth (positions `x` in this frame, m) has travelled
    /// farther than [`SHIFT_FROM`] from its origin on some axis: this origin plus the cloth's
    /// centre there in whole metres; None while the cloth stays near. Called between frames, it
    /// keeps a garment that walks or rides hundreds of metres near its simulation origin.
    pub fn follow(self, x: &[Vec3]) -> Option<Self> {
        let shift = far_centre(x.iter().copied());
        (shift != Vec3::ZERO).then_some(BakeOrigin(self.0 + shift))
    }

    /// Whether the simulation runs in world coordinates.
    pub fn is_zero(self) -> bool {
        self.0 == Vec3::ZERO
    }

    /// A world point (m) in the simulation frame.
    #[inline]
    pub fn to_sim(self, p: Vec3) -> Vec3 {
        p - self.0
    }

    /// A world collider shape in the simulation frame. A plane's point becomes the plane's point
    /// nearest the simulation origin (computed in f64), so that its distances keep their
    /// resolution near the cloth.
    pub fn shape_to_sim(self, s: &Shape) -> Shape {
        if self.is_zero() {
            return *s;
        }
        match *s {
            Shape::Plane { point, normal } => {
                let n = normal.as_dvec3();
                let p = point.as_dvec3() - self.0.as_dvec3();
                let nearest: DVec3 = n * (n.dot(p) / n.length_squared());
                Shape::Plane {
                    point: nearest.as_vec3(),
                    normal,
                }
            }
            Shape::Sphere { center, radius } => Shape::Sphere {
                center: self.to_sim(center),
                radius,
            },
            Shape::Capsule {
                a,
                b,
                radius_a,
                radius_b,
            } => Shape::Capsule {
                a: self.to_sim(a),
                b: self.to_sim(b),
                radius_a,
                radius_b,
            },
        }
    }
}

/// Per axis, the centre of the bounding box of `points` rounded to whole metres where it lies
/// farther than [`SHIFT_FROM`] from 0, else 0; zero without (finite) points.
fn far_centre(points: impl Iterator<Item = Vec3>) -> Vec3 {
    let (lo, hi) = points.fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p), hi.max(p)),
    );
    if !(lo.is_finite() && hi.is_finite()) {
        return Vec3::ZERO;
    }
    let centre = (lo.as_dvec3() + hi.as_dvec3()) * 0.5;
    let axis = |c: f64| {
        if c.abs() > SHIFT_FROM as f64 {
            c.round() as f32
        } else {
            0.0
        }
    };
    Vec3::new(axis(centre.x), axis(centre.y), axis(centre.z))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenes_near_the_origin_keep_world_coordinates() {
        let near = [Vec3::new(-0.5, 0.2, 0.3), Vec3::new(15.5, 1.8, -2.0)];
        assert!(BakeOrigin::for_points(near.into_iter()).is_zero());
        assert!(BakeOrigin::for_points(std::iter::empty()).is_zero());
    }

    #[test]
    fn far_axes_are_shifted_by_the_centre_in_whole_metres() {
        let far = [
            Vec3::new(999.2, 0.0, -300.4),
            Vec3::new(1001.0, 1.9, -299.0),
        ];
        let o = BakeOrigin::for_points(far.into_iter());
        // y is near the origin: not shifted.
        assert_eq!(o.0, Vec3::new(1000.0, 0.0, -300.0));
        // Whole metres: the shift and its inverse are exact for points near the garments.
        for p in far {
            assert_eq!(o.to_sim(p) + o.0, p);
        }
    }

    #[test]
    fn the_frame_follows_cloth_that_travels_beyond_the_threshold() {
        let o = BakeOrigin(Vec3::new(1000.0, 0.0, 0.0));
        let near = [Vec3::new(15.0, 1.0, -3.0), Vec3::new(15.9, 1.5, -2.0)];
        assert_eq!(o.follow(&near), None);
        let gone = [Vec3::new(16.2, 1.0, -3.0), Vec3::new(17.0, 1.5, -2.0)];
        assert_eq!(
            o.follow(&gone),
            Some(BakeOrigin(Vec3::new(1017.0, 0.0, 0.0)))
        );
    }

    #[test]
    fn shapes_keep_their_distances_in_the_simulation_frame() {
        let o = BakeOrigin(Vec3::new(1000.0, 0.0, -300.0));
        let plane = Shape::Plane {
            point: Vec3::new(0.0, 0.25, 0.0),
            normal: Vec3::Y,
        };
        // The ground plane's point moves to the one nearest the simulation origin.
        assert_eq!(
            o.shape_to_sim(&plane),
            Shape::Plane {
                point: Vec3::new(0.0, 0.25, 0.0),
                normal: Vec3::Y
            }
        );
        let tilted = Shape::Plane {
            point: Vec3::new(1000.0, 0.0, -300.0),
            normal: Vec3::new(1.0, 1.0, 0.0).normalize(),
        };
        match o.shape_to_sim(&tilted) {
            Shape::Plane { point, .. } => assert!(point.length() < 1e-5, "{point}"),
            other => panic!("{other:?}"),
        }
        let sphere = Shape::Sphere {
            center: Vec3::new(1000.5, 1.0, -300.0),
            radius: 0.3,
        };
        assert_eq!(
            o.shape_to_sim(&sphere),
            Shape::Sphere {
                center: Vec3::new(0.5, 1.0, 0.0),
                radius: 0.3
            }
        );
    }
}
