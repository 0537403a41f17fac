//! ContactDetector::project_out: same result as the plain all-pairs projection loop, entry side
//! kept for tunnelled vertices (from the predicted motion's contact or the actual motion), typed
//! length errors.

mod collide_support;

use clothbake_solver::collide::{
    vertex_contact, CollideError, ColliderShape, ContactDetector, DistanceReport, MovingCollider,
    SAME_SIDE_COSINE,
};
use collide_support::Rng;
use glam::Vec3;

/// The reference: every vertex against every collider in index order; nearest side, unless the
/// contact of the motion `x0` → `x` can exist and turns the normal by more than ~45°.
fn all_pairs(
    colliders: &[MovingCollider],
    h: f32,
    x0: &[Vec3],
    thickness: &[f32],
    fixed: &[bool],
    x: &mut [Vec3],
    v: &mut [Vec3],
) -> f32 {
    let mut min_d = f32::INFINITY;
    for i in 0..x.len() {
        for (k, c) in colliders.iter().enumerate() {
            let (mut d, mut n) = c.end.distance(x[i]);
            if d - thickness[i] <= c.rate_bound(x0[i], x[i]) {
                let contact = vertex_contact(c, k as u32, i as u32, h, x0[i], x[i], thickness[i]);
                if let Some(contact) = contact {
                    if n.dot(contact.normal) < SAME_SIDE_COSINE {
                        n = contact.normal;
                        d = (x[i] - (contact.target - thickness[i] * n)).dot(n);
                    }
                }
            }
            if d < thickness[i] && !fixed[i] {
                let p = x[i] + (thickness[i] - d) * n;
                let surface_speed = (c.start.distance(p).0 - c.end.distance(p).0) / h;
                x[i] = p;
                let vn = v[i].dot(n);
                if vn < surface_speed {
                    v[i] += (surface_speed - vn) * n;
                }
                min_d = min_d.min(thickness[i]);
            } else {
                min_d = min_d.min(d);
            }
        }
    }
    min_d
}

#[test]
fn matches_the_all_pairs_loop() {
    let mut rng = Rng::new(31);
    let mut colliders = Vec::new();
    for k in 0..25 {
        let start = rng.shape(k % 2);
        let end = rng.moved(&start, 0.02);
        colliders.push(MovingCollider { start, end });
    }
    colliders.push(MovingCollider::fixed(ColliderShape::Plane {
        point: Vec3::Y * -0.1,
        normal: Vec3::Y,
    }));
    let n = 5000;
    let x: Vec<Vec3> = (0..n).map(|_| rng.vec_in_cube(0.35)).collect();
    // Where each vertex came from: up to 4 cm away, so that some went through a proxy.
    let x0: Vec<Vec3> = x.iter().map(|p| *p + rng.vec_in_cube(0.04)).collect();
    let v: Vec<Vec3> = (0..n).map(|_| rng.vec_in_cube(1.0)).collect();
    let thickness: Vec<f32> = (0..n).map(|_| rng.range(0.002, 0.01)).collect();
    let fixed: Vec<bool> = (0..n).map(|i| i % 97 == 0).collect();
    let h = 1.0 / 96.0;
    let (mut xr, mut vr) = (x.clone(), v.clone());
    let reference = all_pairs(&colliders, h, &x0, &thickness, &fixed, &mut xr, &mut vr);
    let (mut xp, mut vp) = (x.clone(), v.clone());
    let min = ContactDetector::new()
        .project_out(
            &colliders,
            h,
            &[],
            &x0,
            &thickness,
            &fixed,
            DistanceReport::Within(f32::INFINITY),
            &mut xp,
            &mut vp,
        )
        .unwrap();
    let moved = x.iter().zip(&xr).filter(|(a, b)| a != b).count();
    assert!(moved > 300, "only {moved} vertices projected: weak test");
    assert_eq!(xp, xr);
    assert_eq!(vp, vr);
    assert_eq!(min, reference);
    // With a finite report margin positions are unchanged; the distance only covers near pairs.
    let (mut xq, mut vq) = (x.clone(), v.clone());
    let near = ContactDetector::new()
        .project_out(
            &colliders,
            h,
            &[],
            &x0,
            &thickness,
            &fixed,
            DistanceReport::Within(0.0),
            &mut xq,
            &mut vq,
        )
        .unwrap();
    assert_eq!((xq, vq), (xr, vr));
    assert!(near >= reference);
}

#[test]
fn tunnelled_vertex_goes_back_to_its_entry_side() {
    // The 3 cm capsule at 5 m/s of collide_ccd: it swept over the vertex, which is now 2 cm past
    // the axis on the -x side (its nearest side) but was hit by the +x face. Before the actual
    // motion was checked, a vertex without a contact record went out of the nearest, far side.
    let h = 1.0 / 48.0;
    let travel = 5.0 * h;
    let thickness = 0.01;
    let capsule = |x: f32| ColliderShape::Capsule {
        a: Vec3::new(x, 0.0, -0.2),
        b: Vec3::new(x, 0.0, 0.2),
        radius_a: 0.03,
        radius_b: 0.03,
    };
    let c = [MovingCollider {
        start: capsule(-travel / 2.0),
        end: capsule(travel / 2.0),
    }];
    let x0 = Vec3::ZERO;
    let x1 = Vec3::new(travel / 2.0 - 0.02, 0.0, 0.0);
    let contact = vertex_contact(&c[0], 0, 0, h, x0, x1, thickness).expect("contact");
    let run = |contacts: &[clothbake_solver::collide::VertexContact], from: Vec3| {
        let (mut x, mut v) = ([x1], [Vec3::ZERO]);
        ContactDetector::new()
            .project_out(
                &c,
                h,
                contacts,
                &[from],
                &[thickness],
                &[false],
                DistanceReport::Within(0.0),
                &mut x,
                &mut v,
            )
            .unwrap();
        (x[0], v[0])
    };
    let (x, v) = run(&[contact], x0);
    assert!(
        x.abs_diff_eq(Vec3::new(travel / 2.0 + 0.04, 0.0, 0.0), 1e-5),
        "{x}"
    );
    // It now moves with the capsule's surface (5 m/s along +x).
    assert!((v.x - 5.0).abs() < 1e-3, "{v}");
    // Without the contact record (the predicted motion missed the capsule) the actual motion
    // x0 → x1 gives the same entry side.
    assert_eq!(run(&[], x0), (x, v));
    // A vertex that did not move at all was swept over by the capsule's +x face too: it is
    // pushed ahead of it, not out of the far (nearest) side.
    let (x, _) = run(&[], x1);
    assert!(x.x > travel / 2.0 + 0.03, "{x}");
}

#[test]
fn length_errors_name_the_array() {
    let c = [MovingCollider::fixed(ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius: 0.1,
    })];
    let (mut x, mut v) = (vec![Vec3::ZERO; 3], vec![Vec3::ZERO; 2]);
    let err = ContactDetector::new()
        .project_out(
            &c,
            0.01,
            &[],
            &[Vec3::ZERO; 3],
            &[0.01; 3],
            &[false; 3],
            DistanceReport::Within(0.0),
            &mut x,
            &mut v,
        )
        .unwrap_err();
    assert_eq!(
        err,
        CollideError::ArrayLength {
            array: "v",
            len: 2,
            expected: 3
        }
    );
}

/// Without the distance report the projection moves the same vertices to the same bits, with
/// and without contacts of a predicted motion (close to the actual one, or far from it: then the
/// contact's plane can project a vertex far from the proxy), at report margins from none to
/// everything (where the reported projection evaluates every pair and the unreported one skips
/// most of them), and marks exactly the vertices it moved.
#[test]
fn unreported_projection_gives_the_same_bits() {
    let mut rng = Rng::new(57);
    let mut colliders = Vec::new();
    for k in 0..12 {
        let start = rng.shape(k % 2);
        let end = rng.moved(&start, 0.03);
        colliders.push(MovingCollider { start, end });
    }
    let n = 4000;
    let h = 1.0 / 96.0;
    let x: Vec<Vec3> = (0..n).map(|_| rng.vec_in_cube(0.35)).collect();
    let v: Vec<Vec3> = (0..n).map(|_| rng.vec_in_cube(1.0)).collect();
    let thickness: Vec<f32> = (0..n).map(|_| rng.range(0.002, 0.01)).collect();
    let fixed: Vec<bool> = (0..n).map(|i| i % 89 == 0).collect();
    let bits = |a: &[Vec3]| -> Vec<[u32; 3]> {
        a.iter().map(|p| p.to_array().map(f32::to_bits)).collect()
    };
    let mut detector = ContactDetector::new();
    let mut contacts = Vec::new();
    // (actual motion, predicted motion's distance from the actual end) in m.
    for (moved_by, predicted_off) in [(0.04, 0.02), (0.002, 0.15)] {
        let x0: Vec<Vec3> = x.iter().map(|p| *p + rng.vec_in_cube(moved_by)).collect();
        let predicted: Vec<Vec3> = x
            .iter()
            .map(|p| *p + rng.vec_in_cube(predicted_off))
            .collect();
        detector
            .detect(&colliders, h, &x0, &predicted, &thickness, &mut contacts)
            .unwrap();
        assert!(
            contacts.len() > 100,
            "{} contacts: weak test",
            contacts.len()
        );
        for with_contacts in [false, true] {
            let contacts = if with_contacts { &contacts[..] } else { &[] };
            for margin in [f32::INFINITY, 0.05, 0.0] {
                let case = format!("motion {moved_by}, contacts {with_contacts}, margin {margin}");
                let (mut xr, mut vr) = (x.clone(), v.clone());
                detector
                    .project_out(
                        &colliders,
                        h,
                        contacts,
                        &x0,
                        &thickness,
                        &fixed,
                        DistanceReport::Within(margin),
                        &mut xr,
                        &mut vr,
                    )
                    .unwrap();
                let (mut xu, mut vu) = (x.clone(), v.clone());
                detector
                    .project_out(
                        &colliders,
                        h,
                        contacts,
                        &x0,
                        &thickness,
                        &fixed,
                        DistanceReport::Unreported(margin),
                        &mut xu,
                        &mut vu,
                    )
                    .unwrap();
                let first_diff = |a: &[Vec3], b: &[Vec3]| {
                    let (a, b) = (bits(a), bits(b));
                    (0..n).find(|&i| a[i] != b[i])
                };
                assert_eq!(first_diff(&xu, &xr), None, "x, {case}");
                assert_eq!(first_diff(&vu, &vr), None, "v, {case}");
                let mut moved = vec![false; n];
                detector.moved_by_projection(&mut moved);
                let changed: Vec<bool> = x.iter().zip(&xu).map(|(a, b)| a != b).collect();
                assert_eq!(moved, changed, "{case}");
                let count = changed.iter().filter(|&&m| m).count();
                assert!(
                    count > 100,
                    "only {count} vertices projected: weak test ({case})"
                );
            }
        }
    }
}

/// Vertices in tight clusters of 16 (as consecutive mesh vertices are), so that the per-block
/// culling of the colliders (by box, and unreported by the reach bound) skips most pairs and
/// whole pinned blocks: the projection is still the all-pairs loop's, to the bit, reported or not.
#[test]
fn block_culling_matches_the_all_pairs_loop() {
    let mut rng = Rng::new(73);
    let mut colliders = Vec::new();
    for k in 0..16 {
        let start = rng.shape(k % 2);
        let end = rng.moved(&start, 0.03);
        colliders.push(MovingCollider { start, end });
    }
    let n = 16 * 300;
    let mut x = Vec::with_capacity(n);
    for _ in 0..n / 16 {
        let center = rng.vec_in_cube(0.35);
        x.extend((0..16).map(|_| center + rng.vec_in_cube(0.01)));
    }
    let x0: Vec<Vec3> = x.iter().map(|p| *p + rng.vec_in_cube(0.02)).collect();
    let v: Vec<Vec3> = (0..n).map(|_| rng.vec_in_cube(1.0)).collect();
    let thickness: Vec<f32> = (0..n).map(|_| rng.range(0.002, 0.01)).collect();
    // Every 5th cluster pinned whole, and scattered single pins.
    let fixed: Vec<bool> = (0..n).map(|i| (i / 16) % 5 == 0 || i % 31 == 0).collect();
    let h = 1.0 / 96.0;
    let (mut xr, mut vr) = (x.clone(), v.clone());
    let reference = all_pairs(&colliders, h, &x0, &thickness, &fixed, &mut xr, &mut vr);
    let moved = x.iter().zip(&xr).filter(|(a, b)| a != b).count();
    assert!(moved > 200, "only {moved} vertices projected: weak test");
    let mut detector = ContactDetector::new();
    for report in [
        DistanceReport::Within(f32::INFINITY),
        DistanceReport::Within(0.05),
        DistanceReport::Unreported(0.05),
        DistanceReport::Unreported(0.0),
    ] {
        let (mut xp, mut vp) = (x.clone(), v.clone());
        let min = detector
            .project_out(
                &colliders,
                h,
                &[],
                &x0,
                &thickness,
                &fixed,
                report,
                &mut xp,
                &mut vp,
            )
            .unwrap();
        assert_eq!(xp, xr, "{report:?}");
        assert_eq!(vp, vr, "{report:?}");
        let mut marked = vec![false; n];
        detector.moved_by_projection(&mut marked);
        let changed: Vec<bool> = x.iter().zip(&xp).map(|(a, b)| a != b).collect();
        assert_eq!(marked, changed, "{report:?}");
        match report {
            DistanceReport::Within(m) if m == f32::INFINITY => assert_eq!(min, reference),
            DistanceReport::Within(_) => assert!(min >= reference),
            DistanceReport::Unreported(_) => assert_eq!(min, f32::INFINITY),
        }
    }
    // With contacts of a predicted motion far from the actual one (whose planes can project a
    // vertex far from its proxy), unreported as reported at the same margin.
    let predicted: Vec<Vec3> = x.iter().map(|p| *p + rng.vec_in_cube(0.15)).collect();
    let mut contacts = Vec::new();
    detector
        .detect(&colliders, h, &x0, &predicted, &thickness, &mut contacts)
        .unwrap();
    assert!(
        contacts.len() > 100,
        "{} contacts: weak test",
        contacts.len()
    );
    let run = |detector: &mut ContactDetector, report| {
        let (mut xp, mut vp) = (x.clone(), v.clone());
        detector
            .project_out(
                &colliders, h, &contacts, &x0, &thickness, &fixed, report, &mut xp, &mut vp,
            )
            .unwrap();
        (xp, vp)
    };
    let (xr, vr) = run(&mut detector, DistanceReport::Within(0.05));
    let (xu, vu) = run(&mut detector, DistanceReport::Unreported(0.05));
    let far = x
        .iter()
        .zip(&xr)
        .filter(|(a, b)| a.distance(**b) > 0.02)
        .count();
    assert!(far > 10, "only {far} vertices projected far: weak test");
    assert_eq!(xu, xr);
    assert_eq!(vu, vr);
}

/// MovingCollider::motion_bound: the vertex-independent part of the rate bound, so that
/// rate_bound(x0, x1) ≤ |x1 − x0| + motion_bound (up to f32 round-off); +∞ for a plane.
#[test]
fn motion_bound_bounds_the_rate_bound() {
    let mut rng = Rng::new(5);
    for k in 0..400 {
        let start = rng.shape(k % 2);
        let c = MovingCollider {
            start,
            end: rng.moved(&start, 0.05),
        };
        let m = c.motion_bound();
        assert!(m.is_finite() && m > 0.0, "{m}");
        let x0 = rng.vec_in_cube(0.4);
        let x1 = x0 + rng.vec_in_cube(0.05);
        let bound = (x1 - x0).length() + m;
        let rate = c.rate_bound(x0, x1);
        assert!(rate <= bound * (1.0 + 1e-6), "{rate} > {bound} ({c:?})");
        // Tight for a pure translation of the vertex against a resting proxy.
        assert_eq!(MovingCollider::fixed(start).motion_bound(), 0.0);
    }
    let plane = ColliderShape::Plane {
        point: Vec3::ZERO,
        normal: Vec3::Y,
    };
    assert_eq!(MovingCollider::fixed(plane).motion_bound(), f32::INFINITY);
}
