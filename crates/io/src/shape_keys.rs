//! Analytic collider shapes animated by `[[collider.keys]]`: linear between keys, held outside.

use crate::scene::Shape;

/// Linear blend of two shapes of the same kind (`t` in [0, 1]); plane normals are renormalised.
/// Shapes of different kinds (not produced by the scene parser) give `a`.
pub fn lerp_shape(a: &Shape, b: &Shape, t: f32) -> Shape {
    match (*a, *b) {
        (
            Shape::Plane {
                point: p0,
                normal: n0,
            },
            Shape::Plane {
                point: p1,
                normal: n1,
            },
        ) => {
            let n = n0.lerp(n1, t);
            Shape::Plane {
                point: p0.lerp(p1, t),
                normal: n.try_normalize().unwrap_or(n0),
            }
        }
        (
            Shape::Sphere {
                center: c0,
                radius: r0,
            },
            Shape::Sphere {
                center: c1,
                radius: r1,
            },
        ) => Shape::Sphere {
            center: c0.lerp(c1, t),
            radius: r0 + (r1 - r0) * t,
        },
        (
            Shape::Capsule {
                a: a0,
                b: b0,
                radius_a: ra0,
                radius_b: rb0,
            },
            Shape::Capsule {
                a: a1,
                b: b1,
                radius_a: ra1,
                radius_b: rb1,
            },
        ) => Shape::Capsule {
            a: a0.lerp(a1, t),
            b: b0.lerp(b1, t),
            radius_a: ra0 + (ra1 - ra0) * t,
            radius_b: rb0 + (rb1 - rb0) * t,
        },
        _ => *a,
    }
}

/// The shape at (fractional) scene frame `frame`: `base` without keys, else linear between the
/// keys (`(frame, shape)`, increasing frames) and held before the first / after the last.
pub fn shape_at(base: &Shape, keys: &[(f32, Shape)], frame: f32) -> Shape {
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return *base;
    };
    if frame <= first.0 {
        return first.1;
    }
    if frame >= last.0 {
        return last.1;
    }
    let k = keys.partition_point(|(f, _)| *f <= frame);
    let (f0, s0) = &keys[k - 1];
    let (f1, s1) = &keys[k];
    lerp_shape(s0, s1, (frame - f0) / (f1 - f0))
}
