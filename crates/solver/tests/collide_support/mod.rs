//! Shared helpers of the collide_* tests: a tiny deterministic PRNG (no extra dependency) and
//! random proxies.
#![allow(dead_code)]

use clothbake_solver::collide::ColliderShape;
use glam::Vec3;

/// SplitMix64: deterministic, seedable.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    pub fn vec_in_cube(&mut self, half: f32) -> Vec3 {
        Vec3::new(
            self.range(-half, half),
            self.range(-half, half),
            self.range(-half, half),
        )
    }
    pub fn unit_vector(&mut self) -> Vec3 {
        loop {
            let v = self.vec_in_cube(1.0);
            let l = v.length();
            if l > 0.1 && l <= 1.0 {
                return v / l;
            }
        }
    }
    /// A body-sized proxy near the origin: sphere, tapered capsule or plane.
    pub fn shape(&mut self, kind: u32) -> ColliderShape {
        match kind % 3 {
            0 => ColliderShape::Sphere {
                center: self.vec_in_cube(0.1),
                radius: self.range(0.02, 0.15),
            },
            1 => {
                let a = self.vec_in_cube(0.1);
                ColliderShape::Capsule {
                    a,
                    b: a + self.unit_vector() * self.range(0.0, 0.3),
                    radius_a: self.range(0.01, 0.12),
                    radius_b: self.range(0.01, 0.12),
                }
            }
            _ => ColliderShape::Plane {
                point: self.vec_in_cube(0.1),
                normal: self.unit_vector() * self.range(0.5, 2.0),
            },
        }
    }
    /// `s` moved by a random motion of up to `reach` m (and radius change up to 20 %); planes
    /// also turn by up to ~25°.
    pub fn moved(&mut self, s: &ColliderShape, reach: f32) -> ColliderShape {
        match *s {
            ColliderShape::Sphere { center, radius } => ColliderShape::Sphere {
                center: center + self.vec_in_cube(reach),
                radius: radius * self.range(0.8, 1.2),
            },
            ColliderShape::Capsule {
                a,
                b,
                radius_a,
                radius_b,
            } => ColliderShape::Capsule {
                a: a + self.vec_in_cube(reach),
                b: b + self.vec_in_cube(reach),
                radius_a: radius_a * self.range(0.8, 1.2),
                radius_b: radius_b * self.range(0.8, 1.2),
            },
            ColliderShape::Plane { point, normal } => ColliderShape::Plane {
                point: point + self.vec_in_cube(reach),
                normal: normal.normalize() + self.vec_in_cube(0.25),
            },
        }
    }
}
