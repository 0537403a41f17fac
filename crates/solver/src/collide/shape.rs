//! Collider proxy shapes (plane, sphere, tapered capsule): validation, interpolation, signed
//! distance, bounds and the material-point map used for surface velocities.

use glam::Vec3;

use super::aabb::Aabb;
use super::contact_plane::{plane_distance, plane_transfer};
use super::contact_sphere::{sphere_distance, sphere_transfer};
use super::contact_tapered_capsule::{tapered_capsule_closest, tapered_capsule_transfer};
use super::error::ShapeError;

/// A body proxy at one instant. Positions in m (world space), radii in m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColliderShape {
    /// Half-space below the plane through `point`; `normal` (any non-zero length) points out.
    Plane { point: Vec3, normal: Vec3 },
    /// Ball of `radius` around `center`.
    Sphere { center: Vec3, radius: f32 },
    /// Tapered capsule: convex hull of B(a, radius_a) and B(b, radius_b) (cone tangent to both
    /// end spheres, NvCloth). Equal radii give the ordinary capsule; a = b or one ball inside the
    /// other gives the larger ball.
    Capsule {
        a: Vec3,
        b: Vec3,
        radius_a: f32,
        radius_b: f32,
    },
}

fn finite(v: Vec3, field: &'static str) -> Result<(), ShapeError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(ShapeError::NonFinite { field })
    }
}

fn radius(r: f32, field: &'static str) -> Result<(), ShapeError> {
    if !r.is_finite() {
        Err(ShapeError::NonFinite { field })
    } else if r <= 0.0 {
        Err(ShapeError::NonPositiveRadius { field, value: r })
    } else {
        Ok(())
    }
}

#[inline]
fn lerp_f(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

impl ColliderShape {
    /// Name of the kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            ColliderShape::Plane { .. } => "plane",
            ColliderShape::Sphere { .. } => "sphere",
            ColliderShape::Capsule { .. } => "capsule",
        }
    }

    /// Checks finiteness, radii > 0 and a non-zero plane normal; the error names the field.
    pub fn validate(&self) -> Result<(), ShapeError> {
        match *self {
            ColliderShape::Plane { point, normal } => {
                finite(point, "plane.point")?;
                finite(normal, "plane.normal")?;
                if normal.length_squared() == 0.0 || !normal.length_squared().is_finite() {
                    return Err(ShapeError::ZeroNormal);
                }
                Ok(())
            }
            ColliderShape::Sphere { center, radius: r } => {
                finite(center, "sphere.center")?;
                radius(r, "sphere.radius")
            }
            ColliderShape::Capsule {
                a,
                b,
                radius_a,
                radius_b,
            } => {
                finite(a, "capsule.a")?;
                finite(b, "capsule.b")?;
                radius(radius_a, "capsule.radius_a")?;
                radius(radius_b, "capsule.radius_b")
            }
        }
    }

    /// Linear interpolation at `t` ∈ [0, 1] towards `other` of the same kind: points and radii
    /// lerp linearly, a plane normal by normalised lerp of the unit normals.
    pub fn lerp(&self, other: &Self, t: f32) -> Result<Self, ShapeError> {
        match (self, other) {
            (ColliderShape::Plane { normal: n0, .. }, ColliderShape::Plane { normal: n1, .. })
                if (*n0 + *n1).length_squared() == 0.0 =>
            {
                Err(ShapeError::PlaneFlip)
            }
            _ => self
                .lerp_same_kind(other, t)
                .ok_or(ShapeError::KindMismatch {
                    from: self.kind(),
                    to: other.kind(),
                }),
        }
    }

    /// `lerp` without the error: None when the kinds differ.
    #[inline]
    pub(crate) fn lerp_same_kind(&self, other: &Self, t: f32) -> Option<Self> {
        Some(match (*self, *other) {
            (
                ColliderShape::Plane {
                    point: p0,
                    normal: n0,
                },
                ColliderShape::Plane {
                    point: p1,
                    normal: n1,
                },
            ) => ColliderShape::Plane {
                point: p0.lerp(p1, t),
                normal: n0
                    .normalize_or_zero()
                    .lerp(n1.normalize_or_zero(), t)
                    .normalize_or_zero(),
            },
            (
                ColliderShape::Sphere {
                    center: c0,
                    radius: r0,
                },
                ColliderShape::Sphere {
                    center: c1,
                    radius: r1,
                },
            ) => ColliderShape::Sphere {
                center: c0.lerp(c1, t),
                radius: lerp_f(r0, r1, t),
            },
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
            ) => ColliderShape::Capsule {
                a: a0.lerp(a1, t),
                b: b0.lerp(b1, t),
                radius_a: lerp_f(ra0, ra1, t),
                radius_b: lerp_f(rb0, rb1, t),
            },
            _ => return None,
        })
    }

    /// Exact signed distance (m, negative inside) from `p` to the surface and the outward unit
    /// normal at the nearest surface point (nearest point = p − distance·normal).
    #[inline]
    pub fn distance(&self, p: Vec3) -> (f32, Vec3) {
        match *self {
            ColliderShape::Plane { point, normal } => plane_distance(point, normal, p),
            ColliderShape::Sphere { center, radius } => sphere_distance(center, radius, p),
            ColliderShape::Capsule {
                a,
                b,
                radius_a,
                radius_b,
            } => {
                let c = tapered_capsule_closest(a, b, radius_a, radius_b, p);
                (c.distance, c.normal)
            }
        }
    }

    /// Bounding box (unbounded for a plane).
    pub fn aabb(&self) -> Aabb {
        match *self {
            ColliderShape::Plane { .. } => Aabb::EVERYTHING,
            ColliderShape::Sphere { center, radius } => Aabb::ball(center, radius),
            ColliderShape::Capsule {
                a,
                b,
                radius_a,
                radius_b,
            } => Aabb::ball(a, radius_a).union(Aabb::ball(b, radius_b)),
        }
    }

    /// A length scale of the shape's thinnest part (m): smallest radius, 0 for a plane.
    pub(crate) fn min_radius(&self) -> f32 {
        match *self {
            ColliderShape::Plane { .. } => 0.0,
            ColliderShape::Sphere { radius, .. } => radius,
            ColliderShape::Capsule {
                radius_a, radius_b, ..
            } => radius_a.min(radius_b),
        }
    }

    /// The material point of `self` nearest `p`, carried to the same-kind shape `to` (see the
    /// per-shape `*_transfer` functions for the motion model). Returns (position, outward normal)
    /// on `to`, or None when the kinds differ.
    pub fn transfer(&self, to: &Self, p: Vec3) -> Option<(Vec3, Vec3)> {
        Some(match (*self, *to) {
            (
                ColliderShape::Plane {
                    point: p0,
                    normal: n0,
                },
                ColliderShape::Plane {
                    point: p1,
                    normal: n1,
                },
            ) => plane_transfer((p0, n0), (p1, n1), p),
            (
                ColliderShape::Sphere {
                    center: c0,
                    radius: r0,
                },
                ColliderShape::Sphere {
                    center: c1,
                    radius: r1,
                },
            ) => sphere_transfer((c0, r0), (c1, r1), p),
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
            ) => tapered_capsule_transfer((a0, b0, ra0, rb0), (a1, b1, ra1, rb1), p),
            _ => return None,
        })
    }
}
