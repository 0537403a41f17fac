//! Broad + narrow phase timing of `ContactDetector::detect` (table-printing benchmark).
//!
//! A 30-proxy figure (tapered capsules and spheres) moving 5 cm per substep, cloth vertices hugging
//! the proxies (0–3 cm off the surface) and moving with them plus noise; also the same cloth far
//! from the body (pure culling) and an all-pairs loop without culling for comparison.
//! Run: `cargo run -p clothbake-solver --release --example collide_bench [vertices]`.

use std::time::Instant;

use clothbake_solver::collide::{
    vertex_contact, ColliderShape, ContactDetector, MovingCollider, VertexContact,
};
use glam::Vec3;

/// SplitMix64 (deterministic scene).
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    fn dir(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            if v.length_squared() > 0.01 && v.length_squared() <= 1.0 {
                return v.normalize();
            }
        }
    }
}

struct Scene {
    colliders: Vec<MovingCollider>,
    x0: Vec<Vec3>,
    x1: Vec<Vec3>,
    thickness: Vec<f32>,
}

fn scene(vertices: usize, cloth_offset: Vec3) -> Scene {
    let mut rng = Rng(7);
    let step = Vec3::new(0.05, 0.0, 0.0);
    let mut colliders = Vec::new();
    for k in 0..30 {
        let a = Vec3::new(
            rng.range(-0.25, 0.25),
            rng.range(0.1, 1.7),
            rng.range(-0.15, 0.15),
        );
        let start = if k % 10 == 9 {
            ColliderShape::Sphere {
                center: a,
                radius: rng.range(0.06, 0.12),
            }
        } else {
            ColliderShape::Capsule {
                a,
                b: a + rng.dir() * rng.range(0.15, 0.4),
                radius_a: rng.range(0.04, 0.09),
                radius_b: rng.range(0.03, 0.07),
            }
        };
        let end = match start {
            ColliderShape::Capsule {
                a,
                b,
                radius_a,
                radius_b,
            } => ColliderShape::Capsule {
                a: a + step,
                b: b + step + rng.dir() * 0.02,
                radius_a,
                radius_b,
            },
            ColliderShape::Sphere { center, radius } => ColliderShape::Sphere {
                center: center + step,
                radius,
            },
            plane => plane,
        };
        colliders.push(MovingCollider { start, end });
    }
    let mut x0 = Vec::with_capacity(vertices);
    let mut x1 = Vec::with_capacity(vertices);
    for i in 0..vertices {
        let s = colliders[i % colliders.len()].start;
        let (c, r) = match s {
            ColliderShape::Capsule {
                a,
                b,
                radius_a,
                radius_b,
            } => {
                let w = rng.unit();
                (a.lerp(b, w), radius_a + w * (radius_b - radius_a))
            }
            ColliderShape::Sphere { center, radius } => (center, radius),
            ColliderShape::Plane { point, .. } => (point, 0.0),
        };
        let p = c + rng.dir() * (r + rng.range(0.0, 0.03)) + cloth_offset;
        x0.push(p);
        x1.push(p + step + rng.dir() * 0.01);
    }
    // Spatially coherent order, as a mesh would be (chunks cover compact regions).
    let mut order: Vec<usize> = (0..vertices).collect();
    order.sort_by_key(|&i| i % colliders.len());
    let x0 = order.iter().map(|&i| x0[i]).collect();
    let x1 = order.iter().map(|&i| x1[i]).collect();
    Scene {
        colliders,
        x0,
        x1,
        thickness: vec![0.005; vertices],
    }
}

/// On-CPU time (s) of the calling thread (Linux schedstat), immune to other processes' load.
fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |ns| ns * 1e-9)
}

/// Best wall time per call, best on-CPU time of the calling thread per call (meaningful for
/// 1 thread only: the pool's single worker runs everything), contacts.
fn time_detect(s: &Scene, threads: usize) -> (f64, f64, usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    pool.install(|| {
        let mut detector = ContactDetector::new();
        let mut out: Vec<VertexContact> = Vec::new();
        let h = 1.0 / 48.0;
        detector
            .detect(&s.colliders, h, &s.x0, &s.x1, &s.thickness, &mut out)
            .expect("valid scene");
        let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..15 {
            let (t, cpu) = (Instant::now(), thread_cpu_seconds());
            detector
                .detect(&s.colliders, h, &s.x0, &s.x1, &s.thickness, &mut out)
                .expect("valid scene");
            best = best.min(t.elapsed().as_secs_f64());
            best_cpu = best_cpu.min(thread_cpu_seconds() - cpu);
        }
        (best, best_cpu, out.len())
    })
}

fn time_all_pairs(s: &Scene) -> (f64, usize) {
    let t = thread_cpu_seconds();
    let mut n = 0;
    for i in 0..s.x0.len() {
        for (k, c) in s.colliders.iter().enumerate() {
            n += vertex_contact(
                c,
                k as u32,
                i as u32,
                1.0 / 48.0,
                s.x0[i],
                s.x1[i],
                s.thickness[i],
            )
            .is_some() as usize;
        }
    }
    (thread_cpu_seconds() - t, n)
}

fn main() {
    let vertices: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(65_536);
    println!("detect(): {vertices} vertices, 30 proxies, best of 15 calls (wall; cpu = on-CPU time of the 1 worker)");
    println!(
        "{:<34} {:>7} {:>10} {:>10} {:>14} {:>10}",
        "scene", "threads", "wall ms", "cpu ms", "cpu ns/vertex", "contacts"
    );
    for (name, offset) in [
        ("cloth on body", Vec3::ZERO),
        ("cloth 3 m away (culled)", Vec3::new(3.0, 0.0, 0.0)),
    ] {
        let s = scene(vertices, offset);
        for threads in [1, 2] {
            let (secs, cpu, contacts) = time_detect(&s, threads);
            let (cpu_ms, cpu_ns) = if threads == 1 {
                (cpu * 1e3, cpu * 1e9 / vertices as f64)
            } else {
                (f64::NAN, f64::NAN)
            };
            println!(
                "{name:<34} {threads:>7} {:>10.3} {cpu_ms:>10.3} {cpu_ns:>14.1} {contacts:>10}",
                secs * 1e3
            );
        }
        let (secs, contacts) = time_all_pairs(&s);
        println!(
            "{:<34} {:>7} {:>10} {:>10.3} {:>14.1} {contacts:>10}",
            format!("{name}, all pairs, no culling"),
            1,
            "",
            secs * 1e3,
            secs * 1e9 / vertices as f64
        );
    }
}
