//! ContactDetector: culling never drops a contact, output order, determinism across thread
//! counts, input errors.

mod collide_support;

use clothbake_solver::collide::{
    vertex_contact, CollideError, ColliderShape, ContactDetector, MovingCollider, ShapeError,
};
use collide_support::Rng;
use glam::Vec3;

/// A 30-proxy "body" (capsules along random limbs, a few spheres, a ground plane) and a cloud of
/// vertices around it moving ~1 cm, with the proxies moving a few cm.
fn scene(seed: u64, vertices: usize) -> (Vec<MovingCollider>, Vec<Vec3>, Vec<Vec3>, Vec<f32>) {
    let mut rng = Rng::new(seed);
    let mut colliders = Vec::new();
    for k in 0..30 {
        let start = if k % 6 == 5 {
            ColliderShape::Sphere {
                center: rng.vec_in_cube(0.4) + Vec3::Y,
                radius: rng.range(0.05, 0.12),
            }
        } else {
            let a = rng.vec_in_cube(0.4) + Vec3::Y;
            ColliderShape::Capsule {
                a,
                b: a + rng.unit_vector() * rng.range(0.1, 0.4),
                radius_a: rng.range(0.03, 0.08),
                radius_b: rng.range(0.03, 0.08),
            }
        };
        let end = rng.moved(&start, 0.03);
        colliders.push(MovingCollider { start, end });
    }
    colliders.push(MovingCollider::fixed(ColliderShape::Plane {
        point: Vec3::Y * 0.62,
        normal: Vec3::Y,
    }));
    let x0: Vec<Vec3> = (0..vertices)
        .map(|_| rng.vec_in_cube(0.5) + Vec3::Y)
        .collect();
    let x1: Vec<Vec3> = x0.iter().map(|&x| x + rng.vec_in_cube(0.01)).collect();
    let thickness: Vec<f32> = (0..vertices).map(|_| rng.range(0.002, 0.01)).collect();
    (colliders, x0, x1, thickness)
}

fn bits(c: &clothbake_solver::collide::VertexContact) -> [u32; 15] {
    let v = |v: Vec3| [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()];
    let [a, b, c3] = v(c.normal);
    let [d, e, f] = v(c.surface_velocity);
    let [g, h, i] = v(c.target);
    [
        c.vertex,
        c.collider,
        a,
        b,
        c3,
        d,
        e,
        f,
        g,
        h,
        i,
        c.toi.to_bits(),
        c.distance.to_bits(),
        0,
        0,
    ]
}

#[test]
fn matches_all_pairs_brute_force_in_vertex_then_collider_order() {
    let (colliders, x0, x1, thickness) = scene(21, 6000);
    let h = 1.0 / 48.0;
    let mut detector = ContactDetector::new();
    let mut out = Vec::new();
    detector
        .detect(&colliders, h, &x0, &x1, &thickness, &mut out)
        .unwrap();
    let mut brute = Vec::new();
    for i in 0..x0.len() {
        for (k, c) in colliders.iter().enumerate() {
            if let Some(contact) =
                vertex_contact(c, k as u32, i as u32, h, x0[i], x1[i], thickness[i])
            {
                brute.push(contact);
            }
        }
    }
    assert!(
        brute.len() > 300,
        "scene too sparse: {} contacts",
        brute.len()
    );
    assert_eq!(out.len(), brute.len());
    for (a, b) in out.iter().zip(&brute) {
        assert_eq!(bits(a), bits(b));
    }
    assert!(out
        .windows(2)
        .all(|w| (w[0].vertex, w[0].collider) < (w[1].vertex, w[1].collider)));
    // Some vertices touch two proxies and both are reported.
    assert!(out.windows(2).any(|w| w[0].vertex == w[1].vertex));
    // Reusing the workspace gives the same answer.
    let mut again = Vec::new();
    detector
        .detect(&colliders, h, &x0, &x1, &thickness, &mut again)
        .unwrap();
    assert_eq!(out, again);
}

#[test]
fn identical_output_on_one_and_two_threads() {
    let (colliders, x0, x1, thickness) = scene(22, 20_000);
    let run = |threads: usize| {
        clothbake_solver::fixtures::on_threads(threads, || {
            let mut detector = ContactDetector::new();
            let mut out = Vec::new();
            detector
                .detect(&colliders, 1.0 / 48.0, &x0, &x1, &thickness, &mut out)
                .unwrap();
            out.iter().map(bits).collect::<Vec<_>>()
        })
    };
    let one = run(1);
    assert!(one.len() > 1000, "{}", one.len());
    assert_eq!(one, run(2));
}

#[test]
fn input_errors_are_typed() {
    let (mut colliders, x0, x1, thickness) = scene(23, 10);
    let mut detector = ContactDetector::new();
    let mut out = Vec::new();
    assert_eq!(
        detector.detect(&colliders, 0.01, &x0, &x1[..9], &thickness, &mut out),
        Err(CollideError::LengthMismatch {
            x0: 10,
            x1: 9,
            thickness: 10
        })
    );
    colliders[4].end = ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius: -1.0,
    };
    let err = detector
        .detect(&colliders, 0.01, &x0, &x1, &thickness, &mut out)
        .unwrap_err();
    // Radius is checked before the kind mismatch with the start shape.
    let source = ShapeError::NonPositiveRadius {
        field: "sphere.radius",
        value: -1.0,
    };
    assert_eq!(
        err,
        CollideError::Collider {
            index: 4,
            which: "end",
            source
        }
    );
    assert!(
        err.to_string().contains("collider 4 (end)") && err.to_string().contains("sphere.radius")
    );
}

#[test]
fn non_finite_vertices_yield_no_contact_and_no_panic() {
    let (colliders, mut x0, mut x1, thickness) = scene(24, 600);
    x0[3] = Vec3::new(f32::NAN, 1.0, 0.0);
    x1[5] = Vec3::splat(f32::INFINITY);
    let mut out = Vec::new();
    ContactDetector::new()
        .detect(&colliders, 0.01, &x0, &x1, &thickness, &mut out)
        .unwrap();
    assert!(out.iter().all(|c| c.vertex != 3 && c.vertex != 5));
    assert!(out
        .iter()
        .all(|c| c.target.is_finite() && c.normal.is_finite()));
}
