//! A collider moving linearly between two poses over a time interval (one frame or one substep).

use glam::Vec3;

use super::aabb::Aabb;
use super::contact_plane::plane_rate_bound;
use super::contact_sphere::sphere_rate_bound;
use super::contact_tapered_capsule::tapered_capsule_rate_bound;
use super::error::{CollideError, ShapeError};
use super::shape::ColliderShape;

/// A proxy at the start and end of an interval; in between every parameter is interpolated
/// linearly ([`ColliderShape::lerp`]). Both shapes must be the same kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MovingCollider {
    pub start: ColliderShape,
    pub end: ColliderShape,
}

impl MovingCollider {
    /// A collider that does not move.
    pub fn fixed(shape: ColliderShape) -> Self {
        MovingCollider {
            start: shape,
            end: shape,
        }
    }

    /// Validates both shapes, equal kinds and (for planes) a normal turning by less than 90°.
    /// `index` is only used to name the collider in the error.
    pub fn validate(&self, index: usize) -> Result<(), CollideError> {
        let err = |which, source| CollideError::Collider {
            index,
            which,
            source,
        };
        self.start.validate().map_err(|e| err("start", e))?;
        self.end.validate().map_err(|e| err("end", e))?;
        match (self.start, self.end) {
            (ColliderShape::Plane { normal: n0, .. }, ColliderShape::Plane { normal: n1, .. }) => {
                if n0.normalize().dot(n1.normalize()) <= 0.0 {
                    return Err(err("motion", ShapeError::PlaneFlip));
                }
                Ok(())
            }
            (s, e) if s.kind() != e.kind() => Err(err(
                "motion",
                ShapeError::KindMismatch {
                    from: s.kind(),
                    to: e.kind(),
                },
            )),
            _ => Ok(()),
        }
    }

    /// The sub-interval [t0, t1] ⊂ [0, 1] as its own moving collider (e.g. one substep of a frame).
    pub fn sub_interval(&self, t0: f32, t1: f32) -> Result<MovingCollider, ShapeError> {
        Ok(MovingCollider {
            start: self.start.lerp(&self.end, t0)?,
            end: self.start.lerp(&self.end, t1)?,
        })
    }

    /// Shape at time fraction `t` (validated collider; falls back to `start` if kinds differ).
    #[inline]
    pub fn at(&self, t: f32) -> ColliderShape {
        if t == 0.0 {
            return self.start;
        }
        self.start
            .lerp_same_kind(&self.end, t)
            .unwrap_or(self.start)
    }

    /// Box holding the shape at every t ∈ [0, 1]: each box face coordinate is a min/max of
    /// functions linear in t, hence extremal at t = 0 or 1.
    pub fn swept_aabb(&self) -> Aabb {
        self.start.aabb().union(self.end.aabb())
    }

    /// Upper bound K (m per unit t) of |d/dt φ(S(t), x(t))| for a vertex moving x0→x1 linearly:
    /// the signed distance changes by at most K·|Δt| (proofs at the per-shape functions).
    pub fn rate_bound(&self, x0: Vec3, x1: Vec3) -> f32 {
        match (self.start, self.end) {
            (
                ColliderShape::Plane {
                    point: p0,
                    normal: n0,
                },
                ColliderShape::Plane {
                    point: p1,
                    normal: n1,
                },
            ) => plane_rate_bound(
                p0,
                p1,
                n0.normalize_or_zero(),
                n1.normalize_or_zero(),
                x0,
                x1,
            ),
            (
                ColliderShape::Sphere {
                    center: c0,
                    radius: r0,
                },
                ColliderShape::Sphere {
                    center: c1,
                    radius: r1,
                },
            ) => sphere_rate_bound(c0, c1, r0, r1, x0, x1),
            (
                ColliderShape::Capsule {
                    a: a0,
                    b: b0,
                    radius_a: ra0,
                    radius_b: rb0,
                },
                ColliderShape::Capsule {
                    a: a1,
                    b: b1,
                    radius_a: ra1,
                    radius_b: rb1,
                },
            ) => tapered_capsule_rate_bound((a0, b0, ra0, rb0), (a1, b1, ra1, rb1), x0, x1),
            _ => f32::INFINITY,
        }
    }

    /// The vertex-independent part M (m per unit t) of [`Self::rate_bound`]: for every vertex
    /// motion x0→x1, `rate_bound(x0, x1) ≤ |x1 − x0| + M` (exact arithmetic; triangle inequality
    /// on |Δx − Δc| ≤ |Δx| + |Δc|). Capsule: max(|Δa|, |Δb|) + max(|Δr_a|, |Δr_b|); sphere:
    /// |Δc| + |Δr|; plane: +∞ (its bound grows with the lever arm of the vertex).
    pub fn motion_bound(&self) -> f32 {
        match (self.start, self.end) {
            (
                ColliderShape::Sphere {
                    center: c0,
                    radius: r0,
                },
                ColliderShape::Sphere {
                    center: c1,
                    radius: r1,
                },
            ) => (c1 - c0).length() + (r1 - r0).abs(),
            (
                ColliderShape::Capsule {
                    a: a0,
                    b: b0,
                    radius_a: ra0,
                    radius_b: rb0,
                },
                ColliderShape::Capsule {
                    a: a1,
                    b: b1,
                    radius_a: ra1,
                    radius_b: rb1,
                },
            ) => {
                (a1 - a0).length().max((b1 - b0).length())
                    + (ra1 - ra0).abs().max((rb1 - rb0).abs())
            }
            _ => f32::INFINITY,
        }
    }

    /// Velocity (m/s) of the collider's material point at surface point `q` of the end shape over
    /// an interval of `h` seconds: (q − q_start)/h with q_start the same material point on the
    /// start shape ([`ColliderShape::transfer`]). `q` should lie on the end shape's surface.
    pub fn surface_velocity(&self, h: f32, q: Vec3) -> Vec3 {
        if self.start == self.end || h <= 0.0 {
            return Vec3::ZERO;
        }
        match self.end.transfer(&self.start, q) {
            Some((q_start, _)) => (q - q_start) / h,
            None => Vec3::ZERO,
        }
    }
}
