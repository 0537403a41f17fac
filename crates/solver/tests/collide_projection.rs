//! ContactDetector::project_out: same result as the plain all-pairs projection loop, entry side
//! kept for tunnelled vertices, typed length errors.

mod collide_support;

use clothbake_solver::collide::{
    vertex_contact, CollideError, ColliderShape, ContactDetector, MovingCollider,
};
use collide_support::Rng;
use glam::Vec3;

/// The reference: every vertex against every collider in index order, nearest side.
fn all_pairs(
    colliders: &[MovingCollider],
    h: f32,
    thickness: &[f32],
    fixed: &[bool],
    x: &mut [Vec3],
    v: &mut [Vec3],
) -> f32 {
    let mut min_d = f32::INFINITY;
    for i in 0..x.len() {
        for c in colliders {
            let (d, n) = c.end.distance(x[i]);
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
    let v: Vec<Vec3> = (0..n).map(|_| rng.vec_in_cube(1.0)).collect();
    let thickness: Vec<f32> = (0..n).map(|_| rng.range(0.002, 0.01)).collect();
    let fixed: Vec<bool> = (0..n).map(|i| i % 97 == 0).collect();
    let h = 1.0 / 96.0;
    let (mut xr, mut vr) = (x.clone(), v.clone());
    let reference = all_pairs(&colliders, h, &thickness, &fixed, &mut xr, &mut vr);
    let (mut xp, mut vp) = (x.clone(), v.clone());
    let min = ContactDetector::new()
        .project_out(
            &colliders,
            h,
            &[],
            &thickness,
            &fixed,
            f32::INFINITY,
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
            &thickness,
            &fixed,
            0.0,
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
    // the axis on the -x side (its nearest side) but was hit by the +x face.
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
    let run = |contacts: &[clothbake_solver::collide::VertexContact]| {
        let (mut x, mut v) = ([x1], [Vec3::ZERO]);
        ContactDetector::new()
            .project_out(&c, h, contacts, &[thickness], &[false], 0.0, &mut x, &mut v)
            .unwrap();
        (x[0], v[0])
    };
    let (x, v) = run(&[contact]);
    assert!(
        x.abs_diff_eq(Vec3::new(travel / 2.0 + 0.04, 0.0, 0.0), 1e-5),
        "{x}"
    );
    // It now moves with the capsule's surface (5 m/s along +x).
    assert!((v.x - 5.0).abs() < 1e-3, "{v}");
    // Without the contact record the nearest side wins: the wrong, far side.
    let (x, _) = run(&[]);
    assert!(x.x < travel / 2.0 - 0.03, "{x}");
}

#[test]
fn length_errors_name_the_array() {
    let c = [MovingCollider::fixed(ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius: 0.1,
    })];
    let (mut x, mut v) = (vec![Vec3::ZERO; 3], vec![Vec3::ZERO; 2]);
    let err = ContactDetector::new()
        .project_out(&c, 0.01, &[], &[0.01; 3], &[false; 3], 0.0, &mut x, &mut v)
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
