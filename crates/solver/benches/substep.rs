//! One backward-Euler substep on n×n sheets (1 m, cotton), hanging from two corners ("free") and
//! draped on a sphere ("sphere"), plus the Blender-comparable case: a 64×64 sheet falling onto a
//! sphere at 24 fps with 5 substeps per frame (ms per frame).
//!
//! Prints a table of ns per vertex-substep, CG iterations per substep and MPCG ns per vertex per CG
//! iteration (solve time / (iterations × vertices)), then a table of what each solver change bought
//! on the Blender-comparable bake (iterations, rejected substeps, time, strain, deviation from a
//! fine reference bake), then runs criterion on the substeps. `CLOTHBAKE_BENCH_SIZES=32,64` limits
//! the sizes.

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
    changes_table();
}

/// One bake of the Blender-comparable scene (benches/blender_compare.py): a 1 m, 64×64 cotton sheet
/// 1 m up, falling onto a 0.3 m sphere resting on the ground, 24 frames at 24 fps.
struct Bake {
    positions: Vec<Vec3>,
    wall: f64,
    cpu: f64,
    iterations: u64,
    substeps: u32,
    rejected: u32,
    strain: f32,
    distance: f32,
}

const BAKE_FRAMES: usize = 24;

fn bake(settings: SimSettings) -> Bake {
    let g = sheet("sheet", 64, 1.0, 1.0);
    let mut sim = Simulation::new(vec![g], settings).expect("valid sheet");
    let colliders = [MovingCollider::fixed(ColliderShape::Sphere {
        center: Vec3::new(0.0, 0.3, 0.0),
        radius: 0.3,
    })];
    let mut out = Bake {
        positions: Vec::new(),
        wall: 0.0,
        cpu: 0.0,
        iterations: 0,
        substeps: 0,
        rejected: 0,
        strain: 0.0,
        distance: f32::INFINITY,
    };
    let (start, cpu) = (Instant::now(), cpu_seconds());
    for _ in 0..BAKE_FRAMES {
        let r = sim.step_frame(1.0 / FPS, &colliders, &[]).expect("frame");
        out.iterations += r.cg_iterations as u64;
        out.substeps += r.substeps;
        out.rejected += r.rejected_substeps;
        out.strain = out.strain.max(r.max_strain);
        out.distance = out.distance.min(r.min_collider_distance);
        out.positions.extend_from_slice(sim.garment_positions(0));
    }
    out.wall = start.elapsed().as_secs_f64();
    out.cpu = cpu_seconds() - cpu;
    out
}

/// What each solver change bought on the Blender-comparable bake, in one run: CG iterations per
/// substep, rejected substeps, time, peak strain, and the largest and mean vertex distance (over all
/// frames) from a reference bake with 4× the substeps and CG tolerance 1e-6.
fn changes_table() {
    let reference = bake(SimSettings {
        substeps: 4 * SUBSTEPS,
        cg_tolerance: 1e-6,
        cg_max_iterations: 2000,
        ..Default::default()
    });
    // Noise floor: the reference's own settings with a 10× tighter CG tolerance.
    let tighter = bake(SimSettings {
        substeps: 4 * SUBSTEPS,
        cg_tolerance: 1e-7,
        cg_max_iterations: 2000,
        ..Default::default()
    });
    let variants: [(&str, Preconditioner, f32, f32); 6] = [
        (
            "block Jacobi, strain jump 0.1, tol 1e-4 (before)",
            Preconditioner::BlockJacobi,
            0.1,
            1e-4,
        ),
        (
            "IC(0), strain jump 0.1, tol 1e-4",
            Preconditioner::IncompleteCholesky,
            0.1,
            1e-4,
        ),
        (
            "IC(0), strain jump 0.03, tol 1e-4",
            Preconditioner::IncompleteCholesky,
            0.03,
            1e-4,
        ),
        (
            "IC(0), strain jump 0.03, tol 3e-4 (default)",
            Preconditioner::IncompleteCholesky,
            0.03,
            3e-4,
        ),
        (
            "IC(0), strain jump 0.03, tol 1e-3",
            Preconditioner::IncompleteCholesky,
            0.03,
            1e-3,
        ),
        (
            "SA-AMG V-cycle, strain jump 0.03, tol 3e-4",
            Preconditioner::Amg,
            0.03,
            3e-4,
        ),
    ];
    println!(
        "64×64 sheet on a sphere, {SUBSTEPS} substeps/frame, {BAKE_FRAMES} frames; deviation from a bake with {} substeps/frame at CG tolerance 1e-6 (max strain {:.3}):",
        4 * SUBSTEPS,
        reference.strain
    );
    println!(
        "| solver | ms/frame wall | ms/frame CPU | CG it/accepted substep | accepted substeps (rejected) | max strain | max / mean deviation (mm) | min collider distance (mm) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let rows = variants
        .into_iter()
        .map(|(name, preconditioner, strain_jump, cg_tolerance)| {
            let settings = SimSettings {
                substeps: SUBSTEPS,
                preconditioner,
                strain_jump,
                cg_tolerance,
                ..Default::default()
            };
            (name.to_string(), bake(settings))
        });
    let floor = (
        format!("noise floor: {} substeps/frame, tol 1e-7", 4 * SUBSTEPS),
        tighter,
    );
    for (name, b) in std::iter::once(floor).chain(rows) {
        let dev: Vec<f32> = b
            .positions
            .iter()
            .zip(&reference.positions)
            .map(|(a, r)| a.distance(*r))
            .collect();
        let max_dev = dev.iter().copied().fold(0.0f32, f32::max);
        let mean_dev = dev.iter().map(|&d| d as f64).sum::<f64>() / dev.len() as f64;
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {} ({}) | {:.3} | {:.0} / {:.1} | {:.1} |",
            b.wall * 1e3 / BAKE_FRAMES as f64,
            b.cpu * 1e3 / BAKE_FRAMES as f64,
            b.iterations as f64 / b.substeps as f64,
            b.substeps,
            b.rejected,
            b.strain,
            max_dev * 1e3,
            mean_dev * 1e3,
            b.distance * 1e3
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
