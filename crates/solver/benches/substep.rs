//! One backward-Euler substep on n×n sheets (1 m, cotton), hanging from two corners ("free") and
//! draped on a sphere ("sphere"), plus the Blender-comparable case: a 64×64 sheet falling onto a
//! sphere at 24 fps with 5 substeps per frame (ms per frame).
//!
//! Prints a table of ns per vertex-substep, CG iterations per substep and MPCG ns per vertex per CG
//! iteration (solve time / (iterations × vertices)), then runs criterion on the same substeps. `CLOTHBAKE_BENCH_SIZES=32,64` limits the sizes.

use clothbake_solver::fixtures::{sheet, sheet_vertex};
use clothbake_solver::*;
use criterion::{criterion_group, criterion_main, Criterion};
use glam::Vec3;
use std::time::Instant;

const FPS: f32 = 24.0;
const SUBSTEPS: u32 = 5;

#[derive(Clone, Copy, PartialEq)]
enum Case {
    Free,
    Sphere,
}

fn sphere() -> MovingCollider {
    MovingCollider::fixed(ColliderShape::Sphere {
        center: Vec3::ZERO,
        radius: 0.3,
    })
}

/// A simulation stepping exactly one substep (h = 1/120 s) per `step_frame`, pre-rolled so the sheet
/// hangs (free) or lies on the sphere.
fn setup(n: usize, case: Case) -> (Simulation, Vec<MovingCollider>) {
    setup_with(n, case, if n >= 256 { 10 } else { 30 })
}

/// Process CPU time (s, all threads) from /proc/self/stat (utime + stime, 100 Hz ticks); 0 where
/// unavailable. The machine running the benchmarks is shared, so CPU time is printed next to wall.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let tick = |k: usize| {
        fields
            .get(k)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (tick(11) + tick(12)) / 100.0
}

fn setup_with(n: usize, case: Case, preroll: usize) -> (Simulation, Vec<MovingCollider>) {
    let mut g = sheet("sheet", n, 1.0, 0.32);
    let colliders = match case {
        Case::Free => {
            g.pins = vec![
                Pin {
                    vertex: sheet_vertex(n, 0, 0),
                    weight: 1.0,
                },
                Pin {
                    vertex: sheet_vertex(n, n - 1, 0),
                    weight: 1.0,
                },
            ];
            vec![]
        }
        Case::Sphere => vec![sphere()],
    };
    let settings = SimSettings {
        substeps: 1,
        adaptive: false,
        ..Default::default()
    };
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    // Pre-roll (30 substeps = 0.25 s): hanging / in contact.
    for _ in 0..preroll {
        sim.step_frame(1.0 / (FPS * SUBSTEPS as f32), &colliders, &[])
            .expect("pre-roll");
    }
    (sim, colliders)
}

fn sizes() -> Vec<usize> {
    std::env::var("CLOTHBAKE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![32, 64, 128, 256])
}

fn table() {
    println!(
        "\n{:>6} {:>7} {:>9} {:>12} {:>10} {:>12} {:>9} {:>12}",
        "sheet",
        "case",
        "vertices",
        "ns/vert-sub",
        "ms/substep",
        "CPU ms/sub",
        "CG it/sub",
        "ns/vert-CGit"
    );
    for n in sizes() {
        for case in [Case::Free, Case::Sphere] {
            let (mut sim, colliders) = setup(n, case);
            let steps = if n >= 256 {
                5
            } else if n >= 128 {
                10
            } else {
                30
            };
            let (mut iterations, mut solve, start, cpu) =
                (0u64, 0.0f64, Instant::now(), cpu_seconds());
            for _ in 0..steps {
                let r = sim
                    .step_frame(1.0 / (FPS * SUBSTEPS as f32), &colliders, &[])
                    .expect("step");
                iterations += r.cg_iterations as u64;
                solve += r.times.solve;
            }
            let secs = start.elapsed().as_secs_f64();
            let cpu = cpu_seconds() - cpu;
            let verts = (n * n) as f64;
            println!(
                "{:>6} {:>7} {:>9} {:>12.1} {:>10.3} {:>12.3} {:>9.1} {:>12.1}",
                format!("{n}²"),
                if case == Case::Free { "free" } else { "sphere" },
                n * n,
                secs * 1e9 / (verts * steps as f64),
                secs * 1e3 / steps as f64,
                cpu * 1e3 / steps as f64,
                iterations as f64 / steps as f64,
                solve * 1e9 / (verts * iterations.max(1) as f64)
            );
        }
    }
    // Blender-comparable: 64×64 sheet falling on a sphere, 24 fps, 5 substeps per frame, 1 s, at
    // the default CG tolerance and two looser ones.
    for tolerance in [1e-4, 3e-4, 1e-3, 1e-2] {
        let g = sheet("sheet", 64, 1.0, 0.5);
        let settings = SimSettings {
            substeps: SUBSTEPS,
            cg_tolerance: tolerance,
            ..Default::default()
        };
        let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
        let colliders = [sphere()];
        let frames = 24;
        let (mut iterations, mut substeps, mut rejected) = (0u64, 0u32, 0u32);
        let (mut strain, mut distance) = (0.0f32, f32::INFINITY);
        let (start, cpu) = (Instant::now(), cpu_seconds());
        for _ in 0..frames {
            let r = sim.step_frame(1.0 / FPS, &colliders, &[]).expect("frame");
            iterations += r.cg_iterations as u64;
            substeps += r.substeps;
            rejected += r.rejected_substeps;
            strain = strain.max(r.max_strain);
            distance = distance.min(r.min_collider_distance);
        }
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu;
        println!(
            "64×64 on a sphere, {SUBSTEPS} substeps/frame, CG tol {tolerance:.0e}, {frames} frames: {:.1} ms/frame wall, {:.1} ms/frame CPU, {:.1} CG it/substep, {} substeps ({} rejected), max strain {:.4}, min collider distance {:.4} m",
            secs * 1e3 / frames as f64,
            cpu * 1e3 / frames as f64,
            iterations as f64 / substeps as f64,
            substeps,
            rejected,
            strain,
            distance
        );
    }
    println!();
}

fn bench(c: &mut Criterion) {
    table();
    let mut group = c.benchmark_group("substep");
    group.sample_size(10);
    for n in sizes() {
        for case in [Case::Free, Case::Sphere] {
            let (mut sim, colliders) = setup(n, case);
            let name = format!("{}_{n}", if case == Case::Free { "free" } else { "sphere" });
            group.bench_function(name, |b| {
                b.iter(|| {
                    sim.step_frame(1.0 / (FPS * SUBSTEPS as f32), &colliders, &[])
                        .expect("step")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
