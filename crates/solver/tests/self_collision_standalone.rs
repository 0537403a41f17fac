//! Standalone tests of the self-collision stage (no Simulation): closest points, CCD, impulses,
//! impact zones, the intersection counter and determinism across thread counts.

use clothbake_solver::fixtures::regular_grid;
use clothbake_solver::self_collision::ccd::{edge_edge_ccd, vertex_triangle_ccd};
use clothbake_solver::self_collision::proximity::{
    point_triangle_distance, point_triangle_weights, segment_segment_distance,
};
use clothbake_solver::self_collision::{
    count_intersections, SelfCollision, SelfCollisionParams, SelfCollisionReport,
    SelfCollisionTopology,
};
use glam::{DVec3, Vec3};

/// Small deterministic PRNG (xorshift64*), so the tests need no extra crates.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.next()
    }
    fn dvec(&mut self, s: f64) -> DVec3 {
        DVec3::new(self.range(-s, s), self.range(-s, s), self.range(-s, s))
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.next().max(1e-300), self.next());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

#[test]
fn point_triangle_distance_matches_dense_sampling() {
    let mut rng = Rng(0x1234_5678);
    let steps = 200;
    for _ in 0..200 {
        let (a, b, c) = (rng.dvec(1.0), rng.dvec(1.0), rng.dvec(1.0));
        let p = rng.dvec(1.5);
        let w = point_triangle_weights(p, a, b, c);
        assert!(
            w.iter().all(|&k| k >= -1e-12) && (w.iter().sum::<f64>() - 1.0).abs() < 1e-9,
            "{w:?}"
        );
        let d = point_triangle_distance(p, a, b, c);
        let mut best = f64::INFINITY;
        for i in 0..=steps {
            for j in 0..=(steps - i) {
                let (u, v) = (i as f64 / steps as f64, j as f64 / steps as f64);
                best = best.min((p - (a + (b - a) * u + (c - a) * v)).length());
            }
        }
        let spacing = ((b - a).length() + (c - a).length()) / steps as f64;
        assert!(d <= best + 1e-12, "analytic {d} above sampled {best}");
        assert!(best - d <= spacing, "analytic {d} far below sampled {best}");
    }
}

#[test]
fn segment_distance_matches_dense_sampling() {
    let mut rng = Rng(0xabcdef);
    let steps = 400;
    for case in 0..300 {
        let (p1, q1, p2) = (rng.dvec(1.0), rng.dvec(1.0), rng.dvec(1.0));
        // Every third case: nearly parallel segments.
        let q2 = if case % 3 == 0 {
            p2 + (q1 - p1) * rng.range(0.2, 1.5) + rng.dvec(1e-7)
        } else {
            rng.dvec(1.0)
        };
        let d = segment_segment_distance(p1, q1, p2, q2);
        let mut best = f64::INFINITY;
        for i in 0..=steps {
            let a = p1.lerp(q1, i as f64 / steps as f64);
            for j in 0..=steps {
                best = best.min((a - p2.lerp(q2, j as f64 / steps as f64)).length());
            }
        }
        let spacing = ((q1 - p1).length() + (q2 - p2).length()) / steps as f64;
        assert!(
            d <= best + 1e-12,
            "case {case}: analytic {d} above sampled {best}"
        );
        assert!(
            best - d <= spacing,
            "case {case}: analytic {d} far below sampled {best}"
        );
    }
}

/// Barycentric coordinates of `p` projected onto the plane of `abc`.
fn barycentric(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> [f64; 3] {
    let (v0, v1, v2) = (b - a, c - a, p - a);
    let (d00, d01, d11, d20, d21) = (v0.dot(v0), v0.dot(v1), v1.dot(v1), v2.dot(v0), v2.dot(v1));
    let den = d00 * d11 - d01 * d01;
    let v = (d11 * d20 - d01 * d21) / den;
    let w = (d00 * d21 - d01 * d20) / den;
    [1.0 - v - w, v, w]
}

fn lerp4(x0: &[DVec3; 4], x1: &[DVec3; 4], t: f64) -> [DVec3; 4] {
    [0, 1, 2, 3].map(|k| x0[k].lerp(x1[k], t))
}

#[test]
fn ccd_catches_every_crossing_found_by_dense_time_sampling() {
    let mut rng = Rng(42);
    let samples = 2000;
    let (mut vf_crossings, mut ee_crossings) = (0, 0);
    for _ in 0..1500 {
        let x0 = [rng.dvec(0.5), rng.dvec(0.5), rng.dvec(0.5), rng.dvec(0.5)];
        let x1 = [0, 1, 2, 3].map(|k| x0[k] + rng.dvec(0.8));
        // Vertex–triangle: the plane distance changes sign between samples, and the point's
        // projection at the interpolated time is well inside the triangle.
        let mut first_vf = None;
        let mut first_ee = None;
        let plane = |x: &[DVec3; 4]| {
            let n = (x[2] - x[1]).cross(x[3] - x[1]).normalize();
            n.dot(x[0] - x[1])
        };
        let vol = |x: &[DVec3; 4]| (x[1] - x[0]).cross(x[2] - x[0]).dot(x[3] - x[0]);
        for s in 0..samples {
            let (t0, t1) = (s as f64 / samples as f64, (s + 1) as f64 / samples as f64);
            let (a, b) = (lerp4(&x0, &x1, t0), lerp4(&x0, &x1, t1));
            let (da, db) = (plane(&a), plane(&b));
            if first_vf.is_none() && da * db < 0.0 {
                let t = t0 + (t1 - t0) * da / (da - db);
                let x = lerp4(&x0, &x1, t);
                if barycentric(x[0], x[1], x[2], x[3])
                    .iter()
                    .all(|&k| k > 1e-3)
                {
                    first_vf = Some(t);
                }
            }
            let (va, vb) = (vol(&a), vol(&b));
            if first_ee.is_none() && va * vb < 0.0 {
                let t = t0 + (t1 - t0) * va / (va - vb);
                let x = lerp4(&x0, &x1, t);
                let (p1, q1, p2, q2) = (x[0], x[1], x[2], x[3]);
                // Lines' closest parameters must be well inside both segments.
                let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
                let (aa, bb, cc, ee, ff) =
                    (d1.dot(d1), d1.dot(d2), d1.dot(r), d2.dot(d2), d2.dot(r));
                let den = aa * ee - bb * bb;
                let s_ = (bb * ff - cc * ee) / den;
                let u_ = (aa * ff - bb * cc) / den;
                let inside = |k: f64| k > 1e-3 && k < 1.0 - 1e-3;
                if den > 1e-6 && inside(s_) && inside(u_) {
                    first_ee = Some(t);
                }
            }
        }
        let tol = 1e-6;
        if let Some(t) = first_vf {
            vf_crossings += 1;
            let (tc, _) =
                vertex_triangle_ccd(x0, x1, tol).expect("vertex-triangle crossing missed by CCD");
            assert!(tc <= t + 1e-3, "CCD time {tc} after sampled crossing {t}");
        }
        if let Some(t) = first_ee {
            ee_crossings += 1;
            let (tc, _, _) = edge_edge_ccd(x0, x1, tol).expect("edge-edge crossing missed by CCD");
            assert!(tc <= t + 1e-3, "CCD time {tc} after sampled crossing {t}");
        }
    }
    assert!(
        vf_crossings > 50 && ee_crossings > 100,
        "too few crossings: {vf_crossings} {ee_crossings}"
    );
}

#[test]
fn ccd_reports_no_collision_for_separated_motion() {
    // Vertex moving parallel to a triangle 1 mm above it; edges passing 1 mm apart.
    let tri = [
        DVec3::new(0.0, 0.0, 0.0),
        DVec3::new(1.0, 0.0, 0.0),
        DVec3::new(0.0, 0.0, 1.0),
    ];
    let x0 = [DVec3::new(-0.5, 1e-3, 0.2), tri[0], tri[1], tri[2]];
    let x1 = [DVec3::new(1.5, 1e-3, 0.2), tri[0], tri[1], tri[2]];
    assert!(vertex_triangle_ccd(x0, x1, 1e-5).is_none());
    let e0 = [
        DVec3::new(0.0, 0.0, -1.0),
        DVec3::new(0.0, 0.0, 1.0),
        DVec3::new(-1.0, 0.5, 0.0),
        DVec3::new(1.0, 0.5, 0.0),
    ];
    let e1 = [
        e0[0],
        e0[1],
        DVec3::new(-1.0, 1e-3, 0.0),
        DVec3::new(1.0, 1e-3, 0.0),
    ];
    assert!(edge_edge_ccd(e0, e1, 1e-5).is_none());
    // ... and the same motion continued through the other primitive is caught.
    let e2 = [
        e0[0],
        e0[1],
        DVec3::new(-1.0, -0.5, 0.0),
        DVec3::new(1.0, -0.5, 0.0),
    ];
    let (t, s, u) = edge_edge_ccd(e0, e2, 1e-5).expect("crossing edges");
    assert!((t - 0.5).abs() < 1e-9 && (s - 0.5).abs() < 1e-9 && (u - 0.5).abs() < 1e-9);
}

/// Minimum distance between two triangles (vertex–triangle both ways and edge–edge).
fn triangle_distance(a: [Vec3; 3], b: [Vec3; 3]) -> f64 {
    let a = a.map(|p| p.as_dvec3());
    let b = b.map(|p| p.as_dvec3());
    let mut d = f64::INFINITY;
    for k in 0..3 {
        d = d.min(point_triangle_distance(a[k], b[0], b[1], b[2]));
        d = d.min(point_triangle_distance(b[k], a[0], a[1], a[2]));
        for l in 0..3 {
            d = d.min(segment_segment_distance(
                a[k],
                a[(k + 1) % 3],
                b[l],
                b[(l + 1) % 3],
            ));
        }
    }
    d
}

#[test]
fn two_triangles_driven_through_each_other_stay_apart() {
    let thickness = 4e-3;
    let params = [SelfCollisionParams {
        thickness,
        friction: 0.2,
    }];
    let tris = vec![[0, 1, 2], [3, 4, 5]];
    let base = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.1, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 0.1),
    ];
    for pinned_bottom in [false, true] {
        let mut x: Vec<Vec3> = base
            .iter()
            .copied()
            .chain(base.iter().map(|p| *p + Vec3::new(0.02, 0.05, 0.02)))
            .collect();
        // Tilt the upper triangle a little so that the contact is not perfectly coplanar.
        x[4].y += 0.01;
        let mut v = vec![Vec3::ZERO; 6];
        for vi in &mut v[3..] {
            *vi = Vec3::new(0.3, -3.0, 0.1);
        }
        let inv_mass = if pinned_bottom {
            vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
        } else {
            vec![1.0; 6]
        };
        let mut sc = SelfCollision::new(&SelfCollisionTopology::single(6, tris.clone())).unwrap();
        let h = 1.0 / 240.0;
        let mut touched = false;
        for step in 0..120 {
            if pinned_bottom {
                // Keep pressing: gravity on the upper triangle.
                for vi in &mut v[3..] {
                    vi.y -= 9.81 * h;
                }
            }
            let x0 = x.clone();
            let r = sc.resolve(&x0, &mut v, h, &inv_mass, &params);
            assert_eq!(r.unresolved, 0);
            for i in 0..6 {
                x[i] = x0[i] + v[i] * h;
            }
            assert_eq!(count_intersections(&x, &tris), 0, "step {step}");
            let d = triangle_distance([x[0], x[1], x[2]], [x[3], x[4], x[5]]);
            touched |= d < thickness as f64;
            if touched {
                assert!(d >= 0.05 * thickness as f64, "step {step}: separation {d}");
            }
        }
        assert!(touched, "the triangles never met");
        let d = triangle_distance([x[0], x[1], x[2]], [x[3], x[4], x[5]]);
        if pinned_bottom {
            // Pressed by gravity: equilibrium gap = thickness - g h² / REPULSION_RATE.
            let expected = thickness as f64 - 9.81 * h as f64 * h as f64 / 0.1;
            assert!(d >= 0.9 * expected, "pressed separation {d} < {expected}");
        } else {
            assert!(d >= thickness as f64, "free separation {d} < thickness");
        }
    }
}

/// Random "crumpling" trajectory: velocities get random kicks, damping and a pull towards the
/// rest grid; `resolve` runs every substep when `collide`. Returns (max intersections over the
/// run, reports, final positions).
fn crumple(
    n: usize,
    steps: usize,
    collide: bool,
    seed: u64,
) -> (usize, Vec<SelfCollisionReport>, Vec<Vec3>) {
    crumple_thick(n, steps, collide, seed, 2e-3)
}

/// [`crumple`] with a cloth–cloth `thickness` (m) on the 10 mm grid.
fn crumple_thick(
    n: usize,
    steps: usize,
    collide: bool,
    seed: u64,
    thickness: f32,
) -> (usize, Vec<SelfCollisionReport>, Vec<Vec3>) {
    let spacing = 0.01;
    let (rest, tris) = regular_grid(n, spacing);
    let mut x = rest.clone();
    let mut v = vec![Vec3::ZERO; x.len()];
    let mut inv_mass = vec![1.0f32; x.len()];
    inv_mass[0] = 0.0; // one pinned corner
    let params = [SelfCollisionParams {
        thickness,
        friction: 0.3,
    }];
    let mut topo = SelfCollisionTopology::single(x.len(), tris.clone());
    topo.rest_positions = Some(rest.clone());
    let mut sc = SelfCollision::new(&topo).unwrap();
    let mut rng = Rng(seed);
    let h = 0.004;
    let mut worst = 0;
    let mut reports = Vec::new();
    for _ in 0..steps {
        for i in 0..x.len() {
            if inv_mass[i] == 0.0 {
                continue;
            }
            let kick = Vec3::new(
                rng.normal() as f32,
                rng.normal() as f32 * 2.0,
                rng.normal() as f32,
            );
            // Pull towards a sheet folded in half along x = middle, so layers meet.
            let mid = (n / 2) as f32 * spacing;
            let target = if rest[i].x > mid {
                Vec3::new(2.0 * mid - rest[i].x, 0.0, rest[i].z)
            } else {
                rest[i]
            };
            v[i] = 0.9 * v[i] + 0.4 * kick + (target - x[i]) * 3.0;
        }
        let x0 = x.clone();
        if collide {
            let r = sc.resolve(&x0, &mut v, h, &inv_mass, &params);
            reports.push(r);
        }
        for i in 0..x.len() {
            x[i] = x0[i] + v[i] * h;
        }
        worst = worst.max(count_intersections(&x, &tris));
    }
    (worst, reports, x)
}

#[test]
fn crumpled_sheet_never_intersects() {
    let (without, _, _) = crumple(16, 150, false, 7);
    assert!(
        without > 50,
        "trajectory too tame to test anything: {without} intersections without collision"
    );
    let (with, reports, _) = crumple(16, 150, true, 7);
    assert_eq!(with, 0, "intersections with self-collision");
    assert!(reports.iter().all(|r| r.unresolved == 0));
    let collisions: u32 = reports.iter().map(|r| r.collisions).sum();
    let contacts: u32 = reports.iter().map(|r| r.contacts).sum();
    assert!(
        collisions > 0 && contacts > 0,
        "collisions {collisions}, contacts {contacts}"
    );
}

/// Thicker than the grid is fine (14 mm on 10 mm cells): every vertex is within the thickness of
/// the primitives of the cells around it at rest, which get no repulsion, only the continuous
/// collision behind its filter and their kept distance bounds (`rest_close.rs`); crumpled and
/// folded onto itself, the sheet still never intersects, the same on one and two threads.
#[test]
fn crumpled_sheet_thicker_than_its_cells_never_intersects() {
    let run = |threads| {
        clothbake_solver::fixtures::on_threads(threads, || crumple_thick(16, 150, true, 7, 0.014))
    };
    let (with, reports, x1) = run(2);
    assert_eq!(with, 0, "intersections with self-collision");
    assert!(reports.iter().all(|r| r.unresolved == 0));
    let candidates: u32 = reports.iter().map(|r| r.candidates).sum();
    let collisions: u32 = reports.iter().map(|r| r.collisions).sum();
    assert!(
        candidates > 150 * 16 * 16 * 10 && collisions > 0,
        "candidates {candidates}, collisions {collisions}"
    );
    let (_, _, x2) = run(1);
    let bits = |x: &[Vec3]| {
        x.iter()
            .flat_map(|p| p.to_array().map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&x1), bits(&x2));
}

#[test]
fn results_are_identical_on_one_and_two_threads() {
    let run =
        |threads| clothbake_solver::fixtures::on_threads(threads, || crumple(20, 60, true, 99));
    // Everything but the wall-clock times must match.
    let untimed = |r: Vec<SelfCollisionReport>| {
        r.into_iter()
            .map(|r| SelfCollisionReport {
                times: Default::default(),
                ..r
            })
            .collect::<Vec<_>>()
    };
    let (w1, r1, x1) = run(1);
    let (w2, r2, x2) = run(2);
    assert_eq!(w1, w2);
    assert_eq!(untimed(r1), untimed(r2));
    let bits = |x: &[Vec3]| {
        x.iter()
            .flat_map(|p| p.to_array().map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&x1), bits(&x2));
}

/// Reference: two non-coplanar triangles intersect iff an edge of one crosses the other
/// (segment–triangle test, Möller–Trumbore), checked both ways.
fn segment_hits_triangle(p: DVec3, q: DVec3, t: [DVec3; 3]) -> bool {
    let d = q - p;
    let (e1, e2) = (t[1] - t[0], t[2] - t[0]);
    let pv = d.cross(e2);
    let det = e1.dot(pv);
    if det.abs() < 1e-14 {
        return false;
    }
    let s = p - t[0];
    let u = s.dot(pv) / det;
    let qv = s.cross(e1);
    let v = d.dot(qv) / det;
    let w = e2.dot(qv) / det;
    u >= 0.0 && v >= 0.0 && u + v <= 1.0 && (0.0..=1.0).contains(&w)
}

#[test]
fn intersection_counter_matches_brute_force() {
    let mut rng = Rng(2024);
    for round in 0..5 {
        let nv = 300;
        let x: Vec<Vec3> = (0..nv).map(|_| rng.dvec(0.5).as_vec3()).collect();
        let mut tris = Vec::new();
        for _ in 0..200 {
            // Small triangles around a random centre, built from fresh vertices or reused ones.
            let a = (rng.next() * nv as f64) as u32 % nv as u32;
            let b = (rng.next() * nv as f64) as u32 % nv as u32;
            let c = (rng.next() * nv as f64) as u32 % nv as u32;
            if a != b && b != c && a != c {
                tris.push([a, b, c]);
            }
        }
        // Also a soup of compact triangles (many local, few global overlaps).
        let mut x2 = x.clone();
        for t in tris.iter().take(100) {
            let centre = rng.dvec(0.4).as_vec3();
            for &k in t {
                x2[k as usize] = centre + rng.dvec(0.15).as_vec3();
            }
        }
        for pos in [&x, &x2] {
            let p = |t: [u32; 3]| t.map(|k| pos[k as usize].as_dvec3());
            let mut brute = 0;
            for i in 0..tris.len() {
                for j in i + 1..tris.len() {
                    let (a, b) = (tris[i], tris[j]);
                    if a.iter().any(|k| b.contains(k)) {
                        continue;
                    }
                    let (ta, tb) = (p(a), p(b));
                    let hit = (0..3).any(|k| segment_hits_triangle(ta[k], ta[(k + 1) % 3], tb))
                        || (0..3).any(|k| segment_hits_triangle(tb[k], tb[(k + 1) % 3], ta));
                    brute += hit as usize;
                }
            }
            let fast = count_intersections(pos, &tris);
            assert_eq!(fast, brute, "round {round}");
            assert!(brute > 10, "round {round}: only {brute} intersections");
        }
    }
}

#[test]
fn invalid_topology_is_an_error_not_a_panic() {
    let topo = SelfCollisionTopology::single(3, vec![[0, 1, 5]]);
    let e = SelfCollision::new(&topo).unwrap_err();
    assert!(
        e.to_string().contains("triangle 0") && e.to_string().contains("vertex 5"),
        "{e}"
    );
    let mut topo = SelfCollisionTopology::single(3, vec![[0, 1, 2]]);
    topo.vertex_layer[2] = 3;
    assert!(SelfCollision::new(&topo)
        .unwrap_err()
        .to_string()
        .contains("vertex 2"));
    assert!(SelfCollisionParams {
        thickness: -1.0,
        friction: 0.1
    }
    .validate()
    .is_err());
    assert!(SelfCollisionParams {
        thickness: 1e-3,
        friction: f32::NAN
    }
    .validate()
    .is_err());
}

/// Proximity contacts found ahead of the solve (`prepare`, with a predicted end position) give the
/// same velocities as one pass after it, also for a touching pair, whose normal is turned against
/// the actual motion: a vertex lying exactly on a triangle and moving down through it, predicted
/// to stay put.
#[test]
fn prepared_contacts_give_the_same_result_for_touching_pairs() {
    // Triangle 0–1–2 in the plane y = 0 (normal −y by its winding), vertex 3 on it; triangle
    // 3–4–5 so that vertex 3 belongs to the cloth, far from the first triangle otherwise.
    let x0 = vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.1, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 0.1),
        Vec3::new(0.02, 0.0, 0.02),
        Vec3::new(0.02, 0.0, 0.2),
        Vec3::new(0.2, 0.0, 0.2),
    ];
    let tris = vec![[0, 1, 2], [3, 4, 5]];
    let topo = SelfCollisionTopology::single(x0.len(), tris);
    let params = [SelfCollisionParams {
        thickness: 0.004,
        friction: 0.3,
    }];
    let h = 1.0 / 120.0;
    let inv_mass = vec![1.0; x0.len()];
    let mut v = vec![Vec3::ZERO; x0.len()];
    v[3..].fill(Vec3::new(0.0, -0.5, 0.0));
    let mut single = SelfCollision::new(&topo).expect("valid");
    let mut v_single = v.clone();
    let r_single = single.resolve(&x0, &mut v_single, h, &inv_mass, &params);
    let mut ahead = SelfCollision::new(&topo).expect("valid");
    ahead.prepare(&x0, &x0, &params);
    let mut v_ahead = v.clone();
    let r_ahead = ahead.resolve(&x0, &mut v_ahead, h, &inv_mass, &params);
    assert!(
        r_single.contacts > 0 && r_single.repulsions > 0,
        "{r_single:?}"
    );
    assert_eq!(v_single, v_ahead);
    assert_eq!(
        (r_single.contacts, r_single.repulsions, r_single.collisions),
        (r_ahead.contacts, r_ahead.repulsions, r_ahead.collisions)
    );
}
