//! Axis-aligned bounding boxes for the broad phase (swept colliders vs chunks of swept vertices).

use glam::Vec3;

/// Closed box [min, max] (m). `EMPTY` has min > max and overlaps nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (identity of `union`).
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };
    /// The whole space (used for unbounded planes).
    pub const EVERYTHING: Aabb = Aabb {
        min: Vec3::splat(f32::NEG_INFINITY),
        max: Vec3::splat(f32::INFINITY),
    };

    /// Box of a ball B(c, r).
    #[inline]
    pub fn ball(c: Vec3, r: f32) -> Aabb {
        Aabb {
            min: c - Vec3::splat(r),
            max: c + Vec3::splat(r),
        }
    }

    /// Smallest box holding both.
    #[inline]
    pub fn union(self, o: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }

    /// Grown by `r` (m) on every side.
    #[inline]
    pub fn inflate(self, r: f32) -> Aabb {
        Aabb {
            min: self.min - Vec3::splat(r),
            max: self.max + Vec3::splat(r),
        }
    }

    /// True when the closed boxes share a point.
    #[inline]
    pub fn overlaps(&self, o: &Aabb) -> bool {
        self.min.cmple(o.max).all() && o.min.cmple(self.max).all()
    }
}
