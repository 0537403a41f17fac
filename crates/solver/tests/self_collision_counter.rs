//! The intersection counter on nearly flat sheets: noise far below the triangle size must not
//! produce false positives (near-coplanar, laterally separated triangles), while a real fold
//! through the sheet is still counted, also after an arbitrary rotation.

use clothbake_solver::self_collision::{
    count_intersections, count_intersections_serial, triangles_intersect,
};
use glam::{DQuat, DVec3, Vec3};

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
}

/// n×n vertices over a 1 m square in the xz plane at height `y0`, two triangles per quad.
fn grid(n: usize, y0: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let s = 1.0 / (n - 1) as f32;
    let mut x = Vec::new();
    for j in 0..n {
        for i in 0..n {
            x.push(Vec3::new(i as f32 * s, y0, j as f32 * s));
        }
    }
    let id = |i: usize, j: usize| (j * n + i) as u32;
    let mut t = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            t.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            t.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    (x, t)
}

fn perturb(x: &mut [Vec3], amp: f64, rng: &mut Rng) {
    for p in x {
        p.y += rng.range(-amp, amp) as f32;
    }
}

fn rotate(x: &[Vec3], rng: &mut Rng) -> Vec<Vec3> {
    let axis = DVec3::new(
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
    )
    .normalize();
    let q = DQuat::from_axis_angle(axis, rng.range(0.0, std::f64::consts::TAU));
    let shift = DVec3::new(
        rng.range(-3.0, 3.0),
        rng.range(-3.0, 3.0),
        rng.range(-3.0, 3.0),
    );
    x.iter()
        .map(|p| (q * p.as_dvec3() + shift).as_vec3())
        .collect()
}

#[test]
fn noisy_flat_grid_has_no_intersections() {
    for (n, seed) in [(16, 1u64), (16, 7), (64, 2), (64, 99)] {
        for y0 in [0.0f32, -2.37, 5.1] {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let (mut x, t) = grid(n, y0);
            perturb(&mut x, 1e-5, &mut rng);
            assert_eq!(count_intersections(&x, &t), 0, "n {n} seed {seed} y0 {y0}");
        }
    }
}

#[test]
fn noisy_grid_below_f32_resolution_has_no_intersections() {
    // Vertex heights differing by single f32 ulps (the falling-sheet case).
    for n in [16, 64] {
        let mut rng = Rng(0xABCD + n as u64);
        let (mut x, t) = grid(n, -3.0);
        for p in &mut x {
            let k = (rng.next() * 7.0) as i32 - 3;
            p.y = f32::from_bits((p.y.to_bits() as i32 + k) as u32);
        }
        assert_eq!(count_intersections(&x, &t), 0, "n {n}");
    }
}

#[test]
fn rotated_noisy_grid_has_no_intersections() {
    for (n, seed) in [(16, 3u64), (16, 5), (64, 11), (64, 12)] {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (mut x, t) = grid(n, 0.0);
        perturb(&mut x, 1e-5, &mut rng);
        let x = rotate(&x, &mut rng);
        assert_eq!(count_intersections(&x, &t), 0, "n {n} seed {seed}");
    }
}

/// Fold the rows beyond the middle back over the sheet along a parabola that passes through the
/// sheet's plane halfway between rows: the flap's triangles cross non-adjacent sheet triangles.
fn folded(n: usize, rng: &mut Rng) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let (mut x, t) = grid(n, 0.0);
    perturb(&mut x, 1e-5, rng);
    let s = 1.0 / (n - 1) as f32;
    let c = n / 2;
    for j in c + 1..n {
        let m = (j - c) as f32;
        for i in 0..n {
            let p = &mut x[j * n + i];
            p.z = (c as f32 - 0.9 * m) * s;
            p.y += 0.5 * s * m * (m - 4.5);
        }
    }
    (x, t)
}

#[test]
fn vertex_pushed_through_the_sheet_is_counted() {
    for (n, seed) in [(16, 21u64), (64, 22)] {
        let mut rng = Rng(seed);
        let (x, t) = folded(n, &mut rng);
        let flat = count_intersections(&x, &t);
        assert!(flat > 0, "n {n}: fold not detected");
        // On one thread, the same count.
        assert_eq!(count_intersections_serial(&x, &t), flat, "n {n}");
        let x = rotate(&x, &mut rng);
        assert!(
            count_intersections(&x, &t) > 0,
            "n {n}: rotated fold not detected"
        );
    }
}

#[test]
fn crossing_triangle_pairs() {
    let d = |x: f64, y: f64, z: f64| DVec3::new(x, y, z);
    let flat = [d(0.0, 0.0, 0.0), d(1.0, 0.0, 0.0), d(0.0, 0.0, 1.0)];
    // Piercing and clearly separated.
    let pierce = [d(0.2, -0.5, 0.2), d(0.3, 0.5, 0.2), d(0.2, 0.5, 0.3)];
    assert!(triangles_intersect(flat, pierce));
    let beside = [d(2.0, -0.5, 0.2), d(2.1, 0.5, 0.2), d(2.0, 0.5, 0.3)];
    assert!(!triangles_intersect(flat, beside));
    // Near-coplanar, laterally separated (tiny tilt): no intersection.
    let near = [d(1.2, 1e-7, 0.0), d(2.0, -1e-7, 0.0), d(1.2, 2e-7, 1.0)];
    assert!(!triangles_intersect(flat, near));
    // Coplanar with positive-area overlap: intersects.
    let over = [d(0.1, 0.0, 0.1), d(0.8, 0.0, 0.1), d(0.1, 0.0, 0.8)];
    assert!(triangles_intersect(flat, over));
}

#[test]
fn random_noise_amplitudes_heights_and_rotations_give_no_false_positives() {
    for seed in 1..120u64 {
        let mut rng = Rng(seed * 7919 + 1);
        let n = 16 + (seed % 3) as usize * 8;
        let amp = 10f64.powf(rng.range(-8.0, -3.0));
        let y0 = rng.range(-20.0, 20.0) as f32;
        let (mut x, t) = grid(n, y0);
        perturb(&mut x, amp, &mut rng);
        assert_eq!(count_intersections(&x, &t), 0, "seed {seed} amp {amp:e}");
        let x = rotate(&x, &mut rng);
        assert_eq!(
            count_intersections(&x, &t),
            0,
            "rotated, seed {seed} amp {amp:e}"
        );
    }
}

#[test]
fn coplanar_pairs_need_positive_overlap_area() {
    let d = |x: f64, z: f64| DVec3::new(x, 0.0, z);
    let a = [d(0.0, 0.0), d(1.0, 0.0), d(0.0, 1.0)];
    // Same edge, other side (distinct vertices at equal positions): touching, not intersecting.
    assert!(!triangles_intersect(
        a,
        [d(1.0, 0.0), d(0.0, 1.0), d(1.0, 1.0)]
    ));
    // Touching at one corner only.
    assert!(!triangles_intersect(
        a,
        [d(1.0, 0.0), d(2.0, 0.0), d(2.0, 1.0)]
    ));
    // Identical positions: full overlap.
    assert!(triangles_intersect(a, a));
    // Exactly flat grid: no pair intersects; two coincident copies (distinct vertices): many.
    let (x, t) = grid(16, 0.0);
    assert_eq!(count_intersections(&x, &t), 0);
    let nv = x.len() as u32;
    let mut x2 = x.clone();
    x2.extend_from_slice(&x);
    let mut t2 = t.clone();
    t2.extend(t.iter().map(|tri| tri.map(|k| k + nv)));
    let coincident = count_intersections(&x2, &t2);
    assert!(coincident >= t.len());
    assert_eq!(count_intersections_serial(&x2, &t2), coincident);
}
