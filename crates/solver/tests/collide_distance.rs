//! Signed distances of the proxies against brute force: surface samples of the cone and the caps,
//! and the union-of-balls characterisation φ(p) = min_w |p − c(w)| − r(w) outside.

mod collide_support;

use clothbake_solver::collide::{ColliderShape, MovingCollider, ShapeError};
use collide_support::Rng;
use glam::Vec3;

/// φ outside a tapered capsule by brute force over 20 001 axis parameters.
fn union_of_balls(a: Vec3, b: Vec3, ra: f32, rb: f32, p: Vec3) -> f64 {
    let n = 20_000;
    (0..=n)
        .map(|i| {
            let w = i as f64 / n as f64;
            let c = a.as_dvec3() * (1.0 - w) + b.as_dvec3() * w;
            (p.as_dvec3() - c).length() - (ra as f64 * (1.0 - w) + rb as f64 * w)
        })
        .fold(f64::INFINITY, f64::min)
}

/// Surface samples (point, outward normal) of the tapered capsule: rings on the tangent cone and
/// points of each end sphere on its cap side of the tangent circle (d·u ≤ sin α for a, ≥ for b).
fn surface_samples(
    a: Vec3,
    b: Vec3,
    ra: f32,
    rb: f32,
    rings: usize,
    around: usize,
) -> Vec<(Vec3, Vec3)> {
    let l = (b - a).length();
    let u = (b - a) / l;
    let sin = (ra - rb) / l;
    let cos = (1.0 - sin * sin).sqrt();
    let (e1, e2) = u.any_orthonormal_pair();
    let mut out = Vec::new();
    for j in 0..around {
        let phi = j as f32 / around as f32 * std::f32::consts::TAU;
        let e = e1 * phi.cos() + e2 * phi.sin();
        let n = sin * u + cos * e;
        for i in 0..=rings {
            let w = i as f32 / rings as f32;
            out.push(((a + ra * n).lerp(b + rb * n, w), n));
        }
        // caps: polar angle θ from +u, d = cos θ u + sin θ e
        for i in 0..=rings {
            let theta = i as f32 / rings as f32 * std::f32::consts::PI;
            let d = theta.cos() * u + theta.sin() * e;
            if d.dot(u) <= sin {
                out.push((a + ra * d, d));
            }
            if d.dot(u) >= sin {
                out.push((b + rb * d, d));
            }
        }
    }
    out
}

fn inside_union(a: Vec3, b: Vec3, ra: f32, rb: f32, p: Vec3) -> bool {
    union_of_balls(a, b, ra, rb, p) < 0.0
}

#[test]
fn tapered_capsule_surface_samples_have_zero_distance_and_matching_normal() {
    let mut rng = Rng::new(1);
    let mut checked = 0;
    for _ in 0..40 {
        let a = rng.vec_in_cube(0.2);
        let b = a + rng.unit_vector() * rng.range(0.05, 0.4);
        let (ra, rb) = (rng.range(0.01, 0.12), rng.range(0.01, 0.12));
        if (b - a).length() <= (ra - rb).abs() {
            continue;
        }
        let shape = ColliderShape::Capsule {
            a,
            b,
            radius_a: ra,
            radius_b: rb,
        };
        for (y, ny) in surface_samples(a, b, ra, rb, 24, 24) {
            let (d, n) = shape.distance(y);
            assert!(d.abs() < 2e-6, "surface point {y} has distance {d}");
            assert!(n.dot(ny) > 0.9999, "normal {n} vs {ny}");
            // Outside along the normal the nearest point stays y (convexity): φ = δ exactly.
            let (d_out, _) = shape.distance(y + 0.05 * ny);
            assert!((d_out - 0.05).abs() < 3e-6, "offset point: {d_out}");
            checked += 1;
        }
    }
    assert!(checked > 20_000, "{checked}");
}

#[test]
fn tapered_capsule_outside_matches_union_of_balls() {
    let mut rng = Rng::new(2);
    let mut worst = 0.0f64;
    for _ in 0..30 {
        let a = rng.vec_in_cube(0.2);
        let b = a + rng.unit_vector() * rng.range(0.0, 0.4);
        let (ra, rb) = (rng.range(0.01, 0.12), rng.range(0.01, 0.12));
        let shape = ColliderShape::Capsule {
            a,
            b,
            radius_a: ra,
            radius_b: rb,
        };
        for _ in 0..40 {
            let p = (a + b) * 0.5 + rng.vec_in_cube(0.5);
            let brute = union_of_balls(a, b, ra, rb, p);
            if brute < 0.0 {
                continue;
            }
            let (d, _) = shape.distance(p);
            worst = worst.max((d as f64 - brute).abs());
        }
    }
    assert!(worst < 5e-6, "worst |φ − brute| = {worst} m");
}

#[test]
fn tapered_capsule_inside_matches_nearest_surface_sample() {
    let mut rng = Rng::new(3);
    let mut inside_points = 0;
    for _ in 0..6 {
        let a = rng.vec_in_cube(0.2);
        let b = a + rng.unit_vector() * rng.range(0.1, 0.3);
        let (ra, rb) = (rng.range(0.03, 0.12), rng.range(0.03, 0.12));
        let shape = ColliderShape::Capsule {
            a,
            b,
            radius_a: ra,
            radius_b: rb,
        };
        let (rings, around) = (300, 300);
        let samples = surface_samples(a, b, ra, rb, rings, around);
        // Largest gap between neighbouring samples bounds how far the nearest sample can be
        // beyond the true nearest surface point.
        let l = (b - a).length();
        let spacing = (l / rings as f32)
            .max(ra.max(rb) * std::f32::consts::TAU / around as f32)
            .max(ra.max(rb) * std::f32::consts::PI / rings as f32);
        for _ in 0..60 {
            let p = a.lerp(b, rng.range(-0.3, 1.3)) + rng.vec_in_cube(ra.max(rb));
            let (d, n) = shape.distance(p);
            let brute = samples
                .iter()
                .map(|(y, _)| (p - *y).length())
                .fold(f32::INFINITY, f32::min);
            assert_eq!(d < 0.0, inside_union(a, b, ra, rb, p), "sign at {p}: {d}");
            // |φ| is a distance to the surface: no sample can be nearer, and one sample is
            // within the sampling gap of it.
            assert!(
                brute >= d.abs() - 2e-6,
                "{p}: sample nearer ({brute}) than |φ| = {}",
                d.abs()
            );
            assert!(
                brute <= d.abs() + spacing,
                "{p}: |φ| = {} but nearest sample {brute}",
                d.abs()
            );
            // the nearest surface point p − φ n is on the surface
            assert!(shape.distance(p - d * n).0.abs() < 3e-6);
            if d < 0.0 {
                inside_points += 1;
            }
        }
    }
    assert!(inside_points > 60, "{inside_points} inside points tested");
}

#[test]
fn tapered_capsule_degenerates_to_the_larger_sphere() {
    let a = Vec3::new(0.1, 0.2, 0.3);
    let big = ColliderShape::Sphere {
        center: a,
        radius: 0.2,
    };
    let mut rng = Rng::new(4);
    for (b, rb) in [
        (a + Vec3::new(0.05, 0.1, 0.0), 0.05),
        (a, 0.2),
        (a, 0.1),
        (a + Vec3::X * 0.15, 0.05),
    ] {
        let caps = ColliderShape::Capsule {
            a,
            b,
            radius_a: 0.2,
            radius_b: rb,
        };
        let swapped = ColliderShape::Capsule {
            a: b,
            b: a,
            radius_a: rb,
            radius_b: 0.2,
        };
        for _ in 0..200 {
            let p = a + rng.vec_in_cube(0.5);
            let (ds, ns) = big.distance(p);
            for s in [caps, swapped] {
                let (d, n) = s.distance(p);
                assert!(
                    (d - ds).abs() < 1e-6 && n.dot(ns) > 0.99999,
                    "{s:?} at {p}: {d} vs {ds}"
                );
            }
        }
    }
    // Just past containment the cone is tiny and φ stays continuous with the sphere.
    let near = ColliderShape::Capsule {
        a,
        b: a + Vec3::X * 0.1501,
        radius_a: 0.2,
        radius_b: 0.05,
    };
    for _ in 0..200 {
        let p = a + rng.vec_in_cube(0.5);
        assert!((near.distance(p).0 - big.distance(p).0).abs() < 2e-4);
    }
}

#[test]
fn sphere_and_plane_distances() {
    let s = ColliderShape::Sphere {
        center: Vec3::new(1.0, 2.0, 3.0),
        radius: 0.5,
    };
    let (d, n) = s.distance(Vec3::new(1.0, 2.0, 4.0));
    assert_eq!((d, n), (0.5, Vec3::Z));
    let (d, n) = s.distance(Vec3::new(1.0, 1.8, 3.0));
    assert!((d + 0.3).abs() < 1e-6 && n.abs_diff_eq(-Vec3::Y, 1e-6));
    let p = ColliderShape::Plane {
        point: Vec3::new(0.0, 1.0, 0.0),
        normal: Vec3::new(0.0, 3.0, 4.0),
    };
    let (d, n) = p.distance(Vec3::new(5.0, 1.0 + 0.6, 0.8));
    assert!((d - 1.0).abs() < 1e-6 && n.abs_diff_eq(Vec3::new(0.0, 0.6, 0.8), 1e-6));
    let (d, _) = p.distance(Vec3::new(-2.0, 0.0, 0.0));
    assert!((d + 0.6).abs() < 1e-6);
}

#[test]
fn validation_names_the_field() {
    let nan = Vec3::new(0.0, f32::NAN, 0.0);
    let cases: [(ColliderShape, ShapeError); 6] = [
        (
            ColliderShape::Plane {
                point: nan,
                normal: Vec3::Y,
            },
            ShapeError::NonFinite {
                field: "plane.point",
            },
        ),
        (
            ColliderShape::Plane {
                point: Vec3::ZERO,
                normal: Vec3::ZERO,
            },
            ShapeError::ZeroNormal,
        ),
        (
            ColliderShape::Sphere {
                center: Vec3::ZERO,
                radius: 0.0,
            },
            ShapeError::NonPositiveRadius {
                field: "sphere.radius",
                value: 0.0,
            },
        ),
        (
            ColliderShape::Sphere {
                center: Vec3::ZERO,
                radius: f32::INFINITY,
            },
            ShapeError::NonFinite {
                field: "sphere.radius",
            },
        ),
        (
            ColliderShape::Capsule {
                a: Vec3::ZERO,
                b: nan,
                radius_a: 0.1,
                radius_b: 0.1,
            },
            ShapeError::NonFinite { field: "capsule.b" },
        ),
        (
            ColliderShape::Capsule {
                a: Vec3::ZERO,
                b: Vec3::X,
                radius_a: 0.1,
                radius_b: -0.1,
            },
            ShapeError::NonPositiveRadius {
                field: "capsule.radius_b",
                value: -0.1,
            },
        ),
    ];
    for (shape, err) in cases {
        assert_eq!(shape.validate(), Err(err.clone()));
        assert!(
            err.to_string().contains("plane")
                || err.to_string().contains("radius")
                || err.to_string().contains("capsule")
        );
    }
    let s = ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius: 0.1,
    };
    let c = ColliderShape::Capsule {
        a: Vec3::ZERO,
        b: Vec3::X,
        radius_a: 0.1,
        radius_b: 0.2,
    };
    assert_eq!(
        s.lerp(&c, 0.5),
        Err(ShapeError::KindMismatch {
            from: "sphere",
            to: "capsule"
        })
    );
    let moving = MovingCollider { start: s, end: c };
    let msg = moving.validate(7).unwrap_err().to_string();
    assert!(
        msg.contains("collider 7") && msg.contains("sphere") && msg.contains("capsule"),
        "{msg}"
    );
    let flip = MovingCollider {
        start: ColliderShape::Plane {
            point: Vec3::ZERO,
            normal: Vec3::Y,
        },
        end: ColliderShape::Plane {
            point: Vec3::ZERO,
            normal: -Vec3::Y,
        },
    };
    assert_eq!(flip.start.lerp(&flip.end, 0.5), Err(ShapeError::PlaneFlip));
    assert!(flip.validate(0).is_err());
}

#[test]
fn lerp_interpolates_every_parameter() {
    let c0 = ColliderShape::Capsule {
        a: Vec3::ZERO,
        b: Vec3::X,
        radius_a: 0.1,
        radius_b: 0.2,
    };
    let c1 = ColliderShape::Capsule {
        a: Vec3::Y,
        b: Vec3::new(1.0, 2.0, 0.0),
        radius_a: 0.3,
        radius_b: 0.4,
    };
    assert_eq!(
        c0.lerp(&c1, 0.25),
        Ok(ColliderShape::Capsule {
            a: Vec3::new(0.0, 0.25, 0.0),
            b: Vec3::new(1.0, 0.5, 0.0),
            radius_a: 0.15,
            radius_b: 0.25
        })
    );
    let p0 = ColliderShape::Plane {
        point: Vec3::ZERO,
        normal: Vec3::Y * 2.0,
    };
    let p1 = ColliderShape::Plane {
        point: Vec3::X,
        normal: Vec3::X,
    };
    let ColliderShape::Plane { point, normal } = p0.lerp(&p1, 0.5).unwrap() else {
        panic!("kind")
    };
    assert!(point.abs_diff_eq(Vec3::X * 0.5, 1e-7));
    assert!(normal.abs_diff_eq(Vec3::new(1.0, 1.0, 0.0).normalize(), 1e-6));
}
