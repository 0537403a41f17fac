//! Continuous detection against dense time sampling, the fast-capsule case, the side chosen for
//! tunnelled vertices and surface velocities.

mod collide_support;

use clothbake_solver::collide::ccd::{
    CONTACT_TOLERANCE_ABS, CONTACT_TOLERANCE_REL, MAX_ADVANCEMENT_STEPS,
};
use clothbake_solver::collide::{earliest_contact, vertex_contact, ColliderShape, MovingCollider};
use collide_support::Rng;
use glam::{Quat, Vec3};

fn f_at(c: &MovingCollider, x0: Vec3, x1: Vec3, thickness: f32, t: f32) -> f32 {
    c.at(t).distance(x0 + (x1 - x0) * t).0 - thickness
}

#[test]
fn never_misses_a_crossing_found_by_dense_sampling() {
    let mut rng = Rng::new(11);
    let samples = 4000;
    let (mut crossings, mut reported, mut capped, mut trials) = (0, 0, 0, 0);
    for trial in 0..3000 {
        let start = rng.shape(trial);
        let end = rng.moved(&start, 0.15);
        let c = MovingCollider { start, end };
        if c.validate(0).is_err() {
            continue;
        }
        trials += 1;
        let x0 = rng.vec_in_cube(0.3);
        let x1 = x0 + rng.vec_in_cube(0.2);
        let thickness = rng.range(0.0, 0.01);
        let k = c.rate_bound(x0, x1);
        let f: Vec<f32> = (0..=samples)
            .map(|i| f_at(&c, x0, x1, thickness, i as f32 / samples as f32))
            .collect();
        for w in f.windows(2) {
            assert!(
                (w[1] - w[0]).abs() <= k / samples as f32 * 1.001 + 2e-6,
                "rate bound {k} violated: {w:?}"
            );
        }
        let dense = f
            .iter()
            .position(|&v| v < 0.0)
            .map(|i| i as f32 / samples as f32);
        let hit = earliest_contact(&c, x0, x1, thickness);
        if let Some(ts) = dense {
            crossings += 1;
            let hit = hit.unwrap_or_else(|| {
                panic!("trial {trial}: missed crossing at t = {ts}: {c:?} {x0} {x1}")
            });
            assert!(
                hit.toi <= ts + 1e-6,
                "trial {trial}: toi {} after sampled crossing {ts}",
                hit.toi
            );
        }
        if let Some(hit) = hit {
            reported += 1;
            // Every sample before toi is outside: the advancement never jumps over a crossing.
            let before = (hit.toi * samples as f32) as usize;
            assert!(
                f[..before.min(samples)].iter().all(|&v| v >= -2e-6),
                "trial {trial}: contact before toi"
            );
            if hit.steps >= MAX_ADVANCEMENT_STEPS {
                capped += 1;
            } else {
                let tol = CONTACT_TOLERANCE_ABS + CONTACT_TOLERANCE_REL * thickness;
                assert!(
                    f_at(&c, x0, x1, thickness, hit.toi) < tol + 1e-6,
                    "trial {trial}: reported a non-contact"
                );
            }
        }
    }
    println!("{trials} trajectories, {crossings} sampled crossings, {reported} reported, {capped} capped");
    assert!(
        crossings > 300,
        "too few crossings to be meaningful: {crossings}"
    );
    assert!(
        capped * 200 <= trials,
        "advancement capped too often: {capped}"
    );
}

/// A 3 cm capsule moving at 5 m/s (24 fps, 2 substeps: 10.4 cm per substep, more than its
/// diameter) sweeps across a static vertex: the end points of the substep are both 2.2 cm clear.
#[test]
fn fast_capsule_sweeping_past_a_static_vertex_is_caught_on_the_entry_side() {
    let h = 1.0 / 48.0;
    let travel = 5.0 * h;
    let thickness = 0.005;
    let capsule = |x: f32| ColliderShape::Capsule {
        a: Vec3::new(x, 0.0, -0.2),
        b: Vec3::new(x, 0.0, 0.2),
        radius_a: 0.03,
        radius_b: 0.03,
    };
    let c = MovingCollider {
        start: capsule(-travel / 2.0),
        end: capsule(travel / 2.0),
    };
    let x = Vec3::new(0.0, 0.0, 0.05);
    assert!(f_at(&c, x, x, thickness, 0.0) > 0.015 && f_at(&c, x, x, thickness, 1.0) > 0.015);
    let contact = vertex_contact(&c, 3, 9, h, x, x, thickness).expect("fast capsule tunnelled");
    let expected_toi = (travel / 2.0 - 0.035) / travel;
    assert!(
        (contact.toi - expected_toi).abs() < 1e-3,
        "toi {} vs {expected_toi}",
        contact.toi
    );
    assert_eq!((contact.vertex, contact.collider), (9, 3));
    // Entry side: the capsule's leading (+x) face. The vertex must go to +x of the end capsule.
    assert!(
        contact.normal.abs_diff_eq(Vec3::X, 1e-5),
        "normal {}",
        contact.normal
    );
    assert!(
        contact
            .target
            .abs_diff_eq(Vec3::new(travel / 2.0 + 0.035, 0.0, 0.05), 1e-5),
        "{}",
        contact.target
    );
    assert!(
        (contact.distance - (-travel / 2.0 - 0.03)).abs() < 1e-5,
        "{}",
        contact.distance
    );
    assert!(
        contact
            .surface_velocity
            .abs_diff_eq(Vec3::new(5.0, 0.0, 0.0), 1e-3),
        "{}",
        contact.surface_velocity
    );
}

/// The same for a tapered capsule (and a sphere) passing right through a vertex that moves too.
#[test]
fn tunnelled_vertices_keep_their_entry_side() {
    let mut rng = Rng::new(12);
    for trial in 0..500 {
        let r = rng.range(0.01, 0.05);
        let thickness = rng.range(0.0, 0.01);
        let dir = rng.unit_vector();
        let axis = dir.any_orthonormal_vector();
        let shape = |center: Vec3| {
            if trial % 2 == 0 {
                ColliderShape::Sphere { center, radius: r }
            } else {
                ColliderShape::Capsule {
                    a: center - axis * 0.1,
                    b: center + axis * 0.1,
                    radius_a: r,
                    radius_b: r * 0.7,
                }
            }
        };
        // Shape centre crosses the vertex path: from -dir·(r + thickness + gap) to past the vertex.
        let gap = rng.range(0.001, 0.02);
        let start = shape(-dir * (r + thickness + gap));
        let end = shape(dir * rng.range(0.0, 2.0 * r));
        let c = MovingCollider { start, end };
        let x0 = Vec3::ZERO;
        let x1 = rng.vec_in_cube(0.003);
        let contact = vertex_contact(&c, 0, 0, 0.01, x0, x1, thickness).expect("missed");
        // The vertex was hit by the leading face (normal ≈ +dir at first contact); at the end it
        // is deep inside or past the proxy, where the nearest side can be any other.
        let entry = earliest_contact(&c, x0, x1, thickness)
            .expect("missed")
            .normal;
        assert!(
            entry.dot(dir) > 0.95,
            "trial {trial}: entry normal {entry} vs dir {dir}"
        );
        assert!(
            contact.normal.dot(entry) >= 0.7,
            "trial {trial}: normal {} vs entry {entry}",
            contact.normal
        );
        let (d_target, _) = c.end.distance(contact.target);
        assert!(
            d_target >= thickness - 1e-5,
            "trial {trial}: target {d_target} inside"
        );
        let end_center = c.end.aabb().min.lerp(c.end.aabb().max, 0.5);
        assert!(
            (contact.target - end_center).dot(dir) > 0.0,
            "trial {trial}: target on the far side"
        );
    }
}

#[test]
fn resting_and_separating_contacts() {
    let plane = MovingCollider::fixed(ColliderShape::Plane {
        point: Vec3::ZERO,
        normal: Vec3::Y,
    });
    let thickness = 0.01;
    // Resting exactly at the thickness: contact from t = 0, target where it is.
    let x = Vec3::new(0.3, thickness, 0.0);
    let c = vertex_contact(&plane, 0, 0, 0.01, x, x + Vec3::X * 0.01, thickness).expect("resting");
    assert_eq!(c.toi, 0.0);
    assert!(
        (c.distance - thickness).abs() < 1e-7 && c.target.abs_diff_eq(x + Vec3::X * 0.01, 1e-7)
    );
    // Falling through: toi where it reaches the thickness, target back on the offset plane.
    let c = vertex_contact(
        &plane,
        0,
        0,
        0.01,
        Vec3::Y * 0.05,
        Vec3::Y * -0.03,
        thickness,
    )
    .expect("falling");
    assert!((c.toi - 0.5).abs() < 1e-4 && (c.distance + 0.03).abs() < 1e-6);
    assert!(c.target.abs_diff_eq(Vec3::Y * thickness, 1e-6));
    // Moving away from a start inside the offset: still reported (toi 0), distance > thickness.
    let c = vertex_contact(
        &plane,
        0,
        0,
        0.01,
        Vec3::Y * 0.005,
        Vec3::Y * 0.05,
        thickness,
    )
    .expect("leaving");
    assert!(c.toi == 0.0 && (c.distance - 0.05).abs() < 1e-6);
    // Never within reach: nothing.
    assert!(vertex_contact(
        &plane,
        0,
        0,
        0.01,
        Vec3::Y * 0.02,
        Vec3::Y * 0.011,
        thickness
    )
    .is_none());
}

#[test]
fn surface_velocity_of_translating_growing_and_turning_proxies() {
    let h = 0.02;
    // Sphere translating by (0.1, 0, 0) and growing by 0.01 m: v = Δc/h + (Δr/h)·n at the top.
    let c = MovingCollider {
        start: ColliderShape::Sphere {
            center: Vec3::ZERO,
            radius: 0.1,
        },
        end: ColliderShape::Sphere {
            center: Vec3::X * 0.1,
            radius: 0.11,
        },
    };
    let v = c.surface_velocity(h, Vec3::new(0.1, 0.11, 0.0));
    assert!(v.abs_diff_eq(Vec3::new(5.0, 0.5, 0.0), 1e-4), "{v}");
    // Capsule (arm) turning 0.1 rad about a: the cap point at b moves on the arc, chord/h.
    let len = 0.3;
    let rot = Quat::from_rotation_z(0.1);
    let cap = |q: Quat| ColliderShape::Capsule {
        a: Vec3::ZERO,
        b: q * (Vec3::X * len),
        radius_a: 0.05,
        radius_b: 0.04,
    };
    let c = MovingCollider {
        start: cap(Quat::IDENTITY),
        end: cap(rot),
    };
    let tip_end = rot * (Vec3::X * (len + 0.04));
    let v = c.surface_velocity(h, tip_end);
    let expected = (tip_end - Vec3::X * (len + 0.04)) / h;
    assert!(v.abs_diff_eq(expected, 1e-4), "{v} vs {expected}");
    // A point on the cone half-way moves with the rotating axis too (w kept, offset rotated).
    let above = rot * Vec3::new(0.15, 0.0, 0.1);
    let (d, n_end) = c.end.distance(above);
    let q = above - d * n_end;
    let v = c.surface_velocity(h, q);
    let chord = (q - rot.inverse() * q) / h;
    assert!(
        v.abs_diff_eq(chord, 1e-4),
        "{v} vs {chord} (normal {n_end})"
    );
    // A plane lifted by 0.02 m: the contact point moves up at 1 m/s.
    let c = MovingCollider {
        start: ColliderShape::Plane {
            point: Vec3::ZERO,
            normal: Vec3::Y,
        },
        end: ColliderShape::Plane {
            point: Vec3::Y * 0.02,
            normal: Vec3::Y,
        },
    };
    assert!(c
        .surface_velocity(h, Vec3::new(3.0, 0.02, 1.0))
        .abs_diff_eq(Vec3::Y, 1e-5));
}
